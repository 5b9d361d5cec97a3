// Bad and hostile templates: every one is a clear error (a Status naming the
// template, the line, and for parse errors the column), never a crash, a hang
// or unbounded memory. These also run under ASan/UBSan.
#include <catch2/catch.hpp>
#include <string>

#include "runtime/chat/chat_template.h"
#include "runtime/chat/jinja_eval.h"
#include "runtime/chat/jinja_parser.h"

using ember::ChatTemplate;
using ember::ChatTemplateOptions;
using ember::Code;
using ember::Status;
using json = nlohmann::ordered_json;

namespace {

Status Parse(const std::string& src) {
  ChatTemplate t;
  return ChatTemplate::Parse(src, "t.jinja", &t);
}

Status Render(const std::string& src, std::string* out = nullptr) {
  ChatTemplate t;
  Status s = ChatTemplate::Parse(src, "t.jinja", &t);
  if (!s.ok()) return s;
  ChatTemplateOptions o;
  o.extra = json::parse(R"({"l": [1, 2, 3]})");
  std::string text;
  s = t.Apply(json::parse(R"([{"role": "user", "content": "hi"}])"), o, &text);
  if (out) *out = text;
  return s;
}

// Renders with the engine's own limits lowered, so that a test of a bound runs fast.
Status RenderLimited(const std::string& src, const ember::jinja::RenderLimits& limits) {
  ember::jinja::Template t;
  Status s = ember::jinja::ParseTemplate(src, "t.jinja", {}, &t);
  if (!s.ok()) return s;
  ember::jinja::RenderOptions ro;
  ro.limits = limits;
  ember::jinja::Interpreter in(t, ro);
  ember::jinja::DictData vars;
  std::string out;
  s = in.Render(vars, &out);
  if (!s.ok()) CHECK(out.empty());
  return s;
}

void CheckError(const Status& s, Code code, const std::string& needle) {
  INFO("message: " << s.message());
  REQUIRE_FALSE(s.ok());
  CHECK(s.code() == code);
  CHECK_THAT(s.message(), Catch::Contains(needle));
}

}  // namespace

TEST_CASE("jinja errors: parse errors name the line and the column", "[chat][jinja]") {
  CheckError(Parse("line 1\n{% if x %}abc"), Code::kBadFormat,
             "t.jinja:2:14: unexpected end of template: expected 'elif', 'else' or 'endif' "
             "(the innermost open block is 'if', line 2)");
  CheckError(Parse("{% for x in l %}\n  {% endif %}"), Code::kBadFormat,
             "t.jinja:2:6: unknown tag 'endif'; expected 'endfor' or 'else'");
  CheckError(Parse("\n\n{% frobnicate %}"), Code::kBadFormat,
             "t.jinja:3:4: unknown tag 'frobnicate'");
  CheckError(Parse("{% do l.append(1) %}"), Code::kBadFormat, "unknown tag 'do'");
  CheckError(Parse("{{ x | nosuchfilter }}"), Code::kBadFormat,
             "t.jinja:1:8: No filter named 'nosuchfilter'.");
  CheckError(Parse("{% for m in l %}{{ m is nosuchtest }}{% endfor %}"), Code::kBadFormat,
             "t.jinja:1:25: No test named 'nosuchtest'.");
  CheckError(Parse("{{ 1 + }}"), Code::kBadFormat,
             "t.jinja:1:8: unexpected end of print statement");
  CheckError(Parse("{{ 'abc }}"), Code::kBadFormat, "t.jinja:1:4: unterminated string literal");
  CheckError(Parse("a\n{# comment"), Code::kBadFormat, "t.jinja:2:1: missing end of comment tag");
  CheckError(Parse("{{ x "), Code::kBadFormat, "t.jinja:1:1: unexpected end of template");
  CheckError(Parse("{% raw %}abc"), Code::kBadFormat, "missing '{% endraw %}'");
  CheckError(Parse("{{ x }"), Code::kBadFormat, "t.jinja:1:6: unexpected '}'");
  CheckError(Parse("{% break %}"), Code::kBadFormat, "'break' outside of a loop");
  CheckError(Parse("{% set %}"), Code::kBadFormat, "expected a name");
  CheckError(Parse("{% macro m(a=1, b) %}{% endmacro %}"), Code::kBadFormat,
             "a parameter without a default follows one with");
  CheckError(Parse("{% for x in l recursive %}{% endfor %}"), Code::kBadFormat,
             "recursive for loops are not supported");
  CheckError(Parse("{{ 99999999999999999999 }}"), Code::kBadFormat, "integer literal too large");
  CheckError(Parse("ok \xff\xfe"), Code::kBadFormat,
             "t.jinja: the template is not valid UTF-8 (byte 3)");
}

TEST_CASE("jinja errors: deep nesting is refused at parse time", "[chat][jinja]") {
  CheckError(Parse("{{ " + std::string(5000, '(') + "1" + std::string(5000, ')') + " }}"),
             Code::kBadFormat, "nesting deeper than 200 levels");
  CheckError(Parse("{{ " + std::string(5000, '[') + std::string(5000, ']') + " }}"),
             Code::kBadFormat, "nesting deeper than 200 levels");
  std::string ifs;
  for (int i = 0; i < 5000; ++i) ifs += "{% if true %}";
  for (int i = 0; i < 5000; ++i) ifs += "{% endif %}";
  CheckError(Parse(ifs), Code::kBadFormat, "nesting deeper than 200 levels");
  std::string nots = "{{ ";
  for (int i = 0; i < 5000; ++i) nots += "not ";
  CheckError(Parse(nots + "x }}"), Code::kBadFormat, "nesting deeper than 200 levels");
  std::string negs = "{{ ";
  for (int i = 0; i < 5000; ++i) negs += "- ";
  CheckError(Parse(negs + "1 }}"), Code::kBadFormat, "nesting deeper than 200 levels");
  // Chains of operators, filters and attributes nest too (a + b + c is ((a + b) + c)).
  std::string sum = "{{ 0";
  for (int i = 0; i < 5000; ++i) sum += " + 1";
  CheckError(Parse(sum + " }}"), Code::kBadFormat, "nesting deeper than 200 levels");
  std::string filters = "{{ 'x'";
  for (int i = 0; i < 5000; ++i) filters += "|trim";
  CheckError(Parse(filters + " }}"), Code::kBadFormat, "nesting deeper than 200 levels");
  std::string attrs = "{{ x";
  for (int i = 0; i < 5000; ++i) attrs += ".a";
  CheckError(Parse(attrs + " }}"), Code::kBadFormat, "nesting deeper than 200 levels");
  // Within the bound they render.
  sum = "{{ 0";
  for (int i = 0; i < 150; ++i) sum += " + 1";
  std::string out;
  REQUIRE(Render(sum + " }}", &out).ok());
  CHECK(out == "150");
}

TEST_CASE("jinja errors: raise_exception carries the message and the line", "[chat][jinja]") {
  CheckError(
      Render("line 1\n{{ raise_exception('Only user and assistant roles are supported!') }}"),
      Code::kInvalidArgument,
      "t.jinja:2: raise_exception: Only user and assistant roles are supported!");
  // Inside a macro: the line of the raise, not of the call.
  CheckError(Render("{% macro check(m) %}\n\n{{ raise_exception('bad ' ~ m) }}{% endmacro %}\n"
                    "{{ check('x') }}"),
             Code::kInvalidArgument, "t.jinja:3: raise_exception: bad x");
}

TEST_CASE("jinja errors: runtime errors as jinja2 reports them", "[chat][jinja]") {
  CheckError(Render("{{ nothing() }}"), Code::kInvalidArgument,
             "t.jinja:1: 'nothing' is undefined");
  CheckError(Render("\n{{ nothing.x }}"), Code::kInvalidArgument,
             "t.jinja:2: 'nothing' is undefined");
  CheckError(Render("{{ messages[0].nothing.x }}"), Code::kInvalidArgument,
             "'dict object' has no attribute 'nothing'");
  CheckError(Render("{{ l[10].x }}"), Code::kInvalidArgument, "list object has no element 10");
  CheckError(Render("{% if true %}{{ 1|nosuch }}{% endif %}"), Code::kInvalidArgument,
             "t.jinja:1: No filter named 'nosuch' found.");
  CheckError(Render("{{ 'a' + 1 }}"), Code::kInvalidArgument,
             "can only concatenate str (not \"int\") to str");
  CheckError(Render("{{ 1 + 'a' }}"), Code::kInvalidArgument,
             "unsupported operand type(s) for +: 'int' and 'str'");
  CheckError(Render("{{ 1 < 'a' }}"), Code::kInvalidArgument,
             "'<' not supported between instances of 'int' and 'str'");
  CheckError(Render("{{ 1 / 0 }}"), Code::kInvalidArgument, "division by zero");
  CheckError(Render("{{ 5 // 0 }}"), Code::kInvalidArgument, "integer division or modulo by zero");
  CheckError(Render("{{ 2 ** 64 }}"), Code::kInvalidArgument, "integer overflow");
  CheckError(Render("{{ l.append(4) }}"), Code::kInvalidArgument,
             "access to attribute 'append' of 'list' object is unsafe.");
  CheckError(Render("{{ messages[0].update({}) }}"), Code::kInvalidArgument,
             "access to attribute 'update' of 'dict' object is unsafe.");
  CheckError(Render("{% set x = 1 %}{% set x.y = 1 %}"), Code::kInvalidArgument,
             "cannot assign attribute on non-namespace object");
  CheckError(Render("{% for a, b in l %}{% endfor %}"), Code::kInvalidArgument,
             "cannot unpack non-iterable int object");
  CheckError(Render("{{ none|length }}"), Code::kInvalidArgument,
             "object of type 'NoneType' has no len()");
  CheckError(Render("{{ (l|select)|length }}"), Code::kInvalidArgument,
             "object of type 'generator' has no len()");
  CheckError(Render("{{ (l|map('string'))|tojson }}"), Code::kInvalidArgument,
             "Object of type generator is not JSON serializable");
  CheckError(Render("{{ 'x' in none }}"), Code::kInvalidArgument,
             "argument of type 'NoneType' is not iterable");
  CheckError(Render("{{ ''.join(l) }}"), Code::kInvalidArgument,
             "sequence item 0: expected str instance, int found");
  CheckError(Render("{% macro m(a) %}{% endmacro %}{{ m(1, 2) }}"), Code::kInvalidArgument,
             "macro 'm' takes not more than 1 argument(s)");
  CheckError(Render("{% macro m(a) %}{% endmacro %}{{ m(1, z=2) }}"), Code::kInvalidArgument,
             "macro 'm' takes no keyword argument 'z'");
  CheckError(Render("{{ 'x' % 1 }}"), Code::kUnsupported, "printf-style string formatting");
}

TEST_CASE("jinja errors: the chat API checks its input", "[chat][jinja]") {
  ChatTemplate t;
  REQUIRE(ChatTemplate::Parse("{{ messages|length }}", "t", &t).ok());
  std::string out = "stale";
  CheckError(t.Apply(json::object(), {}, &out), Code::kInvalidArgument,
             "messages must be a JSON array");
  CHECK(out.empty());
  CheckError(t.Apply(json::parse("[1]"), {}, &out), Code::kInvalidArgument,
             "message 0 is not a JSON object");
  ChatTemplateOptions o;
  o.extra = json::array();
  CheckError(t.Apply(json::array(), o, &out), Code::kInvalidArgument,
             "extra variables must be a JSON object");
  json deep = json::array();
  for (int i = 0; i < 1000; ++i) deep = json::array({deep});
  o = {};
  o.tools = deep;
  CheckError(t.Apply(json::array(), o, &out), Code::kInvalidArgument, "nested more than 200");
  CheckError(ChatTemplate().Apply(json::array(), {}, &out), Code::kInvalidArgument, "not parsed");
}

TEST_CASE("jinja errors: hostile templates hit a bound and not the machine", "[chat][jinja]") {
  // With the default limits, through the chat API.
  CheckError(Render("{{ range(10**12)|length }}"), Code::kInvalidArgument, "range too big");
  CheckError(Render("{{ 'x' * 10**12 }}"), Code::kInvalidArgument, "exceeds the limit");
  CheckError(Render("{{ [0] * 10**9 }}"), Code::kInvalidArgument, "exceeds the limit");
  CheckError(Render("{{ 'x'.center(10**12) }}"), Code::kInvalidArgument, "exceeds the limit");
  CheckError(Render("{{ 'a\nb'|indent(10**12) }}"), Code::kInvalidArgument, "exceeds the limit");
  CheckError(Render("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}"), Code::kInvalidArgument,
             "nesting deeper than 400 levels (recursion?)");
  CheckError(Render("{% macro f(n) %}{% call f(n) %}{% endcall %}{% endmacro %}{{ f(1) }}"),
             Code::kInvalidArgument, "nesting deeper than 400 levels");
  CheckError(Render("{% set ns = namespace(x=1) %}{% for i in range(1000) %}"
                    "{% set ns.x = [ns.x] %}{% endfor %}"),
             Code::kInvalidArgument, "nested more than 200 levels");
  CheckError(Render("{% set ns = namespace(x={}) %}{% for i in range(1000) %}"
                    "{% set ns.x = {'k': ns.x} %}{% endfor %}"),
             Code::kInvalidArgument, "nested more than 200 levels");
  // A namespace that holds itself prints as Python's recursive repr, and nothing leaks (ASan).
  std::string ok;
  REQUIRE(Render("{% set ns = namespace() %}{% set ns.me = ns %}{{ ns }}|{{ ns.me.me is defined }}",
                 &ok)
              .ok());
  CHECK(ok == "<Namespace {'me': <Namespace {...}>}>|True");
  CheckError(Render("{% set ns = namespace() %}{% set ns.l = [ns] %}{{ ns.l|tojson }}"),
             Code::kInvalidArgument, "Object of type Namespace is not JSON serializable");
  // A chain of namespaces has no depth of its own: printing it is bounded.
  CheckError(Render("{% set ns = namespace(x=none) %}{% for i in range(1000) %}"
                    "{% set ns.x = namespace(next=ns.x) %}{% endfor %}{{ ns }}"),
             Code::kInvalidArgument, "nested more than 200 levels");

  // The time and memory bounds, lowered so that the tests run fast.
  ember::jinja::RenderLimits small;
  small.max_steps = 200'000;
  small.max_output_bytes = 1 << 20;
  small.max_namespaces = 100;
  CheckError(RenderLimited("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}"
                           "{% endfor %}",
                           small),
             Code::kInvalidArgument,
             "t.jinja:1: the template took more than 200000 evaluation steps");
  CheckError(RenderLimited("{% for i in range(100000) %}{{ 'x' * 1000 }}{% endfor %}", small),
             Code::kInvalidArgument, "the rendering exceeds the limit of 1048576 bytes");
  CheckError(RenderLimited("{% set ns = namespace(s='x') %}{% for i in range(100) %}"
                           "{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
                           small),
             Code::kInvalidArgument, "exceeds the limit of 1048576");
  CheckError(
      RenderLimited("{% for i in range(1000) %}{% set x = namespace() %}{% endfor %}", small),
      Code::kInvalidArgument, "more than 100 namespaces");
  CheckError(RenderLimited("{% macro f(n) %}{{ f(n) ~ f(n) }}{% endmacro %}{{ f(1) }}", small),
             Code::kInvalidArgument, "nesting deeper than");
  // Work inside builtins counts too: every item a filter iterates is a step.
  CheckError(RenderLimited("{% set big = range(100000)|list %}{% for i in range(100000) %}"
                           "{% set x = big|join %}{% endfor %}",
                           small),
             Code::kInvalidArgument, "evaluation steps");
  ember::jinja::RenderLimits clock;
  clock.max_steps = UINT64_MAX;
  clock.max_seconds = 0.05;
  CheckError(RenderLimited("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}"
                           "{% endfor %}",
                           clock),
             Code::kInvalidArgument, "the template took more than 0.05 seconds");
  small.max_depth = 50;
  CheckError(RenderLimited("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(1) }}", small),
             Code::kInvalidArgument, "nesting deeper than 50 levels");
}
