#include "fuzz_models.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <vector>

#include "runtime/gguf/gguf_writer.h"

namespace ember::fuzz {
namespace {

void RemoveScratch() {
  std::error_code ec;
  std::filesystem::remove_all(ScratchDir(), ec);
}

const char* kChatMl =
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + "
    "message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}{% if add_generation_prompt %}"
    "{{ '<|im_start|>assistant\\n' }}{% endif %}";

}  // namespace

std::string ScratchDir() {
  static const std::string dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/ember-fuzz-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) {
      std::perror("ember fuzz: mkdtemp");
      std::abort();
    }
    return pattern;
  }();
  static const bool registered = [] { return std::atexit(RemoveScratch) == 0; }();
  (void)registered;
  return dir;
}

void WriteBytes(const std::string& path, const uint8_t* data, size_t size) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr || (size > 0 && std::fwrite(data, 1, size, f) != size) || std::fclose(f) != 0) {
    std::perror(("ember fuzz: writing " + path).c_str());
    std::abort();
  }
}

const std::string& TinyVocabPath() {
  static const std::string path = [] {
    std::vector<std::string> tokens = {"<unk>", "<s>", "</s>"};
    std::vector<int32_t> types = {2, 3, 3};
    std::vector<float> scores = {0, 0, 0};
    for (int b = 0; b < 256; ++b) {
      char name[8];
      std::snprintf(name, sizeof(name), "<0x%02X>", b);
      tokens.push_back(name);
      types.push_back(6);
      scores.push_back(0);
    }
    const char* pieces[] = {"\xE2\x96\x81",
                            "\xE2\x96\x81t",
                            "\xE2\x96\x81the",
                            "\xE2\x96\x81"
                            "a",
                            "e",
                            "t",
                            "a",
                            "o",
                            "n",
                            "i",
                            "s",
                            "r",
                            "h",
                            "l",
                            "d",
                            "th",
                            "he",
                            "in",
                            "er",
                            "an",
                            "\xE2\x96\x81of",
                            "\xE2\x96\x81in",
                            "\xE2\x96\x81is",
                            "\xE2\x96\x81He",
                            "llo",
                            "\xE2\x96\x81Hello",
                            "\xC3\xA9",
                            "\xE6\x97\xA5",
                            "{",
                            "}",
                            "\"",
                            ":",
                            ",",
                            "1",
                            "2",
                            "\xE2\x96\x81{",
                            "\n",
                            "\xE2\x96\x81\xE2\x96\x81",
                            "!",
                            "?"};
    float score = -1.0f;
    for (const char* p : pieces) {
      tokens.push_back(p);
      types.push_back(1);
      scores.push_back(score);
      score -= 0.25f;
    }
    for (const char* c : {"<|im_start|>", "<|im_end|>"}) {
      tokens.push_back(c);
      types.push_back(3);
      scores.push_back(0);
    }
    GgufWriter w;
    w.SetString("general.architecture", "llama");
    w.SetString("tokenizer.ggml.model", "llama");
    w.SetStringArray("tokenizer.ggml.tokens", tokens);
    w.SetFloat32Array("tokenizer.ggml.scores", scores);
    w.SetInt32Array("tokenizer.ggml.token_type", types);
    w.SetUint32("tokenizer.ggml.unknown_token_id", 0);
    w.SetUint32("tokenizer.ggml.bos_token_id", 1);
    w.SetUint32("tokenizer.ggml.eos_token_id", 2);
    w.SetBool("tokenizer.ggml.add_bos_token", true);
    w.SetString("tokenizer.chat_template", kChatMl);
    const std::string p = ScratchDir() + "/tiny_vocab.gguf";
    if (!w.WriteFile(p).ok()) std::abort();
    return p;
  }();
  return path;
}

test::TinyModelSpec TinySpec(const std::string& arch) {
  test::TinyModelSpec s;
  s.arch = arch;
  s.name = "fuzz tiny " + arch;
  s.vocab_path = TinyVocabPath();
  s.n_embd = 32;
  s.n_layer = arch == "gemma3" ? 2 : 1;
  s.n_head = 2;
  s.n_head_kv = 1;
  s.n_ff = 32;
  s.n_ctx_train = 64;
  if (arch == "gemma3") {
    s.sliding_window = 4;
    s.uint_keys["gemma3.attention.sliding_window_pattern"] = 2;  // layer 0 local, 1 global
  }
  return s;
}

const std::string& TinyModelPath(const std::string& arch) {
  static std::map<std::string, std::string> built;
  auto it = built.find(arch);
  if (it == built.end()) {
    const std::string path = ScratchDir() + "/tiny_" + arch + ".gguf";
    if (Status s = test::BuildTinyModel(TinySpec(arch), path); !s.ok()) {
      std::fprintf(stderr, "ember fuzz: building the tiny %s model: %s\n", arch.c_str(),
                   s.message().c_str());
      std::abort();
    }
    it = built.emplace(arch, path).first;
  }
  return it->second;
}

}  // namespace ember::fuzz
