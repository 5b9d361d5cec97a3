// JsonSchemaToGbnf: the keywords a schema may use, references, combinations
// (allOf merges its parts; anyOf and oneOf become alternatives), enum and
// const, the built-in rules, and the grammar's text. The rules of each JSON
// type are in json_schema_types.cpp.
#include "runtime/constrain/json_schema.h"

#include <algorithm>

#include "runtime/constrain/json_schema_internal.h"

namespace ember {
namespace schema {
namespace {

// Keywords that constrain values, and keywords that do not (annotations and
// definitions) and are therefore skipped. Anything else is an error.
const std::set<std::string>& ConstraintKeywords() {
  static const std::set<std::string> k = {"type",
                                          "properties",
                                          "required",
                                          "additionalProperties",
                                          "items",
                                          "prefixItems",
                                          "enum",
                                          "const",
                                          "anyOf",
                                          "oneOf",
                                          "allOf",
                                          "minItems",
                                          "maxItems",
                                          "minLength",
                                          "maxLength",
                                          "minimum",
                                          "maximum",
                                          "exclusiveMinimum",
                                          "exclusiveMaximum",
                                          "pattern",
                                          "format",
                                          "$ref"};
  return k;
}
const std::set<std::string>& IgnoredKeywords() {
  static const std::set<std::string> k = {"$defs",    "definitions", "title",    "description",
                                          "default",  "examples",    "$schema",  "$id",
                                          "$comment", "deprecated",  "readOnly", "writeOnly"};
  return k;
}

struct BuiltIn {
  const char* name;
  const char* body;
  std::vector<const char*> uses;
};

const std::vector<BuiltIn>& BuiltIns() {
  static const std::vector<BuiltIn> k = {
      {"space", "| \" \" | \"\\n\" [ \\t]{0,20}", {}},
      {"char", "[^\"\\\\\\x00-\\x1F] | \"\\\\\" ([\"\\\\/bfnrt] | \"u\" [0-9a-fA-F]{4})", {}},
      {"string", "\"\\\"\" char* \"\\\"\" space", {"char", "space"}},
      {"integral-part", "\"0\" | [1-9] [0-9]{0,15}", {}},
      {"number",
       "\"-\"? integral-part (\".\" [0-9]{1,16})? ([eE] [-+]? [0-9]{1,3})? space",
       {"integral-part", "space"}},
      {"integer", "\"-\"? integral-part space", {"integral-part", "space"}},
      {"boolean", "(\"true\" | \"false\") space", {"space"}},
      {"null", "\"null\" space", {"space"}},
      {"value",
       "object | array | string | number | boolean | null",
       {"object", "array", "string", "number", "boolean", "null"}},
      {"object",
       "\"{\" space (string \":\" space value (\",\" space string \":\" space value)*)? \"}\" "
       "space",
       {"string", "value", "space"}},
      {"array", "\"[\" space (value (\",\" space value)*)? \"]\" space", {"value", "space"}},
      // Valid dates only: months with their lengths, February up to the 28th.
      {"date",
       "[0-9]{4} \"-\" ((\"0\" [13578] | \"1\" [02]) \"-\" (\"0\" [1-9] | [12] [0-9] | \"3\" "
       "[01]) | (\"0\" [469] | \"11\") \"-\" (\"0\" [1-9] | [12] [0-9] | \"30\") | \"02-\" (\"0\" "
       "[1-9] | \"1\" [0-9] | \"2\" [0-8]))",
       {}},
      {"time",
       "([01] [0-9] | \"2\" [0-3]) \":\" [0-5] [0-9] \":\" [0-5] [0-9] (\".\" [0-9]{1,6})? (\"Z\" "
       "| [+-] ([01] [0-9] | \"2\" [0-3]) \":\" [0-5] [0-9])",
       {}},
      {"date-time", "date \"T\" time", {"date", "time"}},
      {"uuid",
       "[0-9a-f]{8} \"-\" [0-9a-f]{4} \"-\" [0-9a-f]{4} \"-\" [0-9a-f]{4} \"-\" [0-9a-f]{12}",
       {}},
  };
  return k;
}

std::string Join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

// The JSON value types `v` has as a schema type name.
bool HasType(const Json& v, const std::string& t) {
  if (t == "string") return v.is_string();
  if (t == "number") return v.is_number();
  if (t == "integer") {
    return v.is_number_integer() ||
           (v.is_number_float() &&
            v.get<double>() == static_cast<double>(static_cast<int64_t>(v.get<double>())));
  }
  if (t == "boolean") return v.is_boolean();
  if (t == "null") return v.is_null();
  if (t == "object") return v.is_object();
  if (t == "array") return v.is_array();
  return false;
}

}  // namespace

std::string Literal(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        out += c;
    }
  }
  return out + "\"";
}

std::string Converter::UniqueName(const std::string& name) {
  std::string base;
  for (const char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (ok) {
      base += c;
    } else if (!base.empty() && base.back() != '-') {
      base += '-';
    }
  }
  while (!base.empty() && base.back() == '-') base.pop_back();
  if (base.empty()) base = "r";
  std::string n = base;
  for (int i = 2; names_.count(n) != 0; ++i) n = base + "-" + std::to_string(i);
  names_.insert(n);
  return n;
}

std::string Converter::AddRule(const std::string& name, const std::string& body) {
  auto it = by_body_.find(body);
  if (it != by_body_.end()) return it->second;
  const std::string n = UniqueName(name);
  rules_.emplace_back(n, body);
  by_body_[body] = n;
  return n;
}

std::string Converter::Primitive(const std::string& name) {
  if (names_.count(name) != 0) return name;
  for (const BuiltIn& b : BuiltIns()) {
    if (name != b.name) continue;
    names_.insert(name);
    rules_.emplace_back(name, b.body);
    for (const char* u : b.uses) Primitive(u);
    return name;
  }
  return name;  // (only called with the names above)
}

Status Converter::CheckKeywords(const Json& s, const std::string& where) const {
  for (auto it = s.begin(); it != s.end(); ++it) {
    if (ConstraintKeywords().count(it.key()) || IgnoredKeywords().count(it.key())) continue;
    return Status(Code::kUnsupported,
                  "unsupported JSON schema keyword '" + it.key() + "' at " + where);
  }
  return Status::Ok();
}

Status Converter::Resolve(const std::string& ref, const std::string& where,
                          const Json** out) const {
  if (ref.empty() || ref[0] != '#') {
    return Status(Code::kUnsupported,
                  "$ref '" + ref + "' at " + where + " points into another document");
  }
  const Json* at = &root_;
  std::string pointer = ref.substr(1);
  size_t pos = 0;
  if (!pointer.empty() && pointer[0] != '/') {
    return InvalidArgument("$ref '" + ref + "' at " + where + " is not a JSON pointer (#/...)");
  }
  while (pos < pointer.size()) {
    const size_t next = std::min(pointer.find('/', pos + 1), pointer.size());
    std::string key;
    for (size_t i = pos + 1; i < next; ++i) {  // ~1 is '/', ~0 is '~'
      if (pointer[i] == '~' && i + 1 < next && (pointer[i + 1] == '0' || pointer[i + 1] == '1')) {
        key += pointer[++i] == '0' ? '~' : '/';
      } else {
        key += pointer[i];
      }
    }
    if (at->is_object() && at->contains(key)) {
      at = &(*at)[key];
    } else if (at->is_array() && !key.empty() &&
               key.find_first_not_of("0123456789") == std::string::npos &&
               std::stoull(key) < at->size()) {
      at = &(*at)[std::stoull(key)];
    } else {
      return InvalidArgument("$ref '" + ref + "' at " + where + " leads nowhere");
    }
    pos = next;
  }
  *out = at;
  return Status::Ok();
}

Status Converter::RefRule(const std::string& ref, const std::string& where, std::string* expr) {
  auto it = refs_.find(ref);
  if (it != refs_.end()) {
    *expr = it->second;
    return Status::Ok();
  }
  const Json* target = nullptr;
  EMBER_RETURN_IF_ERROR(Resolve(ref, where, &target));
  // Reserve the rule first: the target may refer to itself.
  const size_t slash = ref.rfind('/');
  const std::string rule = UniqueName(
      "ref-" + (slash == std::string::npos || slash + 1 == ref.size() ? std::string("root")
                                                                      : ref.substr(slash + 1)));
  refs_[ref] = rule;
  const size_t index = rules_.size();
  rules_.emplace_back(rule, "");
  std::string body;
  EMBER_RETURN_IF_ERROR(Visit(*target, ref, rule + "-value", &body));
  rules_[index].second = body;
  *expr = rule;
  return Status::Ok();
}

Status Converter::MergeKey(const std::string& key, const Json& a, const Json& b,
                           const std::string& where, Json* out) {
  if (a == b) {
    *out = a;
    return Status::Ok();
  }
  const auto as_list = [](const Json& t) { return t.is_array() ? t : Json::array({t}); };
  if (key == "type") {
    Json both = Json::array();
    for (const Json& x : as_list(a)) {
      for (const Json& y : as_list(b)) {
        if (x == y || (x == "integer" && y == "number")) both.push_back(x);
        if (x == "number" && y == "integer") both.push_back(y);
      }
    }
    if (both.empty()) return InvalidArgument("allOf at " + where + ": the types do not overlap");
    *out = both.size() == 1 ? both[0] : both;
  } else if (key == "properties") {
    *out = a;
    for (auto it = b.begin(); it != b.end(); ++it) {
      (*out)[it.key()] = out->contains(it.key())
                             ? Json{{"allOf", Json::array({(*out)[it.key()], it.value()})}}
                             : it.value();
    }
  } else if (key == "required") {
    *out = a;
    for (const Json& r : b) {
      if (std::find(out->begin(), out->end(), r) == out->end()) out->push_back(r);
    }
  } else if (key == "additionalProperties" || key == "items") {
    if (a == false || b == false) {
      *out = false;
    } else if (a == true) {
      *out = b;
    } else if (b == true) {
      *out = a;
    } else if (a.is_array() || b.is_array()) {
      return Status(Code::kUnsupported, "allOf at " + where + ": two tuple 'items'");
    } else {
      *out = Json{{"allOf", Json::array({a, b})}};
    }
  } else if (key == "minItems" || key == "minLength" || key == "minimum" ||
             key == "exclusiveMinimum" || key == "maxItems" || key == "maxLength" ||
             key == "maximum" || key == "exclusiveMaximum") {
    if (!a.is_number() || !b.is_number()) {
      return InvalidArgument("'" + key + "' at " + where + " must be a number");
    }
    const bool lower = key.rfind("min", 0) == 0 || key == "exclusiveMinimum";
    *out = (a.get<double>() < b.get<double>()) == lower ? b : a;
  } else if (key == "enum" || key == "const") {
    const Json va = key == "const" ? Json::array({a}) : a,
               vb = key == "const" ? Json::array({b}) : b;
    Json both = Json::array();
    for (const Json& x : va) {
      if (std::find(vb.begin(), vb.end(), x) != vb.end()) both.push_back(x);
    }
    if (both.empty())
      return InvalidArgument("allOf at " + where + ": no value is in every '" + key + "'");
    *out = key == "const" ? both[0] : both;
  } else {
    return Status(Code::kUnsupported, "allOf at " + where + ": '" + key +
                                          "' in more than one part, with different values");
  }
  return Status::Ok();
}

Status Converter::Merge(const std::vector<Json>& parts, const std::string& where, int depth,
                        Json* out) {
  if (depth > 16) return Status(Code::kUnsupported, "allOf and $ref nest too deep at " + where);
  Json merged = Json::object();
  for (const Json& p : parts) {
    if (p.is_boolean()) {
      if (p.get<bool>()) continue;
      return InvalidArgument("allOf at " + where + " has a false schema: no value is valid");
    }
    if (!p.is_object()) return InvalidArgument("allOf at " + where + ": a part is not a schema");
    EMBER_RETURN_IF_ERROR(CheckKeywords(p, where));
    Json q = p;
    if (q.contains("$ref")) {  // the target's keywords hold too
      const Json* target = nullptr;
      EMBER_RETURN_IF_ERROR(Resolve(q["$ref"].get<std::string>(), where, &target));
      q.erase("$ref");
      Json sub;
      EMBER_RETURN_IF_ERROR(Merge({*target, q}, where, depth + 1, &sub));
      q = std::move(sub);
    }
    if (q.contains("allOf")) {
      if (!q["allOf"].is_array()) return InvalidArgument("allOf at " + where + " must be an array");
      std::vector<Json> inner(q["allOf"].begin(), q["allOf"].end());
      q.erase("allOf");
      inner.push_back(q);
      Json sub;
      EMBER_RETURN_IF_ERROR(Merge(inner, where, depth + 1, &sub));
      q = std::move(sub);
    }
    for (auto it = q.begin(); it != q.end(); ++it) {
      if (IgnoredKeywords().count(it.key())) continue;
      if (!merged.contains(it.key())) {
        merged[it.key()] = it.value();
      } else {
        Json m;
        EMBER_RETURN_IF_ERROR(MergeKey(it.key(), merged[it.key()], it.value(), where, &m));
        merged[it.key()] = std::move(m);
      }
    }
  }
  *out = std::move(merged);
  return Status::Ok();
}

Status Converter::Types(const Json& s, const std::string& where,
                        std::vector<std::string>* out) const {
  static const std::set<std::string> kTypes = {"string", "number", "integer", "boolean",
                                               "null",   "object", "array"};
  out->clear();
  if (s.contains("type")) {
    const Json& t = s["type"];
    for (const Json& x : t.is_array() ? t : Json::array({t})) {
      if (!x.is_string() || !kTypes.count(x.get<std::string>())) {
        return InvalidArgument("'type' at " + where + " must name JSON types (got " + x.dump() +
                               ")");
      }
      if (std::find(out->begin(), out->end(), x.get<std::string>()) == out->end()) {
        out->push_back(x.get<std::string>());
      }
    }
    if (out->empty()) return InvalidArgument("'type' at " + where + " is an empty list");
    if (std::count(out->begin(), out->end(), "number")) {  // numbers include the integers
      out->erase(std::remove(out->begin(), out->end(), "integer"), out->end());
    }
    return Status::Ok();
  }
  // No type: the types the other keywords are about.
  const auto any = [&](std::initializer_list<const char*> keys) {
    return std::any_of(keys.begin(), keys.end(), [&](const char* k) { return s.contains(k); });
  };
  if (any({"properties", "required", "additionalProperties"})) out->push_back("object");
  if (any({"items", "prefixItems", "minItems", "maxItems"})) out->push_back("array");
  if (any({"minLength", "maxLength", "pattern", "format"})) out->push_back("string");
  if (any({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})) out->push_back("number");
  return Status::Ok();
}

Status Converter::Constants(const Json& s, const std::string& where, std::string* expr) {
  const bool is_const = s.contains("const");
  if (is_const && s.contains("enum")) {
    return Status(Code::kUnsupported, "'enum' together with 'const' at " + where);
  }
  for (auto it = s.begin(); it != s.end(); ++it) {
    const std::string& k = it.key();
    if (k == "enum" || k == "const" || k == "type" || IgnoredKeywords().count(k)) continue;
    return Status(Code::kUnsupported,
                  "'" + k + "' together with '" + (is_const ? "const" : "enum") + "' at " + where);
  }
  const Json values = is_const ? Json::array({s["const"]}) : s["enum"];
  if (!values.is_array() || values.empty()) {
    return InvalidArgument("'enum' at " + where + " must be a non-empty array");
  }
  std::vector<std::string> types;
  EMBER_RETURN_IF_ERROR(Types(s, where, &types));
  std::vector<std::string> alts;
  for (const Json& v : values) {
    if (!types.empty() && std::none_of(types.begin(), types.end(),
                                       [&](const std::string& t) { return HasType(v, t); })) {
      continue;  // not of the schema's type: not valid
    }
    const std::string lit = Literal(v.dump());
    if (std::find(alts.begin(), alts.end(), lit) == alts.end()) alts.push_back(lit);
  }
  if (alts.empty()) {
    return InvalidArgument("no value of '" + std::string(is_const ? "const" : "enum") + "' at " +
                           where + " has the schema's type");
  }
  *expr =
      AddRule(where == "#" ? "root" : "enum", "(" + Join(alts, " | ") + ") " + Primitive("space"));
  return Status::Ok();
}

Status Converter::Visit(const Json& s, const std::string& where, const std::string& name,
                        std::string* expr) {
  if (s.is_boolean()) {
    if (s.get<bool>()) {
      *expr = Primitive("value");
      return Status::Ok();
    }
    return InvalidArgument("the schema at " + where + " is false: no value is valid");
  }
  if (!s.is_object()) {
    return InvalidArgument("the schema at " + where + " must be an object or a boolean");
  }
  EMBER_RETURN_IF_ERROR(CheckKeywords(s, where));
  // The keywords beside the combinators and $ref (they hold together with them).
  Json rest = Json::object();
  for (auto it = s.begin(); it != s.end(); ++it) {
    const std::string& k = it.key();
    if (k != "allOf" && k != "anyOf" && k != "oneOf" && k != "$ref" &&
        !IgnoredKeywords().count(k)) {
      rest[k] = it.value();
    }
  }
  const bool has_ref = s.contains("$ref"), has_all = s.contains("allOf");
  const bool has_any = s.contains("anyOf") || s.contains("oneOf");
  if (has_ref) {
    if (!s["$ref"].is_string()) return InvalidArgument("$ref at " + where + " must be a string");
    if (rest.empty() && !has_all && !has_any)
      return RefRule(s["$ref"].get<std::string>(), where, expr);
  }
  if (has_ref || has_all) {  // everything must hold: one merged schema
    std::vector<Json> parts;
    if (has_ref) parts.push_back(Json{{"$ref", s["$ref"]}});
    if (has_all) {
      if (!s["allOf"].is_array() || s["allOf"].empty()) {
        return InvalidArgument("'allOf' at " + where + " must be a non-empty array");
      }
      parts.insert(parts.end(), s["allOf"].begin(), s["allOf"].end());
    }
    Json self = s;
    self.erase("$ref");
    self.erase("allOf");
    parts.push_back(self);
    Json merged;
    EMBER_RETURN_IF_ERROR(Merge(parts, where, 0, &merged));
    return Visit(merged, where, name, expr);
  }
  if (has_any) {
    if (s.contains("anyOf") && s.contains("oneOf")) {
      return Status(Code::kUnsupported, "'anyOf' together with 'oneOf' at " + where);
    }
    const char* key = s.contains("anyOf") ? "anyOf" : "oneOf";
    const Json& branches = s[key];
    if (!branches.is_array() || branches.empty()) {
      return InvalidArgument("'" + std::string(key) + "' at " + where +
                             " must be a non-empty array");
    }
    std::vector<std::string> alts;
    for (size_t i = 0; i < branches.size(); ++i) {
      const std::string at = where + "/" + key + "/" + std::to_string(i);
      Json branch = branches[i];
      if (!rest.empty()) {
        EMBER_RETURN_IF_ERROR(Merge({rest, branch}, at, 0, &branch));
      }
      std::string e;
      EMBER_RETURN_IF_ERROR(Visit(branch, at, name + "-" + std::to_string(i), &e));
      if (std::find(alts.begin(), alts.end(), e) == alts.end()) alts.push_back(e);
    }
    *expr = alts.size() == 1 ? alts[0] : AddRule(name, Join(alts, " | "));
    return Status::Ok();
  }
  if (s.contains("const") || s.contains("enum")) return Constants(s, where, expr);
  std::vector<std::string> types;
  EMBER_RETURN_IF_ERROR(Types(s, where, &types));
  if (types.empty()) {
    *expr = Primitive("value");
    return Status::Ok();
  }
  std::vector<std::string> alts;
  for (const std::string& t : types) {
    std::string e;
    EMBER_RETURN_IF_ERROR(VisitType(s, t, where, types.size() > 1 ? name + "-" + t : name, &e));
    alts.push_back(e);
  }
  *expr = alts.size() == 1 ? alts[0] : AddRule(name, Join(alts, " | "));
  return Status::Ok();
}

Status Converter::Run(std::string* gbnf) {
  std::string expr;
  EMBER_RETURN_IF_ERROR(Visit(root_, "#", "root", &expr));
  std::string out;
  if (expr != "root") {  // (a built-in, a shared rule, or an expression)
    if (names_.count("root") != 0) {
      for (auto& r : rules_) {
        if (r.first == "root") r.first = UniqueName("root-schema");
      }
    }
    out = "root ::= " + expr + "\n";
  }
  for (const auto& [n, body] : rules_) {  // root first, the rest in the order made
    if (n == "root") out = n + " ::= " + body + "\n" + out;
  }
  for (const auto& [n, body] : rules_) {
    if (n != "root") out += n + " ::= " + body + "\n";
  }
  *gbnf = std::move(out);
  return Status::Ok();
}

}  // namespace schema

Status SchemaToGbnf(const nlohmann::ordered_json& schema, std::string* gbnf) {
  try {
    return schema::Converter(schema).Run(gbnf);
  } catch (const std::exception& e) {  // e.g. invalid UTF-8 in a string, a wrong value type
    return InvalidArgument(std::string("JSON schema: ") + e.what());
  }
}

Status JsonSchemaToGbnf(std::string_view schema_json, std::string* gbnf) {
  nlohmann::ordered_json schema;
  try {
    schema = nlohmann::ordered_json::parse(schema_json);
  } catch (const std::exception& e) {
    return InvalidArgument(std::string("the JSON schema is not valid JSON: ") + e.what());
  }
  return SchemaToGbnf(schema, gbnf);
}

std::string JsonObjectGbnf() {
  std::string g;
  Status s = SchemaToGbnf(nlohmann::ordered_json{{"type", "object"}}, &g);
  (void)s;  // (a fixed, valid schema)
  return g;
}

}  // namespace ember
