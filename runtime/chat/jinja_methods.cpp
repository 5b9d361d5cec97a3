// The Python methods templates call (str, dict, list) and the `loop` object's
// attributes. Methods that would modify a dict or a list are refused as
// jinja2's ImmutableSandboxedEnvironment refuses them (list.pop and
// list.clear it allows, and so does ember).
#include <algorithm>
#include <cctype>
#include <cstring>
#include <ctime>

#include "runtime/chat/jinja_builtins.h"
#include "runtime/chat/jinja_eval.h"

namespace ember::jinja {

const Value* Arg(const CallArgs& args, size_t i, const char* name) {
  if (i < args.pos.size()) return &args.pos[i];
  for (const auto& [k, v] : args.kw) {
    if (k == name) return &v;
  }
  return nullptr;
}

std::string HtmlEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '\'':
        out += "&#39;";
        break;
      case '"':
        out += "&#34;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

namespace {

// Simple case mapping of one code point (upper: true for to-upper).
uint32_t MapCase(uint32_t c, bool upper) {
  if (c < 0x80) {
    if (upper && c >= 'a' && c <= 'z') return c - 32;
    if (!upper && c >= 'A' && c <= 'Z') return c + 32;
    return c;
  }
  if (upper) {
    if ((c >= 0xE0 && c <= 0xFE && c != 0xF7)) return c - 32;
    if (c == 0xFF) return 0x178;
    if (c >= 0x100 && c <= 0x17F && c != 0x130 && c != 0x131 && c != 0x138 && c != 0x149 &&
        c != 0x17F) {
      const bool odd_upper = (c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E);
      if (odd_upper ? (c % 2 == 0) : (c % 2 == 1)) return c - 1;
      return c;
    }
    if (c >= 0x3B1 && c <= 0x3C9 && c != 0x3C2) return c - 32;
    if (c >= 0x430 && c <= 0x44F) return c - 32;
    if (c >= 0x450 && c <= 0x45F) return c - 80;
    return c;
  }
  if (c >= 0xC0 && c <= 0xDE && c != 0xD7) return c + 32;
  if (c == 0x178) return 0xFF;
  if (c >= 0x100 && c <= 0x17F && c != 0x130 && c != 0x131 && c != 0x138 && c != 0x149 &&
      c != 0x17F) {
    const bool odd_upper = (c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E);
    if (odd_upper ? (c % 2 == 1) : (c % 2 == 0)) return c + 1;
    return c;
  }
  if (c >= 0x391 && c <= 0x3A9 && c != 0x3A2) return c + 32;
  if (c >= 0x410 && c <= 0x42F) return c + 32;
  if (c >= 0x400 && c <= 0x40F) return c + 80;
  return c;
}

bool IsCased(uint32_t c) { return MapCase(c, true) != c || MapCase(c, false) != c; }
bool IsUpperCp(uint32_t c) { return MapCase(c, false) != c; }
bool IsLowerCp(uint32_t c) { return MapCase(c, true) != c; }

std::string MapString(std::string_view s, bool upper) {
  std::string out;
  out.reserve(s.size());
  for (size_t pos = 0; pos < s.size();) {
    const size_t from = pos;
    const uint32_t c = NextCodePoint(s, &pos);
    if (upper && c == 0xDF) {  // 'ß'.upper() == 'SS'
      out += "SS";
    } else if (c < 0x80 || MapCase(c, upper) != c) {
      AppendUtf8(MapCase(c, upper), &out);
    } else {
      out.append(s, from, pos - from);
    }
  }
  return out;
}

// Byte offset -> code point index.
int64_t CodePointIndex(std::string_view s, size_t byte_offset) {
  return static_cast<int64_t>(CodePointCount(s.substr(0, byte_offset)));
}

Status ValueError(const std::string& m) { return InvalidArgument(m); }

Status NeedString(const Value* v, const char* what, std::string* out) {
  if (!v || !v->is_string()) {
    return InvalidArgument(std::string(what) + " must be str, not " +
                           (v ? TypeName(*v) : "nothing"));
  }
  *out = v->str();
  return Status::Ok();
}

// Python's str.split(sep, maxsplit) / rsplit.
Status Split(const std::string& s, const Value* sep, const Value* maxsplit_v, bool from_right,
             std::vector<Value>* out) {
  int64_t maxsplit = -1;
  if (maxsplit_v && maxsplit_v->is_integral()) maxsplit = maxsplit_v->as_int();
  std::vector<std::string> parts;
  if (!sep || sep->is_none()) {
    // Runs of whitespace; no empty parts.
    std::vector<std::pair<size_t, size_t>> words;  // byte ranges
    size_t pos = 0, start = std::string::npos;
    while (pos < s.size()) {
      const size_t from = pos;
      const bool ws = IsPyWhitespace(NextCodePoint(s, &pos));
      if (ws && start != std::string::npos) {
        words.emplace_back(start, from);
        start = std::string::npos;
      } else if (!ws && start == std::string::npos) {
        start = from;
      }
    }
    if (start != std::string::npos) words.emplace_back(start, s.size());
    const size_t n = words.size();
    if (maxsplit < 0 || static_cast<size_t>(maxsplit) + 1 >= n) {
      for (const auto& [a, b] : words) parts.push_back(s.substr(a, b - a));
    } else if (!from_right) {
      for (size_t i = 0; i < static_cast<size_t>(maxsplit); ++i) {
        parts.push_back(s.substr(words[i].first, words[i].second - words[i].first));
      }
      const size_t rest = words[static_cast<size_t>(maxsplit)].first;
      parts.push_back(StripString(s.substr(rest), nullptr, false, true));
    } else {
      const size_t keep = n - static_cast<size_t>(maxsplit);
      parts.push_back(StripString(s.substr(0, words[keep - 1].second), nullptr, true, false));
      for (size_t i = keep; i < n; ++i) {
        parts.push_back(s.substr(words[i].first, words[i].second - words[i].first));
      }
    }
  } else {
    if (!sep->is_string()) {
      return InvalidArgument(std::string("must be str or None, not ") + TypeName(*sep));
    }
    const std::string& d = sep->str();
    if (d.empty()) return ValueError("empty separator");
    if (!from_right) {
      size_t pos = 0;
      int64_t splits = 0;
      while (maxsplit < 0 || splits < maxsplit) {
        const size_t at = s.find(d, pos);
        if (at == std::string::npos) break;
        parts.push_back(s.substr(pos, at - pos));
        pos = at + d.size();
        ++splits;
      }
      parts.push_back(s.substr(pos));
    } else {
      size_t end = s.size();
      int64_t splits = 0;
      std::vector<std::string> rev;
      while (maxsplit < 0 || splits < maxsplit) {
        if (end < d.size()) break;
        const size_t at = s.rfind(d, end - d.size());
        if (at == std::string::npos) break;
        rev.push_back(s.substr(at + d.size(), end - at - d.size()));
        end = at;
        ++splits;
      }
      rev.push_back(s.substr(0, end));
      parts.assign(rev.rbegin(), rev.rend());
    }
  }
  out->clear();
  for (std::string& p : parts) out->push_back(Value::String(std::move(p)));
  return Status::Ok();
}

// Python's str.splitlines(): \n, \r, \r\n, \v, \f, \x1c-\x1e, \x85, \u2028, \u2029.
std::vector<std::string> SplitLines(std::string_view s) {
  std::vector<std::string> lines;
  size_t start = 0, pos = 0;
  while (pos < s.size()) {
    const size_t from = pos;
    const uint32_t c = NextCodePoint(s, &pos);
    const bool brk = c == '\n' || c == '\r' || c == 0x0B || c == 0x0C || (c >= 0x1C && c <= 0x1E) ||
                     c == 0x85 || c == 0x2028 || c == 0x2029;
    if (!brk) continue;
    lines.emplace_back(s.substr(start, from - start));
    if (c == '\r' && pos < s.size() && s[pos] == '\n') ++pos;
    start = pos;
  }
  if (start < s.size()) lines.emplace_back(s.substr(start));
  return lines;
}

// "{}", "{0}", "{name}", "{{", "}}", with !r / !s; no format specs.
Status Format(Interpreter& in, const std::string& f, const CallArgs& args, std::string* out) {
  size_t auto_index = 0;
  for (size_t i = 0; i < f.size(); ++i) {
    const char c = f[i];
    if (c == '}') {
      if (i + 1 < f.size() && f[i + 1] == '}') ++i;
      *out += '}';
      continue;
    }
    if (c != '{') {
      *out += c;
      continue;
    }
    if (i + 1 < f.size() && f[i + 1] == '{') {
      *out += '{';
      ++i;
      continue;
    }
    const size_t end = f.find('}', i);
    if (end == std::string::npos) return ValueError("Single '{' encountered in format string");
    std::string field = f.substr(i + 1, end - i - 1);
    i = end;
    char conversion = 0;
    if (field.size() >= 2 && field[field.size() - 2] == '!') {
      conversion = field.back();
      field.resize(field.size() - 2);
    }
    if (field.find(':') != std::string::npos || field.find('[') != std::string::npos ||
        field.find('.') != std::string::npos) {
      return Unsupported("str.format field '{" + field + "}' (only {}, {0} and {name})");
    }
    const Value* v = nullptr;
    if (field.empty()) {
      v = auto_index < args.pos.size() ? &args.pos[auto_index] : nullptr;
      ++auto_index;
    } else if (std::all_of(field.begin(), field.end(),
                           [](char ch) { return ch >= '0' && ch <= '9'; })) {
      const size_t k = std::stoul(field);
      v = k < args.pos.size() ? &args.pos[k] : nullptr;
    } else {
      v = Arg(args, SIZE_MAX, field.c_str());
    }
    if (!v) return InvalidArgument("str.format: no argument for '{" + field + "}'");
    std::string text;
    if (conversion == 'r') {
      EMBER_RETURN_IF_ERROR(Repr(*v, &text));
    } else {
      EMBER_RETURN_IF_ERROR(ToStr(*v, &text));
    }
    *out += text;
    EMBER_RETURN_IF_ERROR(in.CheckStringSize(out->size()));
  }
  return Status::Ok();
}

// str.center / ljust / rjust.
Status Pad(Interpreter& in, const std::string& s, const CallArgs& args, int where, Value* out) {
  const Value* w = Arg(args, 0, "width");
  const Value* f = Arg(args, 1, "fillchar");
  if (!w || !w->is_integral()) return InvalidArgument("the width must be an integer");
  const std::string fill = f && f->is_string() ? f->str() : " ";
  if (CodePointCount(fill) != 1)
    return InvalidArgument("The fill character must be exactly one character long");
  const int64_t len = static_cast<int64_t>(CodePointCount(s));
  const int64_t width = w->as_int();
  if (width <= len) {
    *out = Value::String(s);
    return Status::Ok();
  }
  const auto total = static_cast<size_t>(width - len);
  EMBER_RETURN_IF_ERROR(in.CheckStringSize(s.size() + total * fill.size()));
  size_t left = where < 0   ? 0
                : where > 0 ? total
                            : total / 2 + (total & static_cast<size_t>(width) & 1);
  std::string r;
  for (size_t i = 0; i < left; ++i) r += fill;
  r += s;
  for (size_t i = left; i < total; ++i) r += fill;
  *out = Value::String(std::move(r));
  return Status::Ok();
}

Status StringMethod(Interpreter& in, const Value& self, const std::string& name, CallArgs& args,
                    Value* out) {
  const std::string& s = self.str();
  const Value* a0 = Arg(args, 0, "");
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    std::string chars;
    const bool has_chars = a0 && !a0->is_none();
    if (has_chars) EMBER_RETURN_IF_ERROR(NeedString(a0, "strip arg", &chars));
    *out = Value::String(
        StripString(s, has_chars ? &chars : nullptr, name != "rstrip", name != "lstrip"));
    return Status::Ok();
  }
  if (name == "split" || name == "rsplit") {
    std::vector<Value> parts;
    EMBER_RETURN_IF_ERROR(
        Split(s, Arg(args, 0, "sep"), Arg(args, 1, "maxsplit"), name == "rsplit", &parts));
    return Value::List(std::move(parts), ListKind::kList, out);
  }
  if (name == "splitlines") {
    std::vector<Value> parts;
    for (std::string& l : SplitLines(s)) parts.push_back(Value::String(std::move(l)));
    return Value::List(std::move(parts), ListKind::kList, out);
  }
  if (name == "startswith" || name == "endswith") {
    if (!a0) return InvalidArgument(name + "() takes at least 1 argument");
    std::vector<std::string> affixes;
    if (a0->is_string()) {
      affixes.push_back(a0->str());
    } else if (a0->is_list() && a0->list().kind == ListKind::kTuple) {
      for (const Value& x : a0->list().items) {
        if (!x.is_string()) return InvalidArgument("tuple for " + name + " must only contain str");
        affixes.push_back(x.str());
      }
    } else {
      return InvalidArgument(name + " first arg must be str or a tuple of str, not " +
                             TypeName(*a0));
    }
    bool r = false;
    for (const std::string& x : affixes) {
      if (x.size() <= s.size() &&
          (name == "startswith" ? s.compare(0, x.size(), x) == 0
                                : s.compare(s.size() - x.size(), x.size(), x) == 0)) {
        r = true;
      }
    }
    *out = Value::Bool(r);
    return Status::Ok();
  }
  if (name == "upper" || name == "lower" || name == "casefold") {
    *out = Value::String(name == "upper" ? ToUpper(s) : ToLower(s));
    return Status::Ok();
  }
  if (name == "swapcase") {
    std::string r;
    for (size_t pos = 0; pos < s.size();) {
      const uint32_t c = NextCodePoint(s, &pos);
      AppendUtf8(IsUpperCp(c) ? MapCase(c, false) : MapCase(c, true), &r);
    }
    *out = Value::String(std::move(r));
    return Status::Ok();
  }
  if (name == "title" || name == "capitalize") {
    std::string r;
    bool prev_cased = false, first = true;
    for (size_t pos = 0; pos < s.size();) {
      const uint32_t c = NextCodePoint(s, &pos);
      const bool up = name == "title" ? !prev_cased : first;
      AppendUtf8(MapCase(c, up), &r);
      prev_cased = IsCased(c);
      first = false;
    }
    *out = Value::String(std::move(r));
    return Status::Ok();
  }
  if (name == "find" || name == "rfind" || name == "index" || name == "rindex" || name == "count") {
    std::string sub;
    EMBER_RETURN_IF_ERROR(NeedString(a0, "the substring", &sub));
    if (name == "count") {
      int64_t n = 0;
      if (sub.empty()) {
        n = static_cast<int64_t>(CodePointCount(s)) + 1;
      } else {
        for (size_t p = s.find(sub); p != std::string::npos; p = s.find(sub, p + sub.size())) ++n;
      }
      *out = Value::Int(n);
      return Status::Ok();
    }
    const size_t at = name[0] == 'r' ? s.rfind(sub) : s.find(sub);
    if (at == std::string::npos) {
      if (name == "index" || name == "rindex") return ValueError("substring not found");
      *out = Value::Int(-1);
    } else {
      *out = Value::Int(CodePointIndex(s, at));
    }
    return Status::Ok();
  }
  if (name == "replace") {
    std::string from, to;
    EMBER_RETURN_IF_ERROR(NeedString(a0, "replace arg 1", &from));
    EMBER_RETURN_IF_ERROR(NeedString(Arg(args, 1, ""), "replace arg 2", &to));
    const Value* c = Arg(args, 2, "count");
    int64_t count = c && c->is_integral() ? c->as_int() : -1;
    std::string r;
    if (from.empty()) {  // inserts `to` around every character
      int64_t done = 0;
      for (size_t pos = 0; pos <= s.size();) {
        if (count < 0 || done < count) {
          r += to;
          ++done;
        }
        if (pos == s.size()) break;
        const size_t f0 = pos;
        NextCodePoint(s, &pos);
        r.append(s, f0, pos - f0);
        EMBER_RETURN_IF_ERROR(in.CheckStringSize(r.size()));
      }
    } else {
      size_t pos = 0;
      for (int64_t done = 0; count < 0 || done < count; ++done) {
        const size_t at = s.find(from, pos);
        if (at == std::string::npos) break;
        r.append(s, pos, at - pos);
        r += to;
        pos = at + from.size();
        EMBER_RETURN_IF_ERROR(in.CheckStringSize(r.size()));
      }
      r.append(s, pos, std::string::npos);
    }
    EMBER_RETURN_IF_ERROR(in.CheckStringSize(r.size()));
    *out = Value::String(std::move(r));
    return Status::Ok();
  }
  if (name == "join") {
    if (!a0) return InvalidArgument("join() takes exactly one argument");
    std::vector<Value> items;
    EMBER_RETURN_IF_ERROR(in.Iterate(*a0, &items));
    std::string r;
    for (size_t i = 0; i < items.size(); ++i) {
      if (!items[i].is_string()) {
        return InvalidArgument("sequence item " + std::to_string(i) + ": expected str instance, " +
                               TypeName(items[i]) + " found");
      }
      if (i) r += s;
      r += items[i].str();
      EMBER_RETURN_IF_ERROR(in.CheckStringSize(r.size()));
    }
    *out = Value::String(std::move(r));
    return Status::Ok();
  }
  if (name == "format") {
    std::string r;
    EMBER_RETURN_IF_ERROR(Format(in, s, args, &r));
    *out = Value::String(std::move(r));
    return Status::Ok();
  }
  if (name == "center" || name == "ljust" || name == "rjust") {
    return Pad(in, s, args, name == "center" ? 0 : name == "ljust" ? -1 : 1, out);
  }
  if (name == "zfill") {
    if (!a0 || !a0->is_integral()) return InvalidArgument("zfill() needs an integer width");
    const int64_t len = static_cast<int64_t>(CodePointCount(s));
    if (a0->as_int() <= len) {
      *out = Value::String(s);
      return Status::Ok();
    }
    const auto pad = static_cast<size_t>(a0->as_int() - len);
    EMBER_RETURN_IF_ERROR(in.CheckStringSize(s.size() + pad));
    const bool sign = !s.empty() && (s[0] == '+' || s[0] == '-');
    *out =
        Value::String(s.substr(0, sign ? 1 : 0) + std::string(pad, '0') + s.substr(sign ? 1 : 0));
    return Status::Ok();
  }
  if (name == "partition" || name == "rpartition") {
    std::string sep;
    EMBER_RETURN_IF_ERROR(NeedString(a0, "the separator", &sep));
    if (sep.empty()) return ValueError("empty separator");
    const size_t at = name[0] == 'r' ? s.rfind(sep) : s.find(sep);
    std::vector<Value> parts;
    if (at == std::string::npos) {
      parts = name[0] == 'r'
                  ? std::vector<Value>{Value::String(""), Value::String(""), Value::String(s)}
                  : std::vector<Value>{Value::String(s), Value::String(""), Value::String("")};
    } else {
      parts = {Value::String(s.substr(0, at)), Value::String(sep),
               Value::String(s.substr(at + sep.size()))};
    }
    return Value::List(std::move(parts), ListKind::kTuple, out);
  }
  if (name == "removeprefix" || name == "removesuffix") {
    std::string x;
    EMBER_RETURN_IF_ERROR(NeedString(a0, name.c_str(), &x));
    std::string r = s;
    if (name == "removeprefix" && s.compare(0, x.size(), x) == 0) r = s.substr(x.size());
    if (name == "removesuffix" && x.size() <= s.size() &&
        s.compare(s.size() - x.size(), x.size(), x) == 0) {
      r = s.substr(0, s.size() - x.size());
    }
    *out = Value::String(std::move(r));
    return Status::Ok();
  }
  // Predicates over the code points.
  bool any = false, all = true, cased = false, upper_seen = false, lower_seen = false;
  for (size_t pos = 0; pos < s.size();) {
    const uint32_t c = NextCodePoint(s, &pos);
    any = true;
    const bool digit = c >= '0' && c <= '9';
    const bool alpha =
        (c < 0x80 && std::isalpha(static_cast<int>(c))) || (c >= 0x80 && !IsPyWhitespace(c));
    bool ok = true;
    if (name == "isdigit" || name == "isdecimal" || name == "isnumeric") ok = digit;
    if (name == "isalpha") ok = alpha;
    if (name == "isalnum") ok = alpha || digit;
    if (name == "isspace") ok = IsPyWhitespace(c);
    all = all && ok;
    if (IsCased(c)) cased = true;
    if (IsUpperCp(c)) upper_seen = true;
    if (IsLowerCp(c)) lower_seen = true;
  }
  if (name == "isdigit" || name == "isdecimal" || name == "isnumeric" || name == "isalpha" ||
      name == "isalnum" || name == "isspace") {
    *out = Value::Bool(any && all);
    return Status::Ok();
  }
  if (name == "isupper" || name == "islower") {
    *out = Value::Bool(cased && (name == "isupper" ? !lower_seen : !upper_seen));
    return Status::Ok();
  }
  return InvalidArgument("'str' object has no attribute '" + name + "'");
}

Status DictMethod(Interpreter& /*in*/, const Value& self, const std::string& name, CallArgs& args,
                  Value* out) {
  const DictData& d = self.dict();
  if (name == "get") {
    const Value* k = Arg(args, 0, "key");
    if (!k) return InvalidArgument("get expected at least 1 argument, got 0");
    const Value* v = d.Find(*k);
    if (v) {
      *out = *v;
    } else {
      const Value* dflt = Arg(args, 1, "default");
      *out = dflt ? *dflt : Value::None();
    }
    return Status::Ok();
  }
  if (name == "copy") {
    return Value::Dict(std::make_shared<DictData>(d), out);
  }
  std::vector<Value> items;
  for (const auto& [k, v] : d.items) {
    if (name == "keys") {
      items.push_back(k);
    } else if (name == "values") {
      items.push_back(v);
    } else {
      Value pair;
      EMBER_RETURN_IF_ERROR(Value::List({k, v}, ListKind::kTuple, &pair));
      items.push_back(std::move(pair));
    }
  }
  return Value::List(std::move(items),
                     name == "keys"     ? ListKind::kKeys
                     : name == "values" ? ListKind::kValues
                                        : ListKind::kItems,
                     out);
}

Status ListMethod(Interpreter& /*in*/, const Value& self, const std::string& name, CallArgs& args,
                  Value* out) {
  ListData& l = self.list();
  if (name == "copy") return Value::List(l.items, ListKind::kList, out);
  if (name == "clear") {
    l.items.clear();
    *out = Value::None();
    return Status::Ok();
  }
  if (name == "pop") {
    if (l.items.empty()) return InvalidArgument("pop from empty list");
    const Value* i = Arg(args, 0, "index");
    int64_t k = i && i->is_integral() ? i->as_int() : -1;
    const auto n = static_cast<int64_t>(l.items.size());
    if (k < 0) k += n;
    if (k < 0 || k >= n) return InvalidArgument("pop index out of range");
    *out = l.items[static_cast<size_t>(k)];
    l.items.erase(l.items.begin() + k);
    return Status::Ok();
  }
  const Value* x = Arg(args, 0, "value");
  if (!x) return InvalidArgument(name + "() takes exactly one argument (0 given)");
  if (name == "count") {
    int64_t n = 0;
    for (const Value& v : l.items) n += Equals(v, *x) ? 1 : 0;
    *out = Value::Int(n);
    return Status::Ok();
  }
  for (size_t i = 0; i < l.items.size(); ++i) {  // index
    if (Equals(l.items[i], *x)) {
      *out = Value::Int(static_cast<int64_t>(i));
      return Status::Ok();
    }
  }
  std::string r;
  EMBER_RETURN_IF_ERROR(Repr(*x, &r));
  return ValueError(r + " is not in list");
}

Status LoopMethod(Interpreter& /*in*/, const Value& self, const std::string& name, CallArgs& args,
                  Value* out) {
  LoopData& l = self.loop();
  if (name == "cycle") {
    if (args.pos.empty()) return InvalidArgument("no items for cycling given");
    *out = args.pos[l.index0 % args.pos.size()];
    return Status::Ok();
  }
  // changed(*values): true on the first call and whenever the values differ from the last.
  Value now;
  EMBER_RETURN_IF_ERROR(Value::List(args.pos, ListKind::kTuple, &now));
  const bool changed = !l.changed_called || !Equals(now, l.last_changed);
  l.changed_called = true;
  l.last_changed = now;
  *out = Value::Bool(changed);
  return Status::Ok();
}

using MethodFn = Status (*)(Interpreter&, const Value&, const std::string&, CallArgs&, Value*);

class BoundMethod : public Callable {
 public:
  BoundMethod(Value self, std::string name, MethodFn fn)
      : self_(std::move(self)), name_(std::move(name)), fn_(fn) {}
  const char* type_name() const override { return "builtin_function_or_method"; }
  std::string name() const override { return name_ + " of " + TypeName(self_) + " object"; }
  Status Call(Interpreter& in, CallArgs& args, Value* out) override {
    return fn_(in, self_, name_, args, out);
  }

 private:
  Value self_;
  std::string name_;
  MethodFn fn_;
};

bool In(const std::string& name, std::initializer_list<const char*> names) {
  for (const char* n : names) {
    if (name == n) return true;
  }
  return false;
}

}  // namespace

std::string StripString(std::string_view s, const std::string* chars, bool left, bool right) {
  std::vector<uint32_t> set;
  if (chars) {
    for (size_t pos = 0; pos < chars->size();) set.push_back(NextCodePoint(*chars, &pos));
  }
  auto strip = [&](uint32_t c) {
    return chars ? std::find(set.begin(), set.end(), c) != set.end() : IsPyWhitespace(c);
  };
  size_t begin = 0, end = s.size();
  if (left) {
    while (begin < end) {
      size_t p = begin;
      if (!strip(NextCodePoint(s, &p))) break;
      begin = p;
    }
  }
  if (right) {
    // Walk forward, remembering where the last kept code point ends.
    size_t keep = begin;
    for (size_t p = begin; p < end;) {
      if (!strip(NextCodePoint(s, &p))) keep = p;
    }
    end = keep;
  }
  return std::string(s.substr(begin, end - begin));
}

std::string ToUpper(std::string_view s) { return MapString(s, true); }
std::string ToLower(std::string_view s) { return MapString(s, false); }

bool GetMethod(const Value& obj, const std::string& name, Value* out) {
  MethodFn fn = nullptr;
  if (obj.is_string()) {
    if (In(name,
           {"strip",      "lstrip",     "rstrip",    "split",      "rsplit",       "splitlines",
            "startswith", "endswith",   "upper",     "lower",      "casefold",     "swapcase",
            "title",      "capitalize", "find",      "rfind",      "index",        "rindex",
            "count",      "replace",    "join",      "format",     "center",       "ljust",
            "rjust",      "zfill",      "partition", "rpartition", "removeprefix", "removesuffix",
            "isdigit",    "isdecimal",  "isnumeric", "isalpha",    "isalnum",      "isspace",
            "isupper",    "islower"})) {
      fn = StringMethod;
    }
  } else if (obj.is_dict()) {
    if (In(name, {"items", "keys", "values", "get", "copy"})) fn = DictMethod;
    if (In(name, {"clear", "pop", "popitem", "setdefault", "update"})) {
      *out = Value::Undefined("access to attribute '" + name + "' of 'dict' object is unsafe.");
      return true;
    }
  } else if (obj.is_list() &&
             (obj.list().kind == ListKind::kList || obj.list().kind == ListKind::kTuple)) {
    const bool tuple = obj.list().kind == ListKind::kTuple;
    if (In(name, {"index", "count"}) || (!tuple && In(name, {"copy", "pop", "clear"}))) {
      fn = ListMethod;
    }
    if (!tuple && In(name, {"append", "extend", "insert", "remove", "reverse", "sort"})) {
      *out = Value::Undefined("access to attribute '" + name + "' of 'list' object is unsafe.");
      return true;
    }
  } else if (obj.is_loop()) {
    const LoopData& l = obj.loop();
    const auto n = static_cast<int64_t>(l.items->size());
    const auto i = static_cast<int64_t>(l.index0);
    if (name == "index")
      *out = Value::Int(i + 1);
    else if (name == "index0")
      *out = Value::Int(i);
    else if (name == "revindex")
      *out = Value::Int(n - i);
    else if (name == "revindex0")
      *out = Value::Int(n - i - 1);
    else if (name == "first")
      *out = Value::Bool(i == 0);
    else if (name == "last")
      *out = Value::Bool(i == n - 1);
    else if (name == "length")
      *out = Value::Int(n);
    else if (name == "depth")
      *out = Value::Int(1);
    else if (name == "depth0")
      *out = Value::Int(0);
    else if (name == "previtem") {
      *out = i > 0 ? (*l.items)[static_cast<size_t>(i - 1)]
                   : Value::Undefined("there is no previous item");
    } else if (name == "nextitem") {
      *out = i + 1 < n ? (*l.items)[static_cast<size_t>(i + 1)]
                       : Value::Undefined("there is no next item");
    } else if (name == "cycle" || name == "changed") {
      fn = LoopMethod;
    } else {
      return false;
    }
    if (!fn) return true;
  }
  if (!fn) return false;
  *out = Value::Callable(std::make_shared<BoundMethod>(obj, name, fn));
  return true;
}

}  // namespace ember::jinja
