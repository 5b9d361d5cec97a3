// `ember chat`: driven through a pipe (each line a message), and in a real
// terminal through tmux, as a person would use it (typing, Ctrl-C during a
// reply, commands, Ctrl-D).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/cli_runner.h"
#include "support/model_builder.h"
#include "support/skip.h"
#include "support/test_paths.h"

using ember::test::RequireCleanError;
using ember::test::RunEmber;
using ember::test::ShellQuote;
using json = nlohmann::ordered_json;

namespace {

std::string WriteText(const std::string& name, const std::string& text) {
  const std::string p = ember::test::TempPath(name);
  std::ofstream(p, std::ios::binary) << text;
  return p;
}

std::vector<json> JsonLines(const std::string& out) {
  std::vector<json> lines;
  size_t start = 0;
  while (start < out.size()) {
    size_t end = out.find('\n', start);
    if (end == std::string::npos) end = out.size();
    if (end > start) lines.push_back(json::parse(out.substr(start, end - start)));
    start = end + 1;
  }
  return lines;
}

// The tiny qwen2 model carries Qwen2's ChatML template.
std::string ChatModel() {
  const std::string m = ember::test::BuildArchModel("qwen2");
  REQUIRE(!m.empty());
  return m;
}

}  // namespace

TEST_CASE("chat cli: piped messages, one reply each, the cache reused", "[cli][chat]") {
  const std::string model = ChatModel();
  const std::string saved = ember::test::TempPath("chat.json");
  const std::string input =
      WriteText("chat_in.txt", "Hello there.\nAnd a second question?\n/save " + saved + "\n");
  const auto r =
      RunEmber("chat -m " + model + " --json -n 5 --temp 0 --ignore-eos -t 1 < " + input);
  INFO("stderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  const std::vector<json> replies = JsonLines(r.out);
  REQUIRE(replies.size() == 2);
  CHECK(replies[0]["n_gen"] == 5);
  CHECK(replies[0]["n_reused"] == 0);
  // Turn 2 computes only its new tokens.
  CHECK(replies[1]["n_reused"].get<int>() >= replies[0]["n_prompt"].get<int>());
  CHECK(replies[1]["n_prompt"].get<int>() - replies[1]["n_reused"].get<int>() < 24);
  // /save wrote the conversation.
  const json doc = json::parse(ember::test::ReadFile(saved));
  REQUIRE(doc["messages"].size() == 4);
  CHECK(doc["messages"][0]["content"] == "Hello there.");
  CHECK(doc["messages"][1]["content"] == replies[0]["content"]);
  CHECK(doc["messages"][3]["role"] == "assistant");

  // /load continues it: the next reply sees 5 messages' worth of prompt.
  const std::string input2 = WriteText("chat_in2.txt", "/load " + saved + "\nThird?\n");
  const auto r2 = RunEmber("chat -m " + model + " --json -n 3 --temp 0 -t 1 < " + input2);
  INFO("stderr: " << r2.err);
  REQUIRE(r2.exit_code == 0);
  const std::vector<json> replies2 = JsonLines(r2.out);
  REQUIRE(replies2.size() == 1);
  CHECK(replies2[0]["n_prompt"].get<int>() > replies[1]["n_prompt"].get<int>());
}

TEST_CASE("run cli: --chat and --self-consistency", "[cli][chat]") {
  const std::string model = ChatModel();
  // --chat: the prompt as a user message in the model's template.
  const auto chat = RunEmber(
      "run -m " + model + " --chat --system 'Be brief.' -p Hi -n 4 --temp 0 --json --ignore-eos");
  INFO("stderr: " << chat.err);
  REQUIRE(chat.exit_code == 0);
  const json c = json::parse(chat.out);
  const auto plain = RunEmber(
      "run -m " + model + " -p " +
      ShellQuote("<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
                 "<|im_start|>assistant\n") +
      " -n 4 --temp 0 --json --ignore-eos");
  REQUIRE(plain.exit_code == 0);
  // The same tokens as the template's text typed by hand (special tokens parsed).
  CHECK(c["n_prompt"] == json::parse(plain.out)["n_prompt"]);
  CHECK(c["tokens"] == json::parse(plain.out)["tokens"]);

  const auto sc = RunEmber("run -m " + model +
                           " -p 'What is 6 times 7?' --self-consistency 4 -n 6 --temp 1 --seed 3 "
                           "--ignore-eos --json");
  INFO("stderr: " << sc.err);
  REQUIRE(sc.exit_code == 0);
  const json r = json::parse(sc.out);
  REQUIRE(r["samples"].size() == 4);
  int total = 0;
  for (const auto& t : r["tally"]) total += t["votes"].get<int>();
  CHECK(total <= 4);
  if (!r["tally"].empty()) {
    CHECK(r["answer"] == r["tally"][0]["answer"]);
    CHECK(r["votes"] == r["tally"][0]["votes"]);
  }
  RequireCleanError(RunEmber("run -m " + model + " -p x --self-consistency 2 --beams 2"),
                    "does not combine with --beams");
  RequireCleanError(RunEmber("run -m " + model + " -p x --system y"), "--system needs --chat");
}

TEST_CASE("run and chat cli: speculative decoding gives the same text", "[cli][speculative]") {
  const std::string model = ChatModel();
  const std::string prompt = ShellQuote("a b c d a b c d a b c d a b");
  const auto plain = RunEmber("run -m " + model + " -p " + prompt + " -n 40 --temp 0 --json -t 1");
  REQUIRE(plain.exit_code == 0);
  for (const std::string& how :
       {std::string("--lookup 3"), "--draft-model " + model + " --draft-max 4"}) {
    const auto r =
        RunEmber("run -m " + model + " -p " + prompt + " -n 40 --temp 0 --json -t 1 " + how);
    INFO(how << ": " << r.err);
    REQUIRE(r.exit_code == 0);
    const json a = json::parse(plain.out), b = json::parse(r.out);
    CHECK(a["tokens"] == b["tokens"]);
    REQUIRE(b.contains("speculative"));
    CHECK(b["speculative"]["drafted"].get<int>() > 0);
    CHECK(r.err.find("speculative:") != std::string::npos);
  }
  const std::string input = WriteText("spec_chat.txt", "Hello there.\nAgain?\n");
  const auto c = RunEmber("chat -m " + model +
                          " --json -n 6 --temp 0 --ignore-eos -t 1 --lookup 2 < " + input);
  INFO(c.err);
  REQUIRE(c.exit_code == 0);
  const std::vector<json> replies = JsonLines(c.out);
  REQUIRE(replies.size() == 2);
  CHECK(replies[1].contains("speculative"));
  RequireCleanError(RunEmber("run -m " + model + " -p x --lookup 2 --draft-model " + model),
                    "--draft-model or --lookup, not both");
  RequireCleanError(RunEmber("run -m " + model + " -p x --draft-max 4"),
                    "--draft-max needs --draft-model or --lookup");
  RequireCleanError(
      RunEmber("run -m " + model + " -p x --draft-model " + ember::test::DefaultTinyModel()),
      "another vocabulary");
}

TEST_CASE("chat cli: bad input", "[cli][chat][bad-input]") {
  const std::string model = ChatModel();
  SECTION("invalid UTF-8 in a message: said, and the chat goes on") {
    const std::string input = WriteText("chat_bad.txt", "ok\nbad \xff\xfe\nstill here\n");
    const auto r = RunEmber("chat -m " + model + " --json -n 2 --temp 0 -t 1 < " + input);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("not valid UTF-8") != std::string::npos);
    CHECK(JsonLines(r.out).size() == 2);
  }
  SECTION("a template that does not parse names its line") {
    const std::string bad = WriteText("bad.jinja", "{{ bos_token }}\n{% for m in messages %}\n");
    RequireCleanError(RunEmber("chat -m " + model + " --template " + bad + " < /dev/null"), "line");
  }
  SECTION("a model without a template offers --template") {
    RequireCleanError(RunEmber("chat -m " + ember::test::DefaultTinyModel() + " < /dev/null"),
                      "--template");
  }
  SECTION("a template name the model does not have") {
    RequireCleanError(RunEmber("chat -m " + model + " --template tool_use < /dev/null"),
                      "tokenizer.chat_template.tool_use");
  }
  SECTION("unknown --reasoning") {
    RequireCleanError(RunEmber("chat -m " + model + " --reasoning loud < /dev/null"),
                      "--reasoning expects show or hide");
  }
}

namespace {

// A tmux session running a command, for the terminal tests; killed at the end.
class Tmux {
 public:
  explicit Tmux(const std::string& command) : name_("ember_test_" + std::to_string(getpid())) {
    ok_ = std::system(("tmux -L " + name_ + " new-session -d -s " + name_ + " -x 160 -y 50 " +
                       ShellQuote(command) + " 2>/dev/null")
                          .c_str()) == 0;
  }
  ~Tmux() { std::system(("tmux -L " + name_ + " kill-server 2>/dev/null").c_str()); }
  bool ok() const { return ok_; }
  void Keys(const std::string& keys) {
    std::system(("tmux -L " + name_ + " send-keys -t " + name_ + " " + keys).c_str());
  }
  std::string Screen() {
    const std::string out = ember::test::TempPath("pane.txt");
    std::system(
        ("tmux -L " + name_ + " capture-pane -p -S -200 -t " + name_ + " > " + out + " 2>/dev/null")
            .c_str());
    return ember::test::ReadFile(out);
  }
  // Waits up to `seconds` for `text` to appear `times` times on the screen.
  bool WaitFor(const std::string& text, double seconds, int times = 1) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < end) {
      const std::string s = Screen();
      int n = 0;
      for (size_t at = s.find(text); at != std::string::npos; at = s.find(text, at + 1)) ++n;
      if (n >= times) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }
  // The last non-empty line of the screen (tmux drops trailing spaces).
  std::string LastLine() {
    const std::string s = Screen();
    size_t end = s.find_last_not_of("\n ");
    if (end == std::string::npos) return "";
    const size_t start = s.rfind('\n', end);
    return s.substr(start == std::string::npos ? 0 : start + 1, end + 1 - (start + 1));
  }
  // Waits up to `seconds` for the prompt ">" to be the last line.
  bool WaitForPrompt(double seconds) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < end) {
      if (LastLine() == ">") return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }
  bool Alive() {
    return std::system(
               ("tmux -L " + name_ + " has-session -t " + name_ + " 2>/dev/null").c_str()) == 0;
  }

 private:
  std::string name_;
  bool ok_ = false;
};

}  // namespace

TEST_CASE("chat cli: in a terminal, as a person uses it", "[cli][chat][tty]") {
  if (std::system("command -v tmux >/dev/null 2>&1") != 0) EMBER_SKIP("tmux is not installed");
  const std::string model = ChatModel();
  const std::string done = ember::test::TempPath("chat_done");
  // The shell writes the exit code after ember ends, so the test can see it.
  const std::string home = ember::test::TempPath("home");
  Tmux t("mkdir -p " + home + "; HOME=" + home + " " + ember::test::CliPath() + " chat -m " +
         model + " -t 1 --temp 0 --ignore-eos -n 1000000 -c 65536; echo exit=$? > " + done +
         "; sleep 30");
  REQUIRE(t.ok());
  REQUIRE(t.WaitFor("/help lists the commands", 60));
  // A reply that would run to the end of the context: Ctrl-C stops it and
  // the prompt comes back.
  t.Keys("'Write a very long story.' Enter");
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  t.Keys("C-c");
  INFO("screen:\n" << t.Screen());
  REQUIRE(t.WaitFor("[reply stopped]", 30));
  REQUIRE(t.WaitForPrompt(10));
  // Ctrl-C at the prompt drops the line typed so far, and the program stays.
  t.Keys("'half a line'");
  REQUIRE(t.WaitFor("half a line", 10));
  t.Keys("C-c");
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  REQUIRE(t.WaitForPrompt(10));
  CHECK(t.Alive());
  CHECK_FALSE(ember::test::FileExists(done));
  // Commands work at the prompt.
  t.Keys("/stats Enter");
  CHECK(t.WaitFor("messages; context", 10));
  t.Keys("/reset Enter");
  CHECK(t.WaitFor("the conversation is reset", 10));
  REQUIRE(t.WaitForPrompt(10));
  // Ctrl-D ends the program normally.
  t.Keys("C-d");
  bool exited = false;
  for (int i = 0; i < 100 && !exited; ++i) {
    exited = ember::test::FileExists(done);
    if (!exited) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  REQUIRE(exited);
  CHECK(ember::test::ReadFile(done) == "exit=0\n");
}
