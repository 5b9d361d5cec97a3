// The Jinja parser: tokens -> syntax tree (jinja_ast.h), with jinja2's
// grammar and operator precedence, loosest first:
//   a if b else c  <  or  <  and  <  not  <  comparisons (chained, in, not in)
//   <  + -  <  ~  <  * / // %  <  **  <  unary - +  <  filters |f and tests "is"
//   <  postfix .attr [index] [a:b:c] (call)
// (** is left-associative and binds looser than unary minus: -2 ** 2 == 4, as in
// jinja2.) Statements: if/elif/else, for (tuple targets, "if" filter, else),
// set (names, tuples, ns.attr, block set with filters), macro, call, filter,
// with, raw (in the lexer), generation (Hugging Face's tag: its body renders),
// break and continue.
//
// An unknown filter or test name is an error at parse time, except inside an
// if statement or a conditional expression, where jinja2 defers it to the
// moment it is evaluated. Nesting deeper than kMaxParseDepth is an error, so
// hostile templates cannot exhaust the stack (here, when evaluating, or when
// the tree is destroyed): statements, brackets, and chains too, since
// a + b + c is ((a + b) + c) and x|f|g is g(f(x)).
#pragma once

#include <string_view>
#include <vector>

#include "platform/status.h"
#include "runtime/chat/jinja_ast.h"
#include "runtime/chat/jinja_lexer.h"

namespace ember::jinja {

constexpr int kMaxParseDepth = 200;

// Parses `source`; errors name `name`, the line and the column.
Status ParseTemplate(std::string_view source, std::string_view name, const LexOptions& opts,
                     Template* out);

}  // namespace ember::jinja
