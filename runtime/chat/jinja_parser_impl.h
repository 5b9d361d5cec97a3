// The parser's class, shared by jinja_parser.cpp (statements) and
// jinja_parser_expr.cpp (expressions). Not part of the engine's interface:
// use ParseTemplate (jinja_parser.h).
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "platform/status.h"
#include "runtime/chat/jinja_ast.h"
#include "runtime/chat/jinja_lexer.h"
#include "runtime/chat/jinja_parser.h"

namespace ember::jinja::internal {

// Recursive descent over the tokens of one template. Every recursion and every
// step of a chain (a + b + c, x|f|g, a.b.c) counts against kMaxParseDepth.
class Parser {
 public:
  Parser(std::string_view name, std::vector<Token> tokens)
      : name_(name), tokens_(std::move(tokens)) {}

  Status Run(Body* out);

 private:
  // ---- tokens ----
  const Token& Cur() const { return tokens_[pos_]; }
  const Token& Peek(size_t n = 1) const {
    return tokens_[pos_ + n < tokens_.size() ? pos_ + n : tokens_.size() - 1];
  }
  void Next() {
    if (pos_ + 1 < tokens_.size()) ++pos_;
  }
  bool IsOp(const char* op) const {
    return Cur().kind == TokenKind::kOperator && Cur().value == op;
  }
  bool IsName(const char* n) const { return Cur().kind == TokenKind::kName && Cur().value == n; }
  bool SkipOp(const char* op) {
    if (!IsOp(op)) return false;
    Next();
    return true;
  }
  bool SkipName(const char* n) {
    if (!IsName(n)) return false;
    Next();
    return true;
  }

  static std::string Describe(const Token& t) {
    switch (t.kind) {
      case TokenKind::kEof:
        return "end of template";
      case TokenKind::kVarEnd:
        return "end of print statement '}}'";
      case TokenKind::kBlockEnd:
        return "end of statement block '%}'";
      case TokenKind::kData:
        return "template data";
      case TokenKind::kString:
        return "string";
      default:
        return "'" + t.value + "'";
    }
  }

  Status Fail(const std::string& what) const {
    return BadFormat(Where(name_, Cur().line, Cur().column) + what);
  }
  Status Expect(const char* op) {
    if (SkipOp(op)) return Status::Ok();
    return Fail(std::string("expected '") + op + "', got " + Describe(Cur()));
  }
  Status ExpectBlockEnd() {
    if (Cur().kind == TokenKind::kBlockEnd) {
      Next();
      return Status::Ok();
    }
    return Fail("expected end of statement block '%}', got " + Describe(Cur()));
  }
  Status ExpectName(std::string* out) {
    if (Cur().kind != TokenKind::kName) return Fail("expected a name, got " + Describe(Cur()));
    *out = Cur().value;
    Next();
    return Status::Ok();
  }

  // Depth of recursion, bounded (jinja_parser.h).
  struct DepthGuard {
    explicit DepthGuard(int* d) : depth(d) { ++*depth; }
    ~DepthGuard() { --*depth; }
    int* depth;
  };
  // A chain (a + b + c, x|f|g, a.b.c) nests the tree one level per step: each step counts
  // until the chain is done.
  struct ChainGuard {
    explicit ChainGuard(int* d) : depth(d) {}
    ~ChainGuard() { *depth -= steps; }
    void Step() {
      ++*depth;
      ++steps;
    }
    int* depth;
    int steps = 0;
  };
  Status CheckDepth() const {
    if (depth_ > kMaxParseDepth) {
      return Fail("nesting deeper than " + std::to_string(kMaxParseDepth) + " levels");
    }
    return Status::Ok();
  }

  ExprPtr NewExpr(ExprKind kind, uint32_t line) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->line = line;
    return e;
  }

  // ---- statements ----

  Status SubParse(const std::vector<std::string>& ends, Body* out);

  static std::string EndList(const std::vector<std::string>& ends);
  std::string open_note() const;

  Status ParseStatement(const std::vector<std::string>& ends, StmtPtr* out);

  Status ParseBody(const std::string& open_tag, const std::vector<std::string>& ends, Body* out,
                   const std::vector<std::string>& keep = {});

  Status ParseIf(StmtPtr* out);

  Status ParseTargets(std::vector<std::string>* names, bool* unpack);

  Status ParseFor(StmtPtr* out);

  Status ParseFilterChain(bool starts_with_bar, ExprPtr* out);

  Status ParseSet(StmtPtr* out);

  Status ParseParams(std::vector<Param>* params);

  Status ParseMacro(StmtPtr* out);

  Status ParseCallBlock(StmtPtr* out);

  Status ParseFilterBlock(StmtPtr* out);

  Status ParseWith(StmtPtr* out);

  // ---- expressions ----

  bool IsTupleEnd(const std::vector<std::string>& extra_ends) const;

  Status ParseTuple(bool condexpr, const std::vector<std::string>& extra_ends, bool parens,
                    ExprPtr* out);

  Status ParseExpression(bool condexpr, ExprPtr* out);

  Status ParseBinaryChain(ExprKind kind, const char* word, Status (Parser::*sub)(ExprPtr*),
                          ExprPtr* out);
  Status ParseOr(ExprPtr* out);
  Status ParseAnd(ExprPtr* out);

  Status ParseNot(ExprPtr* out);

  Status ParseCompare(ExprPtr* out);

  Status ParseBinary(std::initializer_list<const char*> ops, Status (Parser::*sub)(ExprPtr*),
                     ExprPtr* out);
  Status ParseMath1(ExprPtr* out) { return ParseBinary({"+", "-"}, &Parser::ParseConcat, out); }
  Status ParseConcat(ExprPtr* out) { return ParseBinary({"~"}, &Parser::ParseMath2, out); }
  Status ParseMath2(ExprPtr* out);
  Status ParsePow(ExprPtr* out) { return ParseBinary({"**"}, &Parser::ParseUnaryFiltered, out); }
  Status ParseUnaryFiltered(ExprPtr* out) { return ParseUnary(true, out); }

  Status ParseUnary(bool with_filter, ExprPtr* out);

  Status ParsePrimary(ExprPtr* out);

  Status ParseList(ExprPtr* out);

  Status ParseDict(ExprPtr* out);

  Status ParsePostfix(ExprPtr* out);

  Status ParseFilterExpr(ExprPtr* out);

  Status ParseSubscript(ExprPtr* out);

  Status ParseSubscribed(ExprPtr* out);

  Status ParseArgs(Expr* e);

  Status ParseCall(ExprPtr* out);

  Status ParseDottedName(std::string* out);

  Status ParseFilter(ExprPtr operand, ExprPtr* out);

  Status ParseTest(ExprPtr* out);

  std::string_view name_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  int depth_ = 0;
  int loops_ = 0;                                       // enclosing for loops (break/continue)
  std::vector<std::pair<std::string, uint32_t>> open_;  // open blocks: tag, line
};

}  // namespace ember::jinja::internal
