// The syntax tree of a Jinja template: expressions and statements, each with
// the line it starts on (for error messages). The parser builds it
// (jinja_parser.h), the interpreter walks it (jinja_eval.h); a Template owns it
// and is immutable once parsed, so one template can render on many threads.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "runtime/chat/jinja_value.h"

namespace ember::jinja {

// ---- expressions -------------------------------------------------------------

enum class ExprKind : uint8_t {
  kConst,    // value
  kName,     // name
  kList,     // items
  kTuple,    // items
  kDict,     // items (key, value, key, value, ...)
  kGetattr,  // a.name
  kGetitem,  // a[b]
  kSlice,    // a[b:c:d]: items = {object, start, stop, step}, absent parts null
  kCall,     // callee(args)
  kFilter,   // operand | name(args)
  kTest,     // operand is [not] name(args)
  kBinary,   // op: + - * / // % ** ~(concat of two)
  kCompare,  // chained: operand op1 items[0] op2 items[1] ...
  kAnd,
  kOr,
  kNot,
  kNeg,
  kPos,
  kCondExpr,  // items = {then, test, else (may be null)}
};

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct CallArg {
  std::string name;  // empty: positional
  ExprPtr value;
};

struct Expr {
  ExprKind kind;
  uint32_t line = 0;
  uint32_t column = 0;           // kFilter, kTest: where the name is
  Value value;                   // kConst
  std::string name;              // kName, kGetattr, kFilter, kTest: the name; kBinary: the operator
  ExprPtr operand;               // the object / left side / filtered or tested value
  std::vector<ExprPtr> items;    // see ExprKind
  std::vector<std::string> ops;  // kCompare: "==", "<", "in", "not in", ...
  std::vector<CallArg> args;     // kCall, kFilter, kTest
  ExprPtr star_args, kw_args;    // kCall: *args, **kwargs
  bool negated = false;          // kTest: "is not"
  bool unknown = false;          // kFilter / kTest: no such name (fails when evaluated)
};

// ---- statements ----------------------------------------------------------------

enum class StmtKind : uint8_t {
  kOutput,       // text
  kPrint,        // {{ expr }}
  kIf,           // conds[i] -> bodies[i]; else_body
  kFor,          // targets in expr [if cond]: body, else_body
  kSet,          // targets = expr (attr: ns.attr = expr)
  kSetBlock,     // {% set x | filters %}body{% endset %}
  kMacro,        // name(params)
  kCallBlock,    // {% call(params) expr %}body{% endcall %}
  kFilterBlock,  // {% filter f %}body{% endfilter %}
  kWith,         // {% with a = 1 %}body{% endwith %}
  kScope,        // {% generation %}body{% endgeneration %}
  kBreak,
  kContinue,
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

struct Param {
  std::string name;
  ExprPtr default_value;  // null: none
};

struct Stmt {
  StmtKind kind;
  uint32_t line = 0;
  std::string text;                  // kOutput
  ExprPtr expr;                      // kPrint, kFor (iterable), kSet, kCallBlock (call)
  std::vector<ExprPtr> conds;        // kIf
  std::vector<Body> bodies;          // kIf: one per cond
  Body body, else_body;              // kFor, kSetBlock, kMacro, kCallBlock, kFilterBlock, ...
  std::vector<std::string> targets;  // kFor, kSet, kSetBlock: names (several: unpacking)
  bool unpack = false;               // kFor/kSet: the target is a tuple (even of one)
  std::string attr;                  // kSet/kSetBlock on a namespace: targets[0].attr
  ExprPtr filter;                    // kFor: the "if" condition; kSetBlock/kFilterBlock:
                                     // a filter chain applied to a kConst placeholder operand
  std::string name;                  // kMacro
  std::vector<Param> params;         // kMacro, kCallBlock (the caller's parameters)
  std::vector<std::pair<std::string, ExprPtr>> assigns;  // kWith
};

// A parsed template.
struct Template {
  std::string name;
  Body body;
};

}  // namespace ember::jinja
