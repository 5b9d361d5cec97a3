// Writes the seed corpora that are made rather than written by hand:
//   gguf_fuzz/   tiny models of each architecture (fuzz_models.h), the tiny
//                vocabulary alone, and the first 4 KiB of two ../shared vocabs
//   state_fuzz/  state files of the tiny llama and gemma3 sessions, each
//                behind state_fuzz's flag byte
// Usage: make_fuzz_seeds CORPUS_DIR (tests/fuzz/corpus). The files are small
// (the largest some 20 KB) and committed; run it again when the tiny models
// or the state format change.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "fuzz_models.h"
#include "runtime/model/model.h"
#include "runtime/session/session.h"
#include "support/test_paths.h"

namespace {

std::vector<uint8_t> Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void Write(const std::string& path, const std::vector<uint8_t>& bytes) {
  ember::fuzz::WriteBytes(path, bytes.data(), bytes.size());
  std::printf("%s: %zu bytes\n", path.c_str(), bytes.size());
}

bool Check(const ember::Status& s, const char* what) {
  if (!s.ok()) std::fprintf(stderr, "make_fuzz_seeds: %s: %s\n", what, s.message().c_str());
  return s.ok();
}

// The session as state_fuzz sets it up, with `prompt` decoded, saved behind `flag`.
bool State(const std::string& arch, uint8_t flag, int n_prompt, const std::string& out) {
  std::unique_ptr<ember::Model> model;
  if (!Check(ember::Model::Load(ember::fuzz::TinyModelPath(arch), nullptr, &model), "load")) {
    return false;
  }
  ember::SessionParams sp;
  sp.n_ctx = 32;
  sp.n_threads = 1;
  sp.n_threads_batch = 1;
  sp.n_batch = 4;
  sp.n_keep = 1;
  std::unique_ptr<ember::Session> s;
  if (!Check(ember::Session::Create(*model, sp, &s), "session")) return false;
  std::vector<int32_t> prompt;
  for (int32_t t = 0; t < n_prompt; ++t) prompt.push_back(3 + (t * 37) % 290);
  if (!prompt.empty() && !Check(s->Decode(prompt), "decode")) return false;
  const std::string tmp = ember::fuzz::ScratchDir() + "/seed.state";
  if (!Check(s->SaveState(tmp), "save")) return false;
  std::vector<uint8_t> bytes = Read(tmp);
  bytes.insert(bytes.begin(), flag);
  Write(out, bytes);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_fuzz_seeds CORPUS_DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  std::filesystem::create_directories(dir + "/gguf_fuzz");
  std::filesystem::create_directories(dir + "/state_fuzz");
  for (const char* arch : {"llama", "qwen2", "qwen3", "gemma3"}) {
    Write(dir + "/gguf_fuzz/tiny_" + arch + ".gguf", Read(ember::fuzz::TinyModelPath(arch)));
  }
  Write(dir + "/gguf_fuzz/tiny_vocab.gguf", Read(ember::fuzz::TinyVocabPath()));
  for (const char* vocab : {"ggml-vocab-llama-spm", "ggml-vocab-gpt-2"}) {
    std::vector<uint8_t> head = Read(ember::test::SharedDir() + "/vocab/" + vocab + ".gguf");
    head.resize(std::min<size_t>(head.size(), 4096));
    Write(dir + "/gguf_fuzz/" + vocab + ".head4k.gguf", head);
  }
  bool ok = State("llama", 0, 5, dir + "/state_fuzz/llama_prompt.state");
  ok = State("llama", 8, 0, dir + "/state_fuzz/llama_empty.state") && ok;
  ok = State("gemma3", 1, 12, dir + "/state_fuzz/gemma3_window_ring.state") && ok;
  return ok ? 0 : 1;
}
