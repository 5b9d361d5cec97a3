// The globals templates call: range (bounded as jinja2's sandbox bounds it),
// namespace, dict, raise_exception and strftime_now (Hugging Face's).
#include <ctime>

#include "runtime/chat/jinja_builtins.h"
#include "runtime/chat/jinja_eval.h"

namespace ember::jinja {

Status RaisedError(const std::string& message) {
  return InvalidArgument("raise_exception: " + message);
}

namespace {

constexpr int64_t kMaxRange = 100000;  // jinja2's sandbox refuses longer ranges

Status Range(Interpreter& in, CallArgs& args, Value* out) {
  int64_t start = 0, stop = 0, step = 1;
  for (const Value& v : args.pos) {
    if (!v.is_integral()) {
      return InvalidArgument(std::string("'") + TypeName(v) +
                             "' object cannot be interpreted as an integer");
    }
  }
  if (args.pos.size() == 1) {
    stop = args.pos[0].as_int();
  } else if (args.pos.size() == 2 || args.pos.size() == 3) {
    start = args.pos[0].as_int();
    stop = args.pos[1].as_int();
    if (args.pos.size() == 3) step = args.pos[2].as_int();
  } else {
    return InvalidArgument("range expected 1 to 3 integer arguments, got " +
                           std::to_string(args.pos.size()));
  }
  if (step == 0) return InvalidArgument("range() arg 3 must not be zero");
  // The count, ceil(span / |step|), in unsigned 64-bit arithmetic: the span of two
  // int64 values and |INT64_MIN| fit in uint64_t (no __int128 on 32-bit targets).
  uint64_t n = 0;
  if (step > 0 && stop > start) {
    const uint64_t span = static_cast<uint64_t>(stop) - static_cast<uint64_t>(start);
    n = (span - 1) / static_cast<uint64_t>(step) + 1;
  }
  if (step < 0 && stop < start) {
    const uint64_t span = static_cast<uint64_t>(start) - static_cast<uint64_t>(stop);
    n = (span - 1) / (uint64_t{0} - static_cast<uint64_t>(step)) + 1;
  }
  if (n > static_cast<uint64_t>(kMaxRange)) {
    return InvalidArgument(
        "range too big: the sandbox blocks ranges larger than 100000 items (as jinja2's)");
  }
  EMBER_RETURN_IF_ERROR(in.CheckListSize(static_cast<size_t>(n)));
  std::vector<Value> items;
  items.reserve(static_cast<size_t>(n));
  for (int64_t i = 0, v = start; i < static_cast<int64_t>(n); ++i, v += step) {
    items.push_back(Value::Int(v));
  }
  return Value::List(std::move(items), ListKind::kList, out);
}

// dict(mapping_or_pairs, **kwargs), the arguments of dict() and namespace().
Status DictFromArgs(Interpreter& in, const CallArgs& args, DictData* d) {
  if (args.pos.size() > 1) {
    return InvalidArgument("expected at most 1 positional argument, got " +
                           std::to_string(args.pos.size()));
  }
  if (!args.pos.empty()) {
    const Value& src = args.pos[0];
    if (src.is_dict()) {
      *d = src.dict();
    } else if (src.is_namespace()) {
      *d = src.ns().attrs;
    } else {
      std::vector<Value> pairs;
      EMBER_RETURN_IF_ERROR(in.Iterate(src, &pairs));
      for (const Value& p : pairs) {
        std::vector<Value> kv;
        if (!p.is_list() && !p.is_string()) {
          return InvalidArgument("cannot convert dictionary update sequence element to a sequence");
        }
        EMBER_RETURN_IF_ERROR(in.Iterate(p, &kv));
        if (kv.size() != 2) {
          return InvalidArgument("dictionary update sequence element has length " +
                                 std::to_string(kv.size()) + "; 2 is required");
        }
        d->Set(kv[0], kv[1]);
      }
    }
  }
  for (const auto& [k, v] : args.kw) d->Set(k, v);
  return Status::Ok();
}

Status StrftimeNow(Interpreter& in, CallArgs& args, Value* out) {
  const Value* f = Arg(args, 0, "format");
  if (!f || !f->is_string()) return InvalidArgument("strftime_now(format) needs a format string");
  const int64_t now =
      in.options().now_unix >= 0 ? in.options().now_unix : static_cast<int64_t>(std::time(nullptr));
  const auto t = static_cast<std::time_t>(now);
  std::tm tm{};
  gmtime_r(&t, &tm);
  if (f->str().empty()) {
    *out = Value::String("");
    return Status::Ok();
  }
  // strftime gives 0 both for "too small" and for an empty result: grow, with a bound.
  for (size_t cap = 64 + f->str().size() * 4; cap <= (size_t{1} << 20); cap *= 4) {
    std::string buf(cap, '\0');
    const size_t n = std::strftime(buf.data(), cap, f->str().c_str(), &tm);
    if (n > 0) {
      buf.resize(n);
      *out = Value::String(std::move(buf));
      return Status::Ok();
    }
  }
  *out = Value::String("");
  return Status::Ok();
}

using GlobalFn = Status (*)(Interpreter&, CallArgs&, Value*);

class GlobalFunction : public Callable {
 public:
  GlobalFunction(const char* name, GlobalFn fn) : name_(name), fn_(fn) {}
  const char* type_name() const override { return "builtin_function_or_method"; }
  std::string name() const override { return name_; }
  Status Call(Interpreter& in, CallArgs& args, Value* out) override { return fn_(in, args, out); }

 private:
  const char* name_;
  GlobalFn fn_;
};

Status NamespaceFn(Interpreter& in, CallArgs& args, Value* out) {
  EMBER_RETURN_IF_ERROR(in.NewNamespace(out));
  return DictFromArgs(in, args, &out->ns().attrs);
}

Status DictFn(Interpreter& in, CallArgs& args, Value* out) {
  auto d = std::make_shared<DictData>();
  EMBER_RETURN_IF_ERROR(DictFromArgs(in, args, d.get()));
  return Value::Dict(std::move(d), out);
}

Status RaiseFn(Interpreter& /*in*/, CallArgs& args, Value* /*out*/) {
  std::string msg;
  if (const Value* m = Arg(args, 0, "message")) EMBER_RETURN_IF_ERROR(ToStr(*m, &msg));
  return RaisedError(msg);
}

}  // namespace

bool GetGlobal(const std::string& name, Value* out) {
  static const struct {
    const char* name;
    GlobalFn fn;
  } kGlobals[] = {{"range", Range},
                  {"namespace", NamespaceFn},
                  {"dict", DictFn},
                  {"raise_exception", RaiseFn},
                  {"strftime_now", StrftimeNow}};
  for (const auto& g : kGlobals) {
    if (name == g.name) {
      *out = Value::Callable(std::make_shared<GlobalFunction>(g.name, g.fn));
      return true;
    }
  }
  return false;
}

}  // namespace ember::jinja
