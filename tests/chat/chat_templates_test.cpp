// Real chat templates rendered by ember equal Python jinja2's renderings byte
// for byte: every template in ../shared/templates and the templates inside the
// real models, for the conversations in tests/data/chat/cases. The expected
// renderings (or the error jinja2 raised) are in tests/data/chat/expected,
// written by scripts/render_templates.py. When jinja2 raised, ember must fail
// with the same message (after its "name:line: " prefix).
#include <catch2/catch.hpp>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "runtime/chat/chat_template.h"
#include "runtime/gguf/gguf.h"
#include "support/skip.h"
#include "support/test_paths.h"

using ember::ChatTemplate;
using ember::ChatTemplateOptions;
using json = nlohmann::ordered_json;
namespace fs = std::filesystem;

namespace {

std::string DataDir() { return ember::test::SourceDir() + "/tests/data/chat"; }

json ReadJson(const std::string& path) {
  const std::string text = ember::test::ReadFile(path);
  REQUIRE_FALSE(text.empty());
  return json::parse(text);
}

// The message of an ember error without "name:line: " and "raise_exception: ".
std::string BareMessage(const std::string& m) {
  std::string r = m;
  const size_t colon = r.find(": ");
  if (colon != std::string::npos) r = r.substr(colon + 2);
  const std::string raised = "raise_exception: ";
  if (r.compare(0, raised.size(), raised) == 0) r = r.substr(raised.size());
  return r;
}

// The message of a jinja2 error as the script wrote it: "TypeName: message".
std::string Jinja2Message(const std::string& e) {
  const size_t colon = e.find(": ");
  return colon == std::string::npos ? e : e.substr(colon + 2);
}

// Renders every case of `expected` with `tmpl`; returns how many match.
int CheckRenderings(const ChatTemplate& tmpl, const json& expected, int* total) {
  int same = 0;
  for (const auto& [name, want] : expected["cases"].items()) {
    const json c = ReadJson(DataDir() + "/cases/" + name + ".json");
    ChatTemplateOptions o;
    o.add_generation_prompt = c.value("add_generation_prompt", true);
    o.bos_token = expected["bos_token"].get<std::string>();
    o.eos_token = expected["eos_token"].get<std::string>();
    o.now_unix = expected["now"].get<int64_t>();
    if (c.contains("tools")) o.tools = c["tools"];
    if (c.contains("enable_thinking")) o.enable_thinking = c["enable_thinking"].get<bool>();
    std::string out;
    const ember::Status s = tmpl.Apply(c["messages"], o, &out);
    INFO("template " << tmpl.name() << ", case " << name);
    INFO("ember: " << (s.ok() ? "ok" : s.message()));
    bool ok;
    if (want.contains("output")) {
      ok = s.ok() && out == want["output"].get<std::string>();
      CHECK(s.ok());
      CHECK(out == want["output"].get<std::string>());
    } else {
      const std::string jinja2 = Jinja2Message(want["error"].get<std::string>());
      INFO("jinja2: " << want["error"].get<std::string>());
      ok = !s.ok() && BareMessage(s.message()) == jinja2;
      CHECK_FALSE(s.ok());
      CHECK(BareMessage(s.message()) == jinja2);
    }
    same += ok ? 1 : 0;
    ++*total;
  }
  return same;
}

}  // namespace

TEST_CASE("chat templates: every template in ../shared/templates renders as jinja2 does",
          "[chat][templates]") {
  const std::string dir = ember::test::SharedDir() + "/templates";
  if (!fs::is_directory(dir)) EMBER_SKIP("no " + dir);
  int templates = 0, identical = 0, renderings = 0, same_renderings = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".jinja") continue;
    const std::string stem = entry.path().stem().string();
    const std::string expected_path = DataDir() + "/expected/" + stem + ".json";
    INFO("template " << stem << " (expected renderings: scripts/render_templates.py)");
    REQUIRE(fs::exists(expected_path));
    const json expected = ReadJson(expected_path);
    ChatTemplate tmpl;
    const ember::Status parsed =
        ChatTemplate::Parse(ember::test::ReadFile(entry.path().string()), stem, &tmpl);
    INFO("parse: " << parsed.message());
    REQUIRE(parsed.ok());
    int n = 0;
    const int same = CheckRenderings(tmpl, expected, &n);
    ++templates;
    identical += same == n ? 1 : 0;
    renderings += n;
    same_renderings += same;
  }
  // Every expected file has its template (no stale data).
  for (const auto& entry : fs::directory_iterator(DataDir() + "/expected")) {
    const std::string stem = entry.path().stem().string();
    if (stem.rfind("model-", 0) == 0) continue;
    INFO("expected file without a template: " << stem);
    CHECK(fs::exists(dir + "/" + stem + ".jinja"));
  }
  std::cout << "chat templates: " << identical << " of " << templates
            << " templates render identically to jinja2 (" << same_renderings << " of "
            << renderings << " renderings)\n";
  CHECK(templates >= 68);
  CHECK(identical == templates);
}

TEST_CASE("chat templates: the real models' templates render as jinja2 does", "[chat][templates]") {
  int models = 0;
  for (const auto& entry : fs::directory_iterator(DataDir() + "/expected")) {
    const std::string stem = entry.path().stem().string();
    if (stem.rfind("model-", 0) != 0) continue;
    const json expected = ReadJson(entry.path().string());
    // "file.gguf:tokenizer.chat_template[.NAME]"
    const std::string source = expected["template"].get<std::string>();
    const size_t colon = source.find(':');
    REQUIRE(colon != std::string::npos);
    const std::string path = ember::test::ModelPath(source.substr(0, colon));
    if (path.empty()) continue;
    std::unique_ptr<ember::GgufFile> gguf;
    REQUIRE(ember::GgufFile::Open(path, &gguf).ok());
    std::string text;
    REQUIRE(gguf->GetString(source.substr(colon + 1), &text).ok());
    ChatTemplate tmpl;
    const ember::Status parsed = ChatTemplate::Parse(text, source, &tmpl);
    INFO("parse: " << parsed.message());
    REQUIRE(parsed.ok());
    int n = 0;
    CHECK(CheckRenderings(tmpl, expected, &n) == n);
    ++models;
  }
  if (models == 0) EMBER_SKIP("none of the models is in " + ember::test::ModelsDir());
  std::cout << "chat templates: " << models << " model templates checked\n";
}
