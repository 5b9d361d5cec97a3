// Jinja's built-in filters and tests, as jinja2 3.1 defines them, with
// Hugging Face's tojson (json.dumps without ASCII escaping; ensure_ascii,
// indent, separators and sort_keys arguments). Filters that jinja2 writes as
// generators (map, select, reject, selectattr, rejectattr, unique, items,
// batch, reverse of a list) give a generator value: it iterates once and has
// no length, as in Python.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>

#include "runtime/chat/jinja_builtins.h"
#include "runtime/chat/jinja_eval.h"

namespace ember::jinja {
namespace {

using FilterFn = Status (*)(Interpreter&, const Value&, CallArgs&, Value*);

Status Str(const Value& v, std::string* out) { return ToStr(v, out); }

// A string result that keeps the input's Markup flag (jinja2's soft_str + str methods).
Value StringLike(const Value& input, std::string s) {
  return Value::String(std::move(s), input.is_string() && input.safe());
}

Status Generator(std::vector<Value> items, Value* out) {
  return Value::List(std::move(items), ListKind::kGenerator, out);
}

bool BoolArg(const Value* v, bool dflt) { return v ? Truthy(*v) : dflt; }

// The attribute getter of map/sort/selectattr...: "a.b.0" -> item lookups.
Status GetPath(Interpreter& in, const Value& item, const std::string& path, Value* out) {
  *out = item;
  size_t start = 0;
  while (true) {
    const size_t dot = path.find('.', start);
    const std::string part = path.substr(start, dot == std::string::npos ? dot : dot - start);
    Value key = Value::String(part);
    if (!part.empty() &&
        std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      key = Value::Int(std::strtoll(part.c_str(), nullptr, 10));
    }
    Value next;
    EMBER_RETURN_IF_ERROR(in.GetItem(*out, key, &next));
    *out = std::move(next);
    if (dot == std::string::npos) return Status::Ok();
    start = dot + 1;
  }
}

// The sort key: the attribute (if any), lowercased when not case sensitive.
Status SortKey(Interpreter& in, const Value& item, const Value* attribute, bool case_sensitive,
               Value* out) {
  if (attribute && !attribute->is_none()) {
    std::string path;
    EMBER_RETURN_IF_ERROR(Str(*attribute, &path));
    EMBER_RETURN_IF_ERROR(GetPath(in, item, path, out));
  } else {
    *out = item;
  }
  if (!case_sensitive && out->is_string()) *out = Value::String(ToLower(out->str()));
  return Status::Ok();
}

// Stable sort of items by keys, with Python's comparison errors.
Status SortByKeys(std::vector<Value>* items, std::vector<Value> keys, bool reverse) {
  std::vector<size_t> order(items->size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  Status err;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    bool less = false;
    Status s = reverse ? Less(keys[b], keys[a], &less) : Less(keys[a], keys[b], &less);
    if (!s.ok() && err.ok()) err = s;
    return less;
  });
  EMBER_RETURN_IF_ERROR(err);
  std::vector<Value> sorted;
  sorted.reserve(items->size());
  for (size_t i : order) sorted.push_back((*items)[i]);
  *items = std::move(sorted);
  return Status::Ok();
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
  if (name) EMBER_RETURN_IF_ERROR(Str(*name, &n));
  if (v.is_dict()) {  // attr() looks at attributes only, never items
    if (!GetMethod(v, n, out))
      *out = Value::Undefined("'dict object' has no attribute '" + n + "'");
    return Status::Ok();
  }
  return in.GetAttr(v, n, out);
}

Status FBatch(Interpreter& in, const Value& v, CallArgs& args, Value* out) {
  const Value* count = Arg(args, 0, "linecount");
  const Value* fill = Arg(args, 1, "fill_with");
  if (!count || !count->is_integral() || count->as_int() <= 0) {
    return InvalidArgument("batch needs a positive line count");
  }
  std::vector<Value> items, batches, cur;
  EMBER_RETURN_IF_ERROR(in.Iterate(v, &items));
  const auto n = static_cast<size_t>(count->as_int());
  for (Value& x : items) {
    cur.push_back(std::move(x));
    if (cur.size() == n) {
      Value b;
      EMBER_RETURN_IF_ERROR(Value::List(std::move(cur), ListKind::kList, &b));
      batches.push_back(std::move(b));
      cur.clear();
    }
  }
  if (!cur.empty()) {
    if (fill && !fill->is_none()) {
      while (cur.size() < n) cur.push_back(*fill);
    }
    Value b;
    EMBER_RETURN_IF_ERROR(Value::List(std::move(cur), ListKind::kList, &b));
    batches.push_back(std::move(b));
  }
  return Generator(std::move(batches), out);
}

Status FCapitalize(Interpreter&, const Value& v, CallArgs&, Value* out) {
  std::string s;
  EMBER_RETURN_IF_ERROR(Str(v, &s));
  size_t first = 0;
  if (!s.empty()) NextCodePoint(s, &first);
  *out = StringLike(v, ToUpper(s.substr(0, first)) + ToLower(s.substr(first)));
  return Status::Ok();
}

Status FCenter(Interpreter& in, const Value& v, CallArgs& args, Value* out) {
  std::string s;
  EMBER_RETURN_IF_ERROR(Str(v, &s));
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

Status FDictsort(Interpreter& in, const Value& v, CallArgs& args, Value* out) {
  if (v.is_undefined()) return in.UndefinedError(v);
  if (!v.is_dict()) return InvalidArgument("You can only sort by either 'key' or 'value'");
  const bool case_sensitive = BoolArg(Arg(args, 0, "case_sensitive"), false);
  std::string by = "key";
  if (const Value* b = Arg(args, 1, "by")) EMBER_RETURN_IF_ERROR(Str(*b, &by));
  if (by != "key" && by != "value") {
    return InvalidArgument("You can only sort by either 'key' or 'value'");
  }
  const bool reverse = BoolArg(Arg(args, 2, "reverse"), false);
  std::vector<Value> items, keys;
  for (const auto& [k, x] : v.dict().items) {
    Value pair;
    EMBER_RETURN_IF_ERROR(Value::List({k, x}, ListKind::kTuple, &pair));
    items.push_back(std::move(pair));
    Value key = by == "key" ? k : x;
    if (!case_sensitive && key.is_string()) key = Value::String(ToLower(key.str()));
    keys.push_back(std::move(key));
  }
  EMBER_RETURN_IF_ERROR(SortByKeys(&items, std::move(keys), reverse));
  return Value::List(std::move(items), ListKind::kList, out);
}

Status FEscape(Interpreter&, const Value& v, CallArgs&, Value* out) {
  if (v.is_string() && v.safe()) {
    *out = v;
    return Status::Ok();
  }
  std::string s;
  EMBER_RETURN_IF_ERROR(Str(v, &s));
  *out = Value::String(HtmlEscape(s), /*safe=*/true);
  return Status::Ok();
}

Status FFirst(Interpreter& in, const Value& v, CallArgs&, Value* out) {
  std::vector<Value> items;
  EMBER_RETURN_IF_ERROR(in.Iterate(v, &items));
  *out = items.empty() ? Value::Undefined("No first item, sequence was empty.") : items.front();
  return Status::Ok();
}

Status FLast(Interpreter& in, const Value& v, CallArgs&, Value* out) {
  if (v.is_list() && v.list().kind == ListKind::kGenerator) {
    return InvalidArgument("'generator' object is not reversible");
  }
  std::vector<Value> items;
  EMBER_RETURN_IF_ERROR(in.Iterate(v, &items));
  *out = items.empty() ? Value::Undefined("No last item, sequence was empty.") : items.back();
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
  EMBER_RETURN_IF_ERROR(Str(v, &f));
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
      EMBER_RETURN_IF_ERROR(Str(*arg, &text));
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
  EMBER_RETURN_IF_ERROR(Str(v, &s));
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

Status FItems(Interpreter& in, const Value& v, CallArgs&, Value* out) {
  std::vector<Value> items;
  if (v.is_undefined()) return Generator({}, out);
  if (!v.is_dict()) return InvalidArgument("Can only get item pairs from a mapping.");
  for (const auto& [k, x] : v.dict().items) {
    Value pair;
    EMBER_RETURN_IF_ERROR(Value::List({k, x}, ListKind::kTuple, &pair));
    items.push_back(std::move(pair));
  }
  (void)in;
  return Generator(std::move(items), out);
}

Status FJoin(Interpreter& in, const Value& v, CallArgs& args, Value* out) {
  std::string sep;
  if (const Value* d = Arg(args, 0, "d")) EMBER_RETURN_IF_ERROR(Str(*d, &sep));
  const Value* attribute = Arg(args, 1, "attribute");
  std::vector<Value> items;
  EMBER_RETURN_IF_ERROR(in.Iterate(v, &items));
  std::string r, piece;
  for (size_t i = 0; i < items.size(); ++i) {
    Value x = items[i];
    if (attribute && !attribute->is_none()) {
      std::string path;
      EMBER_RETURN_IF_ERROR(Str(*attribute, &path));
      EMBER_RETURN_IF_ERROR(GetPath(in, items[i], path, &x));
    }
    EMBER_RETURN_IF_ERROR(Str(x, &piece));
    if (i) r += sep;
    r += piece;
    EMBER_RETURN_IF_ERROR(in.CheckStringSize(r.size()));
  }
  *out = Value::String(std::move(r));
  return Status::Ok();
}

Status FLength(Interpreter&, const Value& v, CallArgs&, Value* out) {
  size_t n = 0;
  switch (v.kind()) {
    case Kind::kUndefined:
      break;
    case Kind::kString:
      n = CodePointCount(v.str());
      break;
    case Kind::kList:
      if (v.list().kind == ListKind::kGenerator) {
        return InvalidArgument("object of type 'generator' has no len()");
      }
      n = v.list().items.size();
      break;
    case Kind::kDict:
      n = v.dict().size();
      break;
    default:
      return InvalidArgument(std::string("object of type '") + TypeName(v) + "' has no len()");
  }
  *out = Value::Int(static_cast<int64_t>(n));
  return Status::Ok();
}

Status FList(Interpreter& in, const Value& v, CallArgs&, Value* out) {
  std::vector<Value> items;
  EMBER_RETURN_IF_ERROR(in.Iterate(v, &items));
  return Value::List(std::move(items), ListKind::kList, out);
}

Status FLower(Interpreter&, const Value& v, CallArgs&, Value* out) {
  std::string s;
  EMBER_RETURN_IF_ERROR(Str(v, &s));
  *out = StringLike(v, ToLower(s));
  return Status::Ok();
}

Status FUpper(Interpreter&, const Value& v, CallArgs&, Value* out) {
  std::string s;
  EMBER_RETURN_IF_ERROR(Str(v, &s));
  *out = StringLike(v, ToUpper(s));
  return Status::Ok();
}

Status FMap(Interpreter& in, const Value& v, CallArgs& args, Value* out) {
  std::vector<Value> items, r;
  if (!Truthy(v)) return Generator({}, out);  // jinja2 checks `if value:` first (None is fine)
  EMBER_RETURN_IF_ERROR(in.Iterate(v, &items));
  if (args.pos.empty()) {
    const Value* attribute = Arg(args, SIZE_MAX, "attribute");
    if (!attribute) return InvalidArgument("map requires a filter argument");
    const Value* dflt = Arg(args, SIZE_MAX, "default");
    std::string path;
    EMBER_RETURN_IF_ERROR(Str(*attribute, &path));
    for (const Value& x : items) {
      Value y;
      EMBER_RETURN_IF_ERROR(GetPath(in, x, path, &y));
      if (y.is_undefined() && dflt) y = *dflt;
      r.push_back(std::move(y));
    }
    return Generator(std::move(r), out);
  }
  std::string filter;
  EMBER_RETURN_IF_ERROR(Str(args.pos[0], &filter));
  CallArgs rest;
  rest.pos.assign(args.pos.begin() + 1, args.pos.end());
  rest.kw = args.kw;
  for (const Value& x : items) {
    Value y;
    CallArgs a = rest;
    EMBER_RETURN_IF_ERROR(in.ApplyFilter(filter, x, a, &y));
    r.push_back(std::move(y));
  }
  return Generator(std::move(r), out);
}

Status MinMax(Interpreter& in, const Value& v, CallArgs& args, bool max, Value* out) {
  const bool case_sensitive = BoolArg(Arg(args, 0, "case_sensitive"), false);
  const Value* attribute = Arg(args, 1, "attribute");
  std::vector<Value> items;
  EMBER_RETURN_IF_ERROR(in.Iterate(v, &items));
  if (items.empty()) {
    *out = Value::Undefined("No aggregated item, sequence was empty.");
    return Status::Ok();
  }
  size_t best = 0;
  Value best_key;
  EMBER_RETURN_IF_ERROR(SortKey(in, items[0], attribute, case_sensitive, &best_key));
  for (size_t i = 1; i < items.size(); ++i) {
    Value key;
    EMBER_RETURN_IF_ERROR(SortKey(in, items[i], attribute, case_sensitive, &key));
    bool better = false;
    EMBER_RETURN_IF_ERROR(max ? Less(best_key, key, &better) : Less(key, best_key, &better));
    if (better) {
      best = i;
      best_key = std::move(key);
    }
  }
  *out = items[best];
  return Status::Ok();
}
Status FMax(Interpreter& in, const Value& v, CallArgs& args, Value* out) {
  return MinMax(in, v, args, true, out);
}
Status FMin(Interpreter& in, const Value& v, CallArgs& args, Value* out) {
  return MinMax(in, v, args, false, out);
}

// select / reject (test on the item) and selectattr / rejectattr (test on an attribute).
Status SelectOrReject(Interpreter& in, const Value& v, CallArgs& args, bool by_attr, bool keep,
                      Value* out) {
  std::vector<Value> items, r;
  if (!Truthy(v)) return Generator({}, out);  // jinja2 checks `if value:` first (None is fine)
  EMBER_RETURN_IF_ERROR(in.Iterate(v, &items));
  size_t next = 0;
  std::string path;
  if (by_attr) {
    if (args.pos.empty()) return InvalidArgument("Missing parameter for attribute name");
    EMBER_RETURN_IF_ERROR(Str(args.pos[0], &path));
    next = 1;
  }
  std::string test;
  if (args.pos.size() > next) EMBER_RETURN_IF_ERROR(Str(args.pos[next], &test));
  CallArgs test_args;
  if (args.pos.size() > next + 1) test_args.pos.assign(args.pos.begin() + next + 1, args.pos.end());
  test_args.kw = args.kw;
  for (const Value& x : items) {
    Value subject = x;
    if (by_attr) EMBER_RETURN_IF_ERROR(GetPath(in, x, path, &subject));
    bool pass = false;
    if (test.empty()) {
      pass = Truthy(subject);
    } else {
      CallArgs a = test_args;
      EMBER_RETURN_IF_ERROR(in.ApplyTest(test, subject, a, &pass));
    }
    if (pass == keep) r.push_back(x);
  }
  return Generator(std::move(r), out);
}
Status FSelect(Interpreter& in, const Value& v, CallArgs& a, Value* o) {
  return SelectOrReject(in, v, a, false, true, o);
}
Status FReject(Interpreter& in, const Value& v, CallArgs& a, Value* o) {
  return SelectOrReject(in, v, a, false, false, o);
}
Status FSelectattr(Interpreter& in, const Value& v, CallArgs& a, Value* o) {
  return SelectOrReject(in, v, a, true, true, o);
}
Status FRejectattr(Interpreter& in, const Value& v, CallArgs& a, Value* o) {
  return SelectOrReject(in, v, a, true, false, o);
}

Status FReplace(Interpreter& in, const Value& v, CallArgs& args, Value* out) {
  std::string s, from, to;
  EMBER_RETURN_IF_ERROR(Str(v, &s));
  const Value* a = Arg(args, 0, "old");
  const Value* b = Arg(args, 1, "new");
  if (!a || !b) return InvalidArgument("replace needs the old and the new string");
  EMBER_RETURN_IF_ERROR(Str(*a, &from));
  EMBER_RETURN_IF_ERROR(Str(*b, &to));
  CallArgs m;
  m.pos = {Value::String(from), Value::String(to)};
  if (const Value* c = Arg(args, 2, "count"); c && !c->is_none()) m.pos.push_back(*c);
  Value method;
  GetMethod(Value::String(s), "replace", &method);
  return in.CallValue(method, m, out);
}

Status FReverse(Interpreter& in, const Value& v, CallArgs&, Value* out) {
  if (v.is_string()) {
    std::vector<size_t> offsets = CodePointOffsets(v.str());
    std::string r;
    for (size_t i = offsets.size() - 1; i > 0; --i) {
      r.append(v.str(), offsets[i - 1], offsets[i] - offsets[i - 1]);
    }
    *out = Value::String(std::move(r));
    return Status::Ok();
  }
  if (v.is_list() && v.list().kind == ListKind::kGenerator) {
    std::vector<Value> items;  // reversed() fails on a generator; jinja2 then makes a list
    EMBER_RETURN_IF_ERROR(in.Iterate(v, &items));
    std::reverse(items.begin(), items.end());
    return Value::List(std::move(items), ListKind::kList, out);
  }
  std::vector<Value> items;
  EMBER_RETURN_IF_ERROR(in.Iterate(v, &items));
  std::reverse(items.begin(), items.end());
  return Generator(std::move(items), out);
}

Status FRound(Interpreter&, const Value& v, CallArgs& args, Value* out) {
  const Value* p = Arg(args, 0, "precision");
  const int64_t precision = p && p->is_integral() ? p->as_int() : 0;
  std::string method = "common";
  if (const Value* m = Arg(args, 1, "method")) EMBER_RETURN_IF_ERROR(Str(*m, &method));
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
  EMBER_RETURN_IF_ERROR(Str(v, &s));
  *out = Value::String(std::move(s), /*safe=*/true);
  return Status::Ok();
}

Status FSort(Interpreter& in, const Value& v, CallArgs& args, Value* out) {
  const bool reverse = BoolArg(Arg(args, 0, "reverse"), false);
  const bool case_sensitive = BoolArg(Arg(args, 1, "case_sensitive"), false);
  const Value* attribute = Arg(args, 2, "attribute");
  std::vector<Value> items, keys;
  EMBER_RETURN_IF_ERROR(in.Iterate(v, &items));
  for (const Value& x : items) {
    Value k;
    EMBER_RETURN_IF_ERROR(SortKey(in, x, attribute, case_sensitive, &k));
    keys.push_back(std::move(k));
  }
  EMBER_RETURN_IF_ERROR(SortByKeys(&items, std::move(keys), reverse));
  return Value::List(std::move(items), ListKind::kList, out);
}

Status FString(Interpreter&, const Value& v, CallArgs&, Value* out) {
  if (v.is_string()) {
    *out = v;
    return Status::Ok();
  }
  std::string s;
  EMBER_RETURN_IF_ERROR(Str(v, &s));
  *out = Value::String(std::move(s));
  return Status::Ok();
}

Status FSum(Interpreter& in, const Value& v, CallArgs& args, Value* out) {
  const Value* attribute = Arg(args, 0, "attribute");
  const Value* start = Arg(args, 1, "start");
  std::vector<Value> items;
  EMBER_RETURN_IF_ERROR(in.Iterate(v, &items));
  Value total = start ? *start : Value::Int(0);
  for (const Value& x : items) {
    Value y = x;
    if (attribute && !attribute->is_none()) {
      std::string path;
      EMBER_RETURN_IF_ERROR(Str(*attribute, &path));
      EMBER_RETURN_IF_ERROR(GetPath(in, x, path, &y));
    }
    if (!(total.is_integral() || total.is_float()) || !(y.is_integral() || y.is_float())) {
      return InvalidArgument(std::string("unsupported operand type(s) for +: '") + TypeName(total) +
                             "' and '" + TypeName(y) + "'");
    }
    if (total.is_float() || y.is_float()) {
      total = Value::Float(total.as_float() + y.as_float());
    } else {
      int64_t r;
      if (__builtin_add_overflow(total.as_int(), y.as_int(), &r)) {
        return InvalidArgument("integer overflow");
      }
      total = Value::Int(r);
    }
  }
  *out = total;
  return Status::Ok();
}

Status FTitle(Interpreter&, const Value& v, CallArgs&, Value* out) {
  // Words begin after runs of '-', whitespace, '(', '{', '[', '<' (jinja2's title, not
  // Python's str.title): each word's first character upper, the rest lower.
  std::string s, r;
  EMBER_RETURN_IF_ERROR(Str(v, &s));
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
  EMBER_RETURN_IF_ERROR(Str(v, &s));
  const Value* c = Arg(args, 0, "chars");
  const bool has_chars = c && !c->is_none();
  if (has_chars) EMBER_RETURN_IF_ERROR(Str(*c, &chars));
  *out = StringLike(v, StripString(s, has_chars ? &chars : nullptr, true, true));
  return Status::Ok();
}

Status FUnique(Interpreter& in, const Value& v, CallArgs& args, Value* out) {
  const bool case_sensitive = BoolArg(Arg(args, 0, "case_sensitive"), false);
  const Value* attribute = Arg(args, 1, "attribute");
  std::vector<Value> items, seen, r;
  EMBER_RETURN_IF_ERROR(in.Iterate(v, &items));
  for (const Value& x : items) {
    Value k;
    EMBER_RETURN_IF_ERROR(SortKey(in, x, attribute, case_sensitive, &k));
    bool dup = false;
    for (const Value& s : seen) dup = dup || Equals(s, k);
    if (dup) continue;
    seen.push_back(std::move(k));
    r.push_back(x);
  }
  return Generator(std::move(r), out);
}

Status FWordcount(Interpreter&, const Value& v, CallArgs&, Value* out) {
  std::string s;
  EMBER_RETURN_IF_ERROR(Str(v, &s));
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

struct FilterEntry {
  const char* name;
  FilterFn fn;
};

const FilterEntry kFilters[] = {
    {"abs", FAbs},
    {"attr", FAttr},
    {"batch", FBatch},
    {"capitalize", FCapitalize},
    {"center", FCenter},
    {"count", FLength},
    {"d", FDefault},
    {"default", FDefault},
    {"dictsort", FDictsort},
    {"e", FEscape},
    {"escape", FEscape},
    {"first", FFirst},
    {"float", FFloat},
    {"forceescape", FEscape},
    {"format", FFormat},
    {"indent", FIndent},
    {"int", FInt},
    {"items", FItems},
    {"join", FJoin},
    {"last", FLast},
    {"length", FLength},
    {"list", FList},
    {"lower", FLower},
    {"map", FMap},
    {"max", FMax},
    {"min", FMin},
    {"reject", FReject},
    {"rejectattr", FRejectattr},
    {"replace", FReplace},
    {"reverse", FReverse},
    {"round", FRound},
    {"safe", FSafe},
    {"select", FSelect},
    {"selectattr", FSelectattr},
    {"sort", FSort},
    {"string", FString},
    {"sum", FSum},
    {"title", FTitle},
    {"tojson", FToJson},
    {"trim", FTrim},
    {"unique", FUnique},
    {"upper", FUpper},
    {"wordcount", FWordcount},
};

const FilterEntry* FindFilter(std::string_view name) {
  for (const FilterEntry& f : kFilters) {
    if (name == f.name) return &f;
  }
  return nullptr;
}

// ---- tests -------------------------------------------------------------------------

using TestFn = Status (*)(Interpreter&, const Value&, CallArgs&, bool*);

Status NeedNumber(Interpreter& in, const Value& v) {
  if (v.is_undefined()) return in.UndefinedError(v);
  if (!v.is_integral() && !v.is_float()) {
    return InvalidArgument(std::string("unsupported operand type(s) for %: '") + TypeName(v) +
                           "' and 'int'");
  }
  return Status::Ok();
}

Status TOdd(Interpreter& in, const Value& v, CallArgs&, bool* r) {
  EMBER_RETURN_IF_ERROR(NeedNumber(in, v));
  *r = v.is_float() ? std::fmod(std::fabs(v.as_float()), 2.0) == 1.0 : (v.as_int() % 2) != 0;
  return Status::Ok();
}
Status TEven(Interpreter& in, const Value& v, CallArgs&, bool* r) {
  EMBER_RETURN_IF_ERROR(NeedNumber(in, v));
  *r = v.is_float() ? std::fmod(v.as_float(), 2.0) == 0.0 : (v.as_int() % 2) == 0;
  return Status::Ok();
}
Status TDivisibleby(Interpreter& in, const Value& v, CallArgs& args, bool* r) {
  EMBER_RETURN_IF_ERROR(NeedNumber(in, v));
  const Value* n = Arg(args, 0, "num");
  if (!n || (!n->is_integral() && !n->is_float()))
    return InvalidArgument("divisibleby needs a number");
  if (n->as_float() == 0) return InvalidArgument("integer division or modulo by zero");
  *r = (v.is_float() || n->is_float()) ? std::fmod(v.as_float(), n->as_float()) == 0.0
                                       : v.as_int() % n->as_int() == 0;
  return Status::Ok();
}

Status Compare(Interpreter& in, const Value& v, CallArgs& args, const char* op, bool* r) {
  const Value* other = Arg(args, 0, "other");
  if (!other) return InvalidArgument(std::string("the test '") + op + "' needs an argument");
  const std::string o = op;
  if (o == "==" || o == "!=") {
    *r = Equals(v, *other) == (o == "==");
    return Status::Ok();
  }
  if (v.is_undefined()) return in.UndefinedError(v);
  if (other->is_undefined()) return in.UndefinedError(*other);
  bool less = false;
  const bool swap = o == ">" || o == "<=";
  Status s = swap ? Less(*other, v, &less) : Less(v, *other, &less);
  if (!s.ok()) {
    return InvalidArgument("'" + o + "' not supported between instances of '" + TypeName(v) +
                           "' and '" + TypeName(*other) + "'");
  }
  *r = (o == "<" || o == ">") ? less : !less;
  return Status::Ok();
}
Status TEq(Interpreter& in, const Value& v, CallArgs& a, bool* r) {
  return Compare(in, v, a, "==", r);
}
Status TNe(Interpreter& in, const Value& v, CallArgs& a, bool* r) {
  return Compare(in, v, a, "!=", r);
}
Status TLt(Interpreter& in, const Value& v, CallArgs& a, bool* r) {
  return Compare(in, v, a, "<", r);
}
Status TLe(Interpreter& in, const Value& v, CallArgs& a, bool* r) {
  return Compare(in, v, a, "<=", r);
}
Status TGt(Interpreter& in, const Value& v, CallArgs& a, bool* r) {
  return Compare(in, v, a, ">", r);
}
Status TGe(Interpreter& in, const Value& v, CallArgs& a, bool* r) {
  return Compare(in, v, a, ">=", r);
}

Status TIn(Interpreter& in, const Value& v, CallArgs& args, bool* r) {
  const Value* seq = Arg(args, 0, "seq");
  if (!seq) return InvalidArgument("the test 'in' needs an argument");
  if (seq->is_string()) {
    if (!v.is_string()) {
      return InvalidArgument(std::string("'in <string>' requires string as left operand, not ") +
                             TypeName(v));
    }
    *r = seq->str().find(v.str()) != std::string::npos;
    return Status::Ok();
  }
  if (seq->is_dict()) {
    *r = seq->dict().Find(v) != nullptr;
    return Status::Ok();
  }
  std::vector<Value> items;
  EMBER_RETURN_IF_ERROR(in.Iterate(*seq, &items));
  *r = std::any_of(items.begin(), items.end(), [&](const Value& x) { return Equals(v, x); });
  return Status::Ok();
}

Status TSameas(Interpreter&, const Value& v, CallArgs& args, bool* r) {
  const Value* other = Arg(args, 0, "other");
  if (!other) return InvalidArgument("the test 'sameas' needs an argument");
  if (v.kind() != other->kind()) {
    *r = false;
  } else if (v.is_none() || v.is_undefined()) {
    *r = true;
  } else if (v.is_bool() || v.is_int()) {
    *r = v.as_int() == other->as_int();
  } else if (v.is_float()) {
    *r = false;
  } else {
    *r = v.identity() == other->identity();
  }
  return Status::Ok();
}

// str.isupper() / str.islower(): some cased character, and none of the other case.
Status TLowerUpper(Interpreter&, const Value& v, bool upper, bool* r) {
  std::string s;
  EMBER_RETURN_IF_ERROR(Str(v, &s));
  bool cased = false, other = false;
  for (size_t pos = 0; pos < s.size();) {
    std::string one;
    AppendUtf8(NextCodePoint(s, &pos), &one);
    const bool is_up = ToLower(one) != one;
    const bool is_low = ToUpper(one) != one;
    if (is_up || is_low) cased = true;
    if (upper ? is_low : is_up) other = true;
  }
  *r = cased && !other;
  return Status::Ok();
}
Status TLower(Interpreter& in, const Value& v, CallArgs&, bool* r) {
  return TLowerUpper(in, v, false, r);
}
Status TUpper(Interpreter& in, const Value& v, CallArgs&, bool* r) {
  return TLowerUpper(in, v, true, r);
}

#define SIMPLE_TEST(fn, expr)                                   \
  Status fn(Interpreter&, const Value& v, CallArgs&, bool* r) { \
    *r = (expr);                                                \
    return Status::Ok();                                        \
  }
SIMPLE_TEST(TDefined, !v.is_undefined())
SIMPLE_TEST(TUndefined, v.is_undefined())
SIMPLE_TEST(TNone, v.is_none())
SIMPLE_TEST(TBoolean, v.is_bool())
SIMPLE_TEST(TFalse, v.is_bool() && !v.as_bool())
SIMPLE_TEST(TTrue, v.is_bool() && v.as_bool())
SIMPLE_TEST(TInteger, v.is_int())
SIMPLE_TEST(TFloat, v.is_float())
SIMPLE_TEST(TNumber, v.is_integral() || v.is_float())
SIMPLE_TEST(TString, v.is_string())
SIMPLE_TEST(TMapping, v.is_dict())
SIMPLE_TEST(TEscaped, v.is_string() && v.safe())
// Python's callable(): jinja2's Undefined and loop objects define __call__.
SIMPLE_TEST(TCallable, v.is_callable() || v.is_undefined() || v.is_loop())
SIMPLE_TEST(TIterable, v.is_list() || v.is_dict() || v.is_string() || v.is_undefined())
// len() and __getitem__: lists, tuples, strings, dicts (and Undefined); not generators or views.
SIMPLE_TEST(TSequence, (v.is_list() &&
                        (v.list().kind == ListKind::kList || v.list().kind == ListKind::kTuple)) ||
                           v.is_string() || v.is_dict() || v.is_undefined())
SIMPLE_TEST(TFilter, v.is_string() && HasFilter(v.str()))
SIMPLE_TEST(TTest, v.is_string() && HasTest(v.str()))
#undef SIMPLE_TEST

struct TestEntry {
  const char* name;
  TestFn fn;
};

const TestEntry kTests[] = {
    {"boolean", TBoolean},
    {"callable", TCallable},
    {"defined", TDefined},
    {"divisibleby", TDivisibleby},
    {"eq", TEq},
    {"equalto", TEq},
    {"==", TEq},
    {"escaped", TEscaped},
    {"even", TEven},
    {"false", TFalse},
    {"filter", TFilter},
    {"float", TFloat},
    {"ge", TGe},
    {">=", TGe},
    {"gt", TGt},
    {"greaterthan", TGt},
    {">", TGt},
    {"in", TIn},
    {"integer", TInteger},
    {"iterable", TIterable},
    {"le", TLe},
    {"<=", TLe},
    {"lower", TLower},
    {"lt", TLt},
    {"lessthan", TLt},
    {"<", TLt},
    {"mapping", TMapping},
    {"ne", TNe},
    {"!=", TNe},
    {"none", TNone},
    {"number", TNumber},
    {"odd", TOdd},
    {"sameas", TSameas},
    {"sequence", TSequence},
    {"string", TString},
    {"test", TTest},
    {"true", TTrue},
    {"undefined", TUndefined},
    {"upper", TUpper},
};

const TestEntry* FindTest(std::string_view name) {
  for (const TestEntry& t : kTests) {
    if (name == t.name) return &t;
  }
  return nullptr;
}

}  // namespace

bool HasFilter(std::string_view name) { return FindFilter(name) != nullptr; }
bool HasTest(std::string_view name) { return FindTest(name) != nullptr; }

Status CallFilter(Interpreter& in, const std::string& name, const Value& value, CallArgs& args,
                  Value* out) {
  const FilterEntry* f = FindFilter(name);
  if (!f) return InvalidArgument("no filter named '" + name + "'");
  return f->fn(in, value, args, out);
}

Status CallTest(Interpreter& in, const std::string& name, const Value& value, CallArgs& args,
                bool* out) {
  const TestEntry* t = FindTest(name);
  if (!t) return InvalidArgument("no test named '" + name + "'");
  return t->fn(in, value, args, out);
}

}  // namespace ember::jinja
