// The Jinja interpreter: rendering, statements, scopes and macros (jinja_eval.h
// states the scoping and the bounds). Expressions are in jinja_expr.cpp.
#include "runtime/chat/jinja_eval.h"

#include <cstdio>

#include "runtime/chat/jinja_builtins.h"
#include "runtime/chat/jinja_lexer.h"

namespace ember::jinja {
namespace {

bool UsesName(const Expr* e, const std::string& name);
bool UsesName(const Body& body, const std::string& name);

bool UsesName(const Expr* e, const std::string& name) {
  if (!e) return false;
  if (e->kind == ExprKind::kName && e->name == name) return true;
  if (UsesName(e->operand.get(), name) || UsesName(e->star_args.get(), name) ||
      UsesName(e->kw_args.get(), name)) {
    return true;
  }
  for (const ExprPtr& x : e->items) {
    if (UsesName(x.get(), name)) return true;
  }
  for (const CallArg& a : e->args) {
    if (UsesName(a.value.get(), name)) return true;
  }
  return false;
}

bool UsesName(const Body& body, const std::string& name) {
  for (const StmtPtr& s : body) {
    if (UsesName(s->expr.get(), name) || UsesName(s->filter.get(), name)) return true;
    for (const ExprPtr& c : s->conds) {
      if (UsesName(c.get(), name)) return true;
    }
    for (const Body& b : s->bodies) {
      if (UsesName(b, name)) return true;
    }
    if (UsesName(s->body, name) || UsesName(s->else_body, name)) return true;
    for (const Param& p : s->params) {
      if (UsesName(p.default_value.get(), name)) return true;
    }
    for (const auto& [n, e] : s->assigns) {
      if (UsesName(e.get(), name)) return true;
    }
  }
  return false;
}

}  // namespace

// A macro, or the body of a call block as `caller`.
class Macro : public Callable {
 public:
  Macro(const Stmt* def, std::weak_ptr<Scope> closure, std::string name)
      : def_(def), closure_(std::move(closure)), name_(std::move(name)) {}
  const char* type_name() const override { return "Macro"; }
  std::string name() const override { return name_; }
  Status Call(Interpreter& in, CallArgs& args, Value* out) override {
    return in.RunMacro(*def_, closure_, args, out);
  }

 private:
  const Stmt* def_;
  std::weak_ptr<Scope> closure_;
  std::string name_;
};

Interpreter::Interpreter(const Template& tmpl, const RenderOptions& opts)
    : tmpl_(tmpl), opts_(opts) {}

Interpreter::~Interpreter() {
  // Scopes may refer to namespaces: drop them before the arena.
  scope_.reset();
  root_.reset();
}

Status Interpreter::Render(const DictData& variables, std::string* out) {
  out->clear();
  variables_ = &variables;
  namespaces_ = std::make_unique<NamespaceArena>();
  root_ = std::make_shared<Scope>();
  scope_ = root_;
  flow_ = Flow::kNormal;
  depth_ = 0;
  steps_ = 0;
  next_clock_check_ = 0;
  start_ = std::chrono::steady_clock::now();
  located_ = false;
  Status s = Exec(tmpl_.body, out);
  scope_.reset();
  root_.reset();
  if (!s.ok()) out->clear();
  return s;
}

// ---- errors and bounds ----------------------------------------------------------

Status Interpreter::Located(Status s, uint32_t line) {
  if (s.ok() || located_) return s;
  located_ = true;
  return Status(s.code(), Where(tmpl_.name, line) + s.message());
}

Status Interpreter::Charge(uint64_t steps) {
  steps_ += steps;
  if (steps_ > opts_.limits.max_steps) {
    return InvalidArgument("the template took more than " + std::to_string(opts_.limits.max_steps) +
                           " evaluation steps");
  }
  if (steps_ >= next_clock_check_ && opts_.limits.max_seconds > 0) {
    next_clock_check_ = steps_ + 1024;
    const std::chrono::duration<double> spent = std::chrono::steady_clock::now() - start_;
    if (spent.count() > opts_.limits.max_seconds) {
      char limit[32];
      std::snprintf(limit, sizeof limit, "%g", opts_.limits.max_seconds);
      return InvalidArgument(std::string("the template took more than ") + limit + " seconds");
    }
  }
  return Status::Ok();
}

Status Interpreter::CheckStringSize(size_t bytes) const {
  if (bytes > opts_.limits.max_output_bytes) {
    return InvalidArgument("a string of " + std::to_string(bytes) + " bytes exceeds the limit of " +
                           std::to_string(opts_.limits.max_output_bytes));
  }
  return Status::Ok();
}

Status Interpreter::CheckListSize(size_t items) const {
  if (items > opts_.limits.max_list_items) {
    return InvalidArgument("a list of " + std::to_string(items) + " items exceeds the limit of " +
                           std::to_string(opts_.limits.max_list_items));
  }
  return Status::Ok();
}

Status Interpreter::NewNamespace(Value* out) {
  NamespaceData* ns = namespaces_->New(opts_.limits.max_namespaces);
  if (!ns) {
    return InvalidArgument("more than " + std::to_string(opts_.limits.max_namespaces) +
                           " namespaces");
  }
  *out = Value::Namespace(ns);
  return Status::Ok();
}

Status Interpreter::UndefinedError(const Value& undefined) const {
  const std::string& why = undefined.undefined_why();
  return InvalidArgument(why.empty() ? "a value is undefined" : why);
}

Status Interpreter::Append(std::string* out, std::string_view text) const {
  if (out->size() + text.size() > opts_.limits.max_output_bytes) {
    return InvalidArgument("the rendering exceeds the limit of " +
                           std::to_string(opts_.limits.max_output_bytes) + " bytes");
  }
  out->append(text);
  return Status::Ok();
}

// ---- statements ----------------------------------------------------------------------

Status Interpreter::Exec(const Body& body, std::string* out) {
  for (const StmtPtr& s : body) {
    EMBER_RETURN_IF_ERROR(ExecStmt(*s, out));
    if (flow_ != Flow::kNormal) return Status::Ok();
  }
  return Status::Ok();
}

Status Interpreter::ExecStmt(const Stmt& s, std::string* out) {
  DepthGuard guard(&depth_);
  if (depth_ > opts_.limits.max_depth) {
    return Located(InvalidArgument("nesting deeper than " + std::to_string(opts_.limits.max_depth) +
                                   " levels (recursion?)"),
                   s.line);
  }
  Status st = Step();
  if (st.ok()) {
    switch (s.kind) {
      case StmtKind::kOutput:
        st = Append(out, s.text);
        break;
      case StmtKind::kPrint: {
        Value v;
        st = Eval(*s.expr, &v);
        if (st.ok()) st = Print(v, out);
        break;
      }
      case StmtKind::kIf: {
        bool done = false;
        for (size_t i = 0; i < s.conds.size() && st.ok() && !done; ++i) {
          Value c;
          st = Eval(*s.conds[i], &c);
          if (st.ok() && Truthy(c)) {
            done = true;
            st = Exec(s.bodies[i], out);
          }
        }
        if (st.ok() && !done) st = Exec(s.else_body, out);
        break;
      }
      case StmtKind::kFor:
        st = ExecFor(s, out);
        break;
      case StmtKind::kSet:
      case StmtKind::kSetBlock:
        st = ExecSet(s, out);
        break;
      case StmtKind::kMacro: {
        auto m = std::make_shared<Macro>(&s, scope_, s.name);
        scope_->vars[s.name] = Value::Callable(std::move(m));
        break;
      }
      case StmtKind::kCallBlock: {
        // The body becomes `caller`, passed to the call as a keyword argument.
        Value fn;
        CallArgs args;
        st = Eval(*s.expr->operand, &fn);
        if (st.ok()) st = EvalArgs(*s.expr, &args);
        if (st.ok()) {
          args.kw.emplace_back("caller",
                               Value::Callable(std::make_shared<Macro>(&s, scope_, "caller")));
          Value v;
          st = CallValue(fn, args, &v);
          if (st.ok()) st = Print(v, out);
        }
        break;
      }
      case StmtKind::kFilterBlock:
        st = ExecFilterBlock(s, out);
        break;
      case StmtKind::kWith: {
        auto inner = std::make_shared<Scope>();
        inner->parent = scope_;
        for (const auto& [name, e] : s.assigns) {
          Value v;
          st = Eval(*e, &v);  // evaluated in the outer scope, as jinja2 does
          if (!st.ok()) break;
          inner->vars[name] = std::move(v);
        }
        if (!st.ok()) break;
        auto saved = scope_;
        scope_ = inner;
        st = Exec(s.body, out);
        scope_ = saved;
        break;
      }
      case StmtKind::kScope:
        st = Exec(s.body, out);
        break;
      case StmtKind::kBreak:
        flow_ = Flow::kBreak;
        break;
      case StmtKind::kContinue:
        flow_ = Flow::kContinue;
        break;
    }
  }
  return Located(st, s.line);
}

Status Interpreter::Print(const Value& v, std::string* out) {
  if (v.is_string()) return Append(out, v.str());
  std::string text;
  EMBER_RETURN_IF_ERROR(ToStr(v, &text));
  return Append(out, text);
}

Status Interpreter::ExecFor(const Stmt& s, std::string* out) {
  Value iterable;
  EMBER_RETURN_IF_ERROR(Eval(*s.expr, &iterable));
  std::vector<Value> all;
  EMBER_RETURN_IF_ERROR(Iterate(iterable, &all));
  auto items = std::make_shared<std::vector<Value>>();
  auto saved = scope_;
  if (s.filter) {  // for x in xs if cond: the loop sees only the items that pass
    auto probe = std::make_shared<Scope>();
    probe->parent = saved;
    for (Value& x : all) {
      probe->vars.clear();
      EMBER_RETURN_IF_ERROR(Assign(s.targets, s.unpack, x, probe.get()));
      scope_ = probe;
      Value c;
      Status st = Eval(*s.filter, &c);
      scope_ = saved;
      EMBER_RETURN_IF_ERROR(st);
      if (Truthy(c)) items->push_back(std::move(x));
    }
  } else {
    *items = std::move(all);
  }
  if (items->empty()) return Exec(s.else_body, out);
  auto loop = std::make_shared<LoopData>();
  loop->items = items;
  const Value loop_value = Value::Loop(loop);
  // One scope for all iterations, emptied before each: every iteration starts from the outer
  // values, as a fresh scope would, without an allocation per item.
  auto iteration = std::make_shared<Scope>();
  iteration->parent = saved;
  Status st;
  for (size_t i = 0; i < items->size(); ++i) {
    st = Step();  // an empty body still costs a step: no loop runs unbounded
    if (!st.ok()) break;
    loop->index0 = i;
    iteration->vars.clear();
    st = Assign(s.targets, s.unpack, (*items)[i], iteration.get());
    if (!st.ok()) break;
    iteration->vars["loop"] = loop_value;
    scope_ = iteration;
    st = Exec(s.body, out);
    scope_ = saved;
    if (!st.ok()) break;
    if (flow_ == Flow::kBreak) {
      flow_ = Flow::kNormal;
      break;
    }
    flow_ = Flow::kNormal;
  }
  scope_ = saved;
  return st;
}

Status Interpreter::Assign(const std::vector<std::string>& targets, bool unpack, const Value& v,
                           Scope* scope) {
  if (!unpack) {
    scope->vars[targets[0]] = v;
    return Status::Ok();
  }
  std::vector<Value> parts;
  if (v.is_undefined()) return UndefinedError(v);
  if (v.is_list() || v.is_dict() || v.is_string()) {
    EMBER_RETURN_IF_ERROR(Iterate(v, &parts));
  } else {
    return TypeError(std::string("cannot unpack non-iterable ") + TypeName(v) + " object");
  }
  if (parts.size() != targets.size()) {
    if (parts.size() > targets.size()) {
      return InvalidArgument("too many values to unpack (expected " +
                             std::to_string(targets.size()) + ")");
    }
    return InvalidArgument("not enough values to unpack (expected " +
                           std::to_string(targets.size()) + ", got " +
                           std::to_string(parts.size()) + ")");
  }
  for (size_t i = 0; i < targets.size(); ++i) scope->vars[targets[i]] = std::move(parts[i]);
  return Status::Ok();
}

Status Interpreter::ExecSet(const Stmt& s, std::string* /*out*/) {
  Value v;
  if (s.kind == StmtKind::kSet) {
    EMBER_RETURN_IF_ERROR(Eval(*s.expr, &v));
  } else {
    // {% set x | filters %}body{% endset %}: the body renders in a scope of its own.
    std::string body;
    auto saved = scope_;
    scope_ = std::make_shared<Scope>();
    scope_->parent = saved;
    Status st = Exec(s.body, &body);
    scope_ = saved;
    EMBER_RETURN_IF_ERROR(st);
    v = Value::String(std::move(body));
    if (s.filter) {
      const Value input = v;
      block_input_ = &input;
      st = Eval(*s.filter, &v);
      block_input_ = nullptr;
      EMBER_RETURN_IF_ERROR(st);
    }
  }
  if (!s.attr.empty()) {
    Value target;
    EMBER_RETURN_IF_ERROR(Lookup(s.targets[0], &target));
    if (!target.is_namespace()) {
      return InvalidArgument("cannot assign attribute on non-namespace object ('" + s.targets[0] +
                             "' is " + TypeName(target) + ")");
    }
    target.ns().attrs.Set(s.attr, std::move(v));
    return Status::Ok();
  }
  return Assign(s.targets, s.unpack, v, scope_.get());
}

Status Interpreter::ExecFilterBlock(const Stmt& s, std::string* out) {
  std::string body;
  auto saved = scope_;
  scope_ = std::make_shared<Scope>();
  scope_->parent = saved;
  Status st = Exec(s.body, &body);
  scope_ = saved;
  EMBER_RETURN_IF_ERROR(st);
  const Value input = Value::String(std::move(body));
  Value v;
  block_input_ = &input;
  st = Eval(*s.filter, &v);
  block_input_ = nullptr;
  EMBER_RETURN_IF_ERROR(st);
  return Print(v, out);
}

Status Interpreter::RunMacro(const Stmt& def, const std::weak_ptr<Scope>& closure, CallArgs& args,
                             Value* out) {
  const std::string& name = def.kind == StmtKind::kMacro ? def.name : "caller";
  auto scope = std::make_shared<Scope>();
  scope->parent = closure.lock();
  if (!scope->parent) scope->parent = root_;
  // Keyword arguments: the parameters', `caller`, and the rest for `kwargs`.
  std::vector<bool> kw_used(args.kw.size(), false);
  for (size_t i = 0; i < def.params.size(); ++i) {
    const Param& p = def.params[i];
    const Value* given = i < args.pos.size() ? &args.pos[i] : nullptr;
    for (size_t k = 0; k < args.kw.size(); ++k) {
      if (args.kw[k].first != p.name) continue;
      if (given) {
        return TypeError("macro '" + name + "' got multiple values for argument '" + p.name + "'");
      }
      given = &args.kw[k].second;
      kw_used[k] = true;
    }
    if (given) {
      scope->vars[p.name] = *given;
    } else if (p.default_value) {
      // Defaults are evaluated in the macro's scope: they may use the parameters before.
      auto saved = scope_;
      scope_ = scope;
      Value v;
      Status st = Eval(*p.default_value, &v);
      scope_ = saved;
      EMBER_RETURN_IF_ERROR(st);
      scope->vars[p.name] = std::move(v);
    } else {
      scope->vars[p.name] = Value::Undefined("parameter '" + p.name + "' was not provided");
    }
  }
  std::vector<Value> extra_pos;
  for (size_t i = def.params.size(); i < args.pos.size(); ++i) extra_pos.push_back(args.pos[i]);
  auto extra_kw = std::make_shared<DictData>();
  for (size_t k = 0; k < args.kw.size(); ++k) {
    if (kw_used[k]) continue;
    if (args.kw[k].first == "caller" && def.kind == StmtKind::kMacro) {
      scope->vars["caller"] = args.kw[k].second;
      continue;
    }
    extra_kw->Set(args.kw[k].first, args.kw[k].second);
  }
  if (!extra_pos.empty() && !UsesName(def.body, "varargs")) {
    return TypeError("macro '" + name + "' takes not more than " +
                     std::to_string(def.params.size()) + " argument(s)");
  }
  if (extra_kw->size() != 0 && !UsesName(def.body, "kwargs")) {
    std::string key;
    EMBER_RETURN_IF_ERROR(ToStr(extra_kw->items[0].first, &key));
    return TypeError("macro '" + name + "' takes no keyword argument '" + key + "'");
  }
  Value varargs, kwargs;
  EMBER_RETURN_IF_ERROR(Value::List(std::move(extra_pos), ListKind::kTuple, &varargs));
  EMBER_RETURN_IF_ERROR(Value::Dict(extra_kw, &kwargs));
  scope->vars["varargs"] = std::move(varargs);
  scope->vars["kwargs"] = std::move(kwargs);

  auto saved = scope_;
  const Flow saved_flow = flow_;
  scope_ = scope;
  std::string rendered;
  Status st = Exec(def.body, &rendered);
  scope_ = saved;
  flow_ = saved_flow;
  EMBER_RETURN_IF_ERROR(st);
  *out = Value::String(std::move(rendered));
  return Status::Ok();
}

}  // namespace ember::jinja
