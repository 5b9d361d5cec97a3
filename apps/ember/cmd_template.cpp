// ember template: print a chat template's rendering of a conversation, as
// Hugging Face transformers (Python jinja2) renders it. A debugging tool, like
// ember sample: the prompt `ember chat` would feed the model.
#include <cstdio>
#include <ctime>
#include <string>

#include <nlohmann/json.hpp>

#include "cli.h"

namespace cli {
namespace {

using json = nlohmann::ordered_json;

json ParseJsonFile(const std::string& path) {
  const std::string text = ReadTextFile(path);
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    throw UsageError{path + ": " + e.what()};
  }
}

// The text of a special token (BOS, EOS) as the template sees it; "" when there is none.
std::string SpecialTokenText(ember_model* model, int32_t token) {
  if (token < 0) return "";
  size_t n = 0;
  ember_token_to_piece(model, token, true, nullptr, 0, &n);
  std::string text(n, '\0');
  Check(ember_token_to_piece(model, token, true, text.data(), text.size(), &n), "special token");
  text.resize(n);
  return text;
}

// One line: a template error may carry newlines (raise_exception's message).
std::string OneLine(std::string s) {
  for (char& c : s) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return s;
}

}  // namespace

int TemplateCommand(int argc, char** argv) {
  const std::vector<OptionSpec> specs = {
      {"--model", "-m", "MODEL", "the GGUF model whose tokenizer.chat_template to render"},
      {"--template", "", "FILE", "a Jinja chat template file instead of a model's"},
      {"--name", "", "NAME", "the model's named template tokenizer.chat_template.NAME"},
      {"--messages", "", "FILE",
       "JSON: an array of messages {role, content, ...}, or an object with \"messages\" "
       "(and optionally \"tools\", \"add_generation_prompt\", \"enable_thinking\")"},
      {"--tools", "", "FILE", "JSON: the tools list (the variable `tools`)"},
      {"--bos", "", "S", "the variable bos_token (default: the model's BOS text, or \"\")"},
      {"--eos", "", "S", "the variable eos_token (default: the model's EOS text, or \"\")"},
      {"--no-generation-prompt", "", "", "add_generation_prompt = false (default true)"},
      {"--enable-thinking", "", "0|1", "the variable enable_thinking (default: undefined)"},
      {"--now", "", "SECONDS", "strftime_now's clock, Unix seconds UTC (default: now)"},
      {"--print-template", "", "",
       "print the template itself instead (with -m: the model's, or ember's built-in one when "
       "the file has none)"},
      {"--json", "", "",
       "with --print-template: one JSON object (template, name, builtin, bos_token, eos_token, "
       "add_bos)"},
  };
  Args args;
  if (!args.Parse("template",
                  "(-m MODEL | --template FILE) --messages FILE.json [--bos S] [--eos S] "
                  "[--no-generation-prompt] [--name NAME] [--tools FILE.json] "
                  "[--enable-thinking 0|1] [--now SECONDS]",
                  specs, argc, argv)) {
    return 0;
  }
  if (args.Has("--model") == args.Has("--template")) {
    throw UsageError{"give exactly one of -m MODEL and --template FILE"};
  }
  const bool print_template = args.Has("--print-template");
  if (!args.Has("--messages") && !print_template) {
    throw UsageError{"--messages FILE.json is required"};
  }
  if (args.Has("--json") && !print_template) throw UsageError{"--json needs --print-template"};
  if (args.Has("--name") && !args.Has("--model")) {
    throw UsageError{"--name selects a model's named template: it needs -m MODEL"};
  }

  std::string tmpl, name, bos, eos;
  bool builtin = false, add_bos = false;
  if (args.Has("--template")) {
    name = args.Get("--template");
    tmpl = ReadTextFile(name);
  } else {
    const std::string path = ResolveModelPath(args);
    ModelPtr model(LoadModel(path, /*vocab_only=*/true));
    const std::string key =
        "tokenizer.chat_template" + (args.Has("--name") ? "." + args.Get("--name") : "");
    const std::string template_name = args.Get("--name");
    const char* tname = args.Has("--name") ? template_name.c_str() : nullptr;
    size_t n = 0;
    if (ember_chat_model_template(model.get(), tname, nullptr, 0, &n, &builtin) !=
        EMBER_ERR_BUFFER_TOO_SMALL) {
      throw UsageError{path + ": " + ember_last_error() + " (give one with --template FILE)"};
    }
    tmpl.resize(n);
    Check(ember_chat_model_template(model.get(), tname, tmpl.data(), tmpl.size(), &n, &builtin),
          "chat template");
    tmpl.resize(n - 1);
    ember_model_info info;
    Check(ember_model_get_info(model.get(), &info), "model info");
    bos = SpecialTokenText(model.get(), info.bos_token);
    eos = SpecialTokenText(model.get(), info.eos_token);
    name = builtin ? "ember's built-in template" : path + ":" + key;
    add_bos = info.add_bos;
  }
  bos = args.Get("--bos", bos);
  eos = args.Get("--eos", eos);
  if (print_template) {
    if (args.Has("--json")) {
      const json info = {{"template", tmpl}, {"name", name},     {"builtin", builtin},
                         {"bos_token", bos}, {"eos_token", eos}, {"add_bos", add_bos}};
      std::printf("%s\n", info.dump().c_str());
    } else {
      std::fwrite(tmpl.data(), 1, tmpl.size(), stdout);
    }
    return 0;
  }

  // The conversation: an array, or a request-like object.
  const json doc = ParseJsonFile(args.Get("--messages"));
  json messages = doc, tools;
  ember_chat_template_params p = ember_chat_template_default_params();
  if (doc.is_object()) {
    if (!doc.contains("messages")) {
      throw UsageError{args.Get("--messages") + ": an object needs a \"messages\" array"};
    }
    messages = doc["messages"];
    if (doc.contains("tools")) tools = doc["tools"];
    if (doc.contains("add_generation_prompt")) {
      p.add_generation_prompt =
          doc["add_generation_prompt"].is_boolean() && doc["add_generation_prompt"].get<bool>();
    }
    if (doc.contains("enable_thinking") && doc["enable_thinking"].is_boolean()) {
      p.enable_thinking = doc["enable_thinking"].get<bool>() ? 1 : 0;
    }
  }
  if (args.Has("--tools")) tools = ParseJsonFile(args.Get("--tools"));
  if (args.Has("--no-generation-prompt")) p.add_generation_prompt = false;
  if (args.Has("--enable-thinking")) {
    p.enable_thinking = static_cast<int32_t>(args.GetInt("--enable-thinking", 0, 0, 1));
  }
  // One clock for both calls below (a date could change between them).
  p.now_unix = args.Has("--now") ? args.GetInt("--now", -1, 0, INT64_MAX)
                                 : static_cast<int64_t>(std::time(nullptr));

  const std::string messages_text = messages.dump();
  const std::string tools_text = tools.is_null() ? "" : tools.dump();
  p.bos_token = bos.c_str();
  p.eos_token = eos.c_str();
  p.tools_json = tools.is_null() ? nullptr : tools_text.c_str();
  p.name = name.c_str();
  size_t needed = 0;
  ember_status s =
      ember_chat_template_render(tmpl.c_str(), messages_text.c_str(), &p, nullptr, 0, &needed);
  std::string out;
  if (s == EMBER_ERR_BUFFER_TOO_SMALL) {
    out.resize(needed);
    s = ember_chat_template_render(tmpl.c_str(), messages_text.c_str(), &p, out.data(), out.size(),
                                   &needed);
  }
  if (s != EMBER_OK) throw UsageError{OneLine(ember_last_error())};
  out.resize(needed - 1);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

}  // namespace cli
