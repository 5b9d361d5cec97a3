#!/usr/bin/env python3
"""Renders chat templates with Python jinja2 as Hugging Face transformers does, for ember's tests.

Usage (from the repository root, with Debian's python3-jinja2):
  /usr/bin/python3 scripts/render_templates.py [--templates DIR] [--models DIR] [--out DIR]

For every template in DIR (default ../shared/templates) and every conversation in
tests/data/chat/cases/*.json, it writes tests/data/chat/expected/<template>.json: per case, the
rendering ({"output": ...}) or the exception jinja2 raised ({"error": "TypeName: message"}).
tests/chat/chat_templates_test.cpp renders the same with ember and compares byte for byte.

The models' own templates (tokenizer.chat_template in the GGUF files of --models, default
~/.cache/ember/models) go to expected/model-<file>.json, with the template's SHA-256 so that the
test can tell a different file.

The environment is transformers' (src/transformers/utils/chat_template_utils.py):
ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True) with the loop-controls
extension and the {% generation %} tag (its body is rendered), `tojson` as json.dumps without
ASCII escaping, and the globals raise_exception(message) and strftime_now(format). The clock of
strftime_now is fixed (NOW, UTC). Variables: messages, add_generation_prompt, bos_token,
eos_token, tools (only when the case has tools: otherwise undefined) and enable_thinking (only
when the case sets it).
"""

import argparse
import datetime
import glob
import hashlib
import json
import os
import struct
import sys

import jinja2
from jinja2 import nodes
from jinja2.exceptions import TemplateError
from jinja2.ext import Extension, loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

NOW = 1752494400  # 2025-07-14 12:00:00 UTC; the test passes the same to ember
BOS = "<s>"
EOS = "</s>"


class GenerationTag(Extension):
    """{% generation %} ... {% endgeneration %}: transformers marks the assistant's tokens with
    it; for rendering, the body is output as is."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return nodes.Scope(body, lineno=lineno)


def raise_exception(message):
    raise TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                      sort_keys=sort_keys)


def strftime_now(fmt):
    return datetime.datetime.fromtimestamp(NOW, tz=datetime.timezone.utc).strftime(fmt)


def make_env():
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[GenerationTag, loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def render_all(env, source, cases):
    """{case: {"output": text} | {"error": "Type: message"}} for one template."""
    results = {}
    try:
        template = env.from_string(source)
    except Exception as e:  # a template jinja2 cannot parse: every case is that error
        err = {"error": f"{type(e).__name__}: {e}"}
        return {name: err for name in cases}
    for name, case in cases.items():
        variables = {
            "messages": case["messages"],
            "add_generation_prompt": case.get("add_generation_prompt", True),
            "bos_token": BOS,
            "eos_token": EOS,
        }
        if "tools" in case:
            variables["tools"] = case["tools"]
        if "enable_thinking" in case:
            variables["enable_thinking"] = case["enable_thinking"]
        try:
            results[name] = {"output": template.render(**variables)}
        except Exception as e:
            results[name] = {"error": f"{type(e).__name__}: {e}"}
    return results


def gguf_chat_templates(path):
    """{key: template} for the tokenizer.chat_template* strings of a GGUF file's metadata."""
    scalar = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q",
              11: "<q", 12: "<d"}
    out = {}
    with open(path, "rb") as f:
        def read(fmt):
            return struct.unpack(fmt, f.read(struct.calcsize(fmt)))[0]

        def read_str():
            return f.read(read("<Q"))

        def skip_value(t):
            if t == 8:
                read_str()
            elif t == 9:
                item, n = read("<I"), read("<Q")
                for _ in range(n):
                    skip_value(item)
            else:
                f.read(struct.calcsize(scalar[t]))

        if f.read(4) != b"GGUF":
            raise ValueError(f"{path}: not a GGUF file")
        read("<I")  # version
        read("<Q")  # tensor count
        for _ in range(read("<Q")):
            key = read_str().decode("utf-8")
            t = read("<I")
            if t == 8 and key.startswith("tokenizer.chat_template"):
                out[key] = read_str().decode("utf-8")
            else:
                skip_value(t)
    return out


def write_expected(path, source_name, source, results):
    doc = {
        "template": source_name,
        "sha256": hashlib.sha256(source.encode("utf-8")).hexdigest(),
        "jinja2": jinja2.__version__,
        "now": NOW,
        "bos_token": BOS,
        "eos_token": EOS,
        "cases": results,
    }
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False, indent=1, sort_keys=True)
        f.write("\n")


def print_table(expected_dir):
    """The template table of docs/CHAT.md: per template, what jinja2 gives for each case (ember
    gives the same: tests/chat/chat_templates_test.cpp requires it)."""
    print("| template | jinja2 renders | jinja2 raises (ember raises the same) |")
    print("|---|---|---|")
    for p in sorted(glob.glob(os.path.join(expected_dir, "*.json"))):
        with open(p, encoding="utf-8") as f:
            doc = json.load(f)
        cases = doc["cases"]
        ok = [c for c, r in cases.items() if "output" in r]
        errors = {}
        for c, r in cases.items():
            if "error" in r:
                errors.setdefault(r["error"], []).append(c)
        why = "; ".join(f"{', '.join(cs)}: `{e if len(e) < 90 else e[:87] + '...'}`"
                        for e, cs in errors.items())
        name = doc["template"].replace("|", "\\|")
        print(f"| {name} | {len(ok)} of {len(cases)} | {why} |")


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--templates", default=os.path.join(root, "..", "shared", "templates"))
    ap.add_argument("--models", default=os.path.expanduser("~/.cache/ember/models"))
    ap.add_argument("--out", default=os.path.join(root, "tests", "data", "chat", "expected"))
    ap.add_argument("--table", action="store_true",
                    help="print docs/CHAT.md's template table from the expected files and exit")
    args = ap.parse_args()
    if args.table:
        print_table(args.out)
        return

    cases = {}
    for p in sorted(glob.glob(os.path.join(root, "tests", "data", "chat", "cases", "*.json"))):
        with open(p, encoding="utf-8") as f:
            cases[os.path.splitext(os.path.basename(p))[0]] = json.load(f)
    os.makedirs(args.out, exist_ok=True)
    env = make_env()
    counts = {"ok": 0, "error": 0}

    def emit(name, source_name, source):
        results = render_all(env, source, cases)
        for r in results.values():
            counts["ok" if "output" in r else "error"] += 1
        write_expected(os.path.join(args.out, name + ".json"), source_name, source, results)

    templates = sorted(glob.glob(os.path.join(args.templates, "*.jinja")))
    for p in templates:
        with open(p, encoding="utf-8", newline="") as f:
            source = f.read()
        emit(os.path.splitext(os.path.basename(p))[0], os.path.basename(p), source)
    models = sorted(glob.glob(os.path.join(args.models, "*.gguf")))
    for p in models:
        for key, source in sorted(gguf_chat_templates(p).items()):
            suffix = key[len("tokenizer.chat_template"):]  # "" or ".NAME"
            stem = os.path.splitext(os.path.basename(p))[0]
            emit("model-" + stem + suffix, os.path.basename(p) + ":" + key, source)
    print(f"render_templates: jinja2 {jinja2.__version__}, {len(templates)} templates, "
          f"{len(models)} models, {len(cases)} cases: {counts['ok']} renderings, "
          f"{counts['error']} errors", file=sys.stderr)


if __name__ == "__main__":
    main()
