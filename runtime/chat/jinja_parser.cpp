// The Jinja parser (jinja_parser.h states the grammar).
#include "runtime/chat/jinja_parser.h"

#include <cerrno>
#include <cstdlib>

#include "runtime/chat/jinja_builtins.h"

namespace ember::jinja {
namespace {

class Parser {
 public:
  Parser(std::string_view name, std::vector<Token> tokens)
      : name_(name), tokens_(std::move(tokens)) {}

  Status Run(Body* out) {
    EMBER_RETURN_IF_ERROR(SubParse({}, out));
    if (Cur().kind != TokenKind::kEof) return Fail("unexpected '" + Cur().value + "'");
    return Status::Ok();
  }

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

  // Parses statements until a block tag whose name is in `ends` (not consumed: Cur() is that
  // name) or the end of the template (only when `ends` is empty).
  Status SubParse(const std::vector<std::string>& ends, Body* out) {
    DepthGuard g(&depth_);
    EMBER_RETURN_IF_ERROR(CheckDepth());
    while (true) {
      const Token& t = Cur();
      switch (t.kind) {
        case TokenKind::kEof:
          if (ends.empty()) return Status::Ok();
          return Fail("unexpected end of template: expected " + EndList(ends) + open_note());
        case TokenKind::kData: {
          auto s = std::make_unique<Stmt>();
          s->kind = StmtKind::kOutput;
          s->line = t.line;
          s->text = t.value;
          out->push_back(std::move(s));
          Next();
          break;
        }
        case TokenKind::kVarBegin: {
          auto s = std::make_unique<Stmt>();
          s->kind = StmtKind::kPrint;
          s->line = t.line;
          Next();
          EMBER_RETURN_IF_ERROR(ParseTuple(/*condexpr=*/true, {}, /*parens=*/false, &s->expr));
          if (Cur().kind != TokenKind::kVarEnd) {
            return Fail("expected end of print statement '}}', got " + Describe(Cur()));
          }
          Next();
          out->push_back(std::move(s));
          break;
        }
        case TokenKind::kBlockBegin: {
          Next();
          if (Cur().kind != TokenKind::kName) return Fail("expected a tag name");
          for (const std::string& e : ends) {
            if (Cur().value == e) return Status::Ok();
          }
          StmtPtr s;
          EMBER_RETURN_IF_ERROR(ParseStatement(ends, &s));
          if (s) out->push_back(std::move(s));
          break;
        }
        default:
          return Fail("unexpected " + Describe(t));
      }
    }
  }

  static std::string EndList(const std::vector<std::string>& ends) {
    std::string r;
    for (size_t i = 0; i < ends.size(); ++i) {
      r += (i == 0 ? "" : i + 1 == ends.size() ? " or " : ", ") + ("'" + ends[i] + "'");
    }
    return r;
  }
  std::string open_note() const {
    if (open_.empty()) return "";
    return " (the innermost open block is '" + open_.back().first + "', line " +
           std::to_string(open_.back().second) + ")";
  }

  // Cur() is the tag name after "{%".
  Status ParseStatement(const std::vector<std::string>& ends, StmtPtr* out) {
    const std::string tag = Cur().value;
    const uint32_t line = Cur().line;
    auto s = std::make_unique<Stmt>();
    s->line = line;
    if (tag == "if") return ParseIf(out);
    if (tag == "for") return ParseFor(out);
    if (tag == "set") return ParseSet(out);
    if (tag == "macro") return ParseMacro(out);
    if (tag == "call") return ParseCallBlock(out);
    if (tag == "filter") return ParseFilterBlock(out);
    if (tag == "with") return ParseWith(out);
    if (tag == "generation") {
      Next();
      EMBER_RETURN_IF_ERROR(ExpectBlockEnd());
      s->kind = StmtKind::kScope;
      EMBER_RETURN_IF_ERROR(ParseBody("generation", {"endgeneration"}, &s->body));
      *out = std::move(s);
      return Status::Ok();
    }
    if (tag == "break" || tag == "continue") {
      if (loops_ == 0) return Fail("'" + tag + "' outside of a loop");
      Next();
      EMBER_RETURN_IF_ERROR(ExpectBlockEnd());
      s->kind = tag == "break" ? StmtKind::kBreak : StmtKind::kContinue;
      *out = std::move(s);
      return Status::Ok();
    }
    std::string msg = "unknown tag '" + tag + "'";
    if (!ends.empty()) msg += "; expected " + EndList(ends) + open_note();
    return Fail(msg);
  }

  // Parses a body up to one of `ends`, then consumes that end tag and its "%}" unless it is
  // in `keep` (then Cur() stays on it).
  Status ParseBody(const std::string& open_tag, const std::vector<std::string>& ends, Body* out,
                   const std::vector<std::string>& keep = {}) {
    open_.emplace_back(open_tag, Cur().line);
    std::vector<std::string> all = ends;
    all.insert(all.end(), keep.begin(), keep.end());
    Status st = SubParse(all, out);
    open_.pop_back();
    EMBER_RETURN_IF_ERROR(st);
    for (const std::string& k : keep) {
      if (Cur().value == k) return Status::Ok();
    }
    Next();  // the end tag's name
    return ExpectBlockEnd();
  }

  Status ParseIf(StmtPtr* out) {
    auto s = std::make_unique<Stmt>();
    s->kind = StmtKind::kIf;
    s->line = Cur().line;
    Next();
    while (true) {
      ExprPtr cond;
      EMBER_RETURN_IF_ERROR(ParseTuple(/*condexpr=*/false, {}, false, &cond));
      EMBER_RETURN_IF_ERROR(ExpectBlockEnd());
      Body body;
      EMBER_RETURN_IF_ERROR(ParseBody("if", {}, &body, {"elif", "else", "endif"}));
      s->conds.push_back(std::move(cond));
      s->bodies.push_back(std::move(body));
      const std::string which = Cur().value;
      Next();
      if (which == "elif") continue;
      if (which == "else") {
        EMBER_RETURN_IF_ERROR(ExpectBlockEnd());
        EMBER_RETURN_IF_ERROR(ParseBody("if", {"endif"}, &s->else_body));
      } else {
        EMBER_RETURN_IF_ERROR(ExpectBlockEnd());
      }
      break;
    }
    *out = std::move(s);
    return Status::Ok();
  }

  // A for or set target: a name, names separated by commas, or (names).
  Status ParseTargets(std::vector<std::string>* names, bool* unpack) {
    const bool parens = SkipOp("(");
    while (true) {
      std::string n;
      EMBER_RETURN_IF_ERROR(ExpectName(&n));
      names->push_back(n);
      if (!SkipOp(",")) break;
      *unpack = true;
      if (parens && IsOp(")")) break;
    }
    if (parens) {
      *unpack = true;
      EMBER_RETURN_IF_ERROR(Expect(")"));
    }
    return Status::Ok();
  }

  Status ParseFor(StmtPtr* out) {
    auto s = std::make_unique<Stmt>();
    s->kind = StmtKind::kFor;
    s->line = Cur().line;
    Next();
    EMBER_RETURN_IF_ERROR(ParseTargets(&s->targets, &s->unpack));
    if (!SkipName("in")) return Fail("expected 'in' in the for statement");
    EMBER_RETURN_IF_ERROR(ParseTuple(/*condexpr=*/false, {"recursive"}, false, &s->expr));
    if (SkipName("if")) EMBER_RETURN_IF_ERROR(ParseExpression(true, &s->filter));
    if (IsName("recursive")) return Fail("recursive for loops are not supported");
    EMBER_RETURN_IF_ERROR(ExpectBlockEnd());
    ++loops_;
    Status st = ParseBody("for", {"endfor"}, &s->body, {"else"});
    --loops_;
    EMBER_RETURN_IF_ERROR(st);
    if (IsName("else")) {
      Next();
      EMBER_RETURN_IF_ERROR(ExpectBlockEnd());
      EMBER_RETURN_IF_ERROR(ParseBody("for", {"endfor"}, &s->else_body));
    }
    *out = std::move(s);
    return Status::Ok();
  }

  // A chain of filters "f(args) | g" over a placeholder operand (a null operand: the block's
  // rendered body when evaluated). `starts_with_bar`: "| f | g" (a block set).
  Status ParseFilterChain(bool starts_with_bar, ExprPtr* out) {
    ExprPtr node;  // null: the placeholder
    if (!starts_with_bar) EMBER_RETURN_IF_ERROR(ParseFilter(nullptr, &node));
    while (SkipOp("|")) EMBER_RETURN_IF_ERROR(ParseFilter(std::move(node), &node));
    *out = std::move(node);
    return Status::Ok();
  }

  Status ParseSet(StmtPtr* out) {
    auto s = std::make_unique<Stmt>();
    s->line = Cur().line;
    Next();
    if (Cur().kind == TokenKind::kName && Peek().kind == TokenKind::kOperator &&
        Peek().value == ".") {
      s->targets.push_back(Cur().value);
      Next();
      Next();
      EMBER_RETURN_IF_ERROR(ExpectName(&s->attr));
    } else {
      EMBER_RETURN_IF_ERROR(ParseTargets(&s->targets, &s->unpack));
    }
    if (SkipOp("=")) {
      s->kind = StmtKind::kSet;
      EMBER_RETURN_IF_ERROR(ParseTuple(/*condexpr=*/true, {}, false, &s->expr));
      EMBER_RETURN_IF_ERROR(ExpectBlockEnd());
      *out = std::move(s);
      return Status::Ok();
    }
    if (s->unpack) return Fail("a block set needs a single name");
    s->kind = StmtKind::kSetBlock;
    EMBER_RETURN_IF_ERROR(ParseFilterChain(/*starts_with_bar=*/true, &s->filter));
    EMBER_RETURN_IF_ERROR(ExpectBlockEnd());
    EMBER_RETURN_IF_ERROR(ParseBody("set", {"endset"}, &s->body));
    *out = std::move(s);
    return Status::Ok();
  }

  // (a, b=1, ...) of a macro or a call block.
  Status ParseParams(std::vector<Param>* params) {
    EMBER_RETURN_IF_ERROR(Expect("("));
    while (!IsOp(")")) {
      if (!params->empty()) EMBER_RETURN_IF_ERROR(Expect(","));
      if (IsOp(")")) break;
      Param p;
      EMBER_RETURN_IF_ERROR(ExpectName(&p.name));
      if (SkipOp("=")) {
        EMBER_RETURN_IF_ERROR(ParseExpression(true, &p.default_value));
      } else {
        for (const Param& q : *params) {
          if (q.default_value) return Fail("a parameter without a default follows one with");
        }
      }
      params->push_back(std::move(p));
    }
    return Expect(")");
  }

  Status ParseMacro(StmtPtr* out) {
    auto s = std::make_unique<Stmt>();
    s->kind = StmtKind::kMacro;
    s->line = Cur().line;
    Next();
    EMBER_RETURN_IF_ERROR(ExpectName(&s->name));
    const int saved_loops = loops_;
    loops_ = 0;
    EMBER_RETURN_IF_ERROR(ParseParams(&s->params));
    EMBER_RETURN_IF_ERROR(ExpectBlockEnd());
    EMBER_RETURN_IF_ERROR(ParseBody("macro", {"endmacro"}, &s->body));
    loops_ = saved_loops;
    *out = std::move(s);
    return Status::Ok();
  }

  Status ParseCallBlock(StmtPtr* out) {
    auto s = std::make_unique<Stmt>();
    s->kind = StmtKind::kCallBlock;
    s->line = Cur().line;
    Next();
    if (IsOp("(")) EMBER_RETURN_IF_ERROR(ParseParams(&s->params));
    EMBER_RETURN_IF_ERROR(ParseExpression(true, &s->expr));
    if (s->expr->kind != ExprKind::kCall) return Fail("expected a call after 'call'");
    const int saved_loops = loops_;
    loops_ = 0;
    EMBER_RETURN_IF_ERROR(ExpectBlockEnd());
    EMBER_RETURN_IF_ERROR(ParseBody("call", {"endcall"}, &s->body));
    loops_ = saved_loops;
    *out = std::move(s);
    return Status::Ok();
  }

  Status ParseFilterBlock(StmtPtr* out) {
    auto s = std::make_unique<Stmt>();
    s->kind = StmtKind::kFilterBlock;
    s->line = Cur().line;
    Next();
    EMBER_RETURN_IF_ERROR(ParseFilterChain(/*starts_with_bar=*/false, &s->filter));
    if (!s->filter) return Fail("expected a filter name");
    EMBER_RETURN_IF_ERROR(ExpectBlockEnd());
    EMBER_RETURN_IF_ERROR(ParseBody("filter", {"endfilter"}, &s->body));
    *out = std::move(s);
    return Status::Ok();
  }

  Status ParseWith(StmtPtr* out) {
    auto s = std::make_unique<Stmt>();
    s->kind = StmtKind::kWith;
    s->line = Cur().line;
    Next();
    while (Cur().kind != TokenKind::kBlockEnd) {
      if (!s->assigns.empty()) EMBER_RETURN_IF_ERROR(Expect(","));
      std::string n;
      EMBER_RETURN_IF_ERROR(ExpectName(&n));
      EMBER_RETURN_IF_ERROR(Expect("="));
      ExprPtr e;
      EMBER_RETURN_IF_ERROR(ParseExpression(true, &e));
      s->assigns.emplace_back(std::move(n), std::move(e));
    }
    EMBER_RETURN_IF_ERROR(ExpectBlockEnd());
    EMBER_RETURN_IF_ERROR(ParseBody("with", {"endwith"}, &s->body));
    *out = std::move(s);
    return Status::Ok();
  }

  // ---- expressions ----

  bool IsTupleEnd(const std::vector<std::string>& extra_ends) const {
    const Token& t = Cur();
    if (t.kind == TokenKind::kVarEnd || t.kind == TokenKind::kBlockEnd ||
        t.kind == TokenKind::kEof) {
      return true;
    }
    if (t.kind == TokenKind::kOperator && t.value == ")") return true;
    if (t.kind == TokenKind::kName) {
      for (const std::string& e : extra_ends) {
        if (t.value == e) return true;
      }
    }
    return false;
  }

  // Expressions separated by commas make a tuple; one without a comma is itself.
  Status ParseTuple(bool condexpr, const std::vector<std::string>& extra_ends, bool parens,
                    ExprPtr* out) {
    const uint32_t line = Cur().line;
    std::vector<ExprPtr> items;
    bool is_tuple = false;
    while (true) {
      if (!items.empty()) EMBER_RETURN_IF_ERROR(Expect(","));
      if (IsTupleEnd(extra_ends) || (!condexpr && IsName("if"))) break;
      ExprPtr e;
      EMBER_RETURN_IF_ERROR(ParseExpression(condexpr, &e));
      items.push_back(std::move(e));
      if (IsOp(",")) {
        is_tuple = true;
      } else {
        break;
      }
    }
    if (!is_tuple) {
      if (!items.empty()) {
        *out = std::move(items[0]);
        return Status::Ok();
      }
      if (!parens) return Fail("expected an expression, got " + Describe(Cur()));
    }
    *out = NewExpr(ExprKind::kTuple, line);
    (*out)->items = std::move(items);
    return Status::Ok();
  }

  Status ParseExpression(bool condexpr, ExprPtr* out) {
    DepthGuard g(&depth_);
    EMBER_RETURN_IF_ERROR(CheckDepth());
    if (!condexpr) return ParseOr(out);
    EMBER_RETURN_IF_ERROR(ParseOr(out));
    while (IsName("if")) {
      const uint32_t line = Cur().line;
      Next();
      auto e = NewExpr(ExprKind::kCondExpr, line);
      ExprPtr test, other;
      EMBER_RETURN_IF_ERROR(ParseOr(&test));
      if (SkipName("else")) EMBER_RETURN_IF_ERROR(ParseExpression(true, &other));
      e->items.push_back(std::move(*out));
      e->items.push_back(std::move(test));
      e->items.push_back(std::move(other));
      *out = std::move(e);
    }
    return Status::Ok();
  }

  Status ParseBinaryChain(ExprKind kind, const char* word, Status (Parser::*sub)(ExprPtr*),
                          ExprPtr* out) {
    EMBER_RETURN_IF_ERROR((this->*sub)(out));
    while (IsName(word)) {
      auto e = NewExpr(kind, Cur().line);
      Next();
      ExprPtr rhs;
      EMBER_RETURN_IF_ERROR((this->*sub)(&rhs));
      e->operand = std::move(*out);
      e->items.push_back(std::move(rhs));
      *out = std::move(e);
    }
    return Status::Ok();
  }
  Status ParseOr(ExprPtr* out) {
    return ParseBinaryChain(ExprKind::kOr, "or", &Parser::ParseAnd, out);
  }
  Status ParseAnd(ExprPtr* out) {
    return ParseBinaryChain(ExprKind::kAnd, "and", &Parser::ParseNot, out);
  }

  Status ParseNot(ExprPtr* out) {
    if (IsName("not")) {
      auto e = NewExpr(ExprKind::kNot, Cur().line);
      Next();
      DepthGuard g(&depth_);
      EMBER_RETURN_IF_ERROR(CheckDepth());
      EMBER_RETURN_IF_ERROR(ParseNot(&e->operand));
      *out = std::move(e);
      return Status::Ok();
    }
    return ParseCompare(out);
  }

  Status ParseCompare(ExprPtr* out) {
    const uint32_t line = Cur().line;
    ExprPtr first;
    EMBER_RETURN_IF_ERROR(ParseMath1(&first));
    std::unique_ptr<Expr> cmp;
    while (true) {
      std::string op;
      if (Cur().kind == TokenKind::kOperator &&
          (Cur().value == "==" || Cur().value == "!=" || Cur().value == "<" ||
           Cur().value == "<=" || Cur().value == ">" || Cur().value == ">=")) {
        op = Cur().value;
        Next();
      } else if (IsName("in")) {
        op = "in";
        Next();
      } else if (IsName("not") && Peek().kind == TokenKind::kName && Peek().value == "in") {
        op = "not in";
        Next();
        Next();
      } else {
        break;
      }
      if (!cmp) {
        cmp = NewExpr(ExprKind::kCompare, line);
        cmp->operand = std::move(first);
      }
      ExprPtr rhs;
      EMBER_RETURN_IF_ERROR(ParseMath1(&rhs));
      cmp->ops.push_back(op);
      cmp->items.push_back(std::move(rhs));
    }
    *out = cmp ? std::move(cmp) : std::move(first);
    return Status::Ok();
  }

  Status ParseBinary(std::initializer_list<const char*> ops, Status (Parser::*sub)(ExprPtr*),
                     ExprPtr* out) {
    EMBER_RETURN_IF_ERROR((this->*sub)(out));
    while (Cur().kind == TokenKind::kOperator) {
      const char* found = nullptr;
      for (const char* op : ops) {
        if (Cur().value == op) found = op;
      }
      if (!found) break;
      auto e = NewExpr(ExprKind::kBinary, Cur().line);
      e->name = found;
      Next();
      ExprPtr rhs;
      EMBER_RETURN_IF_ERROR((this->*sub)(&rhs));
      e->operand = std::move(*out);
      e->items.push_back(std::move(rhs));
      *out = std::move(e);
    }
    return Status::Ok();
  }
  Status ParseMath1(ExprPtr* out) { return ParseBinary({"+", "-"}, &Parser::ParseConcat, out); }
  Status ParseConcat(ExprPtr* out) { return ParseBinary({"~"}, &Parser::ParseMath2, out); }
  Status ParseMath2(ExprPtr* out) {
    return ParseBinary({"*", "/", "//", "%"}, &Parser::ParsePow, out);
  }
  Status ParsePow(ExprPtr* out) { return ParseBinary({"**"}, &Parser::ParseUnaryFiltered, out); }
  Status ParseUnaryFiltered(ExprPtr* out) { return ParseUnary(true, out); }

  Status ParseUnary(bool with_filter, ExprPtr* out) {
    DepthGuard g(&depth_);
    EMBER_RETURN_IF_ERROR(CheckDepth());
    if (IsOp("-") || IsOp("+")) {
      auto e = NewExpr(IsOp("-") ? ExprKind::kNeg : ExprKind::kPos, Cur().line);
      Next();
      EMBER_RETURN_IF_ERROR(ParseUnary(false, &e->operand));
      *out = std::move(e);
    } else {
      EMBER_RETURN_IF_ERROR(ParsePrimary(out));
    }
    EMBER_RETURN_IF_ERROR(ParsePostfix(out));
    if (with_filter) EMBER_RETURN_IF_ERROR(ParseFilterExpr(out));
    return Status::Ok();
  }

  Status ParsePrimary(ExprPtr* out) {
    const Token& t = Cur();
    switch (t.kind) {
      case TokenKind::kName: {
        const std::string& n = t.value;
        if (n == "true" || n == "True" || n == "false" || n == "False") {
          *out = NewExpr(ExprKind::kConst, t.line);
          (*out)->value = Value::Bool(n[0] == 't' || n[0] == 'T');
        } else if (n == "none" || n == "None") {
          *out = NewExpr(ExprKind::kConst, t.line);
          (*out)->value = Value::None();
        } else {
          *out = NewExpr(ExprKind::kName, t.line);
          (*out)->name = n;
        }
        Next();
        return Status::Ok();
      }
      case TokenKind::kString: {
        *out = NewExpr(ExprKind::kConst, t.line);
        std::string s;
        while (Cur().kind == TokenKind::kString) {  // 'a' 'b' is 'ab'
          s += Cur().value;
          Next();
        }
        (*out)->value = Value::String(std::move(s));
        return Status::Ok();
      }
      case TokenKind::kInt: {
        errno = 0;
        const long long v = std::strtoll(t.value.c_str(), nullptr, 10);
        if (errno == ERANGE) return Fail("integer literal too large: " + t.value);
        *out = NewExpr(ExprKind::kConst, t.line);
        (*out)->value = Value::Int(v);
        Next();
        return Status::Ok();
      }
      case TokenKind::kFloat:
        *out = NewExpr(ExprKind::kConst, t.line);
        (*out)->value = Value::Float(std::strtod(t.value.c_str(), nullptr));
        Next();
        return Status::Ok();
      case TokenKind::kOperator:
        if (t.value == "(") {
          Next();
          EMBER_RETURN_IF_ERROR(ParseTuple(true, {}, /*parens=*/true, out));
          return Expect(")");
        }
        if (t.value == "[") return ParseList(out);
        if (t.value == "{") return ParseDict(out);
        break;
      default:
        break;
    }
    return Fail("unexpected " + Describe(t));
  }

  Status ParseList(ExprPtr* out) {
    auto e = NewExpr(ExprKind::kList, Cur().line);
    Next();
    while (!IsOp("]")) {
      if (!e->items.empty()) EMBER_RETURN_IF_ERROR(Expect(","));
      if (IsOp("]")) break;
      ExprPtr item;
      EMBER_RETURN_IF_ERROR(ParseExpression(true, &item));
      e->items.push_back(std::move(item));
    }
    Next();
    *out = std::move(e);
    return Status::Ok();
  }

  Status ParseDict(ExprPtr* out) {
    auto e = NewExpr(ExprKind::kDict, Cur().line);
    Next();
    while (!IsOp("}")) {
      if (!e->items.empty()) EMBER_RETURN_IF_ERROR(Expect(","));
      if (IsOp("}")) break;
      ExprPtr k, v;
      EMBER_RETURN_IF_ERROR(ParseExpression(true, &k));
      EMBER_RETURN_IF_ERROR(Expect(":"));
      EMBER_RETURN_IF_ERROR(ParseExpression(true, &v));
      e->items.push_back(std::move(k));
      e->items.push_back(std::move(v));
    }
    Next();
    *out = std::move(e);
    return Status::Ok();
  }

  Status ParsePostfix(ExprPtr* out) {
    while (true) {
      if (IsOp(".") || IsOp("[")) {
        EMBER_RETURN_IF_ERROR(ParseSubscript(out));
      } else if (IsOp("(")) {
        EMBER_RETURN_IF_ERROR(ParseCall(out));
      } else {
        return Status::Ok();
      }
    }
  }

  Status ParseFilterExpr(ExprPtr* out) {
    while (true) {
      if (IsOp("|")) {
        Next();
        EMBER_RETURN_IF_ERROR(ParseFilter(std::move(*out), out));
      } else if (IsName("is")) {
        EMBER_RETURN_IF_ERROR(ParseTest(out));
      } else if (IsOp("(")) {
        EMBER_RETURN_IF_ERROR(ParseCall(out));
      } else {
        return Status::Ok();
      }
    }
  }

  Status ParseSubscript(ExprPtr* out) {
    const uint32_t line = Cur().line;
    if (SkipOp(".")) {
      if (Cur().kind == TokenKind::kName) {
        auto e = NewExpr(ExprKind::kGetattr, line);
        e->name = Cur().value;
        e->operand = std::move(*out);
        Next();
        *out = std::move(e);
        return Status::Ok();
      }
      if (Cur().kind == TokenKind::kInt) {
        auto e = NewExpr(ExprKind::kGetitem, line);
        e->operand = std::move(*out);
        auto idx = NewExpr(ExprKind::kConst, line);
        idx->value = Value::Int(std::strtoll(Cur().value.c_str(), nullptr, 10));
        e->items.push_back(std::move(idx));
        Next();
        *out = std::move(e);
        return Status::Ok();
      }
      return Fail("expected a name or a number after '.', got " + Describe(Cur()));
    }
    Next();  // '['
    std::vector<ExprPtr> args;
    while (!IsOp("]")) {
      if (!args.empty()) EMBER_RETURN_IF_ERROR(Expect(","));
      if (IsOp("]")) break;
      ExprPtr a;
      EMBER_RETURN_IF_ERROR(ParseSubscribed(&a));
      args.push_back(std::move(a));
    }
    EMBER_RETURN_IF_ERROR(Expect("]"));
    if (args.empty()) return Fail("expected a subscript");
    ExprPtr index;
    if (args.size() == 1) {
      index = std::move(args[0]);
    } else {
      index = NewExpr(ExprKind::kTuple, line);
      index->items = std::move(args);
    }
    if (index->kind == ExprKind::kSlice) {  // a[b:c]: the slice takes the object
      index->items[0] = std::move(*out);
      *out = std::move(index);
      return Status::Ok();
    }
    auto e = NewExpr(ExprKind::kGetitem, line);
    e->operand = std::move(*out);
    e->items.push_back(std::move(index));
    *out = std::move(e);
    return Status::Ok();
  }

  // An index or a slice start:stop:step (the slice's items[0], the object, is set by the caller).
  Status ParseSubscribed(ExprPtr* out) {
    const uint32_t line = Cur().line;
    ExprPtr start;
    if (!IsOp(":")) {
      EMBER_RETURN_IF_ERROR(ParseExpression(true, &start));
      if (!IsOp(":")) {
        *out = std::move(start);
        return Status::Ok();
      }
    }
    Next();  // ':'
    auto e = NewExpr(ExprKind::kSlice, line);
    ExprPtr stop, step;
    if (!IsOp("]") && !IsOp(",") && !IsOp(":")) EMBER_RETURN_IF_ERROR(ParseExpression(true, &stop));
    if (SkipOp(":")) {
      if (!IsOp("]") && !IsOp(",")) EMBER_RETURN_IF_ERROR(ParseExpression(true, &step));
    }
    e->items.push_back(nullptr);
    e->items.push_back(std::move(start));
    e->items.push_back(std::move(stop));
    e->items.push_back(std::move(step));
    *out = std::move(e);
    return Status::Ok();
  }

  // "(" args ")": positional, name=value, *args, **kwargs.
  Status ParseArgs(Expr* e) {
    EMBER_RETURN_IF_ERROR(Expect("("));
    bool first = true;
    while (!IsOp(")")) {
      if (!first) EMBER_RETURN_IF_ERROR(Expect(","));
      first = false;
      if (IsOp(")")) break;
      if (SkipOp("*")) {
        EMBER_RETURN_IF_ERROR(ParseExpression(true, &e->star_args));
      } else if (SkipOp("**")) {
        EMBER_RETURN_IF_ERROR(ParseExpression(true, &e->kw_args));
      } else if (Cur().kind == TokenKind::kName && Peek().kind == TokenKind::kOperator &&
                 Peek().value == "=") {
        CallArg a;
        a.name = Cur().value;
        Next();
        Next();
        EMBER_RETURN_IF_ERROR(ParseExpression(true, &a.value));
        e->args.push_back(std::move(a));
      } else {
        if (e->star_args || e->kw_args) return Fail("a positional argument after *args/**kwargs");
        for (const CallArg& a : e->args) {
          if (!a.name.empty()) return Fail("a positional argument follows a keyword argument");
        }
        CallArg a;
        EMBER_RETURN_IF_ERROR(ParseExpression(true, &a.value));
        e->args.push_back(std::move(a));
      }
    }
    return Expect(")");
  }

  Status ParseCall(ExprPtr* out) {
    auto e = NewExpr(ExprKind::kCall, Cur().line);
    e->operand = std::move(*out);
    EMBER_RETURN_IF_ERROR(ParseArgs(e.get()));
    *out = std::move(e);
    return Status::Ok();
  }

  // Dotted names: "f" or "a.b".
  Status ParseDottedName(std::string* out) {
    EMBER_RETURN_IF_ERROR(ExpectName(out));
    while (IsOp(".") && Peek().kind == TokenKind::kName) {
      Next();
      *out += "." + Cur().value;
      Next();
    }
    return Status::Ok();
  }

  // After '|': name [(args)]. `operand` may be null (a block filter's placeholder).
  Status ParseFilter(ExprPtr operand, ExprPtr* out) {
    auto e = NewExpr(ExprKind::kFilter, Cur().line);
    e->column = Cur().column;
    EMBER_RETURN_IF_ERROR(ParseDottedName(&e->name));
    e->unknown = !HasFilter(e->name);  // an error or not: NameChecker
    e->operand = std::move(operand);
    if (IsOp("(")) EMBER_RETURN_IF_ERROR(ParseArgs(e.get()));
    *out = std::move(e);
    return Status::Ok();
  }

  Status ParseTest(ExprPtr* out) {
    auto e = NewExpr(ExprKind::kTest, Cur().line);
    Next();  // 'is'
    if (SkipName("not")) e->negated = true;
    e->column = Cur().column;
    EMBER_RETURN_IF_ERROR(ParseDottedName(&e->name));
    e->unknown = !HasTest(e->name);
    e->operand = std::move(*out);
    if (IsOp("(")) {
      EMBER_RETURN_IF_ERROR(ParseArgs(e.get()));
    } else {
      const Token& t = Cur();
      const bool starts_primary =
          t.kind == TokenKind::kName || t.kind == TokenKind::kString || t.kind == TokenKind::kInt ||
          t.kind == TokenKind::kFloat ||
          (t.kind == TokenKind::kOperator && (t.value == "(" || t.value == "[" || t.value == "{"));
      if (starts_primary && !IsName("else") && !IsName("or") && !IsName("and")) {
        if (IsName("is")) return Fail("tests cannot be chained with 'is'");
        CallArg a;
        EMBER_RETURN_IF_ERROR(ParsePrimary(&a.value));
        EMBER_RETURN_IF_ERROR(ParsePostfix(&a.value));
        e->args.push_back(std::move(a));
      }
    }
    *out = std::move(e);
    return Status::Ok();
  }

  std::string_view name_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  int depth_ = 0;
  int loops_ = 0;                                       // enclosing for loops (break/continue)
  std::vector<std::pair<std::string, uint32_t>> open_;  // open blocks: tag, line
};

// Unknown filter and test names: an error, except under an if statement or a conditional
// expression (up to the nearest for body, macro, call, filter, set or with block), where
// jinja2 fails only if the expression is evaluated.
class NameChecker {
 public:
  explicit NameChecker(std::string_view name) : name_(name) {}

  Status Check(const Body& body, bool cond) {
    for (const StmtPtr& s : body) EMBER_RETURN_IF_ERROR(Statement(*s, cond));
    return Status::Ok();
  }

 private:
  Status Params(const std::vector<Param>& params) {
    for (const Param& p : params) EMBER_RETURN_IF_ERROR(Expression(p.default_value.get(), false));
    return Status::Ok();
  }

  Status Statement(const Stmt& s, bool cond) {
    switch (s.kind) {
      case StmtKind::kIf:
        for (const ExprPtr& c : s.conds) EMBER_RETURN_IF_ERROR(Expression(c.get(), true));
        for (const Body& b : s.bodies) EMBER_RETURN_IF_ERROR(Check(b, true));
        return Check(s.else_body, true);
      case StmtKind::kFor:
        EMBER_RETURN_IF_ERROR(Expression(s.expr.get(), cond));
        EMBER_RETURN_IF_ERROR(Expression(s.filter.get(), false));
        EMBER_RETURN_IF_ERROR(Check(s.body, false));
        return Check(s.else_body, false);
      case StmtKind::kPrint:
      case StmtKind::kSet:
        return Expression(s.expr.get(), cond);
      case StmtKind::kCallBlock:
        EMBER_RETURN_IF_ERROR(Expression(s.expr.get(), cond));
        EMBER_RETURN_IF_ERROR(Params(s.params));
        return Check(s.body, false);
      case StmtKind::kMacro:
        EMBER_RETURN_IF_ERROR(Params(s.params));
        return Check(s.body, false);
      case StmtKind::kSetBlock:
      case StmtKind::kFilterBlock:
        EMBER_RETURN_IF_ERROR(Expression(s.filter.get(), false));
        return Check(s.body, false);
      case StmtKind::kWith:
        for (const auto& [n, e] : s.assigns) EMBER_RETURN_IF_ERROR(Expression(e.get(), cond));
        return Check(s.body, false);
      case StmtKind::kScope:
        return Check(s.body, cond);
      default:
        return Status::Ok();
    }
  }

  Status Expression(const Expr* e, bool cond) {
    if (!e) return Status::Ok();
    if (e->unknown && !cond) {
      return BadFormat(Where(name_, e->line, e->column) + "no " +
                       (e->kind == ExprKind::kFilter ? "filter" : "test") + " named '" + e->name +
                       "'");
    }
    if (e->kind == ExprKind::kCondExpr) cond = true;
    EMBER_RETURN_IF_ERROR(Expression(e->operand.get(), cond));
    for (const ExprPtr& x : e->items) EMBER_RETURN_IF_ERROR(Expression(x.get(), cond));
    for (const CallArg& a : e->args) EMBER_RETURN_IF_ERROR(Expression(a.value.get(), cond));
    EMBER_RETURN_IF_ERROR(Expression(e->star_args.get(), cond));
    return Expression(e->kw_args.get(), cond);
  }

  std::string_view name_;
};

}  // namespace

Status ParseTemplate(std::string_view source, std::string_view name, const LexOptions& opts,
                     Template* out) {
  std::vector<Token> tokens;
  EMBER_RETURN_IF_ERROR(Lex(source, name, opts, &tokens));
  out->name = std::string(name);
  out->body.clear();
  EMBER_RETURN_IF_ERROR(Parser(name, std::move(tokens)).Run(&out->body));
  return NameChecker(name).Check(out->body, false);
}

}  // namespace ember::jinja
