// The Jinja engine against Python jinja2: each row is a template and what
// jinja2 3.1 renders for it with Hugging Face's settings (trim_blocks,
// lstrip_blocks, loop controls, ImmutableSandboxedEnvironment, tojson without
// ASCII escaping) and the variables of Vars() below. Every expected string was
// produced by jinja2 (tests/chat/check_engine_rows.py renders the rows again).
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "runtime/chat/chat_template.h"

using ember::ChatTemplate;
using ember::ChatTemplateOptions;
using json = nlohmann::ordered_json;

namespace {

struct Row {
  const char* tmpl;
  const char* want;
};

// d, l, n, s, u as the rows use them; messages is a two-turn chat.
ChatTemplateOptions Vars() {
  ChatTemplateOptions o;
  o.bos_token = "<s>";
  o.eos_token = "</s>";
  o.now_unix = 1752494400;  // 2025-07-14 12:00:00 UTC
  o.extra = json::parse(R"({"d": {"a": 1, "items": [1]}, "l": [1, 2, 3], "n": null,
                            "s": "abc", "u": "é☕"})");
  return o;
}

json Messages() {
  return json::parse(R"([{"role": "user", "content": "hi"},
                         {"role": "assistant", "content": " yo "}])");
}

ember::Status Render(const std::string& src, std::string* out) {
  ChatTemplate t;
  ember::Status s = ChatTemplate::Parse(src, "t", &t);
  if (!s.ok()) return s;
  return t.Apply(Messages(), Vars(), out);
}

void CheckRows(const std::vector<Row>& rows) {
  for (const Row& r : rows) {
    std::string out;
    const ember::Status s = Render(r.tmpl, &out);
    INFO("template: " << r.tmpl);
    INFO("error: " << s.message());
    CHECK(s.ok());
    CHECK(out == r.want);
  }
}

}  // namespace

TEST_CASE("jinja: whitespace control, trim_blocks and lstrip_blocks", "[chat][jinja]") {
  CheckRows({
      {"a\n  {% if true %}\n    x\n  {% endif %}\nb", "a\n    x\nb"},
      {"  {% if true %}x{% endif %}  ", "x  "},
      {"{{ 1 }}  {% if true %}x{% endif %}", "1  x"},
      {"{% if true %}  {% if true %}x{% endif %}{% endif %}", "  x"},
      {"{% if true -%}  \n  x  {%- endif %}|{# c #}\n  {# c2 #}  y\nz {{- 1 -}} w", "x|  y\nz1w"},
      {"{% if true +%}\nx{%+ endif %}", "\nx"},
      {"\t {% raw %}{{ a }}{% endraw %}\nq", "{{ a }}q"},
      {"{%- raw -%}  {{ a }}  {%- endraw -%}  q", "{{ a }}q"},
      {"a{{ 'x' }}\nb", "ax\nb"},
      {"x\n", "x"},
      {"x\n\n", "x\n"},
      {"a\r\nb\rc", "a\nb\nc"},
      {"{% for i in l %}\n{{ i }}\n{% endfor %}", "1\n2\n3\n"},
      {"{%- for i in l -%}\n  {{ i }},\n{%- endfor %}", "1,2,3,"},
      {"{{ '{{' }}{{ {'a': {'b': 1}} }}", "{{{'a': {'b': 1}}"},
  });
}

TEST_CASE("jinja: expressions with Python's semantics", "[chat][jinja]") {
  CheckRows({
      {"{{ 1.0 }} {{ 1e20 }} {{ 1e16 }} {{ 0.1+0.2 }} {{ 7//2 }} {{ -7//2 }} {{ 7%3 }} "
       "{{ -7 % 3 }} {{ 7/2 }} {{ 4/2 }} {{ 1e-5 }} {{ 123456789.123 }} {{ 1/3 }}",
       "1.0 1e+20 1e+16 0.30000000000000004 3 -4 1 2 3.5 2.0 1e-05 123456789.123 "
       "0.3333333333333333"},
      {"{{ 3.0 * 2 }}|{{ 7.5 // 2 }}|{{ -7.5 % 2 }}|{{ 2 ** -1 }}|{{ 2 ** 0.5 }}|{{ 10 / 4 }}|"
       "{{ true + 1 }}|{{ 1.5e-7 }}|{{ 100000000000000000.0 }}|{{ 1234567.0 }}|{{ 0.0001 }}|"
       "{{ -0.0 }}",
       "6.0|3.0|0.5|0.5|1.4142135623730951|2.5|2|1.5e-07|1e+17|1234567.0|0.0001|-0.0"},
      {"{{ [1, 'a', none, true, 1.5, {'k': 'v'}] }} {{ (1,2) }} {{ (1,) }} {{ 'it''s' }} "
       "{{ [\"it's\", 'say \"hi\"', \"both ' \\\"\"] }}",
       "[1, 'a', None, True, 1.5, {'k': 'v'}] (1, 2) (1,) its [\"it's\", 'say \"hi\"', "
       "'both \\' \"']"},
      {"{{ 'abc'[::-1] }}{{ l[-1] }}{{ l[1:] }}{{ 'x' * 3 }}{{ 3 * 'x' }}{{ l * 2 }}{{ l + [4] }}",
       "cba3[2, 3]xxxxxx[1, 2, 3, 1, 2, 3][1, 2, 3, 4]"},
      {"{{ 'a' * -1 }}|{{ [1,2][5:1] }}|{{ 'abcdef'[1:-1:2] }}|{{ 'abc'[-10:] }}|{{ l[::-2] }}",
       "|[]|bd|abc|[3, 1]"},
      {"{{ 'a' in 'cat' }}{{ 1 in l }}{{ 'a' in d }}{{ 'q' not in d }}", "TrueTrueTrueTrue"},
      {"{{ 1 if false }}|{{ 'a' if true else 'b' }}|{{ not 1 }}|{{ -(3) }}|{{ +3 }}|"
       "{{ 2 ** 3 ** 2 }}|{{ -2 ** 2 }}|{{ 10 - 2 - 3 }}|{{ 2 * 3 % 4 }}|{{ 1 < 2 < 3 }}|"
       "{{ 3 > 2 > 2 }}",
       "|a|False|-3|3|64|4|5|2|True|False"},
      {"{{ 'abc' ~ 1 ~ none ~ undefinedvar ~ 1.5 ~ [1] }}", "abc1None1.5[1]"},
      {"{{ 1 == 1.0 }}{{ true == 1 }}{{ 'a' < 'b' }}{{ [1,2] < [1,3] }}{{ none == none }}",
       "TrueTrueTrueTrueTrue"},
      {"{{ u|length }}|{{ u[1] }}|{{ (u ~ 'b')[1:3] }}|{{ u|reverse }}", "2|☕|☕b|☕é"},
      {"{{ [1,2,3][1] }}{{ {'a': 1}['a'] }}{{ (1, 2)[0] }}{{ 'abc'.0 }}{{ l.0 }}", "211a1"},
      {"{{ 0 or 'x' }}|{{ 1 and 'y' }}|{{ '' and 1 }}|{{ none or [] }}", "x|y||[]"},
      {"{{ 0x1F }} {{ 1_000 }} {{ 0o17 }} {{ 0b101 }} {{ 1_0.5 }}", "31 1000 15 5 10.5"},
      {"{{ \"\\u00e9\\x41\\101\\n\\q\\\\\" }}|{{ 'a\\\nb' }}", "éAA\n\\q\\|ab"},
  });
}

TEST_CASE("jinja: undefined values", "[chat][jinja]") {
  CheckRows({
      {"[{{ nothing }}]{{ d.zz }}{{ l[10] }}{{ d['zz'] }}{{ s[10] }}{{ l.x }}", "[]"},
      {"{{ (d.zz is defined) }}{{ n.foo is defined }}{{ nothing is undefined }}", "FalseFalseTrue"},
      {"{% for x in nothing %}a{% else %}empty{% endfor %}", "empty"},
      {"{{ nothing|default('x') }}|{{ nothing|d('y') }}|{{ none|default('x') }}|"
       "{{ ''|default('x') }}|{{ ''|default('x', true) }}|{{ false|default('z') }}",
       "x|y|None||x|False"},
      {"{{ nothing|length }}|{{ nothing|list }}|{{ nothing|join }}|{{ nothing|trim }}|"
       "{{ nothing is iterable }}{{ nothing is sequence }}{{ nothing is mapping }}",
       "0|[]|||TrueTrueFalse"},
      {"{{ loop }}", ""},
  });
}

TEST_CASE("jinja: for loops, loop variables, break and continue", "[chat][jinja]") {
  CheckRows({
      {"{% for a, b in [[1,2],[3,4]] %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}"
       "{{ loop.revindex0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }}{{ loop.previtem }}"
       "{{ loop.nextitem }}{{ loop.cycle('x','y') }}{{ loop.depth }}{{a}}{{b}};{% endfor %}",
       "1021TrueFalse2[3, 4]x112;2110FalseTrue2[1, 2]y134;"},
      {"{% for x in l if x > 1 %}{{ loop.index }}{{ x }}{{ loop.length }}{% endfor %}", "122232"},
      {"{% for x in l %}{% if x == 2 %}{% continue %}{% endif %}{{ x }}"
       "{% if x == 3 %}{% break %}{% endif %}{% endfor %}",
       "13"},
      {"{% for k, v in d.items() %}{{ k }}={{ v }},{% endfor %}{% for k in d %}{{k}}{% endfor %}"
       "{% for c in 'ab' %}{{c}}{% endfor %}",
       "a=1,items=[1],aitemsab"},
      {"{% for x in l %}{{ x }}{% else %}none{% endfor %}|{% for x in [] %}{{ x }}"
       "{% else %}none{% endfor %}",
       "123|none"},
      {"{% for x in l %}{% for y in [x] %}{{ loop.depth }}{{ loop.depth0 }}{% endfor %}"
       "{% endfor %}",
       "101010"},
      {"{% for x in l %}{{ loop.changed(x > 1) }}{% endfor %}", "TrueTrueFalse"},
      {"{% for m in messages %}{{ m.role }}:{{ m['content']|trim }};{% endfor %}",
       "user:hi;assistant:yo;"},
  });
}

TEST_CASE("jinja: set, scopes and namespaces", "[chat][jinja]") {
  CheckRows({
      {"{% for i in [1,2,3] %}{% if i == 1 %}{% set x = 5 %}{% endif %}[{{ x }}]{% endfor %}",
       "[5][][]"},
      {"{% set x = 9 %}{% for i in [1,2,3] %}{% if i == 1 %}{% set x = 5 %}{% endif %}[{{ x }}]"
       "{% endfor %}{{x}}",
       "[5][9][9]9"},
      {"{% set x = 9 %}{% for i in [1,2] %}[{{ x }}]{% set x = 5 %}[{{ x }}]{% endfor %}{{x}}",
       "[9][5][9][5]9"},
      {"{% set x = 9 %}{% if true %}{% set x = 5 %}{% endif %}{{x}}", "5"},
      {"{% set x = 1 %}{% set x = x + 1 %}{{ x }}{% for i in l %}{% set y = i %}{% endfor %}{{ y "
       "}}",
       "2"},
      {"{% set ns = namespace(a=1, b='x') %}{% set ns.a = ns.a + 1 %}{{ ns.a }}{{ ns.b }}"
       "{{ ns.c }}{{ ns }}|{{ namespace() }}|{{ dict(a=1, b=2) }}|{{ dict() }}",
       "2x<Namespace {'a': 2, 'b': 'x'}>|<Namespace {}>|{'a': 1, 'b': 2}|{}"},
      {"{% set ns = namespace(n=0) %}{% for m in messages %}{% set ns.n = ns.n + 1 %}"
       "{% endfor %}{{ ns.n }}",
       "2"},
      {"{% set x %}  block {{ 1 }} {% endset %}[{{ x }}]{% set y | upper %}abc{% endset %}{{ y }}",
       "[  block 1 ]ABC"},
      {"{% set a, b = 1, 2 %}{{ a }}{{ b }}{% set t = 1, 'x' %}{{ t }}", "12(1, 'x')"},
      {"{% with a = 1 %}{{ a }}{% endwith %}[{{ a }}]", "1[]"},
      {"{% set bos_token = 'B' %}{{ bos_token }}", "B"},
  });
}

TEST_CASE("jinja: macros, call blocks and filter blocks", "[chat][jinja]") {
  CheckRows({
      {"{% macro m() %}{{ x }}{% endmacro %}{% set x = 1 %}{{ m() }}{% set x = 2 %}{{ m() }}",
       "12"},
      {"{% macro m(a, b=2, c='x') %}{{ a }}{{ b }}{{ c }}{{ varargs }}{{ kwargs }}{% endmacro %}"
       "{{ m(1) }}|{{ m(1, c=5) }}|{{ m() }}|{{ m(1,2,3,4) }}",
       "12x(){}|125(){}|2x(){}|123(4,){}"},
      {"{% macro m(a) %}{{ a }}{{ varargs }}{{ kwargs }}{% endmacro %}{{ m(1, 2, z=3) }}",
       "1(2,){'z': 3}"},
      {"{% macro m(a) %}[{{ caller(a) }}]{% endmacro %}{% call(x) m(5) %}got {{ x }}"
       "{% endcall %}",
       "[got 5]"},
      {"{% filter upper %}abc {{ 'd' }}{% endfilter %}", "ABC D"},
      {"{{ m }}{% macro m() %}x{% endmacro %}|{{ m }}", "|<Macro 'm'>"},
      {"{% macro f(n) %}{% if n > 0 %}{{ n }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(3) }}",
       "321"},
      {"{% macro m(a, b=a * 2) %}{{ b }}{% endmacro %}{{ m(3) }}", "6"},
  });
}

TEST_CASE("jinja: filters", "[chat][jinja]") {
  CheckRows({
      {"{{ l|join(', ') }}|{{ l|first }}|{{ l|last }}|{{ l|length }}|{{ d|length }}|"
       "{{ s|length }}|{{ l|sum }}|{{ l|min }}|{{ l|max }}|{{ l|reverse|list }}|{{ s|reverse }}|"
       "{{ [3,1,2]|sort }}|{{ ['b','A','a']|sort }}|{{ [1,2,1]|unique|list }}",
       "1, 2, 3|1|3|3|2|3|6|1|3|[3, 2, 1]|cba|[1, 2, 3]|['A', 'a', 'b']|[1, 2]"},
      {"{{ d|items|list }}|{{ {'b':1,'a':2}|dictsort }}|{{ d|list }}|{{ 'ab'|list }}|"
       "{{ l|map('string')|list }}|{{ [{'a':1},{'a':2}]|map(attribute='a')|list }}|"
       "{{ [{'a':1},{'b':2}]|map(attribute='a', default=0)|list }}",
       "[('a', 1), ('items', [1])]|[('a', 2), ('b', 1)]|['a', 'items']|['a', 'b']|"
       "['1', '2', '3']|[1, 2]|[1, 0]"},
      {"{{ [1,0,2]|select|list }}|{{ l|select('odd')|list }}|{{ l|reject('odd')|list }}|"
       "{{ [{'a':1},{'a':0}]|selectattr('a')|list }}|{{ [{'a':1},{'a':0}]|rejectattr('a')|list }}|"
       "{{ [{'a':'x'},{'a':'y'}]|selectattr('a','equalto','y')|list }}|"
       "{{ [{'a':'x'},{}]|selectattr('a','defined')|list }}",
       "[1, 2]|[1, 3]|[2]|[{'a': 1}]|[{'a': 0}]|[{'a': 'y'}]|[{'a': 'x'}]"},
      {"{{ 'Hello World'|upper }}|{{ 'Hello'|lower }}|{{ 'hello world'|capitalize }}|"
       "{{ 'hello wORLD'|title }}|{{ 'a-b'|replace('-', '+') }}|{{ 'aaa'|replace('a','b',2) }}|"
       "{{ '  x '|trim }}|{{ 'xxyxx'|trim('x') }}|{{ 1|string }}|{{ none|string }}|"
       "{{ [1]|string }}|{{ 'a b c'|wordcount }}",
       "HELLO WORLD|hello|Hello world|Hello World|a+b|bba|x|y|1|None|[1]|3"},
      {"{{ \"a\\nb\\n\\nc\"|indent }}|{{ \"a\\nb\"|indent(2, true) }}|"
       "{{ \"a\\nb\"|indent(first=true) }}|{{ \"a\\n\\nb\"|indent(2, blank=true) }}|"
       "{{ 'x'|indent('>>') }}",
       "a\n    b\n\n    c|  a\n  b|    a\n    b|a\n  \n  b|x"},
      {"{{ 'abc'|tojson }}|{{ [1,'a',none,true]|tojson }}|{{ "
       "{'a':{'b':[]},'c':{}}|tojson(indent=2) }}|"
       "{{ \"é\\u2028\\x01\"|tojson }}|{{ 'a'|tojson(indent=4) }}|{{ [[]]|tojson(indent=1) }}",
       "\"abc\"|[1, \"a\", null, true]|{\n  \"a\": {\n    \"b\": []\n  },\n  \"c\": {}\n}|"
       "\"é\u2028\\u0001\"|\"a\"|[\n []\n]"},
      {"{{ {'a':1}|tojson(separators=(',', ':')) }}|{{ {'b':1,'a':2}|tojson(sort_keys=true) }}|"
       "{{ 'é'|tojson(ensure_ascii=true) }}|{{ 1.0|tojson }}|{{ 1e20|tojson }}",
       "{\"a\":1}|{\"a\": 2, \"b\": 1}|\"\\u00e9\"|1.0|1e+20"},
      {"{{ -1|abs }} {{ -1.5|abs }} {{ 2.5|round }} {{ 3.5|round }} {{ 2.567|round(2) }} "
       "{{ 2.5|int }} {{ '12'|int }} {{ 'x'|int }} {{ '3.7'|float }} {{ 3|float }}",
       "1 1.5 2.0 4.0 2.57 2 12 0 3.7 3.0"},
      {"{{ 5|round }}|{{ 5.5|round(0, 'floor') }}|{{ 2.675|round(2) }}|{{ -0.5|round }}|"
       "{{ 1234.5678|round(-2) }}|{{ 7|round(1,'ceil') }}",
       "5|5.0|2.67|-0.0|1200.0|7.0"},
      {"{{ \"they're bill's\"|title }}|{{ \"they're bill's\".title() }}|"
       "{{ \"hello-world (x\"|title }}|{{ 'ABC dEF'|capitalize }}",
       "They're Bill's|They'Re Bill'S|Hello-World (X|Abc def"},
      {"{{ '%s and %d'|format('a', 3) }}|{{ '%(x)s'|format(x=1) }}", "a and 3|1"},
      {"{{ {'b': 1, 'A': 2, 'a': 0}|dictsort }}|{{ {'b': 1, 'A': 2, 'a': 0}|dictsort(by='value') "
       "}}|"
       "{{ {'b':1}|dictsort(reverse=true) }}",
       "[('A', 2), ('a', 0), ('b', 1)]|[('a', 0), ('b', 1), ('A', 2)]|[('b', 1)]"},
      {"{{ ['a','B','b','A']|unique|list }}|{{ ['b','A']|max }}|{{ [3,1]|min }}|{{ []|max }}|"
       "{{ [1.5, 2]|sum }}|{{ [{'a':1},{'a':2}]|sum(attribute='a') }}",
       "['a', 'B']|b|1||3.5|3"},
      {"{{ [1,2,3,4,5]|batch(2)|list }}|{{ [1,2,3]|batch(2, 'x')|list }}",
       "[[1, 2], [3, 4], [5]]|[[1, 2], [3, 'x']]"},
      {"{{ '  12 '|int }}|{{ '0x1A'|int(0, 16) }}|{{ '1e3'|int }}|{{ '1.9'|int }}|{{ true|int }}|"
       "{{ none|int }}|{{ 'x'|float }}|{{ 3|float }}|{{ '1_000'|int }}",
       "12|26|1000|1|1|0|0.0|3.0|1000"},
      {"{{ [1,2]|first }}|{{ []|first }}|{{ 'ab'|last }}|{{ {'a':1,'b':2}|last }}|"
       "{{ {'a':1}|first }}",
       "1||b|b|a"},
      {"{{ [none, 1]|select('none')|list }}{{ [1,2,3]|select('divisibleby', 2)|list }}"
       "{{ [1,2]|select('in', [2])|list }}{{ [1,2]|reject('==', 2)|list }}"
       "{{ [1, 2]|select('gt', 1)|list }}",
       "[None][2][2][1][2]"},
      {"{{ [{'n':{'m':1}},{'n':{'m':2}}]|map(attribute='n.m')|list }}"
       "{{ [[1,2],[3,4]]|map(attribute='0')|list }}{{ "
       "[{'a':'X'}]|map(attribute='a')|map('lower')|list }}",
       "[1, 2][1, 3]['x']"},
      {"{{ [{'a': 'B'}, {'a': 'a'}]|sort(attribute='a')|map(attribute='a')|join }}"
       "{{ [2,1,3]|sort(reverse=true) }}",
       "aB[3, 2, 1]"},
      {"{{ 'x'|e }}{{ '<a>'|escape }}{{ ('<a>'|escape)|length }}{{ 1|e }}", "x&lt;a&gt;91"},
      {"{{ ('x' | safe) + '<y>' }}|{{ '<y>' + ('x' | safe) }}|{{ ('x'|safe) ~ '<y>' }}|"
       "{{ ('x'|safe + '&') + '<' }}|{{ ('x'|safe + \"'\")|length }}|"
       "{{ ('x'|safe + \"'\")|upper + '<' }}|{{ ('<'|safe)|trim + '<' }}",
       "x&lt;y&gt;|&lt;y&gt;x|x<y>|x&amp;&lt;|6|X&#39;&lt;|<&lt;"},
      {"{% set g = l|map('string') %}{{ g|list }}{{ g|list }}", "['1', '2', '3'][]"},
      {"{{ none|selectattr('type', 'equalto', 'x')|list }}{{ none|map('upper')|list }}", "[][]"},
      {"{{ 'a b'|wordcount }}|{{ '  '|center(6) }}|{{ 'ab'|center(7) }}!", "2|      |   ab  !"},
  });
}

TEST_CASE("jinja: tests", "[chat][jinja]") {
  CheckRows({
      {"{{ 1 is odd }}{{ 2 is even }}{{ 6 is divisibleby 3 }}{{ 'a' is lower }}{{ 'A' is upper }}"
       "{{ 1 is number }}{{ true is number }}{{ 1.0 is float }}{{ 1 is integer }}"
       "{{ true is integer }}{{ true is boolean }}{{ none is none }}{{ 'a' is string }}"
       "{{ d is mapping }}{{ l is sequence }}{{ s is sequence }}{{ d is sequence }}"
       "{{ d is iterable }}{{ 1 is iterable }}{{ range is callable }}{{ 'a' is in 'abc' }}"
       "{{ 1 is eq 1 }}{{ 1 is ne 2 }}{{ 1 is sameas 1 }}{{ true is true }}{{ 1 is true }}"
       "{{ 3 is gt 2 }}",
       "TrueTrueTrueTrueTrueTrueTrueTrueTrueFalseTrueTrueTrueTrueTrueTrueTrueTrueFalseTrueTrue"
       "TrueTrueTrueTrueFalseTrue"},
      {"{{ x is not defined }}{{ not x is defined }}{{ s is not string }}", "TrueTrueFalse"},
      {"{{ 'x' if s is string and s is not none else 'y' }}", "x"},
      {"{{ 'upper' is filter }}{{ 'odd' is test }}{{ 'nope' is filter }}", "TrueTrueFalse"},
  });
}

TEST_CASE("jinja: methods of str, dict and list", "[chat][jinja]") {
  CheckRows({
      {"{{ s.split('b') }}{{ ' a  b '.split() }}{{ 'a,b,,c'.split(',', 1) }}{{ '  x  '.strip() }}"
       "{{ 'xxaxx'.strip('x') }}",
       "['a', 'c']['a', 'b']['a', 'b,,c']xa"},
      {"{{ 'abc'.upper() }}{{ 'a.b.c'.split('.')|length }}{{ 'abc'.startswith('ab') }}"
       "{{ 'abc'.startswith(('x','a')) }}{{ 'abc'.endswith('c') }}{{ 'abcb'.find('b') }}"
       "{{ 'abcb'.rfind('b') }}{{ 'abcb'.count('b') }}{{ '-'.join(['a','b']) }}"
       "{{ 'ab'.replace('a','x') }}{{ 'Hello'.title() }}{{ 'a b'.capitalize() }}"
       "{{ '{} and {}'.format(1, 'x') }}{{ '{0}{name}'.format(1, name='n') }}"
       "{{ 'a\\nb'.splitlines() }}{{ 'abc'.index('c') }}{{ '  a'.isspace() }}{{ '12'.isdigit() }}"
       "{{ 'ab'.isalpha() }}{{ 'x'.center(5) }}|{{ 'ab'.zfill(4) }}{{ 'Ab'.swapcase() }}"
       "{{ 'aXb'.partition('X') }}{{ 'abc'.removeprefix('a') }}{{ 'abc'.removesuffix('c') }}"
       "{{ 'a,b'.rsplit(',', 1) }}{{ 'x'.ljust(3) }}|{{ 'x'.rjust(3) }}|{{ 'AB'.casefold() }}",
       "ABC3TrueTrueTrue132a-bxbHelloA b1 and x1n['a', 'b']2FalseTrueTrue  x  |00abaB"
       "('a', 'X', 'b')bcab['a', 'b']x  |  x|ab"},
      {"{{ d.keys() }}{{ d.values() }}{{ d.items() }}{{ d.get('zz') }}{{ d.get('zz', 5) }}"
       "{{ d.keys()|list }}{{ d.copy() }}",
       "dict_keys(['a', 'items'])dict_values([1, [1]])dict_items([('a', 1), ('items', [1])])"
       "None5['a', 'items']{'a': 1, 'items': [1]}"},
      {"{{ l.index(2) }}{{ l.count(2) }}{{ l.copy() }}", "11[1, 2, 3]"},
      {"{{ d['items'] }}|{{ d.a }}|{{ d.get('a') }}|{{ d.zz }}|{{ l.append }}|", "[1]|1|1|||"},
      {"{% set ids = ['a', 'b'] %}{{ ids.pop(0) }}{{ ids }}", "a['b']"},
      {"{{ u.upper() }}{{ 'ÉCOLE'|lower }}{{ 'é'|capitalize }}", "É☕écoleÉ"},
  });
}

TEST_CASE("jinja: globals", "[chat][jinja]") {
  CheckRows({
      {"{{ range(3)|list }}{{ range(1,4)|list }}{{ range(0,10,3)|list }}{{ range(5,0,-2)|list }}",
       "[0, 1, 2][1, 2, 3][0, 3, 6, 9][5, 3, 1]"},
      {"{{ strftime_now('%Y-%m-%d %H:%M %b %B %a %A %d %j %p %I %y') }}",
       "2025-07-14 12:00 Jul July Mon Monday 14 195 PM 12 25"},
      {"{{ bos_token }}{{ eos_token }}{{ add_generation_prompt }}{{ tools is defined }}"
       "{{ enable_thinking is defined }}",
       "<s></s>TrueFalseFalse"},
      {"{% if false %}{{ x|nosuch }}{% endif %}{{ (1|nosuch) if false else 2 }}", "2"},
      {"{% generation %}gen {{ 1 }}{% endgeneration %}", "gen 1"},
  });
}
