// Python's semantics for the engine's values: str(), repr(), ==, <, and json.dumps.
#include "runtime/chat/jinja_value.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace ember::jinja {
namespace {

const std::string& EmptyString() {
  static const std::string empty;
  return empty;
}

Status TooDeep() {
  return InvalidArgument("values nested more than " + std::to_string(kMaxValueDepth) +
                         " levels deep");
}

}  // namespace

// ---- construction ----------------------------------------------------------

Value Value::Undefined(std::string why) {
  Value v;
  if (!why.empty()) v.obj_ = std::make_shared<StringData>(std::move(why));
  return v;
}
Value Value::None() {
  Value v;
  v.kind_ = Kind::kNone;
  return v;
}
Value Value::Bool(bool b) {
  Value v;
  v.kind_ = Kind::kBool;
  v.b_ = b;
  return v;
}
Value Value::Int(int64_t i) {
  Value v;
  v.kind_ = Kind::kInt;
  v.i_ = i;
  return v;
}
Value Value::Float(double f) {
  Value v;
  v.kind_ = Kind::kFloat;
  v.f_ = f;
  return v;
}
Value Value::String(std::string s, bool safe) {
  Value v;
  v.kind_ = Kind::kString;
  v.safe_ = safe;
  v.obj_ = std::make_shared<StringData>(std::move(s));
  return v;
}
Value Value::Namespace(NamespaceData* ns) {
  Value v;
  v.kind_ = Kind::kNamespace;
  v.ns_ = ns;
  return v;
}
Value Value::Callable(std::shared_ptr<class Callable> fn) {
  Value v;
  v.kind_ = Kind::kCallable;
  v.obj_ = std::move(fn);
  return v;
}
Value Value::Loop(std::shared_ptr<LoopData> loop) {
  Value v;
  v.kind_ = Kind::kLoop;
  v.obj_ = std::move(loop);
  return v;
}

Status Value::List(std::vector<Value> items, ListKind kind, Value* out) {
  auto data = std::make_shared<ListData>();
  int depth = 0;
  for (const Value& x : items) depth = std::max(depth, x.depth());
  if (depth + 1 > kMaxValueDepth) return TooDeep();
  data->depth = depth + 1;
  data->items = std::move(items);
  data->kind = kind;
  *out = Value();
  out->kind_ = Kind::kList;
  out->obj_ = std::move(data);
  return Status::Ok();
}

Status Value::Dict(std::shared_ptr<DictData> dict, Value* out) {
  int depth = 0;
  for (const auto& [k, x] : dict->items) depth = std::max({depth, k.depth(), x.depth()});
  if (depth + 1 > kMaxValueDepth) return TooDeep();
  dict->depth = depth + 1;
  *out = Value();
  out->kind_ = Kind::kDict;
  out->obj_ = std::move(dict);
  return Status::Ok();
}

Value Value::EmptyDict() {
  Value v;
  v.kind_ = Kind::kDict;
  v.obj_ = std::make_shared<DictData>();
  return v;
}

const std::string& Value::str() const { return static_cast<StringData&>(*obj_).s; }
const std::string& Value::undefined_why() const {
  return obj_ ? static_cast<StringData&>(*obj_).s : EmptyString();
}
ListData& Value::list() const { return static_cast<ListData&>(*obj_); }
DictData& Value::dict() const { return static_cast<DictData&>(*obj_); }
Callable& Value::callable() const { return static_cast<class Callable&>(*obj_); }
LoopData& Value::loop() const { return static_cast<LoopData&>(*obj_); }
const void* Value::identity() const {
  return kind_ == Kind::kNamespace ? static_cast<const void*>(ns_) : obj_.get();
}

int Value::depth() const {
  if (kind_ == Kind::kList) return list().depth;
  if (kind_ == Kind::kDict) return dict().depth;
  return 0;
}

// ---- dict --------------------------------------------------------------------

const Value* DictData::Find(std::string_view key) const {
  auto it = string_index.find(std::string(key));
  return it == string_index.end() ? nullptr : &items[it->second].second;
}

const Value* DictData::Find(const Value& key) const {
  if (key.is_string()) return Find(key.str());
  for (const auto& [k, v] : items) {
    if (!k.is_string() && Equals(k, key)) return &v;
  }
  return nullptr;
}

void DictData::Set(Value key, Value value) {
  if (key.is_string()) {
    auto [it, inserted] = string_index.emplace(key.str(), items.size());
    if (!inserted) {
      items[it->second].second = std::move(value);
      return;
    }
    items.emplace_back(std::move(key), std::move(value));
    return;
  }
  for (auto& [k, v] : items) {
    if (!k.is_string() && Equals(k, key)) {
      v = std::move(value);
      return;
    }
  }
  items.emplace_back(std::move(key), std::move(value));
}

NamespaceData* NamespaceArena::New(size_t limit) {
  if (all_.size() >= limit) return nullptr;
  all_.push_back(std::make_unique<NamespaceData>());
  return all_.back().get();
}

// ---- UTF-8 -------------------------------------------------------------------

uint32_t NextCodePoint(std::string_view s, size_t* pos) {
  const auto b0 = static_cast<unsigned char>(s[*pos]);
  const int n = b0 < 0x80             ? 0
                : (b0 & 0xE0) == 0xC0 ? 1
                : (b0 & 0xF0) == 0xE0 ? 2
                : (b0 & 0xF8) == 0xF0 ? 3
                                      : -1;
  if (n <= 0 || *pos + n >= s.size()) {  // ASCII, a stray byte, or cut at the end
    ++*pos;
    return b0;
  }
  uint32_t cp = b0 & (0x3F >> n);
  for (int k = 1; k <= n; ++k) {
    const auto b = static_cast<unsigned char>(s[*pos + k]);
    if ((b & 0xC0) != 0x80) {
      ++*pos;
      return b0;
    }
    cp = (cp << 6) | (b & 0x3F);
  }
  *pos += n + 1;
  return cp;
}

size_t CodePointCount(std::string_view s) {
  size_t n = 0;
  for (size_t pos = 0; pos < s.size(); ++n) NextCodePoint(s, &pos);
  return n;
}

std::vector<size_t> CodePointOffsets(std::string_view s) {
  std::vector<size_t> offsets;
  size_t pos = 0;
  while (pos < s.size()) {
    offsets.push_back(pos);
    NextCodePoint(s, &pos);
  }
  offsets.push_back(s.size());
  return offsets;
}

bool IsPyWhitespace(uint32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x20) || cp == 0x85 || cp == 0xA0 ||
         cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 ||
         cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

// ---- str / repr ----------------------------------------------------------------

const char* TypeName(const Value& v) {
  switch (v.kind()) {
    case Kind::kUndefined:
      return "Undefined";
    case Kind::kNone:
      return "NoneType";
    case Kind::kBool:
      return "bool";
    case Kind::kInt:
      return "int";
    case Kind::kFloat:
      return "float";
    case Kind::kString:
      return v.safe() ? "Markup" : "str";
    case Kind::kList:
      switch (v.list().kind) {
        case ListKind::kList:
          return "list";
        case ListKind::kTuple:
          return "tuple";
        case ListKind::kGenerator:
          return "generator";
        case ListKind::kKeys:
          return "dict_keys";
        case ListKind::kValues:
          return "dict_values";
        case ListKind::kItems:
          return "dict_items";
      }
      return "list";
    case Kind::kDict:
      return "dict";
    case Kind::kNamespace:
      return "Namespace";
    case Kind::kCallable:
      return v.callable().type_name();
    case Kind::kLoop:
      return "LoopContext";
  }
  return "object";
}

bool Truthy(const Value& v) {
  switch (v.kind()) {
    case Kind::kUndefined:
    case Kind::kNone:
      return false;
    case Kind::kBool:
      return v.as_bool();
    case Kind::kInt:
      return v.as_int() != 0;
    case Kind::kFloat:
      return v.as_float() != 0.0;
    case Kind::kString:
      return !v.str().empty();
    case Kind::kList:
      // A generator is an object: always true.
      return v.list().kind == ListKind::kGenerator || !v.list().items.empty();
    case Kind::kDict:
      return v.dict().size() != 0;
    case Kind::kNamespace:
    case Kind::kCallable:
    case Kind::kLoop:
      return true;
  }
  return false;
}

std::string FloatRepr(double f) {
  if (std::isnan(f)) return "nan";
  if (std::isinf(f)) return f > 0 ? "inf" : "-inf";
  if (f == 0.0) return std::signbit(f) ? "-0.0" : "0.0";
  // The shortest digits that read back as f, then Python's layout: positional for
  // exponents -4..15, else d.ddde+XX.
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), f, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  const bool neg = sci[0] == '-';
  if (neg) sci.erase(0, 1);
  const size_t e = sci.find('e');
  std::string digits = sci.substr(0, e);
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  const int exp = std::stoi(sci.substr(e + 1));
  std::string out = neg ? "-" : "";
  if (exp >= -4 && exp < 16) {
    if (exp < 0) {
      out += "0." + std::string(static_cast<size_t>(-exp - 1), '0') + digits;
    } else if (static_cast<size_t>(exp) + 1 >= digits.size()) {
      out += digits + std::string(static_cast<size_t>(exp) + 1 - digits.size(), '0') + ".0";
    } else {
      out += digits.substr(0, static_cast<size_t>(exp) + 1) + "." +
             digits.substr(static_cast<size_t>(exp) + 1);
    }
    return out;
  }
  out += digits.substr(0, 1);
  if (digits.size() > 1) out += "." + digits.substr(1);
  char ebuf[16];
  std::snprintf(ebuf, sizeof(ebuf), "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
  return out + ebuf;
}

namespace {

// Python's str.isprintable() for one character, close enough for repr: control
// characters, the separators other than space and the common format characters
// are escaped.
bool IsPrintable(uint32_t cp) {
  if (cp < 0x20 || (cp >= 0x7F && cp <= 0xA0) || cp == 0xAD) return false;
  if (cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200F) || (cp >= 0x2028 && cp <= 0x202F)) {
    return false;
  }
  if ((cp >= 0x205F && cp <= 0x206F) || cp == 0x3000 || cp == 0xFEFF) return false;
  if (cp >= 0xD800 && cp <= 0xDFFF) return false;
  return true;
}

// The namespaces being printed (the only values that can hold themselves).
using Active = std::vector<const NamespaceData*>;

Status ReprInto(const Value& v, int depth, Active* active, std::string* out);

Status StrInto(const Value& v, int depth, Active* active, std::string* out) {
  switch (v.kind()) {
    case Kind::kUndefined:
      return Status::Ok();
    case Kind::kString:
      *out += v.str();
      return Status::Ok();
    default:
      return ReprInto(v, depth, active, out);
  }
}

Status ReprItems(const std::vector<Value>& items, int depth, Active* active, std::string* out) {
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) *out += ", ";
    EMBER_RETURN_IF_ERROR(ReprInto(items[i], depth + 1, active, out));
  }
  return Status::Ok();
}

Status ReprDict(const DictData& d, int depth, Active* active, std::string* out) {
  *out += '{';
  for (size_t i = 0; i < d.items.size(); ++i) {
    if (i) *out += ", ";
    EMBER_RETURN_IF_ERROR(ReprInto(d.items[i].first, depth + 1, active, out));
    *out += ": ";
    EMBER_RETURN_IF_ERROR(ReprInto(d.items[i].second, depth + 1, active, out));
  }
  *out += '}';
  return Status::Ok();
}

Status ReprInto(const Value& v, int depth, Active* active, std::string* out) {
  if (depth > kMaxValueDepth) return TooDeep();  // a namespace holding itself
  switch (v.kind()) {
    case Kind::kUndefined:
      *out += "Undefined";
      return Status::Ok();
    case Kind::kNone:
      *out += "None";
      return Status::Ok();
    case Kind::kBool:
      *out += v.as_bool() ? "True" : "False";
      return Status::Ok();
    case Kind::kInt:
      *out += std::to_string(v.as_int());
      return Status::Ok();
    case Kind::kFloat:
      *out += FloatRepr(v.as_float());
      return Status::Ok();
    case Kind::kString:
      if (v.safe()) {
        *out += "Markup(" + ReprString(v.str()) + ")";
      } else {
        *out += ReprString(v.str());
      }
      return Status::Ok();
    case Kind::kList: {
      const ListData& l = v.list();
      switch (l.kind) {
        case ListKind::kList:
          *out += '[';
          EMBER_RETURN_IF_ERROR(ReprItems(l.items, depth, active, out));
          *out += ']';
          return Status::Ok();
        case ListKind::kTuple:
          *out += '(';
          EMBER_RETURN_IF_ERROR(ReprItems(l.items, depth, active, out));
          *out += l.items.size() == 1 ? ",)" : ")";
          return Status::Ok();
        case ListKind::kGenerator:
          *out += "<generator object>";
          return Status::Ok();
        case ListKind::kKeys:
        case ListKind::kValues:
        case ListKind::kItems:
          *out += std::string(TypeName(v)) + "([";
          EMBER_RETURN_IF_ERROR(ReprItems(l.items, depth, active, out));
          *out += "])";
          return Status::Ok();
      }
      return Status::Ok();
    }
    case Kind::kDict:
      return ReprDict(v.dict(), depth, active, out);
    case Kind::kNamespace:
      // A namespace inside itself prints as Python's recursive repr does.
      if (std::find(active->begin(), active->end(), &v.ns()) != active->end()) {
        *out += "<Namespace {...}>";
        return Status::Ok();
      }
      active->push_back(&v.ns());
      *out += "<Namespace ";
      EMBER_RETURN_IF_ERROR(ReprDict(v.ns().attrs, depth, active, out));
      *out += '>';
      active->pop_back();
      return Status::Ok();
    case Kind::kCallable: {
      const Callable& c = v.callable();
      if (std::string(c.type_name()) == "Macro") {
        *out += "<Macro '" + c.name() + "'>";
      } else {
        *out += "<built-in method " + c.name() + ">";
      }
      return Status::Ok();
    }
    case Kind::kLoop: {
      const LoopData& l = v.loop();
      *out += "<LoopContext " + std::to_string(l.index0 + 1) + "/" +
              std::to_string(l.items->size()) + ">";
      return Status::Ok();
    }
  }
  return Status::Ok();
}

}  // namespace

Status ToStr(const Value& v, std::string* out) {
  out->clear();
  Active active;
  return StrInto(v, 0, &active, out);
}

Status Repr(const Value& v, std::string* out) {
  out->clear();
  Active active;
  return ReprInto(v, 0, &active, out);
}

std::string ReprString(std::string_view s) {
  const bool has_single = s.find('\'') != std::string_view::npos;
  const bool has_double = s.find('"') != std::string_view::npos;
  const char quote = has_single && !has_double ? '"' : '\'';
  std::string out(1, quote);
  for (size_t pos = 0; pos < s.size();) {
    const uint32_t cp = NextCodePoint(s, &pos);
    char buf[16];
    if (cp == static_cast<uint32_t>(quote) || cp == '\\') {
      out += '\\';
      out += static_cast<char>(cp);
    } else if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\r') {
      out += "\\r";
    } else if (cp == '\t') {
      out += "\\t";
    } else if (IsPrintable(cp)) {
      AppendUtf8(cp, &out);
    } else {
      std::snprintf(buf, sizeof(buf),
                    cp < 0x100     ? "\\x%02x"
                    : cp < 0x10000 ? "\\u%04x"
                                   : "\\U%08x",
                    cp);
      out += buf;
    }
  }
  out += quote;
  return out;
}

// ---- comparisons -----------------------------------------------------------------

bool Equals(const Value& a, const Value& b) {
  if ((a.is_integral() || a.is_float()) && (b.is_integral() || b.is_float())) {
    if (a.is_float() || b.is_float()) return a.as_float() == b.as_float();
    return a.as_int() == b.as_int();
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Kind::kUndefined:
    case Kind::kNone:
      return true;
    case Kind::kString:
      return a.str() == b.str();
    case Kind::kList: {
      const ListData& x = a.list();
      const ListData& y = b.list();
      if (&x == &y) return true;
      const bool xt = x.kind == ListKind::kTuple, yt = y.kind == ListKind::kTuple;
      if (xt != yt || x.kind == ListKind::kGenerator || y.kind == ListKind::kGenerator) {
        return false;
      }
      if (x.items.size() != y.items.size()) return false;
      for (size_t i = 0; i < x.items.size(); ++i) {
        if (!Equals(x.items[i], y.items[i])) return false;
      }
      return true;
    }
    case Kind::kDict: {
      const DictData& x = a.dict();
      const DictData& y = b.dict();
      if (&x == &y) return true;
      if (x.size() != y.size()) return false;
      for (const auto& [k, v] : x.items) {
        const Value* w = y.Find(k);
        if (!w || !Equals(v, *w)) return false;
      }
      return true;
    }
    default:
      return a.identity() == b.identity();
  }
}

Status Less(const Value& a, const Value& b, bool* out) {
  if ((a.is_integral() || a.is_float()) && (b.is_integral() || b.is_float())) {
    if (a.is_float() || b.is_float()) {
      *out = a.as_float() < b.as_float();
    } else {
      *out = a.as_int() < b.as_int();
    }
    return Status::Ok();
  }
  if (a.is_string() && b.is_string()) {
    *out = a.str() < b.str();  // UTF-8 byte order is code point order
    return Status::Ok();
  }
  if (a.is_list() && b.is_list() && a.list().kind == b.list().kind &&
      (a.list().kind == ListKind::kList || a.list().kind == ListKind::kTuple)) {
    const auto& x = a.list().items;
    const auto& y = b.list().items;
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (Equals(x[i], y[i])) continue;
      return Less(x[i], y[i], out);
    }
    *out = x.size() < y.size();
    return Status::Ok();
  }
  return InvalidArgument(std::string("'<' not supported between instances of '") + TypeName(a) +
                         "' and '" + TypeName(b) + "'");
}

// ---- JSON ------------------------------------------------------------------------

namespace {

void JsonString(std::string_view s, bool ensure_ascii, std::string* out) {
  *out += '"';
  for (size_t pos = 0; pos < s.size();) {
    const uint32_t cp = NextCodePoint(s, &pos);
    char buf[16];
    switch (cp) {
      case '"':
        *out += "\\\"";
        break;
      case '\\':
        *out += "\\\\";
        break;
      case '\n':
        *out += "\\n";
        break;
      case '\r':
        *out += "\\r";
        break;
      case '\t':
        *out += "\\t";
        break;
      case '\b':
        *out += "\\b";
        break;
      case '\f':
        *out += "\\f";
        break;
      default:
        if (cp < 0x20 || (ensure_ascii && cp >= 0x7F)) {
          if (cp >= 0x10000) {
            const uint32_t v = cp - 0x10000;
            std::snprintf(buf, sizeof(buf), "\\u%04x\\u%04x", 0xD800 + (v >> 10),
                          0xDC00 + (v & 0x3FF));
          } else {
            std::snprintf(buf, sizeof(buf), "\\u%04x", cp);
          }
          *out += buf;
        } else {
          AppendUtf8(cp, out);
        }
    }
  }
  *out += '"';
}

std::string JsonFloat(double f) {
  if (std::isnan(f)) return "NaN";
  if (std::isinf(f)) return f > 0 ? "Infinity" : "-Infinity";
  return FloatRepr(f);
}

Status NotSerializable(const Value& v) {
  return InvalidArgument(std::string("Object of type ") + TypeName(v) +
                         " is not JSON serializable");
}

Status JsonInto(const Value& v, const JsonOptions& o, int depth, std::string* out);

void Newline(const JsonOptions& o, int depth, std::string* out) {
  if (!o.has_indent) return;
  *out += '\n';
  for (int i = 0; i < depth; ++i) *out += o.indent;
}

Status JsonKey(const Value& k, const JsonOptions& o, std::string* out) {
  switch (k.kind()) {
    case Kind::kString:
      JsonString(k.str(), o.ensure_ascii, out);
      return Status::Ok();
    case Kind::kInt:
      *out += '"' + std::to_string(k.as_int()) + '"';
      return Status::Ok();
    case Kind::kFloat:
      *out += '"' + JsonFloat(k.as_float()) + '"';
      return Status::Ok();
    case Kind::kBool:
      *out += k.as_bool() ? "\"true\"" : "\"false\"";
      return Status::Ok();
    case Kind::kNone:
      *out += "\"null\"";
      return Status::Ok();
    default:
      return InvalidArgument(std::string("keys must be str, int, float, bool or None, not ") +
                             TypeName(k));
  }
}

Status JsonInto(const Value& v, const JsonOptions& o, int depth, std::string* out) {
  if (depth > kMaxValueDepth) return TooDeep();
  switch (v.kind()) {
    case Kind::kNone:
      *out += "null";
      return Status::Ok();
    case Kind::kBool:
      *out += v.as_bool() ? "true" : "false";
      return Status::Ok();
    case Kind::kInt:
      *out += std::to_string(v.as_int());
      return Status::Ok();
    case Kind::kFloat:
      *out += JsonFloat(v.as_float());
      return Status::Ok();
    case Kind::kString:
      JsonString(v.str(), o.ensure_ascii, out);
      return Status::Ok();
    case Kind::kList: {
      const ListData& l = v.list();
      if (l.kind != ListKind::kList && l.kind != ListKind::kTuple) return NotSerializable(v);
      if (l.items.empty()) {
        *out += "[]";
        return Status::Ok();
      }
      *out += '[';
      for (size_t i = 0; i < l.items.size(); ++i) {
        if (i) *out += o.item_separator;
        Newline(o, depth + 1, out);
        EMBER_RETURN_IF_ERROR(JsonInto(l.items[i], o, depth + 1, out));
      }
      Newline(o, depth, out);
      *out += ']';
      return Status::Ok();
    }
    case Kind::kDict: {
      const DictData& d = v.dict();
      if (d.items.empty()) {
        *out += "{}";
        return Status::Ok();
      }
      std::vector<const std::pair<Value, Value>*> items;
      for (const auto& kv : d.items) items.push_back(&kv);
      if (o.sort_keys) {
        Status err;
        std::stable_sort(items.begin(), items.end(), [&](const auto* a, const auto* b) {
          bool less = false;
          Status s = Less(a->first, b->first, &less);
          if (!s.ok() && err.ok()) err = s;
          return less;
        });
        EMBER_RETURN_IF_ERROR(err);
      }
      *out += '{';
      for (size_t i = 0; i < items.size(); ++i) {
        if (i) *out += o.item_separator;
        Newline(o, depth + 1, out);
        EMBER_RETURN_IF_ERROR(JsonKey(items[i]->first, o, out));
        *out += o.key_separator;
        EMBER_RETURN_IF_ERROR(JsonInto(items[i]->second, o, depth + 1, out));
      }
      Newline(o, depth, out);
      *out += '}';
      return Status::Ok();
    }
    default:
      return NotSerializable(v);
  }
}

}  // namespace

Status ToJson(const Value& v, const JsonOptions& opts, std::string* out) {
  out->clear();
  return JsonInto(v, opts, 0, out);
}

}  // namespace ember::jinja
