// Jinja's built-in filters on strings and numbers, as jinja2 3.1 defines
// them, with Hugging Face's tojson (json.dumps without ASCII escaping;
// ensure_ascii, indent, separators and sort_keys arguments). The filters on
// sequences and mappings are in jinja_filters_seq.cpp.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>

#include "runtime/chat/jinja_builtins.h"
#include "runtime/chat/jinja_eval.h"

namespace ember::jinja {
namespace {

// A string result that keeps the input's Markup flag (jinja2's soft_str + str methods).
Value StringLike(const Value& input, std::string s) {
  return Value::String(std::move(s), input.is_string() && input.safe());
}

// ---- filters ----------------------------------------------------------------------

Status FAbs(Interpreter&, const Value& v, CallArgs&, Value* out) {
  if (v.is_float()) {
    *out = Value::Float(std::fabs(v.as_float()));
  } else if (v.is_integral()) {
    if (v.as_int() == INT64_MIN) return InvalidArgument("integer overflow");
    *out = Value::Int(v.as_int() < 0 ? -v.as_int() : v.as_int());
  } else {
    return InvalidArgument(std::string("bad operand type for abs(): '") + TypeName(v) + "'");
  }
  return Status::Ok();
}

Status FAttr(Interpreter& in, const Value& v, CallArgs& args, Value* out) {
  const Value* name = Arg(args, 0, "name");
  std::string n;
  if (name) EMBER_RETURN_IF_ERROR(ToStr(*name, &n));
  if (v.is_dict()) {  // attr() looks at attributes only, never items
    if (!GetMethod(v, n, out))
      *out = Value::Undefined("'dict object' has no attribute '" + n + "'");
    return Status::Ok();
  }
  return in.GetAttr(v, n, out);
}

Status FCapitalize(Interpreter&, const Value& v, CallArgs&, Value* out) {
  std::string s;
  EMBER_RETURN_IF_ERROR(ToStr(v, &s));
  size_t first = 0;
  if (!s.empty()) NextCodePoint(s, &first);
  *out = StringLike(v, ToUpper(s.substr(0, first)) + ToLower(s.substr(first)));
  return Status::Ok();
}

Status FCenter(Interpreter& in, const Value& v, CallArgs& args, Value* out) {
  std::string s;
  EMBER_RETURN_IF_ERROR(ToStr(v, &s));
  const Value* w = Arg(args, 0, "width");
  const int64_t width = w && w->is_integral() ? w->as_int() : 80;
  const auto len = static_cast<int64_t>(CodePointCount(s));
  if (width <= len) {
    *out = Value::String(s);
    return Status::Ok();
  }
  const int64_t marg = width - len;
  const int64_t left = marg / 2 + (marg & width & 1);
  EMBER_RETURN_IF_ERROR(in.CheckStringSize(s.size() + static_cast<size_t>(marg)));
  *out = Value::String(std::string(static_cast<size_t>(left), ' ') + s +
                       std::string(static_cast<size_t>(marg - left), ' '));
  return Status::Ok();
}

Status FDefault(Interpreter&, const Value& v, CallArgs& args, Value* out) {
  const Value* dflt = Arg(args, 0, "default_value");
  const bool boolean = BoolArg(Arg(args, 1, "boolean"), false);
  if (v.is_undefined() || (boolean && !Truthy(v))) {
    *out = dflt ? *dflt : Value::String("");
  } else {
    *out = v;
  }
  return Status::Ok();
}

Status FEscape(Interpreter&, const Value& v, CallArgs&, Value* out) {
  if (v.is_string() && v.safe()) {
    *out = v;
    return Status::Ok();
  }
  std::string s;
  EMBER_RETURN_IF_ERROR(ToStr(v, &s));
  *out = Value::String(HtmlEscape(s), /*safe=*/true);
  return Status::Ok();
}

// Python's float(str): optional whitespace, sign, digits, inf/nan.
bool ParseFloat(const std::string& s, double* out) {
  const std::string t = StripString(s, nullptr, true, true);
  if (t.empty()) return false;
  std::string clean;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i] == '_' && i > 0 && i + 1 < t.size() &&
        std::isdigit(static_cast<unsigned char>(t[i - 1])) &&
        std::isdigit(static_cast<unsigned char>(t[i + 1]))) {
      continue;
    }
    clean += t[i];
  }
  const std::string lower = ToLower(clean);
  const std::string body = (lower[0] == '+' || lower[0] == '-') ? lower.substr(1) : lower;
  if (body == "inf" || body == "infinity" || body == "nan") {
    const double x = body == "nan" ? NAN : INFINITY;
    *out = lower[0] == '-' ? -x : x;
    return true;
  }
  if (body.empty() || (!std::isdigit(static_cast<unsigned char>(body[0])) && body[0] != '.'))
    return false;
  char* end = nullptr;
  *out = std::strtod(clean.c_str(), &end);
  return end && *end == '\0';
}

Status FFloat(Interpreter&, const Value& v, CallArgs& args, Value* out) {
  const Value* dflt = Arg(args, 0, "default");
  double x = 0;
  if (v.is_integral() || v.is_float()) {
    *out = Value::Float(v.as_float());
    return Status::Ok();
  }
  if (v.is_string() && ParseFloat(v.str(), &x)) {
    *out = Value::Float(x);
    return Status::Ok();
  }
  *out = dflt ? *dflt : Value::Float(0.0);
  return Status::Ok();
}

// printf-style: %s %r %d %i %f %x %% (and %(name)s with keyword arguments).
Status FFormat(Interpreter& in, const Value& v, CallArgs& args, Value* out) {
  std::string f, r;
  EMBER_RETURN_IF_ERROR(ToStr(v, &f));
  size_t next = 0;
  for (size_t i = 0; i < f.size(); ++i) {
    if (f[i] != '%') {
      r += f[i];
      continue;
    }
    if (++i >= f.size()) return InvalidArgument("incomplete format");
    if (f[i] == '%') {
      r += '%';
      continue;
    }
    const Value* arg = nullptr;
    if (f[i] == '(') {
      const size_t close = f.find(')', i);
      if (close == std::string::npos) return InvalidArgument("incomplete format key");
      arg = Arg(args, SIZE_MAX, f.substr(i + 1, close - i - 1).c_str());
      i = close + 1;
    } else {
      arg = next < args.pos.size() ? &args.pos[next] : nullptr;
      ++next;
    }
    std::string spec;
    while (i < f.size() && std::string("0123456789.-+ #").find(f[i]) != std::string::npos)
      spec += f[i++];
    if (i >= f.size()) return InvalidArgument("incomplete format");
    if (!arg) return InvalidArgument("not enough arguments for format string");
    const char conv = f[i];
    std::string text;
    char buf[512];
    if (conv == 's') {
      EMBER_RETURN_IF_ERROR(ToStr(*arg, &text));
    } else if (conv == 'r') {
      EMBER_RETURN_IF_ERROR(Repr(*arg, &text));
    } else if ((conv == 'd' || conv == 'i' || conv == 'x' || conv == 'f' || conv == 'e' ||
                conv == 'g') &&
               (arg->is_integral() || arg->is_float()) && spec.size() < 20) {
      const std::string fmt = "%" + spec + (conv == 'd' || conv == 'i' || conv == 'x' ? "ll" : "") +
                              std::string(1, conv == 'i' ? 'd' : conv);
      if (conv == 'f' || conv == 'e' || conv == 'g') {
        std::snprintf(buf, sizeof(buf), fmt.c_str(), arg->as_float());
      } else {
        std::snprintf(buf, sizeof(buf), fmt.c_str(),
                      static_cast<long long>(arg->is_float() ? static_cast<int64_t>(arg->as_float())
                                                             : arg->as_int()));
      }
      text = buf;
    } else {
      return Unsupported(std::string("format: conversion '%") + conv + "' of " + TypeName(*arg));
    }
    r += text;
    EMBER_RETURN_IF_ERROR(in.CheckStringSize(r.size()));
  }
  *out = Value::String(std::move(r));
  return Status::Ok();
}

Status FIndent(Interpreter& in, const Value& v, CallArgs& args, Value* out) {
  std::string s;
  EMBER_RETURN_IF_ERROR(ToStr(v, &s));
  std::string unit = "    ";
  if (const Value* w = Arg(args, 0, "width")) {
    if (w->is_string()) {
      unit = w->str();
    } else if (w->is_integral()) {
      const int64_t n = std::max<int64_t>(0, w->as_int());
      EMBER_RETURN_IF_ERROR(in.CheckStringSize(static_cast<size_t>(n)));
      unit = std::string(static_cast<size_t>(n), ' ');
    }
  }
  const bool first = BoolArg(Arg(args, 1, "first"), false);
  const bool blank = BoolArg(Arg(args, 2, "blank"), false);
  // jinja2 appends a newline, then splits into lines (so a trailing newline survives).
  s += "\n";
  std::vector<std::string> lines;
  {
    size_t start = 0, pos = 0;
    while (pos < s.size()) {
      const size_t from = pos;
      const uint32_t c = NextCodePoint(s, &pos);
      const bool brk = c == '\n' || c == '\r' || c == 0x0B || c == 0x0C ||
                       (c >= 0x1C && c <= 0x1E) || c == 0x85 || c == 0x2028 || c == 0x2029;
      if (!brk) continue;
      lines.push_back(s.substr(start, from - start));
      if (c == '\r' && pos < s.size() && s[pos] == '\n') ++pos;
      start = pos;
    }
    if (start < s.size()) lines.push_back(s.substr(start));
  }
  std::string r;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i > 0) {
      r += "\n";
      if (blank || !lines[i].empty()) r += unit;
    }
    r += lines[i];
    EMBER_RETURN_IF_ERROR(in.CheckStringSize(r.size()));
  }
  if (first) r = unit + r;
  *out = StringLike(v, std::move(r));
  return Status::Ok();
}

Status FInt(Interpreter&, const Value& v, CallArgs& args, Value* out) {
  const Value* dflt = Arg(args, 0, "default");
  const Value* base_v = Arg(args, 1, "base");
  const int base = base_v && base_v->is_integral() ? static_cast<int>(base_v->as_int()) : 10;
  *out = dflt ? *dflt : Value::Int(0);
  if (v.is_integral()) {
    *out = Value::Int(v.as_int());
  } else if (v.is_float()) {
    const double f = v.as_float();
    if (std::isfinite(f) && std::fabs(f) < 9.2e18) *out = Value::Int(static_cast<int64_t>(f));
  } else if (v.is_string()) {
    std::string t = StripString(v.str(), nullptr, true, true);
    t.erase(std::remove(t.begin(), t.end(), '_'), t.end());
    std::string digits = t;
    const bool neg = !t.empty() && t[0] == '-';
    if (!t.empty() && (t[0] == '-' || t[0] == '+')) digits = t.substr(1);
    if (base == 16 && digits.size() > 2 && digits[0] == '0' && (digits[1] | 0x20) == 'x') {
      digits = digits.substr(2);
    }
    char* end = nullptr;
    errno = 0;
    const long long x =
        digits.empty() || digits[0] == '-' || digits[0] == '+'
            ? 0
            : std::strtoll(digits.c_str(), &end, base >= 2 && base <= 36 ? base : 10);
    if (!digits.empty() && end && *end == '\0' && errno == 0) {
      *out = Value::Int(neg ? -x : x);
    } else {
      double f = 0;  // int(float(value)), as jinja2 tries next
      if (ParseFloat(v.str(), &f) && std::isfinite(f) && std::fabs(f) < 9.2e18) {
        *out = Value::Int(static_cast<int64_t>(f));
      }
    }
  }
  return Status::Ok();
}

Status FLower(Interpreter&, const Value& v, CallArgs&, Value* out) {
  std::string s;
  EMBER_RETURN_IF_ERROR(ToStr(v, &s));
  *out = StringLike(v, ToLower(s));
  return Status::Ok();
}

Status FUpper(Interpreter&, const Value& v, CallArgs&, Value* out) {
  std::string s;
  EMBER_RETURN_IF_ERROR(ToStr(v, &s));
  *out = StringLike(v, ToUpper(s));
  return Status::Ok();
}

Status FReplace(Interpreter& in, const Value& v, CallArgs& args, Value* out) {
  std::string s, from, to;
  EMBER_RETURN_IF_ERROR(ToStr(v, &s));
  const Value* a = Arg(args, 0, "old");
  const Value* b = Arg(args, 1, "new");
  if (!a || !b) return InvalidArgument("replace needs the old and the new string");
  EMBER_RETURN_IF_ERROR(ToStr(*a, &from));
  EMBER_RETURN_IF_ERROR(ToStr(*b, &to));
  CallArgs m;
  m.pos = {Value::String(from), Value::String(to)};
  if (const Value* c = Arg(args, 2, "count"); c && !c->is_none()) m.pos.push_back(*c);
  Value method;
  GetMethod(Value::String(s), "replace", &method);
  return in.CallValue(method, m, out);
}

Status FRound(Interpreter&, const Value& v, CallArgs& args, Value* out) {
  const Value* p = Arg(args, 0, "precision");
  const int64_t precision = p && p->is_integral() ? p->as_int() : 0;
  std::string method = "common";
  if (const Value* m = Arg(args, 1, "method")) EMBER_RETURN_IF_ERROR(ToStr(*m, &method));
  if (method != "common" && method != "ceil" && method != "floor") {
    return InvalidArgument("method must be common, ceil or floor");
  }
  if (!v.is_integral() && !v.is_float()) {
    return InvalidArgument(std::string("type ") + TypeName(v) + " doesn't define __round__ method");
  }
  if (method == "common" && v.is_integral() && precision >= 0) {
    *out = Value::Int(v.as_int());
    return Status::Ok();
  }
  const double x = v.as_float();
  double r = x;
  if (method == "common") {
    if (precision >= 0 && precision < 300 && std::isfinite(x)) {
      // printf rounds the exact binary value half-to-even, as Python's round().
      char buf[512];
      std::snprintf(buf, sizeof(buf), "%.*f", static_cast<int>(precision), x);
      r = std::strtod(buf, nullptr);
      if (r == 0) r = std::copysign(0.0, x);
    } else if (precision < 0 && std::isfinite(x)) {
      const double scale = std::pow(10.0, static_cast<double>(-precision));
      r = std::nearbyint(x / scale) * scale;
    }
  } else {
    const double scale = std::pow(10.0, static_cast<double>(precision));
    r = (method == "ceil" ? std::ceil(x * scale) : std::floor(x * scale)) / scale;
  }
  *out = Value::Float(r);
  return Status::Ok();
}

Status FSafe(Interpreter&, const Value& v, CallArgs&, Value* out) {
  std::string s;
  EMBER_RETURN_IF_ERROR(ToStr(v, &s));
  *out = Value::String(std::move(s), /*safe=*/true);
  return Status::Ok();
}

Status FString(Interpreter&, const Value& v, CallArgs&, Value* out) {
  if (v.is_string()) {
    *out = v;
    return Status::Ok();
  }
  std::string s;
  EMBER_RETURN_IF_ERROR(ToStr(v, &s));
  *out = Value::String(std::move(s));
  return Status::Ok();
}

Status FTitle(Interpreter&, const Value& v, CallArgs&, Value* out) {
  // Words begin after runs of '-', whitespace, '(', '{', '[', '<' (jinja2's title, not
  // Python's str.title): each word's first character upper, the rest lower.
  std::string s, r;
  EMBER_RETURN_IF_ERROR(ToStr(v, &s));
  bool word_start = true;
  for (size_t pos = 0; pos < s.size();) {
    const size_t from = pos;
    const uint32_t c = NextCodePoint(s, &pos);
    const bool sep = c == '-' || c == '(' || c == '{' || c == '[' || c == '<' || IsPyWhitespace(c);
    const std::string ch = s.substr(from, pos - from);
    if (sep) {
      r += ch;
      word_start = true;
    } else {
      r += word_start ? ToUpper(ch) : ToLower(ch);
      word_start = false;
    }
  }
  *out = StringLike(v, std::move(r));
  return Status::Ok();
}

Status FToJson(Interpreter&, const Value& v, CallArgs& args, Value* out) {
  JsonOptions o;
  o.ensure_ascii = BoolArg(Arg(args, 0, "ensure_ascii"), false);
  const Value* indent = Arg(args, 1, "indent");
  if (indent && !indent->is_none()) {
    o.has_indent = true;
    if (indent->is_string()) {
      o.indent = indent->str();
    } else if (indent->is_integral()) {
      o.indent =
          std::string(static_cast<size_t>(std::clamp<int64_t>(indent->as_int(), 0, 64)), ' ');
    } else {
      return InvalidArgument("tojson: indent must be an integer or a string");
    }
    o.item_separator = ",";
  }
  const Value* seps = Arg(args, 2, "separators");
  if (seps && !seps->is_none()) {
    if (!seps->is_list() || seps->list().items.size() != 2 || !seps->list().items[0].is_string() ||
        !seps->list().items[1].is_string()) {
      return InvalidArgument("tojson: separators must be a pair of strings");
    }
    o.item_separator = seps->list().items[0].str();
    o.key_separator = seps->list().items[1].str();
  }
  o.sort_keys = BoolArg(Arg(args, 3, "sort_keys"), false);
  std::string s;
  EMBER_RETURN_IF_ERROR(ToJson(v, o, &s));
  *out = Value::String(std::move(s));
  return Status::Ok();
}

Status FTrim(Interpreter&, const Value& v, CallArgs& args, Value* out) {
  std::string s, chars;
  EMBER_RETURN_IF_ERROR(ToStr(v, &s));
  const Value* c = Arg(args, 0, "chars");
  const bool has_chars = c && !c->is_none();
  if (has_chars) EMBER_RETURN_IF_ERROR(ToStr(*c, &chars));
  *out = StringLike(v, StripString(s, has_chars ? &chars : nullptr, true, true));
  return Status::Ok();
}

Status FWordcount(Interpreter&, const Value& v, CallArgs&, Value* out) {
  std::string s;
  EMBER_RETURN_IF_ERROR(ToStr(v, &s));
  int64_t n = 0;
  bool in_word = false;
  for (size_t pos = 0; pos < s.size();) {
    const uint32_t c = NextCodePoint(s, &pos);
    const bool word = (c < 0x80 && (std::isalnum(static_cast<int>(c)) || c == '_')) ||
                      (c >= 0x80 && !IsPyWhitespace(c));
    if (word && !in_word) ++n;
    in_word = word;
  }
  *out = Value::Int(n);
  return Status::Ok();
}

const FilterEntry kFilters[] = {
    {"abs", FAbs},
    {"attr", FAttr},
    {"capitalize", FCapitalize},
    {"center", FCenter},
    {"d", FDefault},
    {"default", FDefault},
    {"e", FEscape},
    {"escape", FEscape},
    {"float", FFloat},
    {"forceescape", FEscape},
    {"format", FFormat},
    {"indent", FIndent},
    {"int", FInt},
    {"lower", FLower},
    {"replace", FReplace},
    {"round", FRound},
    {"safe", FSafe},
    {"string", FString},
    {"title", FTitle},
    {"tojson", FToJson},
    {"trim", FTrim},
    {"upper", FUpper},
    {"wordcount", FWordcount},
};

FilterFn FindFilter(std::string_view name) {
  for (const FilterEntry& f : kFilters) {
    if (name == f.name) return f.fn;
  }
  return FindSequenceFilter(name);
}

}  // namespace

bool HasFilter(std::string_view name) { return FindFilter(name) != nullptr; }

Status CallFilter(Interpreter& in, const std::string& name, const Value& value, CallArgs& args,
                  Value* out) {
  const FilterFn f = FindFilter(name);
  if (!f) return InvalidArgument("No filter named '" + name + "' found.");
  return f(in, value, args, out);
}

}  // namespace ember::jinja
