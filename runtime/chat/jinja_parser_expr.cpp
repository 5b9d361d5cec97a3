// The Jinja parser: expressions, loosest first (jinja_parser.h states the
// precedence).
#include <cerrno>
#include <cstdlib>

#include "runtime/chat/jinja_builtins.h"
#include "runtime/chat/jinja_parser_impl.h"

namespace ember::jinja::internal {

bool Parser::IsTupleEnd(const std::vector<std::string>& extra_ends) const {
  const Token& t = Cur();
  if (t.kind == TokenKind::kVarEnd || t.kind == TokenKind::kBlockEnd || t.kind == TokenKind::kEof) {
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
Status Parser::ParseTuple(bool condexpr, const std::vector<std::string>& extra_ends, bool parens,
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

Status Parser::ParseExpression(bool condexpr, ExprPtr* out) {
  DepthGuard g(&depth_);
  EMBER_RETURN_IF_ERROR(CheckDepth());
  if (!condexpr) return ParseOr(out);
  EMBER_RETURN_IF_ERROR(ParseOr(out));
  ChainGuard chain(&depth_);
  while (IsName("if")) {
    chain.Step();
    EMBER_RETURN_IF_ERROR(CheckDepth());
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

Status Parser::ParseBinaryChain(ExprKind kind, const char* word, Status (Parser::*sub)(ExprPtr*),
                                ExprPtr* out) {
  EMBER_RETURN_IF_ERROR((this->*sub)(out));
  ChainGuard chain(&depth_);
  while (IsName(word)) {
    chain.Step();
    EMBER_RETURN_IF_ERROR(CheckDepth());
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

Status Parser::ParseOr(ExprPtr* out) {
  return ParseBinaryChain(ExprKind::kOr, "or", &Parser::ParseAnd, out);
}

Status Parser::ParseAnd(ExprPtr* out) {
  return ParseBinaryChain(ExprKind::kAnd, "and", &Parser::ParseNot, out);
}

Status Parser::ParseNot(ExprPtr* out) {
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

Status Parser::ParseCompare(ExprPtr* out) {
  const uint32_t line = Cur().line;
  ExprPtr first;
  EMBER_RETURN_IF_ERROR(ParseMath1(&first));
  std::unique_ptr<Expr> cmp;
  while (true) {
    std::string op;
    if (Cur().kind == TokenKind::kOperator &&
        (Cur().value == "==" || Cur().value == "!=" || Cur().value == "<" || Cur().value == "<=" ||
         Cur().value == ">" || Cur().value == ">=")) {
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

Status Parser::ParseBinary(std::initializer_list<const char*> ops, Status (Parser::*sub)(ExprPtr*),
                           ExprPtr* out) {
  EMBER_RETURN_IF_ERROR((this->*sub)(out));
  ChainGuard chain(&depth_);
  while (Cur().kind == TokenKind::kOperator) {
    chain.Step();
    EMBER_RETURN_IF_ERROR(CheckDepth());
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

Status Parser::ParseMath2(ExprPtr* out) {
  return ParseBinary({"*", "/", "//", "%"}, &Parser::ParsePow, out);
}

Status Parser::ParseUnary(bool with_filter, ExprPtr* out) {
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

Status Parser::ParsePrimary(ExprPtr* out) {
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

Status Parser::ParseList(ExprPtr* out) {
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

Status Parser::ParseDict(ExprPtr* out) {
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

Status Parser::ParsePostfix(ExprPtr* out) {
  ChainGuard chain(&depth_);
  while (true) {
    chain.Step();
    EMBER_RETURN_IF_ERROR(CheckDepth());
    if (IsOp(".") || IsOp("[")) {
      EMBER_RETURN_IF_ERROR(ParseSubscript(out));
    } else if (IsOp("(")) {
      EMBER_RETURN_IF_ERROR(ParseCall(out));
    } else {
      return Status::Ok();
    }
  }
}

Status Parser::ParseFilterExpr(ExprPtr* out) {
  ChainGuard chain(&depth_);
  while (true) {
    chain.Step();
    EMBER_RETURN_IF_ERROR(CheckDepth());
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

Status Parser::ParseSubscript(ExprPtr* out) {
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
Status Parser::ParseSubscribed(ExprPtr* out) {
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
Status Parser::ParseArgs(Expr* e) {
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

Status Parser::ParseCall(ExprPtr* out) {
  auto e = NewExpr(ExprKind::kCall, Cur().line);
  e->operand = std::move(*out);
  EMBER_RETURN_IF_ERROR(ParseArgs(e.get()));
  *out = std::move(e);
  return Status::Ok();
}

// Dotted names: "f" or "a.b".
Status Parser::ParseDottedName(std::string* out) {
  EMBER_RETURN_IF_ERROR(ExpectName(out));
  while (IsOp(".") && Peek().kind == TokenKind::kName) {
    Next();
    *out += "." + Cur().value;
    Next();
  }
  return Status::Ok();
}

// After '|': name [(args)]. `operand` may be null (a block filter's placeholder).
Status Parser::ParseFilter(ExprPtr operand, ExprPtr* out) {
  auto e = NewExpr(ExprKind::kFilter, Cur().line);
  e->column = Cur().column;
  EMBER_RETURN_IF_ERROR(ParseDottedName(&e->name));
  e->unknown = !HasFilter(e->name);  // an error or not: NameChecker
  e->operand = std::move(operand);
  if (IsOp("(")) EMBER_RETURN_IF_ERROR(ParseArgs(e.get()));
  *out = std::move(e);
  return Status::Ok();
}

Status Parser::ParseTest(ExprPtr* out) {
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

}  // namespace ember::jinja::internal
