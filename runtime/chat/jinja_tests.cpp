// Jinja's built-in tests (`value is name(args)`), as jinja2 3.1 defines them,
// also what select / reject / selectattr / rejectattr call.
#include <algorithm>
#include <cmath>

#include "runtime/chat/jinja_builtins.h"
#include "runtime/chat/jinja_eval.h"

namespace ember::jinja {
namespace {

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
  EMBER_RETURN_IF_ERROR(ToStr(v, &s));
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

bool HasTest(std::string_view name) { return FindTest(name) != nullptr; }

Status CallTest(Interpreter& in, const std::string& name, const Value& value, CallArgs& args,
                bool* out) {
  const TestEntry* t = FindTest(name);
  if (!t) return InvalidArgument("No test named '" + name + "' found.");
  return t->fn(in, value, args, out);
}

}  // namespace ember::jinja
