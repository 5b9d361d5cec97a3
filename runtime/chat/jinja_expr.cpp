// The Jinja interpreter: expressions, with Python's operators, attribute and
// item lookup as jinja2 does it, and calls.
#include <cmath>

#include "runtime/chat/jinja_builtins.h"
#include "runtime/chat/jinja_eval.h"

namespace ember::jinja {
namespace {

// Python's slice.indices(): the positions a[start:stop:step] visits.
Status SliceIndices(int64_t len, const Value& start, const Value& stop, const Value& step,
                    std::vector<int64_t>* out) {
  auto as_index = [](const Value& v, bool* present, int64_t* i) {
    if (v.is_none() || v.is_undefined()) {
      *present = false;
      return true;
    }
    if (!v.is_integral()) return false;
    *present = true;
    *i = v.as_int();
    return true;
  };
  bool has_start, has_stop, has_step;
  int64_t a = 0, b = 0, s = 1;
  if (!as_index(start, &has_start, &a) || !as_index(stop, &has_stop, &b) ||
      !as_index(step, &has_step, &s)) {
    return TypeError("slice indices must be integers or None");
  }
  if (!has_step) s = 1;
  if (s == 0) return InvalidArgument("slice step cannot be zero");
  auto adjust = [&](bool present, int64_t v, int64_t dflt) {
    if (!present) return dflt;
    if (v < 0) {
      v += len;
      if (v < 0) v = s < 0 ? -1 : 0;
    } else if (v >= len) {
      v = s < 0 ? len - 1 : len;
    }
    return v;
  };
  a = adjust(has_start, a, s > 0 ? 0 : len - 1);
  b = adjust(has_stop, b, s > 0 ? len : -1);
  out->clear();
  if (s > 0) {
    for (int64_t i = a; i < b; i += s) out->push_back(i);
  } else {
    for (int64_t i = a; i > b; i += s) out->push_back(i);
  }
  return Status::Ok();
}

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t PyMod(int64_t a, int64_t b) {
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

double PyFMod(double a, double b) {
  double r = std::fmod(a, b);
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

std::string ObjectRepr(const Value& v) {
  if (v.is_none()) return "None";
  return std::string(TypeName(v)) + " object";
}

}  // namespace

// ---- names, attributes, items ----------------------------------------------------------

Status Interpreter::Lookup(const std::string& name, Value* out) {
  for (const Scope* s = scope_.get(); s; s = s->parent.get()) {
    auto it = s->vars.find(name);
    if (it != s->vars.end()) {
      *out = it->second;
      return Status::Ok();
    }
  }
  if (const Value* v = variables_->Find(name)) {
    *out = *v;
    return Status::Ok();
  }
  if (GetGlobal(name, out)) return Status::Ok();
  *out = Value::Undefined("'" + name + "' is undefined");
  return Status::Ok();
}

Status Interpreter::GetAttr(const Value& obj, const std::string& name, Value* out) {
  switch (obj.kind()) {
    case Kind::kUndefined:
      return UndefinedError(obj);
    case Kind::kDict: {
      if (GetMethod(obj, name, out)) return Status::Ok();  // d.items is the method
      if (const Value* v = obj.dict().Find(name)) {
        *out = *v;
        return Status::Ok();
      }
      break;
    }
    case Kind::kNamespace:
      if (const Value* v = obj.ns().attrs.Find(name)) {
        *out = *v;
        return Status::Ok();
      }
      break;
    case Kind::kString:
    case Kind::kList:
    case Kind::kLoop:
      if (GetMethod(obj, name, out)) return Status::Ok();
      break;
    default:
      break;
  }
  if (obj.is_none()) {
    *out = Value::Undefined("'None' has no attribute '" + name + "'");
  } else {
    *out = Value::Undefined("'" + ObjectRepr(obj) + "' has no attribute '" + name + "'");
  }
  return Status::Ok();
}

Status Interpreter::GetItem(const Value& obj, const Value& key, Value* out) {
  switch (obj.kind()) {
    case Kind::kUndefined:
      return UndefinedError(obj);
    case Kind::kDict:
      if (const Value* v = obj.dict().Find(key)) {
        *out = *v;
        return Status::Ok();
      }
      break;
    case Kind::kList: {
      const ListData& l = obj.list();
      if (key.is_integral() && (l.kind == ListKind::kList || l.kind == ListKind::kTuple)) {
        int64_t i = key.as_int();
        const auto n = static_cast<int64_t>(l.items.size());
        if (i < 0) i += n;
        if (i >= 0 && i < n) {
          *out = l.items[static_cast<size_t>(i)];
          return Status::Ok();
        }
      }
      break;
    }
    case Kind::kString:
      if (key.is_integral()) {
        const std::string& s = obj.str();
        const std::vector<size_t> offsets = CodePointOffsets(s);
        const auto n = static_cast<int64_t>(offsets.size() - 1);
        int64_t i = key.as_int();
        if (i < 0) i += n;
        if (i >= 0 && i < n) {
          const auto k = static_cast<size_t>(i);
          *out = Value::String(s.substr(offsets[k], offsets[k + 1] - offsets[k]));
          return Status::Ok();
        }
      }
      break;
    default:
      break;
  }
  // jinja2: obj[key] falls back to an attribute when the key is a string.
  if (key.is_string() && !obj.is_dict()) return GetAttr(obj, key.str(), out);
  if (key.is_string() && obj.is_dict() && GetMethod(obj, key.str(), out)) return Status::Ok();
  std::string k;
  EMBER_RETURN_IF_ERROR(Repr(key, &k));
  if (key.is_string()) {
    *out = Value::Undefined("'" + ObjectRepr(obj) + "' has no attribute " + k);
  } else {
    *out = Value::Undefined(ObjectRepr(obj) + " has no element " + k);
  }
  return Status::Ok();
}

Status Interpreter::Iterate(const Value& v, std::vector<Value>* out) {
  out->clear();
  // Every item costs a step: filters over big lists in a loop cannot run unbounded.
  size_t n = 0;
  if (v.is_list()) n = v.list().items.size();
  if (v.is_dict()) n = v.dict().size();
  if (v.is_string()) n = v.str().size();
  EMBER_RETURN_IF_ERROR(Charge(n));
  switch (v.kind()) {
    case Kind::kUndefined:
      return Status::Ok();
    case Kind::kList: {
      ListData& l = v.list();
      if (l.kind == ListKind::kGenerator) {
        if (l.consumed) return Status::Ok();
        l.consumed = true;
      }
      *out = l.items;
      return Status::Ok();
    }
    case Kind::kDict:
      out->reserve(v.dict().size());
      for (const auto& [k, x] : v.dict().items) out->push_back(k);
      return Status::Ok();
    case Kind::kString: {
      const std::string& s = v.str();
      for (size_t pos = 0; pos < s.size();) {
        const size_t from = pos;
        NextCodePoint(s, &pos);
        out->push_back(Value::String(s.substr(from, pos - from)));
      }
      return Status::Ok();
    }
    default:
      return TypeError(std::string("'") + TypeName(v) + "' object is not iterable");
  }
}

Status Interpreter::CallValue(const Value& fn, CallArgs& args, Value* out) {
  if (fn.is_callable()) {
    DepthGuard guard(&depth_);
    if (depth_ > opts_.limits.max_depth) {
      return InvalidArgument("nesting deeper than " + std::to_string(opts_.limits.max_depth) +
                             " levels (recursion?)");
    }
    return fn.callable().Call(*this, args, out);
  }
  if (fn.is_undefined()) return UndefinedError(fn);
  return TypeError(std::string("'") + TypeName(fn) + "' object is not callable");
}

Status Interpreter::ApplyFilter(const std::string& name, const Value& value, CallArgs& args,
                                Value* out) {
  if (!HasFilter(name)) return InvalidArgument("No filter named '" + name + "' found.");
  return CallFilter(*this, name, value, args, out);
}

Status Interpreter::ApplyTest(const std::string& name, const Value& value, CallArgs& args,
                              bool* out) {
  if (!HasTest(name)) return InvalidArgument("No test named '" + name + "' found.");
  return CallTest(*this, name, value, args, out);
}

// ---- expressions ----------------------------------------------------------------------

Status Interpreter::Eval(const Expr& e, Value* out) {
  DepthGuard guard(&depth_);
  Status st;
  if (depth_ > opts_.limits.max_depth) {
    st = InvalidArgument("nesting deeper than " + std::to_string(opts_.limits.max_depth) +
                         " levels (recursion?)");
  } else {
    st = Step();
    if (st.ok()) st = EvalInner(e, out);
  }
  return Located(st, e.line);
}

Status Interpreter::EvalInner(const Expr& e, Value* out) {
  switch (e.kind) {
    case ExprKind::kConst:
      *out = e.value;
      return Status::Ok();
    case ExprKind::kName:
      return Lookup(e.name, out);
    case ExprKind::kList:
    case ExprKind::kTuple: {
      std::vector<Value> items(e.items.size());
      for (size_t i = 0; i < e.items.size(); ++i)
        EMBER_RETURN_IF_ERROR(Eval(*e.items[i], &items[i]));
      return Value::List(std::move(items),
                         e.kind == ExprKind::kList ? ListKind::kList : ListKind::kTuple, out);
    }
    case ExprKind::kDict: {
      auto d = std::make_shared<DictData>();
      for (size_t i = 0; i + 1 < e.items.size(); i += 2) {
        Value k, v;
        EMBER_RETURN_IF_ERROR(Eval(*e.items[i], &k));
        EMBER_RETURN_IF_ERROR(Eval(*e.items[i + 1], &v));
        if (k.is_list() && k.list().kind != ListKind::kTuple) {
          return TypeError("unhashable type: 'list'");
        }
        if (k.is_dict() || k.is_undefined()) {
          return TypeError(std::string("unhashable type: '") + TypeName(k) + "'");
        }
        d->Set(std::move(k), std::move(v));
      }
      return Value::Dict(std::move(d), out);
    }
    case ExprKind::kGetattr: {
      Value obj;
      EMBER_RETURN_IF_ERROR(Eval(*e.operand, &obj));
      return GetAttr(obj, e.name, out);
    }
    case ExprKind::kGetitem: {
      Value obj, key;
      EMBER_RETURN_IF_ERROR(Eval(*e.operand, &obj));
      EMBER_RETURN_IF_ERROR(Eval(*e.items[0], &key));
      return GetItem(obj, key, out);
    }
    case ExprKind::kSlice:
      return EvalSlice(e, out);
    case ExprKind::kCall:
      return EvalCall(e, out);
    case ExprKind::kFilter:
      return EvalFilter(e, out);
    case ExprKind::kTest:
      return EvalTest(e, out);
    case ExprKind::kBinary:
      return EvalBinary(e, out);
    case ExprKind::kCompare:
      return EvalCompare(e, out);
    case ExprKind::kAnd:
    case ExprKind::kOr: {
      // Python returns an operand, not a bool: {{ a or 'x' }}.
      EMBER_RETURN_IF_ERROR(Eval(*e.operand, out));
      const bool t = Truthy(*out);
      if (e.kind == ExprKind::kAnd ? !t : t) return Status::Ok();
      return Eval(*e.items[0], out);
    }
    case ExprKind::kNot: {
      Value v;
      EMBER_RETURN_IF_ERROR(Eval(*e.operand, &v));
      *out = Value::Bool(!Truthy(v));
      return Status::Ok();
    }
    case ExprKind::kNeg:
    case ExprKind::kPos: {
      Value v;
      EMBER_RETURN_IF_ERROR(Eval(*e.operand, &v));
      if (v.is_undefined()) return UndefinedError(v);
      const bool neg = e.kind == ExprKind::kNeg;
      if (v.is_float()) {
        *out = Value::Float(neg ? -v.as_float() : v.as_float());
      } else if (v.is_integral()) {
        if (neg && v.as_int() == INT64_MIN) return InvalidArgument("integer overflow");
        *out = Value::Int(neg ? -v.as_int() : v.as_int());
      } else {
        return TypeError(std::string("bad operand type for unary ") + (neg ? "-" : "+") + ": '" +
                         TypeName(v) + "'");
      }
      return Status::Ok();
    }
    case ExprKind::kCondExpr: {
      Value c;
      EMBER_RETURN_IF_ERROR(Eval(*e.items[1], &c));
      if (Truthy(c)) return Eval(*e.items[0], out);
      if (e.items[2]) return Eval(*e.items[2], out);
      *out = Value::Undefined("the inline if-expression on line " + std::to_string(e.line) +
                              " evaluated to false and no else section was defined");
      return Status::Ok();
    }
  }
  return InvalidArgument("unknown expression");
}

Status Interpreter::EvalArgs(const Expr& e, CallArgs* args) {
  for (const CallArg& a : e.args) {
    Value v;
    EMBER_RETURN_IF_ERROR(Eval(*a.value, &v));
    if (a.name.empty()) {
      args->pos.push_back(std::move(v));
    } else {
      args->kw.emplace_back(a.name, std::move(v));
    }
  }
  if (e.star_args) {
    Value v;
    EMBER_RETURN_IF_ERROR(Eval(*e.star_args, &v));
    std::vector<Value> items;
    EMBER_RETURN_IF_ERROR(Iterate(v, &items));
    for (Value& x : items) args->pos.push_back(std::move(x));
  }
  if (e.kw_args) {
    Value v;
    EMBER_RETURN_IF_ERROR(Eval(*e.kw_args, &v));
    if (!v.is_dict()) return TypeError("argument after ** must be a mapping");
    for (const auto& [k, x] : v.dict().items) {
      if (!k.is_string()) return TypeError("keywords must be strings");
      args->kw.emplace_back(k.str(), x);
    }
  }
  return Status::Ok();
}

Status Interpreter::EvalCall(const Expr& e, Value* out) {
  Value fn;
  EMBER_RETURN_IF_ERROR(Eval(*e.operand, &fn));
  CallArgs args;
  EMBER_RETURN_IF_ERROR(EvalArgs(e, &args));
  return CallValue(fn, args, out);
}

Status Interpreter::EvalFilter(const Expr& e, Value* out) {
  if (e.unknown) return InvalidArgument("No filter named '" + e.name + "' found.");
  Value input;
  if (e.operand) {
    EMBER_RETURN_IF_ERROR(Eval(*e.operand, &input));
  } else if (block_input_) {
    input = *block_input_;
  }
  CallArgs args;
  EMBER_RETURN_IF_ERROR(EvalArgs(e, &args));
  return CallFilter(*this, e.name, input, args, out);
}

Status Interpreter::EvalTest(const Expr& e, Value* out) {
  if (e.unknown) return InvalidArgument("No test named '" + e.name + "' found.");
  Value input;
  EMBER_RETURN_IF_ERROR(Eval(*e.operand, &input));
  CallArgs args;
  EMBER_RETURN_IF_ERROR(EvalArgs(e, &args));
  bool r = false;
  EMBER_RETURN_IF_ERROR(CallTest(*this, e.name, input, args, &r));
  *out = Value::Bool(r != e.negated);
  return Status::Ok();
}

Status Interpreter::EvalSlice(const Expr& e, Value* out) {
  Value obj, parts[3];
  EMBER_RETURN_IF_ERROR(Eval(*e.items[0], &obj));
  for (int i = 0; i < 3; ++i) {
    if (e.items[1 + i]) {
      EMBER_RETURN_IF_ERROR(Eval(*e.items[1 + i], &parts[i]));
    } else {
      parts[i] = Value::None();
    }
  }
  if (obj.is_undefined()) return UndefinedError(obj);
  std::vector<int64_t> idx;
  if (obj.is_string()) {
    const std::string& s = obj.str();
    const std::vector<size_t> offsets = CodePointOffsets(s);
    EMBER_RETURN_IF_ERROR(
        SliceIndices(static_cast<int64_t>(offsets.size() - 1), parts[0], parts[1], parts[2], &idx));
    std::string r;
    for (int64_t i : idx) {
      const auto k = static_cast<size_t>(i);
      r.append(s, offsets[k], offsets[k + 1] - offsets[k]);
    }
    *out = Value::String(std::move(r));
    return Status::Ok();
  }
  if (obj.is_list() &&
      (obj.list().kind == ListKind::kList || obj.list().kind == ListKind::kTuple)) {
    const ListData& l = obj.list();
    EMBER_RETURN_IF_ERROR(
        SliceIndices(static_cast<int64_t>(l.items.size()), parts[0], parts[1], parts[2], &idx));
    std::vector<Value> r;
    r.reserve(idx.size());
    for (int64_t i : idx) r.push_back(l.items[static_cast<size_t>(i)]);
    return Value::List(std::move(r), l.kind, out);
  }
  *out = Value::Undefined(ObjectRepr(obj) + " cannot be sliced");
  return Status::Ok();
}

Status Interpreter::EvalCompare(const Expr& e, Value* out) {
  Value left;
  EMBER_RETURN_IF_ERROR(Eval(*e.operand, &left));
  for (size_t i = 0; i < e.ops.size(); ++i) {
    Value right;
    EMBER_RETURN_IF_ERROR(Eval(*e.items[i], &right));
    const std::string& op = e.ops[i];
    bool r = false;
    if (op == "==" || op == "!=") {
      r = Equals(left, right) == (op == "==");
    } else if (op == "in" || op == "not in") {
      if (right.is_string()) {
        if (left.is_undefined()) return UndefinedError(left);
        if (!left.is_string()) {
          return TypeError(std::string("'in <string>' requires string as left operand, not ") +
                           TypeName(left));
        }
        r = right.str().find(left.str()) != std::string::npos;
      } else if (right.is_dict()) {
        r = right.dict().Find(left) != nullptr;
      } else if (right.is_list() || right.is_undefined()) {
        std::vector<Value> items;
        EMBER_RETURN_IF_ERROR(Iterate(right, &items));
        for (const Value& x : items) {
          if (Equals(left, x)) {
            r = true;
            break;
          }
        }
      } else {
        return TypeError(std::string("argument of type '") + TypeName(right) + "' is not iterable");
      }
      if (op == "not in") r = !r;
    } else {
      if (left.is_undefined()) return UndefinedError(left);
      if (right.is_undefined()) return UndefinedError(right);
      const bool swap = op == ">" || op == "<=";
      bool less = false;
      Status st = swap ? Less(right, left, &less) : Less(left, right, &less);
      if (!st.ok()) {
        return TypeError("'" + op + "' not supported between instances of '" + TypeName(left) +
                         "' and '" + TypeName(right) + "'");
      }
      r = (op == "<" || op == ">") ? less : !less;
    }
    if (!r) {
      *out = Value::Bool(false);
      return Status::Ok();
    }
    left = std::move(right);
  }
  *out = Value::Bool(true);
  return Status::Ok();
}

Status Interpreter::EvalBinary(const Expr& e, Value* out) {
  Value a, b;
  EMBER_RETURN_IF_ERROR(Eval(*e.operand, &a));
  EMBER_RETURN_IF_ERROR(Eval(*e.items[0], &b));
  const std::string& op = e.name;
  if (op == "~") {  // str() of both, never escaped
    std::string x, y;
    EMBER_RETURN_IF_ERROR(ToStr(a, &x));
    EMBER_RETURN_IF_ERROR(ToStr(b, &y));
    EMBER_RETURN_IF_ERROR(CheckStringSize(x.size() + y.size()));
    *out = Value::String(x + y);
    return Status::Ok();
  }
  if (a.is_undefined()) return UndefinedError(a);
  if (b.is_undefined()) return UndefinedError(b);
  const bool na = a.is_integral() || a.is_float(), nb = b.is_integral() || b.is_float();
  auto unsupported = [&]() {
    return TypeError("unsupported operand type(s) for " + op + ": '" + TypeName(a) + "' and '" +
                     TypeName(b) + "'");
  };
  if (na && nb) {
    const bool ints = a.is_integral() && b.is_integral();
    const int64_t x = a.as_int(), y = b.as_int();
    const double fx = a.as_float(), fy = b.as_float();
    int64_t r = 0;
    if (op == "+" || op == "-" || op == "*") {
      if (!ints) {
        *out = Value::Float(op == "+" ? fx + fy : op == "-" ? fx - fy : fx * fy);
        return Status::Ok();
      }
      const bool overflow = op == "+"   ? __builtin_add_overflow(x, y, &r)
                            : op == "-" ? __builtin_sub_overflow(x, y, &r)
                                        : __builtin_mul_overflow(x, y, &r);
      if (overflow) return InvalidArgument("integer overflow");
      *out = Value::Int(r);
      return Status::Ok();
    }
    if (op == "/") {
      if (fy == 0) return InvalidArgument("division by zero");
      *out = Value::Float(fx / fy);
      return Status::Ok();
    }
    if (op == "//" || op == "%") {
      if (ints) {
        if (y == 0) return InvalidArgument("integer division or modulo by zero");
        if (x == INT64_MIN && y == -1) return InvalidArgument("integer overflow");
        *out = Value::Int(op == "//" ? FloorDiv(x, y) : PyMod(x, y));
      } else {
        if (fy == 0) return InvalidArgument("float division by zero");
        *out = Value::Float(op == "//" ? std::floor(fx / fy) : PyFMod(fx, fy));
      }
      return Status::Ok();
    }
    if (op == "**") {
      if (ints && y >= 0) {
        int64_t p = 1, base = x, n = y;
        while (n > 0) {
          if ((n & 1) && __builtin_mul_overflow(p, base, &p)) {
            return InvalidArgument("integer overflow");
          }
          n >>= 1;
          if (n > 0 && __builtin_mul_overflow(base, base, &base)) {
            return InvalidArgument("integer overflow");
          }
        }
        *out = Value::Int(p);
        return Status::Ok();
      }
      if (fx == 0 && fy < 0) return InvalidArgument("0.0 cannot be raised to a negative power");
      *out = Value::Float(std::pow(fx, fy));
      return Status::Ok();
    }
    return unsupported();
  }
  if (op == "+") {
    if (a.is_string() && b.is_string()) {
      // Markup + str escapes the str (and str + Markup too), as markupsafe does.
      const bool safe = a.safe() || b.safe();
      const std::string x = safe && !a.safe() ? HtmlEscape(a.str()) : a.str();
      const std::string y = safe && !b.safe() ? HtmlEscape(b.str()) : b.str();
      EMBER_RETURN_IF_ERROR(CheckStringSize(x.size() + y.size()));
      *out = Value::String(x + y, safe);
      return Status::Ok();
    }
    if (a.is_list() && b.is_list() && a.list().kind == b.list().kind &&
        (a.list().kind == ListKind::kList || a.list().kind == ListKind::kTuple)) {
      EMBER_RETURN_IF_ERROR(CheckListSize(a.list().items.size() + b.list().items.size()));
      std::vector<Value> r = a.list().items;
      r.insert(r.end(), b.list().items.begin(), b.list().items.end());
      return Value::List(std::move(r), a.list().kind, out);
    }
    if (a.is_string() && !a.safe()) {
      return TypeError(std::string("can only concatenate str (not \"") + TypeName(b) +
                       "\") to str");
    }
    if (a.is_list() && a.list().kind == ListKind::kList) {
      return TypeError(std::string("can only concatenate list (not \"") + TypeName(b) +
                       "\") to list");
    }
    return unsupported();
  }
  if (op == "*") {
    const Value* seq = nullptr;
    int64_t n = 0;
    if ((a.is_string() || a.is_list()) && b.is_integral()) {
      seq = &a;
      n = b.as_int();
    } else if ((b.is_string() || b.is_list()) && a.is_integral()) {
      seq = &b;
      n = a.as_int();
    }
    if (!seq) return unsupported();
    if (n < 0) n = 0;
    if (seq->is_string()) {
      const size_t len = seq->str().size();
      if (len != 0 && static_cast<uint64_t>(n) > opts_.limits.max_output_bytes / len) {
        return CheckStringSize(opts_.limits.max_output_bytes + 1);
      }
      std::string r;
      r.reserve(len * static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) r += seq->str();
      *out = Value::String(std::move(r), seq->safe());
      return Status::Ok();
    }
    const ListData& l = seq->list();
    if (l.kind != ListKind::kList && l.kind != ListKind::kTuple) return unsupported();
    if (!l.items.empty() &&
        static_cast<uint64_t>(n) > opts_.limits.max_list_items / l.items.size()) {
      return CheckListSize(opts_.limits.max_list_items + 1);
    }
    std::vector<Value> r;
    for (int64_t i = 0; i < n; ++i) r.insert(r.end(), l.items.begin(), l.items.end());
    return Value::List(std::move(r), l.kind, out);
  }
  if (op == "%" && a.is_string()) {
    return Unsupported("printf-style string formatting ('...' % args) is not supported");
  }
  return unsupported();
}

}  // namespace ember::jinja
