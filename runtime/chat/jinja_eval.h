// The Jinja interpreter: renders a parsed template (jinja_ast.h) with
// variables, as Python jinja2 does with Hugging Face's settings.
//
// Scopes follow jinja2: a for loop's body gets a fresh scope per iteration
// (so `{% set %}` inside a loop does not leak out, and each iteration starts
// from the outer values), macros and call blocks get one per call, `with`
// gets one; if/elif/else do not. Names are looked up innermost first, then in
// the render's variables, then in the globals (range, namespace, dict,
// raise_exception, strftime_now). Undefined names and attributes are
// Undefined values: printing one gives "", iterating one gives nothing,
// testing it is fine; using one any other way (attribute, call, arithmetic)
// is an error naming what was undefined, as jinja2's UndefinedError.
//
// Hardening: every bound is an error (a Status naming the template line),
// never a crash or a hang: nesting depth (expressions, statements and macro
// calls together), evaluation steps (each node, loop iteration and item a
// builtin iterates is one), wall-clock time, output and string size, list
// length (range(10**12), [0] * 10**12) and the number of namespaces.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "platform/status.h"
#include "runtime/chat/jinja_ast.h"
#include "runtime/chat/jinja_value.h"

namespace ember::jinja {

// Python's TypeError (an operand or argument of the wrong type): kInvalidArgument.
inline Status TypeError(const std::string& m) { return InvalidArgument(m); }

struct RenderLimits {
  size_t max_output_bytes = size_t{64} << 20;  // the rendering, and any one string
  size_t max_list_items = size_t{1} << 20;     // list * n, list + list
  int max_depth = 400;                         // nested evaluation: statements, expressions, calls
  uint64_t max_steps = 20'000'000;             // evaluated nodes, loop iterations, items iterated
  double max_seconds = 20.0;                   // wall-clock time, checked every 1024 steps; 0: none
  size_t max_namespaces = 100'000;
};

struct RenderOptions {
  RenderLimits limits;
  int64_t now_unix = -1;  // strftime_now's clock (UTC); -1: the current time
};

struct Scope {
  std::unordered_map<std::string, Value> vars;
  std::shared_ptr<Scope> parent;
};

class Interpreter {
 public:
  Interpreter(const Template& tmpl, const RenderOptions& opts);
  ~Interpreter();

  // Renders the template with `variables` (name -> value) into *out.
  Status Render(const DictData& variables, std::string* out);

  // ---- for the builtins (jinja_builtins.cpp) ----
  const RenderOptions& options() const { return opts_; }
  // Calls a callable value (macro, builtin, bound method); others are an error.
  Status CallValue(const Value& fn, CallArgs& args, Value* out);
  // `value | name(args)`, `value is name(args)`.
  Status ApplyFilter(const std::string& name, const Value& value, CallArgs& args, Value* out);
  Status ApplyTest(const std::string& name, const Value& value, CallArgs& args, bool* out);
  // obj.name and obj[key], with jinja2's fallbacks (attribute, then item; item, then attribute).
  Status GetAttr(const Value& obj, const std::string& name, Value* out);
  Status GetItem(const Value& obj, const Value& key, Value* out);
  // The items `for` would visit: a list's items, a dict's keys, a string's characters;
  // nothing for Undefined; an error for what Python cannot iterate.
  Status Iterate(const Value& v, std::vector<Value>* out);
  // Errors for values that are too big, before building them.
  Status CheckStringSize(size_t bytes) const;
  Status CheckListSize(size_t items) const;
  Status NewNamespace(Value* out);
  // The error an Undefined gives when used ("'x' is undefined").
  Status UndefinedError(const Value& undefined) const;

 private:
  enum class Flow { kNormal, kBreak, kContinue };
  friend class Macro;
  struct DepthGuard {  // counts one level of nesting while it lives
    explicit DepthGuard(int* d) : depth(d) { ++*depth; }
    ~DepthGuard() { --*depth; }
    int* depth;
  };

  Status Exec(const Body& body, std::string* out);
  Status ExecStmt(const Stmt& s, std::string* out);
  Status ExecFor(const Stmt& s, std::string* out);
  Status ExecSet(const Stmt& s, std::string* out);
  Status ExecFilterBlock(const Stmt& s, std::string* out);
  Status Eval(const Expr& e, Value* out);
  Status EvalInner(const Expr& e, Value* out);
  Status EvalCall(const Expr& e, Value* out);
  Status EvalArgs(const Expr& e, CallArgs* args);
  Status EvalFilter(const Expr& e, Value* out);
  Status EvalTest(const Expr& e, Value* out);
  Status EvalBinary(const Expr& e, Value* out);
  Status EvalCompare(const Expr& e, Value* out);
  Status EvalSlice(const Expr& e, Value* out);
  Status Append(std::string* out, std::string_view text) const;
  Status Print(const Value& v, std::string* out);
  Status Assign(const std::vector<std::string>& targets, bool unpack, const Value& v, Scope* scope);
  Status Lookup(const std::string& name, Value* out);
  // Runs a macro body (or a call block's, as `caller`) in a fresh scope below `closure`, or
  // below the root when that scope is gone. A keyword argument `caller` becomes the variable.
  Status RunMacro(const Stmt& def, const std::weak_ptr<Scope>& closure, CallArgs& args, Value* out);
  Status Step() { return Charge(1); }
  Status Charge(uint64_t steps);  // counts steps against max_steps and max_seconds
  Status Located(Status s, uint32_t line);

  const Template& tmpl_;
  RenderOptions opts_;
  std::shared_ptr<Scope> root_;   // the template's top-level variables
  std::shared_ptr<Scope> scope_;  // the innermost scope
  const DictData* variables_ = nullptr;
  std::unique_ptr<NamespaceArena> namespaces_;
  Flow flow_ = Flow::kNormal;
  int depth_ = 0;
  uint64_t steps_ = 0;
  uint64_t next_clock_check_ = 0;  // steps_ at which to look at the clock again
  std::chrono::steady_clock::time_point start_;
  bool located_ = false;                // the pending error already names its line
  const Value* block_input_ = nullptr;  // the body of a filter block / block set
};

}  // namespace ember::jinja
