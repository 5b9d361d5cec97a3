// The Jinja parser: statements (jinja_parser.h states the grammar), and the
// check of filter and test names.
#include "runtime/chat/jinja_parser.h"

#include "runtime/chat/jinja_builtins.h"
#include "runtime/chat/jinja_parser_impl.h"

namespace ember::jinja {
namespace internal {

Status Parser::Run(Body* out) {
  EMBER_RETURN_IF_ERROR(SubParse({}, out));
  if (Cur().kind != TokenKind::kEof) return Fail("unexpected '" + Cur().value + "'");
  return Status::Ok();
}

// Parses statements until a block tag whose name is in `ends` (not consumed: Cur() is that
// name) or the end of the template (only when `ends` is empty).
Status Parser::SubParse(const std::vector<std::string>& ends, Body* out) {
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

std::string Parser::EndList(const std::vector<std::string>& ends) {
  std::string r;
  for (size_t i = 0; i < ends.size(); ++i) {
    r += (i == 0 ? "" : i + 1 == ends.size() ? " or " : ", ") + ("'" + ends[i] + "'");
  }
  return r;
}

std::string Parser::open_note() const {
  if (open_.empty()) return "";
  return " (the innermost open block is '" + open_.back().first + "', line " +
         std::to_string(open_.back().second) + ")";
}

// Cur() is the tag name after "{%".
Status Parser::ParseStatement(const std::vector<std::string>& ends, StmtPtr* out) {
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
Status Parser::ParseBody(const std::string& open_tag, const std::vector<std::string>& ends,
                         Body* out, const std::vector<std::string>& keep) {
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

Status Parser::ParseIf(StmtPtr* out) {
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
Status Parser::ParseTargets(std::vector<std::string>* names, bool* unpack) {
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

Status Parser::ParseFor(StmtPtr* out) {
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
Status Parser::ParseFilterChain(bool starts_with_bar, ExprPtr* out) {
  ExprPtr node;  // null: the placeholder
  if (!starts_with_bar) EMBER_RETURN_IF_ERROR(ParseFilter(nullptr, &node));
  ChainGuard chain(&depth_);
  while (SkipOp("|")) {
    chain.Step();
    EMBER_RETURN_IF_ERROR(CheckDepth());
    EMBER_RETURN_IF_ERROR(ParseFilter(std::move(node), &node));
  }
  *out = std::move(node);
  return Status::Ok();
}

Status Parser::ParseSet(StmtPtr* out) {
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
Status Parser::ParseParams(std::vector<Param>* params) {
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

Status Parser::ParseMacro(StmtPtr* out) {
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

Status Parser::ParseCallBlock(StmtPtr* out) {
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

Status Parser::ParseFilterBlock(StmtPtr* out) {
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

Status Parser::ParseWith(StmtPtr* out) {
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

}  // namespace internal

namespace {

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
      return BadFormat(Where(name_, e->line, e->column) + "No " +
                       (e->kind == ExprKind::kFilter ? "filter" : "test") + " named '" + e->name +
                       "'.");
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
  EMBER_RETURN_IF_ERROR(internal::Parser(name, std::move(tokens)).Run(&out->body));
  return NameChecker(name).Check(out->body, false);
}

}  // namespace ember::jinja
