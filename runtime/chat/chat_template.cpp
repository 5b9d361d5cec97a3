// Chat templates over the Jinja engine: JSON messages in, the prompt out.
#include "runtime/chat/chat_template.h"

#include <utility>

#include "runtime/chat/jinja_eval.h"
#include "runtime/chat/jinja_parser.h"

namespace ember {
namespace {

// Offset of the first byte that is not valid UTF-8, or npos.
size_t InvalidUtf8At(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    const size_t n = b < 0x80             ? 0
                     : (b & 0xE0) == 0xC0 ? 1
                     : (b & 0xF0) == 0xE0 ? 2
                     : (b & 0xF8) == 0xF0 ? 3
                                          : 9;
    if (n == 9 || (n > 0 && i + n >= s.size())) return i;
    for (size_t k = 1; k <= n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return i;
    }
    i += n + 1;
  }
  return std::string::npos;
}

Status FromJson(const nlohmann::ordered_json& j, int depth, jinja::Value* out) {
  using jinja::Value;
  if (depth > jinja::kMaxValueDepth) {
    return InvalidArgument("JSON nested more than " + std::to_string(jinja::kMaxValueDepth) +
                           " levels deep");
  }
  switch (j.type()) {
    case nlohmann::ordered_json::value_t::null:
      *out = Value::None();
      return Status::Ok();
    case nlohmann::ordered_json::value_t::boolean:
      *out = Value::Bool(j.get<bool>());
      return Status::Ok();
    case nlohmann::ordered_json::value_t::number_integer:
      *out = Value::Int(j.get<int64_t>());
      return Status::Ok();
    case nlohmann::ordered_json::value_t::number_unsigned: {
      const auto u = j.get<uint64_t>();
      *out = u <= static_cast<uint64_t>(INT64_MAX) ? Value::Int(static_cast<int64_t>(u))
                                                   : Value::Float(static_cast<double>(u));
      return Status::Ok();
    }
    case nlohmann::ordered_json::value_t::number_float:
      *out = Value::Float(j.get<double>());
      return Status::Ok();
    case nlohmann::ordered_json::value_t::string:
      *out = Value::String(j.get<std::string>());
      return Status::Ok();
    case nlohmann::ordered_json::value_t::array: {
      std::vector<Value> items(j.size());
      for (size_t i = 0; i < j.size(); ++i) {
        EMBER_RETURN_IF_ERROR(FromJson(j[i], depth + 1, &items[i]));
      }
      return Value::List(std::move(items), jinja::ListKind::kList, out);
    }
    case nlohmann::ordered_json::value_t::object: {
      auto d = std::make_shared<jinja::DictData>();
      for (auto it = j.begin(); it != j.end(); ++it) {
        Value v;
        EMBER_RETURN_IF_ERROR(FromJson(it.value(), depth + 1, &v));
        d->Set(it.key(), std::move(v));
      }
      return Value::Dict(std::move(d), out);
    }
    default:
      return InvalidArgument("unsupported JSON value (binary data)");
  }
}

}  // namespace

Status ChatTemplate::Parse(std::string source, std::string name, ChatTemplate* out) {
  const size_t bad = InvalidUtf8At(source);
  if (bad != std::string::npos) {
    return BadFormat(name + ": the template is not valid UTF-8 (byte " + std::to_string(bad) + ")");
  }
  auto parsed = std::make_shared<jinja::Template>();
  EMBER_RETURN_IF_ERROR(jinja::ParseTemplate(source, name, jinja::LexOptions{}, parsed.get()));
  out->source_ = std::move(source);
  out->name_ = std::move(name);
  out->parsed_ = std::move(parsed);
  return Status::Ok();
}

Status ChatTemplate::Apply(const nlohmann::ordered_json& messages, const ChatTemplateOptions& opts,
                           std::string* out) const {
  using jinja::Value;
  out->clear();
  if (!parsed_) return InvalidArgument("chat template: not parsed");
  if (!messages.is_array()) return InvalidArgument("chat template: messages must be a JSON array");
  for (size_t i = 0; i < messages.size(); ++i) {
    if (!messages[i].is_object()) {
      return InvalidArgument("chat template: message " + std::to_string(i) +
                             " is not a JSON object");
    }
  }
  if (!opts.extra.is_null() && !opts.extra.is_object()) {
    return InvalidArgument("chat template: extra variables must be a JSON object");
  }
  jinja::DictData vars;
  Value v;
  EMBER_RETURN_IF_ERROR(FromJson(messages, 0, &v));
  vars.Set("messages", std::move(v));
  vars.Set("add_generation_prompt", Value::Bool(opts.add_generation_prompt));
  vars.Set("bos_token", Value::String(opts.bos_token));
  vars.Set("eos_token", Value::String(opts.eos_token));
  if (!opts.tools.is_null()) {
    EMBER_RETURN_IF_ERROR(FromJson(opts.tools, 0, &v));
    vars.Set("tools", std::move(v));
  }
  if (opts.enable_thinking.has_value()) {
    vars.Set("enable_thinking", Value::Bool(*opts.enable_thinking));
  }
  if (opts.extra.is_object()) {
    for (auto it = opts.extra.begin(); it != opts.extra.end(); ++it) {
      EMBER_RETURN_IF_ERROR(FromJson(it.value(), 0, &v));
      vars.Set(it.key(), std::move(v));
    }
  }
  jinja::RenderOptions ro;
  ro.now_unix = opts.now_unix;
  jinja::Interpreter interp(*parsed_, ro);
  return interp.Render(vars, out);
}

}  // namespace ember
