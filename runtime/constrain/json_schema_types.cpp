// The rules of each JSON type under a schema's keywords (json_schema.h):
// strings (lengths, pattern, format), numbers and integers (bounds), objects
// (properties in order, required, additional properties) and arrays (items,
// prefixItems, counts).
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "runtime/constrain/int_range.h"
#include "runtime/constrain/json_schema_internal.h"
#include "runtime/constrain/regex_gbnf.h"
#include "sampling/grammar/gbnf.h"

namespace ember::schema {
namespace {

std::string Cat(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  return a + " " + b;
}

// {lo,hi} for a GBNF repetition; hi < 0: unbounded.
std::string Repeat(int64_t lo, int64_t hi) {
  if (lo == 0 && hi < 0) return "*";
  if (lo == 1 && hi < 0) return "+";
  if (lo == 0 && hi == 1) return "?";
  if (hi < 0) return "{" + std::to_string(lo) + ",}";
  if (lo == hi) return "{" + std::to_string(lo) + "}";
  return "{" + std::to_string(lo) + "," + std::to_string(hi) + "}";
}

// A non-negative integer keyword (minLength, maxItems, ...), or -1 if absent.
Status Count(const Json& s, const char* key, const std::string& where, int64_t* out) {
  *out = -1;
  if (!s.contains(key)) return Status::Ok();
  const Json& v = s[key];
  if (!v.is_number() || v.get<double>() < 0 || std::floor(v.get<double>()) != v.get<double>() ||
      v.get<double>() > 1e6) {
    return InvalidArgument("'" + std::string(key) + "' at " + where +
                           " must be a whole number in [0, 1000000] (got " + v.dump() + ")");
  }
  *out = static_cast<int64_t>(v.get<double>());
  return Status::Ok();
}

// Code points of a UTF-8 string (as nlohmann keeps them).
std::vector<uint32_t> CodePoints(const std::string& s) {
  std::vector<uint32_t> out;
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    const int n = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : 4;
    uint32_t v = n == 1 ? b : b & (0x7Fu >> n);
    for (int k = 1; k < n && i + static_cast<size_t>(k) < s.size(); ++k) {
      v = (v << 6) | (static_cast<unsigned char>(s[i + static_cast<size_t>(k)]) & 0x3F);
    }
    out.push_back(v);
    i += static_cast<size_t>(n);
  }
  return out;
}

constexpr double kMaxBound = 9.0e18;  // bounds must fit int64

}  // namespace

Status Converter::VisitType(const Json& s, const std::string& type, const std::string& where,
                            const std::string& name, std::string* expr) {
  if (type == "string") return StringRule(s, where, name, expr);
  if (type == "number" || type == "integer")
    return NumberRule(s, type == "integer", where, name, expr);
  if (type == "object") return ObjectRule(s, where, name, expr);
  if (type == "array") return ArrayRule(s, where, name, expr);
  *expr = Primitive(type);  // boolean, null
  return Status::Ok();
}

Status Converter::StringRule(const Json& s, const std::string& where, const std::string& name,
                             std::string* expr) {
  int64_t min_len = -1, max_len = -1;
  EMBER_RETURN_IF_ERROR(Count(s, "minLength", where, &min_len));
  EMBER_RETURN_IF_ERROR(Count(s, "maxLength", where, &max_len));
  const bool lengths = min_len >= 0 || max_len >= 0;
  if (s.contains("format")) {
    static const std::map<std::string, std::string> kFormats = {
        {"date", "date"}, {"time", "time"}, {"date-time", "date-time"}, {"uuid", "uuid"}};
    const Json& f = s["format"];
    auto it = f.is_string() ? kFormats.find(f.get<std::string>()) : kFormats.end();
    if (it == kFormats.end()) {
      return Status(Code::kUnsupported, "format " + f.dump() + " at " + where +
                                            " is not supported (date, time, date-time, uuid are)");
    }
    if (s.contains("pattern") || lengths) {
      return Status(Code::kUnsupported,
                    "'format' together with 'pattern', 'minLength' or 'maxLength' at " + where);
    }
    *expr = AddRule(name, "\"\\\"\" " + Primitive(it->second) + " \"\\\"\" " + Primitive("space"));
    return Status::Ok();
  }
  if (s.contains("pattern")) {
    if (lengths) {
      return Status(Code::kUnsupported,
                    "'pattern' together with 'minLength' or 'maxLength' at " + where);
    }
    if (!s["pattern"].is_string())
      return InvalidArgument("'pattern' at " + where + " must be a string");
    std::string body;
    Status st = RegexToGbnf(s["pattern"].get<std::string>(), Primitive("char"), &body);
    if (!st.ok()) return Status(st.code(), st.message() + " at " + where);
    *expr = AddRule(name, "\"\\\"\" " + body + " \"\\\"\" " + Primitive("space"));
    return Status::Ok();
  }
  if (!lengths) {
    *expr = Primitive("string");
    return Status::Ok();
  }
  const int64_t lo = std::max<int64_t>(min_len, 0);
  if (max_len >= 0 && max_len < lo) {
    return InvalidArgument("'maxLength' below 'minLength' at " + where);
  }
  *expr = AddRule(
      name, "\"\\\"\" " +
                (max_len == 0 ? std::string() : Primitive("char") + Repeat(lo, max_len) + " ") +
                "\"\\\"\" " + Primitive("space"));
  return Status::Ok();
}

Status Converter::NumberRule(const Json& s, bool integer, const std::string& where,
                             const std::string& name, std::string* expr) {
  std::optional<double> min, max, xmin, xmax;
  const auto number = [&](const char* key, std::optional<double>* out) -> Status {
    if (!s.contains(key)) return Status::Ok();
    const Json& v = s[key];
    if (v.is_boolean()) return Status::Ok();  // draft 4's exclusive flags (below)
    if (!v.is_number())
      return InvalidArgument("'" + std::string(key) + "' at " + where + " must be a number");
    *out = v.get<double>();
    if (std::fabs(**out) > kMaxBound) {
      return Status(Code::kUnsupported,
                    "'" + std::string(key) + "' at " + where + " is too large (|x| <= 9e18)");
    }
    return Status::Ok();
  };
  EMBER_RETURN_IF_ERROR(number("minimum", &min));
  EMBER_RETURN_IF_ERROR(number("maximum", &max));
  EMBER_RETURN_IF_ERROR(number("exclusiveMinimum", &xmin));
  EMBER_RETURN_IF_ERROR(number("exclusiveMaximum", &xmax));
  // Draft 4: "exclusiveMinimum": true makes "minimum" exclusive.
  if (s.contains("exclusiveMinimum") && s["exclusiveMinimum"] == true) std::swap(min, xmin);
  if (s.contains("exclusiveMaximum") && s["exclusiveMaximum"] == true) std::swap(max, xmax);
  if (!min && !max && !xmin && !xmax) {
    *expr = Primitive(integer ? "integer" : "number");
    return Status::Ok();
  }
  Bounds b;
  if (integer) {  // exact: the integers in the bounds
    const auto up = [&](std::optional<int64_t> v) {
      if (v && (!b.lo || *v > *b.lo)) b.lo = v;
    };
    const auto down = [&](std::optional<int64_t> v) {
      if (v && (!b.hi || *v < *b.hi)) b.hi = v;
    };
    if (min) up(static_cast<int64_t>(std::ceil(*min)));
    if (xmin) up(static_cast<int64_t>(std::floor(*xmin)) + 1);
    if (max) down(static_cast<int64_t>(std::floor(*max)));
    if (xmax) down(static_cast<int64_t>(std::ceil(*xmax)) - 1);
    if (b.lo && b.hi && *b.lo > *b.hi)
      return InvalidArgument("no integer is within the bounds at " + where);
    *expr = AddRule(name, "(" + IntRangeGbnf(b.lo, b.hi) + ") " + Primitive("space"));
    return Status::Ok();
  }
  if (xmin || xmax) {
    return Status(Code::kUnsupported,
                  "exclusive bounds on a number at " + where +
                      " (numbers take 'minimum' and 'maximum' with whole-number "
                      "values; integers take all four)");
  }
  for (const std::optional<double>& v : {min, max}) {
    if (v && std::floor(*v) != *v) {
      return Status(Code::kUnsupported, "a bound that is not a whole number on a number at " +
                                            where + " (" + std::to_string(*v) + ")");
    }
  }
  if (min) b.lo = static_cast<int64_t>(*min);
  if (max) b.hi = static_cast<int64_t>(*max);
  if (b.lo && b.hi && *b.lo > *b.hi)
    return InvalidArgument("'minimum' above 'maximum' at " + where);
  // x = I.F (any fraction) or -(I.F): I.F >= n iff I >= n; I.F <= n iff I < n,
  // or I = n with an all-zero fraction.
  const std::string frac = "(\".\" [0-9]{1,16})?", zero = "(\".\" \"0\"{1,16})?";
  std::vector<std::string> alts;
  if (!b.hi || *b.hi >= 0) {  // x >= 0
    const uint64_t from = b.lo && *b.lo > 0 ? static_cast<uint64_t>(*b.lo) : 0;
    if (!b.hi) {
      alts.push_back(UintRangeGbnf(from, std::nullopt) + " " + frac);
    } else {
      const auto hi = static_cast<uint64_t>(*b.hi);
      if (hi >= from + 1) alts.push_back(UintRangeGbnf(from, hi - 1) + " " + frac);
      alts.push_back("\"" + std::to_string(hi) + "\" " + zero);
    }
  }
  if (!b.lo || *b.lo < 0) {  // x < 0: magnitudes M with lower bound -hi and upper bound -lo
    const uint64_t from = b.hi && *b.hi < 0 ? static_cast<uint64_t>(-*b.hi) : 0;
    if (!b.lo) {
      alts.push_back("\"-\" " + UintRangeGbnf(from, std::nullopt) + " " + frac);
    } else {
      const auto top = static_cast<uint64_t>(-*b.lo);
      if (top >= from + 1) alts.push_back("\"-\" " + UintRangeGbnf(from, top - 1) + " " + frac);
      alts.push_back("\"-" + std::to_string(top) + "\" " + zero);
    }
  }
  std::string body = "(";
  for (size_t i = 0; i < alts.size(); ++i) body += (i ? " | " : "") + alts[i];
  *expr = AddRule(name, body + ") " + Primitive("space"));
  return Status::Ok();
}

std::string Converter::NotNames(const std::vector<std::string>& names, const std::string& name) {
  // A trie of the names' characters; at each node the string may stop (unless
  // a name ends there), go on along the trie, or leave it with a character no
  // name has there (then anything).
  struct Node {
    std::map<uint32_t, size_t> kids;
    bool end = false;
  };
  std::vector<Node> nodes(1);
  for (const std::string& n : names) {
    size_t at = 0;
    for (const uint32_t c : CodePoints(n)) {
      auto it = nodes[at].kids.find(c);
      if (it == nodes[at].kids.end()) {
        nodes.emplace_back();
        it = nodes[at].kids.emplace(c, nodes.size() - 1).first;
      }
      at = it->second;
    }
    nodes[at].end = true;
  }
  const std::string ch = Primitive("char");
  std::function<std::string(size_t)> emit = [&](size_t i) {
    const Node& node = nodes[i];
    std::vector<std::string> alts;
    if (!node.end) alts.push_back("");
    grammar::CharSet taken;
    for (const auto& [c, kid] : node.kids) {
      taken.Add(c, c);
      alts.push_back(Cat(JsonEncodedGbnf(grammar::CharSet::Single(c)), emit(kid)));
    }
    // Another first character: raw, or an escape that stands for none of the kids.
    grammar::CharSet other = taken;
    other.Add(0, 0x1F);
    other.Add('"', '"');
    other.Add('\\', '\\');
    other = other.Complement();
    std::string escapes;
    for (const auto& [letter, c] : std::vector<std::pair<char, uint32_t>>{{'"', '"'},
                                                                          {'\\', '\\'},
                                                                          {'/', '/'},
                                                                          {'b', 8},
                                                                          {'f', 12},
                                                                          {'n', 10},
                                                                          {'r', 13},
                                                                          {'t', 9}}) {
      if (!taken.Contains(c))
        escapes += std::string(letter == '"' || letter == '\\' ? "\\" : "") + letter;
    }
    std::string esc = "\"\\\\\" (" + (escapes.empty() ? std::string() : "[" + escapes + "] | ") +
                      "\"u\" [0-9a-fA-F]{4})";
    alts.push_back("(" + grammar::PrintCharSet(other) + " | " + esc + ") " + ch + "*");
    std::string out = "(";
    for (size_t k = 0; k < alts.size(); ++k) out += (k ? " | " : "") + alts[k];
    return out + ")";
  };
  return AddRule(name, "\"\\\"\" " + emit(0) + " \"\\\"\" " + Primitive("space"));
}

Status Converter::ObjectRule(const Json& s, const std::string& where, const std::string& name,
                             std::string* expr) {
  const Json props = s.contains("properties") ? s["properties"] : Json::object();
  if (!props.is_object()) return InvalidArgument("'properties' at " + where + " must be an object");
  std::vector<std::string> names;
  std::vector<bool> required;
  for (auto it = props.begin(); it != props.end(); ++it) names.push_back(it.key());
  required.assign(names.size(), false);
  if (s.contains("required")) {
    if (!s["required"].is_array())
      return InvalidArgument("'required' at " + where + " must be an array");
    for (const Json& r : s["required"]) {
      if (!r.is_string()) return InvalidArgument("'required' at " + where + " must list strings");
      auto it = std::find(names.begin(), names.end(), r.get<std::string>());
      if (it == names.end()) {  // required without a schema: any value
        names.push_back(r.get<std::string>());
        required.push_back(true);
      } else {
        required[static_cast<size_t>(it - names.begin())] = true;
      }
    }
  }
  // Additional properties: allowed unless false; a schema constrains their values.
  const Json extra = s.contains("additionalProperties") ? s["additionalProperties"] : Json(true);
  const std::string sp = Primitive("space");
  std::string extra_kv;
  if (extra != false) {
    std::string value = Primitive("value");
    if (extra != true) {
      EMBER_RETURN_IF_ERROR(
          Visit(extra, where + "/additionalProperties", name + "-additional", &value));
    }
    const std::string key =
        names.empty() ? Primitive("string") : NotNames(names, name + "-other-key");
    extra_kv = AddRule(name + "-other", key + " \":\" " + sp + " " + value);
  }
  if (names.empty()) {
    if (extra == true) {
      *expr = Primitive("object");
    } else if (extra_kv.empty()) {
      *expr = AddRule(name, "\"{\" " + sp + " \"}\" " + sp);
    } else {
      *expr = AddRule(name, "\"{\" " + sp + " (" + extra_kv + " (\",\" " + sp + " " + extra_kv +
                                ")*)? \"}\" " + sp);
    }
    return Status::Ok();
  }
  std::vector<std::string> kv;
  for (size_t i = 0; i < names.size(); ++i) {
    std::string value = Primitive("value");
    if (props.contains(names[i])) {
      EMBER_RETURN_IF_ERROR(
          Visit(props[names[i]], where + "/properties/" + names[i], name + "-" + names[i], &value));
    }
    kv.push_back(AddRule(name + "-" + names[i] + "-kv",
                         Literal(Json(names[i]).dump()) + " " + sp + " \":\" " + sp + " " + value));
  }
  // After at least one property: each next one with its comma (optional ones
  // may be left out), then the additional ones. rest[i]: from property i on.
  const size_t n = names.size();
  std::vector<std::string> rest(n + 1);
  rest[n] = extra_kv.empty() ? "" : "(\",\" " + sp + " " + extra_kv + ")*";
  for (size_t i = n; i-- > 0;) {
    const std::string item = "\",\" " + sp + " " + kv[i];
    rest[i] = Cat(required[i] ? item : "(" + item + ")?", rest[i + 1]);
    if (!required[i] && i + 1 < n) rest[i] = AddRule(name + "-rest-" + std::to_string(i), rest[i]);
  }
  // Before any property: the first present one starts without a comma.
  std::function<std::string(size_t)> first = [&](size_t i) -> std::string {
    if (i == n) return extra_kv.empty() ? "" : "(" + Cat(extra_kv, rest[n]) + ")?";
    const std::string here = Cat(kv[i], rest[i + 1]);
    if (required[i]) return here;
    const std::string later = first(i + 1);
    return "(" + here + " | " + (later.empty() ? "\"\"" : later) + ")";
  };
  *expr = AddRule(name, Cat("\"{\" " + sp, first(0)) + " \"}\" " + sp);
  return Status::Ok();
}

Status Converter::ArrayRule(const Json& s, const std::string& where, const std::string& name,
                            std::string* expr) {
  int64_t min = -1, max = -1;
  EMBER_RETURN_IF_ERROR(Count(s, "minItems", where, &min));
  EMBER_RETURN_IF_ERROR(Count(s, "maxItems", where, &max));
  min = std::max<int64_t>(min, 0);
  if (max >= 0 && max < min) return InvalidArgument("'maxItems' below 'minItems' at " + where);
  // prefixItems (or draft 07's array of items), then `items` for the rest.
  Json prefix = Json::array(), rest = true;
  if (s.contains("prefixItems")) prefix = s["prefixItems"];
  if (s.contains("items")) {
    if (s["items"].is_array()) {
      if (s.contains("prefixItems")) {
        return InvalidArgument("'items' at " + where + " is an array and 'prefixItems' is given");
      }
      prefix = s["items"];
    } else {
      rest = s["items"];
    }
  }
  if (!prefix.is_array()) return InvalidArgument("'prefixItems' at " + where + " must be an array");
  const std::string sp = Primitive("space");
  if (prefix.empty() && rest == true && min == 0 && max < 0) {
    *expr = Primitive("array");
    return Status::Ok();
  }
  std::vector<std::string> elems;
  for (size_t i = 0; i < prefix.size(); ++i) {
    std::string e;
    EMBER_RETURN_IF_ERROR(Visit(prefix[i], where + "/prefixItems/" + std::to_string(i),
                                name + "-" + std::to_string(i), &e));
    elems.push_back(e);
  }
  std::string item;
  if (rest != false) {
    item = Primitive("value");
    if (rest != true) EMBER_RETURN_IF_ERROR(Visit(rest, where + "/items", name + "-item", &item));
  }
  const auto k = static_cast<int64_t>(elems.size());
  // The rest: its count within [min - k, max - k].
  const int64_t rest_lo = std::max<int64_t>(min - k, 0);
  const int64_t rest_hi = max < 0 ? -1 : std::max<int64_t>(max - k, 0);
  if (item.empty() && rest_lo > 0) {
    return InvalidArgument("'minItems' at " + where +
                           " asks for more items than 'prefixItems' gives");
  }
  const std::string comma = "\",\" " + sp + " ";
  std::string tail;  // the rest's items
  if (!item.empty() && rest_hi != 0) {
    if (k > 0) {
      tail = "(" + comma + item + ")" + Repeat(rest_lo, rest_hi);
    } else {
      const std::string more =
          "(" + comma + item + ")" +
          Repeat(std::max<int64_t>(rest_lo - 1, 0), rest_hi < 0 ? -1 : rest_hi - 1);
      tail = item + " " + more;
      if (rest_lo == 0) tail = "(" + tail + ")?";
    }
  }
  // Prefix items i..k-1, each after a comma but the first; optional beyond minItems.
  std::function<std::string(int64_t)> from = [&](int64_t i) -> std::string {
    if (i == k || (max >= 0 && i >= max)) return i == k ? tail : "";
    const std::string here = Cat((i > 0 ? comma : "") + elems[static_cast<size_t>(i)], from(i + 1));
    return i < min ? here : "(" + here + ")?";
  };
  *expr = AddRule(name, Cat("\"[\" " + sp, from(0)) + " \"]\" " + sp);
  return Status::Ok();
}

}  // namespace ember::schema
