#include "support/schema_check.h"

#include <cmath>
// GCC 12 sees std::regex's automaton states as maybe uninitialized under the
// sanitizers (a false positive inside libstdc++).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <regex>
#pragma GCC diagnostic pop

namespace ember::test {
namespace {

using Json = nlohmann::ordered_json;

bool IsType(const Json& v, const std::string& t) {
  if (t == "string") return v.is_string();
  if (t == "number") return v.is_number();
  if (t == "integer") {
    return v.is_number_integer() ||
           (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>());
  }
  if (t == "boolean") return v.is_boolean();
  if (t == "null") return v.is_null();
  if (t == "object") return v.is_object();
  if (t == "array") return v.is_array();
  return false;
}

// Code points of a UTF-8 string.
size_t Length(const std::string& s) {
  size_t n = 0;
  for (const char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

bool MatchesFormat(const std::string& f, const std::string& v) {
  static const std::regex date(R"(^\d{4}-(\d{2})-(\d{2})$)");
  static const std::regex time(
      R"(^([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d+)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$)");
  static const std::regex uuid(
      R"(^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$)");
  auto valid_date = [](const std::string& d) {
    std::smatch m;
    if (!std::regex_match(d, m, date)) return false;
    const int month = std::stoi(m[1]), day = std::stoi(m[2]);
    static const int kDays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    const int year = std::stoi(d.substr(0, 4));
    const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    return month >= 1 && month <= 12 && day >= 1 &&
           day <= (month == 2 && !leap ? 28 : kDays[month - 1]);
  };
  if (f == "date") return valid_date(v);
  if (f == "time") return std::regex_match(v, time);
  if (f == "date-time") {
    const size_t t = v.find('T');
    return t != std::string::npos && valid_date(v.substr(0, t)) &&
           std::regex_match(v.substr(t + 1), time);
  }
  if (f == "uuid") return std::regex_match(v, uuid);
  return true;
}

const Json* Resolve(const std::string& ref, const Json& root) {
  if (ref == "#") return &root;
  const Json::json_pointer p(ref.substr(1));
  return root.contains(p) ? &root.at(p) : nullptr;
}

std::string Check(const Json& v, const Json& s, const Json& root, const std::string& at);

std::string CheckObject(const Json& v, const Json& s, const Json& root, const std::string& at) {
  const Json props = s.value("properties", Json::object());
  for (const Json& r : s.value("required", Json::array())) {
    if (!v.contains(r.get<std::string>())) return at + ": missing required " + r.dump();
  }
  for (auto it = v.begin(); it != v.end(); ++it) {
    const std::string where = at + "/" + it.key();
    if (props.contains(it.key())) {
      const std::string e = Check(it.value(), props[it.key()], root, where);
      if (!e.empty()) return e;
    } else if (s.contains("additionalProperties")) {
      const std::string e = Check(it.value(), s["additionalProperties"], root, where);
      if (!e.empty()) return e;
    }
  }
  return "";
}

std::string CheckArray(const Json& v, const Json& s, const Json& root, const std::string& at) {
  if (s.contains("minItems") && v.size() < s["minItems"].get<size_t>())
    return at + ": too few items";
  if (s.contains("maxItems") && v.size() > s["maxItems"].get<size_t>())
    return at + ": too many items";
  Json prefix = s.value("prefixItems", Json::array());
  Json rest = s.contains("items") ? s["items"] : Json(true);
  if (rest.is_array()) {
    prefix = rest;
    rest = true;
  }
  for (size_t i = 0; i < v.size(); ++i) {
    const Json& sub = i < prefix.size() ? prefix[i] : rest;
    const std::string e = Check(v[i], sub, root, at + "/" + std::to_string(i));
    if (!e.empty()) return e;
  }
  return "";
}

std::string CheckScalar(const Json& v, const Json& s, const std::string& at) {
  if (v.is_string()) {
    const std::string str = v.get<std::string>();
    if (s.contains("minLength") && Length(str) < s["minLength"].get<size_t>())
      return at + ": too short";
    if (s.contains("maxLength") && Length(str) > s["maxLength"].get<size_t>())
      return at + ": too long";
    if (s.contains("pattern") &&
        !std::regex_search(str, std::regex(s["pattern"].get<std::string>()))) {
      return at + ": does not match " + s["pattern"].dump();
    }
    if (s.contains("format") && !MatchesFormat(s["format"].get<std::string>(), str)) {
      return at + ": not a " + s["format"].dump();
    }
  }
  if (v.is_number()) {
    const double x = v.get<double>();
    if (s.contains("minimum") && s["minimum"].is_number() && x < s["minimum"].get<double>())
      return at + ": below minimum";
    if (s.contains("maximum") && s["maximum"].is_number() && x > s["maximum"].get<double>())
      return at + ": above maximum";
    if (s.contains("exclusiveMinimum") && s["exclusiveMinimum"].is_number() &&
        x <= s["exclusiveMinimum"].get<double>()) {
      return at + ": not above exclusiveMinimum";
    }
    if (s.contains("exclusiveMaximum") && s["exclusiveMaximum"].is_number() &&
        x >= s["exclusiveMaximum"].get<double>()) {
      return at + ": not below exclusiveMaximum";
    }
  }
  return "";
}

std::string Check(const Json& v, const Json& s, const Json& root, const std::string& at) {
  if (s.is_boolean()) return s.get<bool>() ? "" : at + ": schema false";
  if (s.contains("$ref")) {
    const Json* t = Resolve(s["$ref"].get<std::string>(), root);
    if (t == nullptr) return at + ": unresolved $ref";
    const std::string e = Check(v, *t, root, at);
    if (!e.empty()) return e;
  }
  for (const Json& part : s.value("allOf", Json::array())) {
    const std::string e = Check(v, part, root, at);
    if (!e.empty()) return e;
  }
  for (const char* key : {"anyOf", "oneOf"}) {
    if (!s.contains(key)) continue;
    int ok = 0;
    std::string last;
    for (const Json& b : s[key]) {
      last = Check(v, b, root, at);
      ok += last.empty();
    }
    if (ok == 0) return at + ": no branch of " + key + " matches (" + last + ")";
  }
  if (s.contains("const") && v != s["const"]) return at + ": not the const";
  if (s.contains("enum") && std::find(s["enum"].begin(), s["enum"].end(), v) == s["enum"].end()) {
    return at + ": not in the enum";
  }
  if (s.contains("type")) {
    const Json types = s["type"].is_array() ? s["type"] : Json::array({s["type"]});
    if (std::none_of(types.begin(), types.end(),
                     [&](const Json& t) { return IsType(v, t.get<std::string>()); })) {
      return at + ": not of type " + s["type"].dump();
    }
  }
  if (v.is_object()) return CheckObject(v, s, root, at);
  if (v.is_array()) return CheckArray(v, s, root, at);
  return CheckScalar(v, s, at);
}

}  // namespace

std::string SchemaViolation(const nlohmann::ordered_json& instance,
                            const nlohmann::ordered_json& schema,
                            const nlohmann::ordered_json& root) {
  return Check(instance, schema, root, "#");
}

}  // namespace ember::test
