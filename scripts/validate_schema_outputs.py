#!/usr/bin/env python3
"""Generate JSON with `ember run --json-schema` and validate it with the `jsonschema` package.

An independent check of ember's JSON-schema grammars (docs/GRAMMAR.md): for a set of schemas
and seeds, the output of a model (by default the tests' tiny random-weight model, which writes
whatever the grammar lets it) must parse as JSON and validate under its schema, formats
included. Not part of CI (it needs `pip install jsonschema`); the C++ tests check the same with
their own validator (tests/support/schema_check.h).

    scripts/validate_schema_outputs.py [--ember build/bin/ember] [-m MODEL] [--seeds 5]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

try:
    import jsonschema
except ImportError:
    sys.exit("validate_schema_outputs.py needs the jsonschema package: pip install jsonschema")

# Schemas whose documents are bounded (so that even a random model must finish them).
SCHEMAS = {
    "person": {
        "type": "object",
        "properties": {
            "name": {"type": "string", "maxLength": 12},
            "age": {"type": "integer", "minimum": 0, "maximum": 130},
            "email": {"type": "string", "pattern": "^[a-z]{1,8}@[a-z]{1,8}\\.(com|org)$"},
            "member_since": {"type": "string", "format": "date"},
            "tags": {"type": "array", "items": {"enum": ["a", "b", "c"]}, "maxItems": 3},
        },
        "required": ["name", "age", "email"],
        "additionalProperties": False,
    },
    "point_list": {
        "type": "array",
        "minItems": 1,
        "maxItems": 4,
        "items": {
            "type": "object",
            "properties": {
                "x": {"type": "number", "minimum": -10, "maximum": 10},
                "y": {"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 100},
            },
            "required": ["x", "y"],
            "additionalProperties": False,
        },
    },
    "event": {
        "$defs": {"when": {"type": "string", "format": "date-time"}},
        "type": "object",
        "properties": {
            "id": {"type": "string", "format": "uuid"},
            "start": {"$ref": "#/$defs/when"},
            "kind": {"anyOf": [{"const": "meeting"}, {"type": "null"}]},
            "code": {"type": "string", "pattern": "^[A-Z]{2}-\\d{3}$"},
            "ok": {"type": "boolean"},
        },
        "required": ["id", "start", "kind", "code", "ok"],
        "additionalProperties": False,
    },
    "tuple": {
        "type": "array",
        "prefixItems": [{"type": "string", "minLength": 1, "maxLength": 4}, {"type": "boolean"}],
        "items": False,
        "minItems": 2,
    },
}


def main() -> int:
    ap = argparse.ArgumentParser()
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--ember", default=os.path.join(repo, "build", "bin", "ember"))
    ap.add_argument("-m", "--model", default="")
    ap.add_argument("--seeds", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        model = args.model
        if not model:
            model = os.path.join(tmp, "tiny.gguf")
            maker = os.path.join(os.path.dirname(args.ember), "make_tiny_model")
            subprocess.run([maker, model], check=True, capture_output=True)
        failures = 0
        total = 0
        checker = jsonschema.FormatChecker()
        for name, schema in SCHEMAS.items():
            path = os.path.join(tmp, name + ".json")
            with open(path, "w") as f:
                json.dump(schema, f)
            for seed in range(args.seeds):
                cmd = [args.ember, "run", "-m", model, "-p", "Write JSON:", "-n", "1000", "-t", "1",
                       "--temp", "0" if seed == 0 else "1", "--seed", str(seed), "--json",
                       "--json-schema", path]
                r = subprocess.run(cmd, capture_output=True, text=True)
                total += 1
                if r.returncode != 0:
                    print(f"{name} seed {seed}: ember failed: {r.stderr.strip()}")
                    failures += 1
                    continue
                out = json.loads(r.stdout)
                try:
                    doc = json.loads(out["text"])
                    jsonschema.validate(doc, schema, format_checker=checker)
                    print(f"{name} seed {seed}: valid ({out['finish_reason']}): {json.dumps(doc)[:100]}")
                except (json.JSONDecodeError, jsonschema.ValidationError) as e:
                    print(f"{name} seed {seed}: INVALID ({out['finish_reason']}): {out['text'][:200]!r}: {e}")
                    failures += 1
        print(f"{total - failures} of {total} outputs parse and validate")
        return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
