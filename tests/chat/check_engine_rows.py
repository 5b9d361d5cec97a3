#!/usr/bin/env python3
"""Renders the rows of tests/chat/jinja_engine_test.cpp with Python jinja2 and checks that the
expected strings there are what jinja2 gives.

Usage (from the repository root, with Debian's python3-jinja2):
  /usr/bin/python3 tests/chat/check_engine_rows.py

Each row of the test is {"template", "expected"} in C++ string literals (adjacent literals
concatenate). The variables are the test's Vars() and Messages(); the environment is
scripts/render_templates.py's (Hugging Face's settings).
"""

import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import render_templates  # noqa: E402

LITERAL = r'"(?:[^"\\]|\\.)*"'
ROW = re.compile(r"\{\s*((?:" + LITERAL + r"\s*)+),\s*((?:" + LITERAL + r"\s*)+)\}", re.S)


def cxx_string(literals):
    """The value of adjacent C++ string literals (the escapes the test uses)."""
    out = ""
    for lit in re.findall(LITERAL, literals, re.S):
        body = lit[1:-1]
        body = "".join(c if ord(c) < 128 else "\\u%04x" % ord(c) for c in body)
        out += body.encode("ascii").decode("unicode_escape")
    return out


def main():
    path = os.path.join(ROOT, "tests", "chat", "jinja_engine_test.cpp")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    env = render_templates.make_env()
    variables = {
        "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": " yo "}],
        "add_generation_prompt": True, "bos_token": "<s>", "eos_token": "</s>",
        "d": {"a": 1, "items": [1]}, "l": [1, 2, 3], "n": None, "s": "abc", "u": "é☕",
    }
    rows = ROW.findall(text)
    bad = 0
    for tmpl_lits, want_lits in rows:
        tmpl, want = cxx_string(tmpl_lits), cxx_string(want_lits)
        try:
            got = env.from_string(tmpl).render(**variables)
        except Exception as e:  # noqa: BLE001 - report any jinja2 failure
            got = f"<{type(e).__name__}: {e}>"
        if got != want:
            bad += 1
            print(f"MISMATCH {tmpl!r}\n  jinja2: {got!r}\n  test:   {want!r}")
    print(f"check_engine_rows: {len(rows)} rows, {bad} differ from jinja2 {render_templates.jinja2.__version__}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
