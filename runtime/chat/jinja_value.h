// The dynamic value of ember's Jinja engine (docs/CHAT.md), with Python's
// semantics as jinja2 gives them to chat templates: Undefined, None, bool,
// int, float, str (UTF-8; Markup-safe flag), list / tuple / generator and the
// dict views, dict (insertion-ordered), namespace, callables (macros, builtin
// functions, bound methods) and the for loop's `loop` object.
//
// Ownership: strings, lists, dicts and callables are shared (copying a Value
// copies a pointer), as Python objects are. Lists and dicts cannot be changed
// by a template except list.pop, so they cannot form cycles. Namespaces can
// (`{% set ns.me = ns %}`): they live in the render's arena (NamespaceArena)
// and Values point at them without owning them. A macro keeps its defining
// scope weakly. So a render leaks nothing whatever the template does.
//
// Containers know their nesting depth, and building one deeper than
// kMaxValueDepth fails: destroying, printing and comparing values recurse.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "platform/status.h"
#include "runtime/text/unicode.h"

namespace ember::jinja {

constexpr int kMaxValueDepth = 200;  // nesting of lists / dicts in one value

enum class Kind : uint8_t {
  kUndefined,
  kNone,
  kBool,
  kInt,
  kFloat,
  kString,
  kList,  // also tuples, generators, dict views (ListKind)
  kDict,
  kNamespace,
  kCallable,
  kLoop,
};

// What a kList value is in Python: how it prints and what it allows.
enum class ListKind : uint8_t {
  kList,       // [1, 2]
  kTuple,      // (1, 2)
  kGenerator,  // what map/select/... give: iterates once, has no length
  kKeys,       // dict_keys([...])
  kValues,     // dict_values([...])
  kItems,      // dict_items([...])
};

class Value;
struct ListData;
struct DictData;
struct NamespaceData;
struct LoopData;
class Callable;

// Base of the shared payloads.
struct Object {
  virtual ~Object() = default;
};

class Value {
 public:
  Value() = default;  // Undefined
  static Value Undefined(std::string why = {});
  static Value None();
  static Value Bool(bool b);
  static Value Int(int64_t i);
  static Value Float(double f);
  static Value String(std::string s, bool safe = false);
  static Value Namespace(NamespaceData* ns);
  static Value Callable(std::shared_ptr<class Callable> fn);
  static Value Loop(std::shared_ptr<LoopData> loop);
  // Lists and dicts: fail (kInvalidArgument) when nested deeper than kMaxValueDepth.
  static Status List(std::vector<Value> items, ListKind kind, Value* out);
  static Status Dict(std::shared_ptr<DictData> dict, Value* out);
  static Value EmptyDict();

  Kind kind() const { return kind_; }
  bool is_undefined() const { return kind_ == Kind::kUndefined; }
  bool is_none() const { return kind_ == Kind::kNone; }
  bool is_bool() const { return kind_ == Kind::kBool; }
  bool is_int() const { return kind_ == Kind::kInt; }
  bool is_float() const { return kind_ == Kind::kFloat; }
  bool is_number() const { return kind_ == Kind::kInt || kind_ == Kind::kFloat; }
  // Python ints include bools (True + 1 == 2).
  bool is_integral() const { return kind_ == Kind::kInt || kind_ == Kind::kBool; }
  bool is_string() const { return kind_ == Kind::kString; }
  bool is_list() const { return kind_ == Kind::kList; }
  bool is_dict() const { return kind_ == Kind::kDict; }
  bool is_namespace() const { return kind_ == Kind::kNamespace; }
  bool is_callable() const { return kind_ == Kind::kCallable; }
  bool is_loop() const { return kind_ == Kind::kLoop; }
  bool safe() const { return safe_; }  // a Markup string (|safe)

  bool as_bool() const { return b_; }
  int64_t as_int() const { return kind_ == Kind::kBool ? (b_ ? 1 : 0) : i_; }
  double as_float() const { return kind_ == Kind::kFloat ? f_ : static_cast<double>(as_int()); }
  const std::string& str() const;  // kString only
  // Why an Undefined is undefined ("'x' is undefined"), for error messages.
  const std::string& undefined_why() const;
  ListData& list() const;
  DictData& dict() const;
  NamespaceData& ns() const { return *ns_; }
  class Callable& callable() const;
  LoopData& loop() const;
  // The identity of a shared payload (for `is sameas`).
  const void* identity() const;

  // Container nesting depth: 0 for scalars.
  int depth() const;

 private:
  Kind kind_ = Kind::kUndefined;
  bool safe_ = false;
  union {
    bool b_;
    int64_t i_ = 0;
    double f_;
    NamespaceData* ns_;
  };
  std::shared_ptr<Object> obj_;  // string, undefined's reason, list, dict, callable, loop
};

struct StringData : Object {
  explicit StringData(std::string v) : s(std::move(v)) {}
  std::string s;
};

struct ListData : Object {
  std::vector<Value> items;
  ListKind kind = ListKind::kList;
  bool consumed = false;  // a generator that was iterated
  int depth = 1;
};

// A Python dict: insertion order, keys compared as Python does (1 == 1.0 == True).
struct DictData : Object {
  std::vector<std::pair<Value, Value>> items;
  std::unordered_map<std::string, size_t> string_index;  // string key -> position in items
  int depth = 1;                                         // nesting, set when Value::Dict wraps it

  const Value* Find(const Value& key) const;
  const Value* Find(std::string_view key) const;
  // Adds or replaces (keeping the first position, as Python does).
  void Set(Value key, Value value);
  void Set(std::string key, Value value) { Set(Value::String(std::move(key)), std::move(value)); }
  size_t size() const { return items.size(); }
};

// namespace(): attributes a template may assign (`{% set ns.x = 1 %}`).
struct NamespaceData {
  DictData attrs;
};

// Owns the namespaces of one render.
class NamespaceArena {
 public:
  // nullptr once `limit` namespaces exist.
  NamespaceData* New(size_t limit);

 private:
  std::vector<std::unique_ptr<NamespaceData>> all_;
};

// The `loop` variable of a for loop.
struct LoopData : Object {
  std::shared_ptr<const std::vector<Value>> items;  // what the loop iterates
  size_t index0 = 0;
  Value last_changed;  // loop.changed's memory
  bool changed_called = false;
};

// Arguments of a call: positional, then keyword in call order.
struct CallArgs {
  std::vector<Value> pos;
  std::vector<std::pair<std::string, Value>> kw;
};

class Interpreter;

// Anything a template can call.
class Callable : public Object {
 public:
  // "macro", "builtin_function_or_method", "method": Python's type name, for messages.
  virtual const char* type_name() const = 0;
  virtual std::string name() const = 0;
  virtual Status Call(Interpreter& in, CallArgs& args, Value* out) = 0;
};

// ---- Python's view of values ----------------------------------------------

// Python's type name: "str", "int", "list", "dict", "NoneType", "Undefined", ...
const char* TypeName(const Value& v);
// truthiness: bool(v)
bool Truthy(const Value& v);
// str(v): what {{ v }} prints. Fails only when nesting is too deep.
Status ToStr(const Value& v, std::string* out);
// repr(v)
Status Repr(const Value& v, std::string* out);
std::string ReprString(std::string_view s);  // repr of a str
std::string FloatRepr(double f);             // repr of a float: 1.0, 1e+20, 0.1
// v1 == v2 in Python (1 == 1.0, [1] == [1], 'a' != 1; dicts by content).
bool Equals(const Value& a, const Value& b);
// a < b in Python; an error when Python raises TypeError ('<' not supported ...).
Status Less(const Value& a, const Value& b, bool* out);

// ---- Strings as sequences of code points ------------------------------------

// Number of code points (invalid UTF-8 bytes count one each).
size_t CodePointCount(std::string_view s);
// Byte offsets of the code points: offsets[i] is where code point i starts; one more entry at
// the end (s.size()).
std::vector<size_t> CodePointOffsets(std::string_view s);
// Decodes the code point at s[*pos], advancing *pos (an invalid byte gives itself).
uint32_t NextCodePoint(std::string_view s, size_t* pos);
using unicode::AppendUtf8;         // runtime/text/unicode.h
bool IsPyWhitespace(uint32_t cp);  // Python's str.isspace() of one character

// ---- JSON --------------------------------------------------------------------

struct JsonOptions {
  bool ensure_ascii = false;
  bool has_indent = false;
  std::string indent;  // the indent unit (n spaces for indent=n)
  std::string item_separator = ", ";
  std::string key_separator = ": ";
  bool sort_keys = false;
};
// json.dumps(v, ...) as Python's json module writes it.
Status ToJson(const Value& v, const JsonOptions& opts, std::string* out);

}  // namespace ember::jinja
