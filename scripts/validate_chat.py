#!/usr/bin/env python3
"""A 3-turn chat on each real model: ember's prompt tokens against llama.cpp's tokens of jinja2's
rendering, and what each turn computes (issue 18's proof; not part of CI).

Usage (from the repository root, after scripts/build-peer.sh and a build of ember):
  /usr/bin/python3 scripts/validate_chat.py [--ember build/bin/ember] [--models DIR] [-t 2]

For each model in the cache (SmolLM2-135M-Instruct, Gemma 3 270M, Qwen2.5-Coder-0.5B-Instruct):
  1. `ember chat --json --verbose-prompt --temp 0` answers three messages; each reply line
     carries the turn's prompt tokens, how many came from the cache and the time to the first
     token;
  2. for turn k, the conversation so far (the three user messages, ember's replies as they were
     kept) is rendered by Python jinja2 with Hugging Face's settings (scripts/render_templates.py)
     from the template ember used (`ember template --print-template`: the model's, or ember's
     built-in one when the file has none), a BOS the template wrote is taken off when the
     tokenizer adds one (llama.cpp's rule), and llama.cpp's llama-tokenize turns it into tokens
     (special tokens parsed, BOS as the model says);
  3. the two token lists must be equal.
Prints a markdown table (docs/CHAT.md keeps the last one) and exits 1 on any difference.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from render_templates import make_env  # noqa: E402

MODELS = [
    ("SmolLM2-135M-Instruct Q4_1", "SmolLM2-135M-Instruct.Q4_1.gguf"),
    ("Gemma 3 270M Q4_K_M", "gemma-3-270m-q4_k_m.gguf"),
    ("Qwen2.5-Coder-0.5B-Instruct Q4_K_M", "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"),
]
MESSAGES = [
    "What is the capital of France?",
    "Name two famous museums there.",
    "Thanks! Which one is older?",
]
PEER = os.path.expanduser(os.environ.get("EMBER_PEER_DIR", "~/.cache/ember/peer"))


def run(cmd, stdin=None):
    r = subprocess.run(cmd, input=stdin, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{r.stderr}")
    return r.stdout


def model_meta(ember, model):
    """The template ember renders with, its name, and the BOS/EOS texts and flags."""
    info = json.loads(run([ember, "template", "-m", model, "--print-template", "--json"]))
    return info


def peer_tokens(model, text):
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False, encoding="utf-8") as f:
        f.write(text)
        path = f.name
    try:
        out = run([f"{PEER}/build/bin/llama-tokenize", "-m", model, "-f", path, "--ids",
                   "--no-escape", "--log-disable"])
    finally:
        os.unlink(path)
    line = [l for l in out.splitlines() if l.startswith("[")][-1]
    return json.loads(line)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ember", default="build/bin/ember")
    ap.add_argument("--models", default=os.environ.get(
        "EMBER_MODELS", os.path.expanduser("~/.cache/ember/models")))
    ap.add_argument("-t", "--threads", default="2")
    ap.add_argument("-n", "--n-predict", default="48")
    args = ap.parse_args()

    env = make_env()
    rows, failed = [], False
    for label, file in MODELS:
        model = os.path.join(args.models, file)
        if not os.path.exists(model):
            print(f"skipped {label}: {model} is not there", file=sys.stderr)
            continue
        meta = model_meta(args.ember, model)
        out = run([args.ember, "chat", "-m", model, "--json", "--verbose-prompt", "--temp", "0",
                   "-n", args.n_predict, "-t", args.threads], "\n".join(MESSAGES) + "\n")
        turns = [json.loads(l) for l in out.splitlines() if l.strip()]
        tmpl = env.from_string(meta["template"])
        messages = []
        for k, turn in enumerate(turns):
            messages.append({"role": "user", "content": MESSAGES[k]})
            text = tmpl.render(messages=messages, add_generation_prompt=True,
                               bos_token=meta["bos_token"], eos_token=meta["eos_token"])
            if meta["add_bos"] and meta["bos_token"] and text.startswith(meta["bos_token"]):
                text = text[len(meta["bos_token"]):]
            expect = peer_tokens(model, text)
            same = expect == turn["prompt_tokens"]
            failed |= not same
            first_diff = next((i for i, (a, b) in enumerate(zip(expect, turn["prompt_tokens"]))
                               if a != b), min(len(expect), len(turn["prompt_tokens"])))
            tname = meta["name"].rsplit(":", 1)[-1]
            rows.append((label if k == 0 else "", tname if k == 0 else "", k + 1,
                         len(turn["prompt_tokens"]), len(expect),
                         "identical" if same else f"differ at {first_diff}",
                         turn["n_reused"], turn["n_prompt"] - turn["n_reused"],
                         turn["first_token_s"], turn["n_gen"], turn["content"]))
            messages.append({"role": "assistant", "content": turn["content"]})

    print("| model | template | turn | prompt tokens ember / llama.cpp | tokens | from the cache "
          "| computed | first token (s) | reply tokens | reply |")
    print("|---|---|---:|---|---|---:|---:|---:|---:|---|")
    for r in rows:
        reply = r[10].replace("\n", " ").replace("|", "\\|")
        if len(reply) > 60:
            reply = reply[:57] + "..."
        print(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]} / {r[4]} | {r[5]} | {r[6]} | {r[7]} "
              f"| {r[8]:.3f} | {r[9]} | {reply} |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
