#!/usr/bin/env python3
"""Compare ember against the llama.cpp peer (bench/peer/peer_tool.cpp).

Driven by scripts/validate.sh (which builds the peer first); not part of CI.
Python stdlib only (numpy is used for the logits statistics when present).

Per model of MODELS (and --extra-model): tokenization (ids must be
identical), teacher-forced next-token distributions, perplexity and greedy continuations, in
scripts/validate_models.py (see there). On the reference model
(REFERENCE_MODEL, SmolLM2), in depth:
  * ember --numerics ggml (llama.cpp's CPU arithmetic, reproduced) against the
    default peer, which must be identical: greedy continuations token for
    token, last-position logits bit for bit, and long prompts (llama.cpp's
    tiled attention for batches of 64+ tokens, its split attention once the
    KV view reaches 512 cells) at 1 and 2 threads. This is the gate for
    identity;
  * greedy continuations with ember's own kernels: `ember run -m M -p P -n N --temp 0 --json` vs
    `peer_tool greedy -m M -p P -n N` (the "default" peer) and the same with
    `--fa off --kv f32` (the "precise" peer, to show llama.cpp's own spread).
    Where ember and the default peer part ways at generated index i, both
    sides' logits for prompt + the shared i generated tokens are fetched
    (`peer_tool logits --tokens ... --prefill P`, `ember eval --tokens ...`)
    and the margin between the two candidate tokens is reported in each
    distribution. Gate (--gate tie-aware, the default): identical, or the
    divergence happens at a near-tie: the default peer's own margin between
    its token and ember's is below T, where T is the 99th percentile of how
    much llama.cpp's two configurations disagree about such margins
    (pairs top-1/top-k, k=2..5, at every greedy decision of every prompt,
    from `peer_tool logits --all` in both configurations).
    --gate default|precise|either demand exact identity instead;
  * last-position logits: `ember eval -m M -p P --logits-out F` vs
    `peer_tool logits -m M -p P -o F`: max/mean abs diff, KL(peer||ember),
    argmax agreement (reported, not a pass/fail criterion).

Writes a Markdown report and exits 0 if everything that must match matches,
1 otherwise (including when an ember command fails).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import math
import os
import platform
import sys
import tempfile
import time

from validate_common import (CmdError, analyze_divergence, cpu_model, display_path,
                             first_mismatch, fmt_div, fmt_tok, git_rev, ids_of, log, logit_rows,
                             logits_stats, margin_shifts, md_cell, parse_json_obj, peer_cmd,
                             quantile, read_f32le, run, sha256_of, strip_eog, top_ids)
import validate_models

# ----------------------------------------------------------------- test data

# The models, as data: (key for --models, label, file in the models dir, chat
# format of validate_models.CHAT_FORMATS). A missing file is skipped with a
# line saying so; a model ember refuses is reported as not supported yet.
# Synthetic models (e.g. a Qwen3-0.6B or Llama-3.2-1B shape) come in with
# --extra-model KEY=PATH (scripts/validate.sh: VALIDATE_EXTRA_MODELS).
MODELS = [
    ("smollm2", "SmolLM2-135M-Instruct Q4_1", "SmolLM2-135M-Instruct.Q4_1.gguf", "chatml"),
    ("gemma3", "Gemma 3 270M Q4_K_M", "gemma-3-270m-q4_k_m.gguf", "gemma"),
    ("qwen2.5-coder", "Qwen2.5-Coder-0.5B-Instruct Q4_K_M",
     "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf", "chatml"),
]
# The model of the in-depth sections (--numerics ggml identity, the greedy
# tie gate, last-position logits): they run when it is selected.
REFERENCE_MODEL = "smollm2"

# Per-model sections (validate_models.py) and the reference model's own.
MODEL_SECTIONS = ["tokenize", "teacher", "reference", "ppl", "continuations"]
REFERENCE_SECTIONS = ["greedy", "logits"]

# (name, prompt). Varied on purpose: prose, code, a list, a question, non-English
# text, a ChatML-formatted chat turn (special tokens must be parsed), and a
# whitespace/digits/unicode mix that exercises the pre-tokenizer.
GREEDY_PROMPTS = [
    ("prose", "The old lighthouse keeper climbed the winding stairs every evening, and"),
    ("code", 'def fibonacci(n):\n    """Return the n-th Fibonacci number."""\n'),
    ("list", "Here is a list of five fruits that are high in vitamin C:\n1."),
    ("question", "Question: How do airplanes stay in the air?\nAnswer: "),
    # stops early on an end-of-generation token (exercises the stop path)
    ("short-q", "What is the capital of France?\n"),
    ("french", "Il était une fois, dans un petit village de Provence, une boulangère qui"),
    ("chat", "<|im_start|>user\nWrite a short poem about the sea.<|im_end|>\n<|im_start|>assistant\n"),
    ("mixed", "Prices in 2024:  apples $3.99/kg,\tpears €4.50 — naïve café test 12345678.\n\nNext:"),
    ("recipe", "Simple pancakes\n\nIngredients:\n- 1 cup flour\n- 1 egg\n-"),
    ("history", "The Battle of Hastings, fought on 14 October 1066, was"),
    ("json", '{"name": "Alice", "age": 30, "languages": ["English", '),
    ("german", "Der kleine Hund lief jeden Morgen über die Wiese, weil"),
]

LOGITS_PROMPTS = [
    ("prose", dict(GREEDY_PROMPTS)["prose"]),
    ("code", dict(GREEDY_PROMPTS)["code"]),
    ("chat", dict(GREEDY_PROMPTS)["chat"]),
]

# ggml numerics on long prompts: (label, file, bytes of it). The prompt goes in
# one micro-batch (peer_tool's n_ubatch = max(512, n_prompt); ember's n_batch
# is 512 in ggml mode): 64+ tokens take llama.cpp's tiled attention, and
# decoding with more than 256 cells in the context its split attention.
GGML_LONG = [
    ("GPL-3, 1400 bytes", "/usr/share/common-licenses/GPL-3", 1400),
    ("Apache-2.0, 2000 bytes", "/usr/share/common-licenses/Apache-2.0", 2000),
]
GGML_LONG_THREADS = [1, 2]

# ggml numerics on other weight types: the synthetic models of bench/compare.sh
# (random weights, real shapes and vocabularies), when it has generated them.
BENCH_DIR = os.environ.get("EMBER_BENCH_DIR", os.path.expanduser("~/.cache/ember/bench"))
GGML_OTHER_MODELS = [
    ("TinyLlama shape, Q4_0", "tinyllama-shape-q4_0.gguf"),
    ("TinyLlama shape, Q8_0", "tinyllama-shape-q8_0.gguf"),
    ("SmolLM2 shape, Q4_0 (tied output)", "smollm2-shape-q4_0.gguf"),
]
GGML_OTHER_PROMPTS = [
    ("short", "Once upon a time, in a quiet village,"),
    ("GPL-3, 1400 bytes", None),  # read from /usr/share/common-licenses/GPL-3
]
GGML_OTHER_N = 32

TOKENIZE_FILES = [
    "/usr/share/common-licenses/GPL-3",
    "/usr/share/common-licenses/Apache-2.0",
]

# A generated stress text for the tokenizer (written to a temp file): digits,
# contractions, runs of whitespace, CJK, emoji, combining marks, code.
STRESS_TEXT = (
    "Hello world! It's a test; we'll see: they've, I'm, you're, she'd.\n"
    "Numbers: 0 1 12 123 1234 12345 123456 3.14159 -42 1e-9 0x1F 1,000,000\n"
    "Whitespace:  two  spaces,   three,\ttab,\t\ttwo tabs,\n\n\nthree newlines,   \n"
    "trailing spaces   \n"
    "    indented line\n"
    "Unicode: naïve café résumé Ångström façade — “quotes” ‘single’ … ¿Qué? ¡Sí!\n"
    "Deutsch: Größe Straße Übermäßig. Русский: Привет, мир! Ελληνικά: Γειά σου.\n"
    "中文：你好，世界！日本語：こんにちは世界。한국어: 안녕하세요.\n"
    "Emoji: 🙂 👍🏽 👨‍👩‍👧 🇫🇷 ❤️\n"
    "Combining: e\u0301 a\u0308 n\u0303\n"
    "Code: for (int i = 0; i < n; ++i) { x[i] += y[i] * 2; } // done\n"
    "    def f(a, b):\n        return a**b  # power\n"
    "URL: https://example.com/path?q=1&r=two#frag  email: a.b@c.org\n"
    "<|im_start|> is plain text here, not a special token.\n"
) * 3

def check_ggml(a, model, prompt, n_predict, threads, tmp):
    """ember --numerics ggml at `threads` threads against the default peer: its
    greedy tokens and the prompt's last logits must be the peer's. The prompt
    goes in one batch on both sides (peer_tool: n_ubatch = max(512, n_prompt))."""
    res = dict(threads=threads, error=None)
    t = ["-t", str(threads)]
    out, _ = run([a.peer, "greedy", "-m", model, "-p", prompt, "-n", str(n_predict), *t])
    peer = parse_json_obj(out, "peer_tool greedy")
    pf, ef = os.path.join(tmp, "peer_ggml.f32"), os.path.join(tmp, "ember_ggml.f32")
    run([a.peer, "logits", "-m", model, "-p", prompt, "-o", pf, *t])
    res["n_prompt"], res["n_gen"] = int(peer["n_prompt"]), len(peer["tokens"])
    try:
        out, res["ember_s"] = run([a.ember, "run", "-m", model, "-p", prompt, "-n",
                                   str(n_predict), "--temp", "0", "--json", "--numerics", "ggml",
                                   *t, "-b", "2048", "-c", "2048"])
        ids = strip_eog(ids_of(parse_json_obj(out, "ember run --numerics ggml")), peer)
        run([a.ember, "eval", "-m", model, "-p", prompt, "--numerics", "ggml", *t, "-c", "2048",
             "--logits-out", ef])
    except CmdError as e:
        res["error"] = str(e)
        return res
    res["div"] = first_mismatch(ids_of(peer), ids)
    with open(pf, "rb") as f1, open(ef, "rb") as f2:
        res["logits_identical"] = f1.read() == f2.read()
    res["ok"] = res["div"] is None and res["logits_identical"]
    return res


def check_greedy(a, name, prompt, tmp):
    res = dict(name=name, prompt=prompt, ok=False, error=None, note="", peers={}, div={})
    for cfg in a.peer_configs:
        out, _ = run(peer_cmd(a, "greedy", cfg, "-p", prompt, "-n", str(a.n_predict)))
        res["peers"][cfg] = parse_json_obj(out, f"peer_tool greedy ({cfg})")  # peer failure is fatal
    peer = res["peers"]["default"]
    res["peer"] = peer
    if "precise" in res["peers"]:
        res["peer_self_div"] = first_mismatch(ids_of(peer), ids_of(res["peers"]["precise"]))
        res["noise"] = peer_self_noise(a, name, res, tmp)  # peer failure is fatal
    ember_cmd = [a.ember, "run", "-m", a.model, "-p", prompt, "-n", str(a.n_predict),
                 "--temp", "0", "--json"]
    try:
        out, res["ember_s"] = run(ember_cmd)
        ember = parse_json_obj(out, "ember run")
        for k in ("text", "tokens", "n_prompt", "n_gen", "finish_reason"):
            if k not in ember:
                raise CmdError(f"ember run --json: missing key {k!r}")
        if not isinstance(ember["tokens"], list):
            raise CmdError("ember run --json: 'tokens' is not a list")
    except CmdError as e:
        res["error"] = str(e)
        return res
    res["ember"] = ember
    try:
        out, res["ggml_s"] = run(ember_cmd + ["--numerics", "ggml", "-t", str(a.threads)])
        res["ggml_ids"] = strip_eog(ids_of(parse_json_obj(out, "ember run --numerics ggml")), peer)
    except CmdError as e:
        res["error"] = str(e)
        return res
    res["div_ggml"] = first_mismatch(ids_of(peer), res["ggml_ids"])
    et_raw = ids_of(ember)
    notes = []
    for cfg, pj in res["peers"].items():
        pt, et = ids_of(pj), et_raw
        # peer_tool does not include the end-of-generation token; accept an
        # ember list that has exactly that token appended.
        stop = pj.get("stop_token")
        if stop is not None and len(et) == len(pt) + 1 and et[-1] == stop and et[:-1] == pt:
            et = et[:-1]
            if cfg == "default":
                notes.append(f"ember's list includes the EOG token {stop}; ignored")
        res["div"][cfg] = first_mismatch(pt, et)
        if cfg == "default":
            res["ember_ids"] = et
    if "precise" in res["peers"]:
        # ember with an f32 KV cache against llama.cpp's f32 configuration:
        # the two closest settings the engines have.
        # And ember against itself: the scalar reference kernels instead of
        # the SIMD ones (same math, float sums in another order).
        try:
            out, _ = run(ember_cmd + ["--kv-type", "f32"])
            e32 = ids_of(parse_json_obj(out, "ember run --kv-type f32"))
            out, _ = run(ember_cmd + ["--kv-type", "f32"], env={"EMBER_ISA": "ref"})
            e32_ref = ids_of(parse_json_obj(out, "EMBER_ISA=ref ember run --kv-type f32"))
        except CmdError as e:
            res["error"] = str(e)
            return res
        res["div_self"] = first_mismatch(e32, e32_ref)
        pj = res["peers"]["precise"]
        pt, stop = ids_of(pj), pj.get("stop_token")
        if stop is not None and len(e32) == len(pt) + 1 and e32[-1] == stop and e32[:-1] == pt:
            e32 = e32[:-1]
        res["div_f32"] = first_mismatch(pt, e32)
    if res["div"]["default"] is not None:
        try:
            res["tie"] = analyze_divergence(a, name, res, tmp)
        except CmdError as e:
            res["error"] = str(e)
            return res
    if int(ember["n_prompt"]) != int(peer["n_prompt"]):
        notes.append(f"prompt token count differs: peer {peer['n_prompt']}, ember {ember['n_prompt']}")
    if res["div"]["default"] is None and ember.get("text") != peer.get("text"):
        notes.append("token ids identical but detokenized text differs")
    res["note"] = "; ".join(notes)
    return res


def peer_self_noise(a, name, res, tmp):
    """llama.cpp against itself: the default peer's greedy sequence evaluated by
    both peer configurations with greedy's schedule (`logits --all --prefill P`);
    at every greedy decision (the last prompt position and every generated one)
    the margin shifts between the default's top-1 and its top-2..5 tokens, the
    default's top-1/top-2 margin, and the decisions where the two configurations'
    argmaxes differ."""
    peer = res["peer"]
    prompt_ids = [int(x) for x in peer["prompt_tokens"]]
    seq = prompt_ids + ids_of(peer)
    n_vocab = int(peer["n_vocab"])
    rows = {}
    for cfg in ("default", "precise"):
        f = os.path.join(tmp, f"all_{cfg}_{name}.f32")
        run(peer_cmd(a, "logits", cfg, "--tokens", ",".join(map(str, seq)), "--all",
                     "--prefill", str(len(prompt_ids)), "-o", f))
        rows[cfg] = logit_rows(f, n_vocab)
        os.remove(f)
        if len(rows[cfg]) != len(seq):
            raise CmdError(f"peer_tool logits --all: {len(rows[cfg])} rows for {len(seq)} tokens")
    n = dict(positions=0, shifts=[], top_margins=[], flips=[], reproduced=0, logit_diffs=[])
    stop = peer.get("stop_token")
    for r in range(len(prompt_ids) - 1, len(seq)):
        D, Q = rows["default"][r], rows["precise"][r]
        t5 = top_ids(D, 5)
        a1 = t5[0]
        nxt = seq[r + 1] if r + 1 < len(seq) else stop
        n["positions"] += 1
        if nxt is None or nxt == a1:
            n["reproduced"] += 1  # the schedule reproduces the greedy run's choice
        n["shifts"] += margin_shifts(D, Q, 5)
        n["top_margins"].append(float(D[a1]) - float(D[t5[1]]))
        n["logit_diffs"] += [abs(float(D[t]) - float(Q[t])) for t in t5]
        q1 = top_ids(Q, 1)[0]
        if q1 != a1:
            m = float(D[a1]) - float(D[q1])
            n["flips"].append(dict(pos=r + 1 - len(prompt_ids), margin=m,
                                   shift=m - (float(Q[a1]) - float(Q[q1]))))
    return n


def check_logits(a, name, prompt, tmp):
    res = dict(name=name, prompt=prompt, error=None, vs={})
    peer = {}
    for cfg in a.peer_configs:
        f = os.path.join(tmp, f"peer_{cfg}_{name}.f32")
        out, _ = run(peer_cmd(a, "logits", cfg, "-p", prompt, "-o", f))
        if cfg == "default":
            res["peer_info"] = parse_json_obj(out, "peer_tool logits")
        peer[cfg] = read_f32le(f)
    if "precise" in peer:
        res["peer_self"] = logits_stats(peer["default"], peer["precise"])
    ef = os.path.join(tmp, f"ember_{name}.f32")
    ember_cmd = [a.ember, "eval", "-m", a.model, "-p", prompt, "--logits-out", ef]
    try:
        run(ember_cmd)
        if not os.path.exists(ef):
            raise CmdError(f"ember eval did not write {ef}")
        ember = read_f32le(ef)
    except CmdError as e:
        res["error"] = str(e)
        return res
    gf = os.path.join(tmp, f"ember_ggml_{name}.f32")
    try:
        run(ember_cmd[:-2] + ["--numerics", "ggml", "-t", str(a.threads), "--logits-out", gf])
    except CmdError as e:
        res["error"] = str(e)
        return res
    res["ggml"] = logits_stats(peer["default"], read_f32le(gf))
    with open(gf, "rb") as f1, open(os.path.join(tmp, f"peer_default_{name}.f32"), "rb") as f2:
        res["ggml_identical"] = f1.read() == f2.read()
    res["n_vocab_peer"], res["n_vocab_ember"] = len(peer["default"]), len(ember)
    if len(peer["default"]) != len(ember):
        res["error"] = f"n_vocab differs: peer {len(peer['default'])}, ember {len(ember)}"
        return res
    for cfg, pl in peer.items():
        res["vs"][cfg] = logits_stats(pl, ember)
    res.update(res["vs"]["default"])
    res["shift_ember"] = max(margin_shifts(peer["default"], ember, 5))
    if "precise" in peer:
        res["shift_precise"] = max(margin_shifts(peer["default"], peer["precise"], 5))
    return res


# ----------------------------------------------------------------- report


# T is this quantile of llama.cpp's own margin shifts (default vs precise peer)
TIE_QUANTILE = 0.99


def noise_summary(greedy):
    """Pool the per-prompt peer_self_noise() data and derive the near-tie threshold T."""
    rs = [r["noise"] for r in greedy if r.get("noise")]
    if not rs:
        return None
    shifts = [x for n in rs for x in n["shifts"]]
    margins = [x for n in rs for x in n["top_margins"]]
    diffs = [x for n in rs for x in n["logit_diffs"]]
    flips = [f for n in rs for f in n["flips"]]
    T = quantile(shifts, TIE_QUANTILE)
    return dict(T=T, n_prompts=len(rs), positions=sum(n["positions"] for n in rs),
                reproduced=sum(n["reproduced"] for n in rs), n_shifts=len(shifts),
                shift_q={q: quantile(shifts, q) for q in (0.5, 0.9, 0.99)}, shift_max=max(shifts),
                diff_q99=quantile(diffs, 0.99), flips=flips,
                flip_margin_max=max((f["margin"] for f in flips), default=math.nan),
                flip_shift_med=quantile([f["shift"] for f in flips], 0.5),
                flip_shift_max=max((f["shift"] for f in flips), default=math.nan),
                margins=margins, frac_below_T=sum(1 for m in margins if m < T) / len(margins))


def apply_gate(a, greedy, noise):
    """Sets r["ok"] and r["verdict"] for every greedy result."""
    T = noise["T"] if noise else None
    for r in greedy:
        d = r["div"].get("default") if not r["error"] else None
        if r["error"]:
            r["ok"], r["verdict"] = False, "error"
        elif a.gate == "tie-aware":
            if d is None:
                r["ok"], r["verdict"] = True, "identical"
            elif T is None or "tie" not in r:
                r["ok"], r["verdict"] = False, "no tie analysis"
            else:
                m = r["tie"]["peer"]["margin"]
                r["tie"]["near_tie"] = m < T
                r["ok"] = m < T
                r["verdict"] = "near-tie" if m < T else "**not a near-tie**"
        elif a.gate == "either":
            r["ok"] = any(x is None for x in r["div"].values())
            r["verdict"] = "identical" if r["ok"] else "**differs**"
        else:
            r["ok"] = r["div"][a.gate] is None
            r["verdict"] = "identical" if r["ok"] else "**differs**"
        if not r["error"] and T is not None and "tie" in r and "near_tie" not in r["tie"]:
            r["tie"]["near_tie"] = r["tie"]["peer"]["margin"] < T


def ggml_cells(r):
    """The greedy and logits cells of a check_ggml() row."""
    verdict = "identical" if r["div"] is None else f"**diverges at {r['div']}**"
    return f"{verdict} | {'bit-identical' if r['logits_identical'] else '**differ**'}"


def write_report(a, greedy, logits, models, noise, started, elapsed, failed, longs, others):
    L = []
    w = L.append
    now = started.strftime("%Y-%m-%d %H:%M UTC")
    precise = "precise" in a.peer_configs
    T = noise["T"] if noise else None
    w("# Correctness validation: ember vs llama.cpp")
    w("")
    w("Generated by `scripts/validate.sh` (not part of CI). Re-run it to refresh this file.")
    w("")
    w(f"- **Date:** {now} (took {elapsed:.0f} s)")
    gate = {"default": "greedy tokens must be identical to the default peer",
            "precise": "greedy tokens must be identical to the precise peer",
            "either": "greedy tokens must be identical to either peer configuration",
            "tie-aware": "greedy tokens identical to the default peer or first divergence at a "
                         "near-tie, see below"}[a.gate]
    n_gg = sum(1 for r in greedy if not r["error"] and r.get("div_ggml") is None)
    n_gl = sum(1 for r in logits if not r["error"] and r.get("ggml_identical"))
    n_lo = sum(1 for r in longs if not r["error"] and r["ok"])
    n_ot = sum(1 for r in others if not r["error"] and r["ok"])
    deep = bool(greedy or logits or longs or others)
    result = "; ".join(validate_models.model_line(m) for m in models)
    if deep:
        result += (f"; reference model, `--numerics ggml`: greedy identical to the default peer "
                   f"{n_gg}/{len(greedy)}, last-position logits bit-identical {n_gl}/{len(logits)}, "
                   f"long prompts identical {n_lo}/{len(longs)}, other weight types identical "
                   f"{n_ot}/{len(others)}, all required; ember's own kernels: gate `{a.gate}`: "
                   f"{gate}")
    w(f"- **Result:** {'FAIL' if failed else 'PASS'} ({result}; tokenization must be identical)")
    w(f"- **Peer:** {a.llama_version}")
    w(f"- **ember:** `{a.ember_display}` (repo at {git_rev(a.repo)})")
    if deep:
        w(f"- **Reference model** (the sections after *Models*): `{os.path.basename(a.model)}` "
          f"({os.path.getsize(a.model):,} bytes, sha256 `{sha256_of(a.model)[:16]}…`)")
    w(f"- **Machine:** {cpu_model()}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}")
    w("")

    if models:
        validate_models.write_models(w, a, models)
    if deep:
        w(f"The sections below go deeper on the reference model, `{os.path.basename(a.model)}`.")
        w("")

    if greedy or logits or longs:
        w("## `--numerics ggml`: llama.cpp's arithmetic, bit for bit")
        w("")
        w("`ember run/eval --numerics ggml` performs llama.cpp's CPU operations in llama.cpp's "
          "order (ops/ggml_numerics.h): its x86 activation quantizers and Q4_0/Q4_1/Q8_0 dot products "
          "with their eight-lane sums, its AVX-512 `expf` polynomial in SwiGLU, RoPE with its "
          "fused multiply-adds, and its flash attention in the form it takes for the batch "
          "(one row at a time with f16 accumulators for batches under 64 tokens, tiles of 64 "
          "for larger ones, KV chunks per thread once the KV view reaches 512 cells). The weights "
          "are used as stored. Against the default peer (llama.cpp's library defaults, built "
          f"natively on this machine) at {a.threads} thread(s), every result must be identical:")
        w("")
        if greedy:
            w("| # | prompt | n_gen peer | ember `--numerics ggml` vs default peer | ember s |")
            w("|---|---|---|---|---|")
            for i, r in enumerate(greedy, 1):
                if r["error"]:
                    w(f"| {i} {r['name']} | {md_cell(r['prompt'], 60)} | - | ERROR | - |")
                    continue
                d = r["div_ggml"]
                w(f"| {i} {r['name']} | {md_cell(r['prompt'], 60)} | "
                  f"{len(r['peer']['tokens'])} | "
                  f"{'identical' if d is None else f'**diverges at {d}**'} | {r['ggml_s']:.1f} |")
            w("")
            w(f"Greedy continuations ({a.n_predict} tokens) identical to the default peer: "
              f"**{n_gg}/{len(greedy)}**.")
            w("")
        if logits:
            w("| last-position logits | n_prompt | bit-identical | max abs diff | argmax peer/ember |")
            w("|---|---|---|---|---|")
            for r in logits:
                if r["error"]:
                    w(f"| {r['name']} | - | ERROR | - | - |")
                    continue
                g = r["ggml"]
                w(f"| {r['name']} | {r['peer_info'].get('n_prompt', '?')} | "
                  f"{'yes' if r['ggml_identical'] else '**no**'} | {g['max_abs']:.4g} | "
                  f"{g['argmax_peer']}/{g['argmax_ember']} |")
            w("")
        if longs:
            w("| long prompt | threads | n_prompt | n_gen | greedy | last-position logits |")
            w("|---|---|---|---|---|---|")
            for r in longs:
                if r["error"]:
                    w(f"| {r['label']} | {r['threads']} | - | - | ERROR | - |")
                    continue
                w(f"| {r['label']} | {r['threads']} | {r['n_prompt']} | {r['n_gen']} | "
                  f"{ggml_cells(r)} |")
            w("")
            w("The long prompts go in one batch (64+ tokens: the tiled attention) and decode with "
              "more than 256 cells in the context (the split attention, whose chunks follow the "
              "thread count).")
            w("")
        if others:
            w("Other weight types, on the synthetic models of `bench/compare.sh` (random weights, "
              "the real shapes and vocabularies; Q4_0 goes through the kernels of the layout "
              f"llama.cpp repacks it into, Q8_0 batches through llamafile's tinyBLAS), {GGML_OTHER_N} "
              "greedy tokens:")
            w("")
            w("| model | prompt | n_prompt | greedy | last-position logits |")
            w("|---|---|---|---|---|")
            for r in others:
                if r["error"]:
                    w(f"| {r['label']} | {r['plabel']} | - | ERROR | - |")
                    continue
                w(f"| {r['label']} | {r['plabel']} | {r['n_prompt']} | {ggml_cells(r)} |")
            w("")
        w("The sections below are about ember's own kernels (the default, `--numerics ember`): "
          "faster, and the same functions computed in other orders.")
        w("")

    # criterion
    if greedy and noise:
        n_self = sum(1 for r in greedy if r.get("peer_self_div") is not None)
        w("## ember's own kernels: criterion")
        w("")
        w("ember and llama.cpp both quantize the activations to int8 before every Q4_1/Q8_0 "
          "matmul. A difference of ~1e-6 in float summation order (ggml's SIMD lane order, its "
          "polynomial `expf` in SiLU, its F16 flash-attention accumulator) flips the rounding of "
          "a few int8 values, and the gaps between logits move by about a tenth (measured below). Where the model's two best "
          "candidates are that close, greedy decoding can go either way, and from there the two "
          "continuations are unrelated. llama.cpp does this to itself: its default configuration "
          f"and its most precise one (`--fa off --kv f32`) part ways on {n_self} of {len(greedy)} "
          "prompts below, and KL(default‖precise) is of the same order as KL(peer‖ember) "
          "(see *Last-position logits*). Exact identity of 64 greedy tokens is therefore not a "
          "meaningful criterion for kernels that sum in their own order; agreement up to the "
          "first near-tie is. (Identity is what `--numerics ggml` gives, above.)")
        w("")
        n_f32 = sum(1 for r in greedy if not r["error"] and r.get("div_f32") is None)
        n_selfe = sum(1 for r in greedy if not r["error"] and r.get("div_self") is None)
        if any("div_self" in r for r in greedy):
            w("The closest the two engines get: ember with an f32 KV cache (`--kv-type f32`, no "
              "f16 rounding of K, V or the query) against llama.cpp's precise configuration, "
              "the same math on both sides except for float summation order and `expf`. They "
              f"agree on {n_f32} of {len(greedy)} prompts. ember agrees with *itself* no better "
              "when only its summation order changes: the same f32 run with the scalar reference "
              f"kernels (`EMBER_ISA=ref`) instead of the SIMD ones matches on {n_selfe} of "
              f"{len(greedy)} (columns at the right of the table below). The model is that "
              "sensitive because a float difference in the last bit, where it turns one int8 "
              "activation the other way at a .5, becomes a whole int8 step (1/127 of its "
              "32-value group's largest value), and the 30 layers carry it on. (A one-off experiment, not in this script: "
              "scaling the embedding rows of a 4-token prompt by 1 + 1e-7 changed ember's "
              "last logits by 0.22 on average and 0.71 at most.) Identical 64-token "
              "continuations take ggml's float operations in ggml's order, bit for bit: "
              "`--numerics ggml` (above).")
            w("")
        w(f"**Gate `tie-aware`** (the default; `VALIDATE_GATE=default|precise|either` demand exact "
          "identity instead): tokenization is identical, and for every greedy prompt ember's "
          "tokens are identical to the default peer's, or at the first divergence the default "
          "peer's **own margin** — logit(peer's token) − logit(ember's token), in the peer's "
          "logits for prompt + the shared generated prefix — is below **T**.")
        w("")
        w(f"**T = {T:.4f}** (logit units), derived from llama.cpp against itself, not chosen: the "
          "default peer's greedy sequence of each prompt is evaluated by both peer configurations "
          "(`peer_tool logits --all`); at every greedy decision "
          f"({noise['positions']} positions over {noise['n_prompts']} prompts) we take the default "
          "peer's top-1 token and each of its top-2..5 tokens and measure how much the margin "
          "between them changes from the default to the precise configuration, "
          "|Δ(logit_top1 − logit_topk)|. "
          f"T is the {TIE_QUANTILE * 100:.0f}th percentile of these {noise['n_shifts']} margin "
          f"shifts (median {noise['shift_q'][0.5]:.4f}, 90th pct {noise['shift_q'][0.9]:.4f}, "
          f"max {noise['shift_max']:.4f}). A margin below T is within what llama.cpp's own switch of "
          f"attention/KV precision moves margins by (it moves them by more than T for only "
          f"{100 - TIE_QUANTILE * 100:.0f}% of the pairs). Margins rather "
          "than single logits are used because only the gap between two tokens decides greedy "
          "(a shift common to all logits changes nothing); for reference, the 99th percentile of "
          "|logit_default − logit_precise| of the individual top-5 tokens is "
          f"{noise['diff_q99']:.4f}.")
        w("")
        nf = len(noise["flips"])
        flip_txt = (f"at {nf} of them the two configurations' argmaxes differ (teacher-forced on the "
                    f"default's sequence), at default-peer margins of up to "
                    f"{noise['flip_margin_max']:.4f} and with margin shifts of "
                    f"{noise['flip_shift_med']:.4f} (median) to {noise['flip_shift_max']:.4f} (max) "
                    "for the flipped pair" if nf else
                    "at none of them do the two configurations' argmaxes differ")
        w(f"How common near-ties are: of the {noise['positions']} greedy decisions of the default "
          f"peer, {noise['frac_below_T'] * 100:.1f}% have a top-1/top-2 margin below T "
          f"(~{noise['frac_below_T'] * a.n_predict:.1f} per {a.n_predict}-token continuation); "
          f"{flip_txt}. (Evaluated with greedy's schedule — prompt in one call, then one token "
          f"per call — which reproduced the greedy run's choice at {noise['reproduced']}/"
          f"{noise['positions']} decisions.)")
        w("")

    w("## Commands")
    w("")
    t = f" -t {a.peer_threads}" if a.peer_threads else ""
    w("```sh")
    w("scripts/validate.sh   # builds the peer (scripts/build-peer.sh), then runs, per prompt/file:")
    w(f"PEER={a.peer_display}   # bench/peer/peer_tool.cpp")
    w(f"EMBER={a.ember_display}")
    w("")
    w("# per model (## Models), for each MODEL of the table; tokenization (ids on one line):")
    w("$EMBER tokenize -m $MODEL -f $FILE")
    w("$PEER tokenize -m $MODEL -f $FILE")
    w(f"# teacher-forced: IDS = the first {a.tf_tokens} ids of $PEER tokenize -f $TEXT, comma-separated")
    w(f"$PEER logits -m $MODEL --tokens \"$IDS\" --all -o peer.f32{t}   # (+ --fa off --kv f32)")
    w(f"$EMBER eval -m $MODEL --tokens \"$IDS\" --all-logits --logits-out ember.f32 -t {a.threads}")
    w("# perplexity")
    w(f"LLAMA_PERPLEXITY={display_path(a.llama_perplexity)}")
    w(f"$LLAMA_PERPLEXITY -m $MODEL -f $TEXT -c 512 --chunks {a.ppl_chunks} -t {a.threads}"
      "   # (+ -fa off -ctk f32 -ctv f32)")
    w(f"$EMBER perplexity -m $MODEL -f $TEXT -c 512 --chunks {a.ppl_chunks} -t {a.threads} --json")
    w("# greedy continuations (a divergence is analysed as for the reference model, below)")
    w(f"$PEER greedy -m $MODEL -p \"$PROMPT\" -n {validate_models.CONT_N}{t}   # (+ --fa off --kv f32)")
    w(f"$EMBER run -m $MODEL -p \"$PROMPT\" -n {validate_models.CONT_N} --temp 0 --json -t {a.threads}")
    if deep:
        w("")
        w(f"# the reference model: MODEL={a.model_display}")
        w("# --numerics ggml (must be identical); T = the peer's thread count")
        w(f"$EMBER run -m $MODEL -p \"$PROMPT\" -n {a.n_predict} --temp 0 --json --numerics ggml -t {a.threads}")
        w(f"$EMBER eval -m $MODEL -p \"$PROMPT\" --numerics ggml -t {a.threads} --logits-out ember.f32")
        w("# long prompts, at -t 1 and -t 2 on both sides (LONG: the first bytes of a license text)")
        w(f"$EMBER run -m $MODEL -p \"$LONG\" -n {a.n_predict} --temp 0 --json --numerics ggml -t T -b 2048 -c 2048")
        w(f"$PEER greedy -m $MODEL -p \"$LONG\" -n {a.n_predict} -t T")
        w("")
        w("# greedy continuations")
        w(f"$EMBER run -m $MODEL -p \"$PROMPT\" -n {a.n_predict} --temp 0 --json")
        w(f"$PEER greedy -m $MODEL -p \"$PROMPT\" -n {a.n_predict}{t}                       # default peer")
        if precise:
            w(f"$PEER greedy -m $MODEL -p \"$PROMPT\" -n {a.n_predict}{t} --fa off --kv f32     # precise peer")
            w("# llama.cpp's own noise (T): the default peer's sequence (prompt + generated ids), all positions,")
            w("# greedy's schedule (P = number of prompt tokens in the first call, then one token per call)")
            w(f"$PEER logits -m $MODEL --tokens \"$PROMPT_IDS,$GEN_IDS\" --prefill $P --all -o all.f32{t}   # (+ --fa off --kv f32)")
        w("# at a divergence at generated index i: CTX = prompt ids + the i shared generated ids")
        w(f"$PEER logits -m $MODEL --tokens \"$CTX\" --prefill $P -o peer.f32{t}   # (+ --fa off --kv f32)")
        w("$EMBER eval -m $MODEL --tokens \"$CTX\" --logits-out ember.f32")
        w("# last-position logits (f32 LE, n_vocab floats)")
        w("$EMBER eval -m $MODEL -p \"$PROMPT\" --logits-out ember.f32")
        w(f"$PEER logits -m $MODEL -p \"$PROMPT\" -o peer.f32{t}            # (+ --fa off --kv f32)")
    w("```")
    w("")
    w("Peer settings: prompt tokenized with `llama_tokenize(add_special=true, parse_special=true)` "
      "(as llama.cpp's `llama-simple`/`llama-completion` do; BOS only where the model's GGUF "
      "asks for it: SmolLM2 has `add_bos_token=false`, Gemma 3 `true`); greedy = argmax of the "
      "raw logits, ties to the lowest id, stop at an end-of-generation token (ids 0, 2 and 4 for "
      "SmolLM2; the EOG token is not counted in the tokens); the whole prompt (with `logits "
      "--tokens --all`: all the ids) in one batch; n_ctx 2048. "
      "**default peer** = library defaults: flash attention `auto` (resolves to *enabled* on "
      "CPU; ggml's CPU flash-attention kernel works on F16 Q/K/V) and an F16 KV cache. "
      "**precise peer** = `--fa off --kv f32` (F32 KV cache, attention through F32 matmul + "
      "softmax). Both quantize activations to Q8 for the Q4_1/Q8_0 matmuls. "
      "Tokenize mode: `add_special=true, parse_special=false`.")
    w("")

    # greedy
    if greedy:
        w(f"## Greedy continuations ({a.n_predict} tokens)")
        w("")
        hdr = ("| # | prompt | n_prompt peer/ember | n_gen peer/ember | vs default peer | "
               "peer margin at divergence | ember margin |")
        sep = "|---|---|---|---|---|---|---|"
        if precise:
            hdr += (" ember vs precise peer | ember `--kv-type f32` vs precise peer |"
                    " default vs precise peer | ember f32: ref vs SIMD kernels |")
            sep += "---|---|---|---|"
        w(hdr + " gate | note |")
        w(sep + "---|---|")
        for i, r in enumerate(greedy):
            p = r.get("peer", {})
            e = r.get("ember", {})
            pm = em = "-"
            if r["error"]:
                div, note = "**ERROR**", r["error"].splitlines()[0]
                vsp = "-"
            else:
                d = r["div"]["default"]
                div = "identical" if d is None else f"**diverges at {d}**"
                note = r["note"]
                vsp = fmt_div(r["div"].get("precise"))
                tie = r.get("tie")
                if tie:
                    lt = "" if T is None else (" < T" if tie["peer"]["margin"] < T else " **≥ T**")
                    pm = f"{tie['peer']['margin']:.4f}{lt}"
                    em = f"{tie['ember']['margin']:.4f}"
            row = (f"| {i + 1} {r['name']} | {md_cell(r['prompt'], 60)} | "
                   f"{p.get('n_prompt', '?')}/{e.get('n_prompt', '?')} | "
                   f"{p.get('n_gen', '?')}/{e.get('n_gen', '?')} | {div} | {pm} | {em} |")
            if precise:
                v32 = "-" if r["error"] else fmt_div(r.get("div_f32"))
                vself = "-" if r["error"] else fmt_div(r.get("div_self"))
                row += f" {vsp} | {v32} | {fmt_div(r.get('peer_self_div'))} | {vself} |"
            verdict = ("pass" if r["ok"] else "**FAIL**") + f" ({r.get('verdict', '?')})"
            w(row + f" {verdict} | {note.replace('|', '/')} |")
        w("")
        n_id = sum(1 for r in greedy if not r["error"] and r["div"]["default"] is None)
        w(f"Identical to the default peer for all {a.n_predict} tokens: **{n_id}/{len(greedy)}** prompts"
          + (f"; ember with an f32 KV cache vs the precise peer: "
             f"{sum(1 for r in greedy if not r['error'] and r.get('div_f32') is None)}/{len(greedy)}"
             f"; llama.cpp's default vs precise configuration: "
             f"{sum(1 for r in greedy if r.get('peer_self_div') is None)}/{len(greedy)}"
             f"; ember f32 with its reference kernels vs its SIMD kernels: "
             f"{sum(1 for r in greedy if not r['error'] and r.get('div_self') is None)}/{len(greedy)}."
             if precise else "."))
        w("")
        w("Divergence indices count generated tokens (0 = the first one). *peer margin* = "
          "logit(peer's token) − logit(ember's token) in the default peer's logits at the "
          "divergence (prompt + the shared generated prefix), computed with the same schedule as "
          "its greedy run, so these are exactly the logits it chose from; *ember margin* = "
          "logit(ember's token) − logit(peer's token) in ember's logits for the same ids "
          "(`ember eval --tokens`). Both are positive when each side's teacher-forced argmax is "
          "its own greedy choice; T is defined above. The two rightmost comparison columns are "
          "llama.cpp against itself and ember against the precise configuration.")
        w("")
        ties = [(i, r) for i, r in enumerate(greedy) if r.get("tie")]
        if ties:
            w("### At each divergence")
            w("")
            hdr = ("| # | index | peer token | ember token | default peer: margin / p(peer tok), "
                   "p(ember tok) / rank of ember tok | ember: margin / p(ember tok), p(peer tok) / "
                   "rank of peer tok |")
            sep = "|---|---|---|---|---|---|"
            if precise:
                hdr += " precise peer: margin / rank of ember tok |"
                sep += "---|"
            w(hdr + " margin shift ember vs peer | near-tie (margin < T) |")
            w(sep + "---|---|")
            for i, r in ties:
                tie = r["tie"]
                pv, ev = tie["peer"], tie["ember"]
                pp = tie.get("pieces", ["?", "?"])
                cells = [f"{i + 1} {r['name']}", str(tie["index"]),
                         fmt_tok(pp[0], tie["peer_tok"], tie["peer_eog"]),
                         fmt_tok(pp[1], tie["ember_tok"], tie["ember_eog"]),
                         f"{pv['margin']:.4f} / {pv['p_own']:.3f}, {pv['p_other']:.3f} / {pv['rank_other']}"
                         + ("" if pv["consistent"] else " (argmax ≠ greedy!)"),
                         f"{ev['margin']:.4f} / {ev['p_own']:.3f}, {ev['p_other']:.3f} / {ev['rank_other']}"
                         + ("" if ev["consistent"] else f" (argmax {ev['argmax']} ≠ ember's greedy token)")]
                if precise and "precise" in tie:
                    qv = tie["precise"]
                    cells.append(f"{qv['margin']:.4f} / {qv['rank_other']}"
                                 + ("" if qv["consistent"] else f" (argmax {qv['argmax']})"))
                elif precise:
                    cells.append("-")
                cells.append(f"{tie['shift']:.4f}")
                nt = tie.get("near_tie")
                cells.append("-" if nt is None else ("yes" if nt else "**no**"))
                w("| " + " | ".join(cells) + " |")
            w("")
            n_t = len(ties)
            pm_max = max(r["tie"]["peer"]["margin"] for _, r in ties)
            summ = [f"ember's largest default-peer margin at a divergence is {pm_max:.4f} "
                    f"(T = {T:.4f})" if T is not None else
                    f"ember's largest default-peer margin at a divergence is {pm_max:.4f}"]
            if noise and noise["flips"]:
                summ.append(f"llama.cpp's precise configuration overrides its default one at "
                            f"margins up to {noise['flip_margin_max']:.4f}")
            if precise:
                n_pref = sum(1 for _, r in ties if "precise" in r["tie"]
                             and r["tie"]["precise"]["margin"] < 0)
                summ.append(f"at {n_pref} of the {n_t} divergences llama.cpp's precise "
                            "configuration itself prefers ember's token")
            sh = sorted(r["tie"]["shift"] for _, r in ties)
            summ.append(f"ember's margin shifts at the divergences: median {quantile(sh, 0.5):.4f}, "
                        f"max {sh[-1]:.4f}")
            w("Summary: " + "; ".join(summ) + ".")
            w("")
            w("p = softmax probability. *precise peer: margin* = logit(peer's token) − "
              "logit(ember's token) in the precise configuration at the same context (negative: "
              "llama.cpp's precise configuration prefers ember's token there). *margin shift* = "
              "|peer margin + ember margin|, i.e. how much ember moves this pair's margin relative "
              "to the default peer — compare with llama.cpp's own shifts under *Criterion* (for "
              "a pair that flips, the shift is at least the margin, so shifts at divergences are "
              "selected to be large; compare with the shifts at llama.cpp's own flips). A side that stopped at the divergence chose an end-of-generation "
              "token (marked EOG; for ember, its argmax there).")
            w("")
        w("Generated text (default peer; and ember where it differs):")
        w("")
        for i, r in enumerate(greedy):
            p = r.get("peer", {})
            fin = p.get("finish_reason", "?")
            if p.get("stop_token") is not None:
                fin += f" at token {p['stop_token']}"
            w(f"{i + 1}. **{r['name']}** peer ({fin}): {md_cell(p.get('text', ''), 400)}")
            e = r.get("ember")
            if e is not None and (r["div"]["default"] is not None or e.get("text") != p.get("text")):
                w(f"   - ember ({e.get('finish_reason', '?')}): {md_cell(str(e.get('text', '')), 400)}")
                d = r["div"]["default"]
                if d is not None:
                    w(f"   - tokens from index {d}: peer `{ids_of(p)[d:d + 8]}` "
                      f"ember `{ids_of(e)[d:d + 8]}`")
        w("")

    # logits
    if logits:
        w("## Last-position logits")
        w("")
        hdr = ("| prompt | n_prompt | max abs diff | mean abs diff | KL(peer‖ember) | "
               "argmax peer/ember | argmax agrees | top-5 overlap |")
        sep = "|---|---|---|---|---|---|---|---|"
        hdr += " max top-5 margin shift: ember |"
        sep += "---|"
        if precise:
            hdr += " KL(precise‖ember) | KL(default‖precise) | max top-5 margin shift: precise |"
            sep += "---|---|---|"
        w(hdr)
        w(sep)
        for r in logits:
            pi = r.get("peer_info", {})
            if r["error"]:
                w(f"| {r['name']} | {pi.get('n_prompt', '?')} | **ERROR** | "
                  f"{r['error'].splitlines()[0].replace('|', '/')} | - | - | - | - | - |"
                  + (" - | - | - |" if precise else ""))
                continue
            row = (f"| {r['name']} | {pi.get('n_prompt', '?')} | "
                   f"{r['max_abs']:.4g} | {r['mean_abs']:.4g} | {r['kl']:.3e} | "
                   f"{r['argmax_peer']}/{r['argmax_ember']} | "
                   f"{'yes' if r['argmax_peer'] == r['argmax_ember'] else '**no**'} | "
                   f"{r['top5_overlap']}/5 | {r['shift_ember']:.4f} |")
            if precise:
                row += (f" {r['vs']['precise']['kl']:.3e} | {r['peer_self']['kl']:.3e} | "
                        f"{r['shift_precise']:.4f} |")
            w(row)
        w("")
        w(f"Against the default peer unless stated; n_vocab {logits[0].get('n_vocab_peer', '?') if logits else '?'}. "
          "Small non-zero differences are expected (different kernels and accumulation order; "
          "llama.cpp's F16 attention and Q8 activation quantization); the KL(default‖precise) "
          "column is llama.cpp's own spread. *max top-5 margin shift* = the largest "
          "|Δ(logit_top1 − logit_topk)|, k = 2..5 (top-k of the default peer), of ember resp. the "
          "precise peer against the default peer — the quantity T is a percentile of.")
        w("")

    # Sections written by hand (from this marker line to the end) are kept.
    mark = "<!-- kept by scripts/validate.sh: hand-written sections below -->"
    if os.path.exists(a.out):
        old = open(a.out, encoding="utf-8").read()
        if mark in old:
            L += ["", old[old.index(mark):].rstrip("\n")]
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w", encoding="utf-8") as f:
        f.write("\n".join(L).rstrip("\n") + "\n")


# ----------------------------------------------------------------- main


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ember", required=True, help="ember binary")
    ap.add_argument("--peer", required=True, help="peer_tool binary")
    ap.add_argument("--model", help="the reference model's file (default: its MODELS entry in "
                                     "--models-dir)")
    ap.add_argument("--models-dir", default=os.path.expanduser("~/.cache/ember/models"))
    ap.add_argument("--models", help="comma-separated keys of MODELS and --extra-model to run "
                                     "(default: all): " + ", ".join(k for k, *_ in MODELS))
    ap.add_argument("--extra-model", action="append", default=[], metavar="KEY=PATH",
                    help="another model (repeatable), e.g. a synthetic qwen3-0.6b-shape=FILE; "
                         "its chat format is guessed from KEY (gemma, llama, qwen, smol)")
    ap.add_argument("--llama-perplexity", default="llama-perplexity",
                    help="llama.cpp's llama-perplexity binary")
    ap.add_argument("--tf-tokens", type=int, default=validate_models.TF_TOKENS,
                    help="teacher-forced positions per text")
    ap.add_argument("--ppl-chunks", type=int, default=validate_models.PPL_CHUNKS,
                    help="perplexity: chunks of 512 tokens per text")
    ap.add_argument("--out", required=True, help="Markdown report to write")
    ap.add_argument("--llama-version", default="llama.cpp (unknown version)")
    ap.add_argument("--repo", default=os.getcwd())
    ap.add_argument("-n", "--n-predict", type=int, default=64)
    ap.add_argument("--peer-threads", type=int, default=0, help="-t for peer_tool (0 = its default)")
    ap.add_argument("--only", choices=MODEL_SECTIONS + REFERENCE_SECTIONS, action="append",
                    help="run only these checks (repeatable); the report then covers only them. "
                         "Per model: tokenize, teacher (teacher-forced distributions), ppl, "
                         "continuations (greedy); the reference model only: greedy (with the "
                         "--numerics ggml identity gate), logits")
    ap.add_argument("--gate", choices=["tie-aware", "default", "precise", "either"],
                    default="tie-aware",
                    help="tie-aware (default): identical to the default peer or first divergence "
                         "at a near-tie (the default peer's own margin < T, T derived from "
                         "llama.cpp's default-vs-precise spread); default/precise/either: greedy "
                         "tokens must be identical to that peer configuration")
    ap.add_argument("--no-precise", action="store_true",
                    help="skip the second ('precise': --fa off --kv f32) peer configuration")
    a = ap.parse_args()
    if a.no_precise and a.gate != "default":
        ap.error("--gate tie-aware/precise/either needs the precise peer (drop --no-precise)")
    a.peer_configs = ["default"] if a.no_precise else ["default", "precise"]
    # ember --numerics ggml runs at the peer's thread count (llama.cpp's split
    # attention depends on it).
    a.threads = a.peer_threads or os.cpu_count() or 1
    a.ember_display = display_path(a.ember)
    a.peer_display = display_path(a.peer)
    only = set(a.only or MODEL_SECTIONS + REFERENCE_SECTIONS)
    table = [(k, label, os.path.join(a.models_dir, f), chat) for k, label, f, chat in MODELS]
    if a.model:
        table = [(k, l, a.model if k == REFERENCE_MODEL else p, c) for k, l, p, c in table]
    for spec in a.extra_model:
        key, sep, path = spec.partition("=")
        if not sep or not key or not path:
            ap.error(f"--extra-model expects KEY=PATH, got {spec!r}")
        table.append((key, key, os.path.expanduser(path), validate_models.guess_chat_format(key)))
    if a.models:
        keys = [k.strip() for k in a.models.split(",") if k.strip()]
        unknown = [k for k in keys if k not in {t[0] for t in table}]
        if unknown:
            ap.error(f"--models: unknown {', '.join(unknown)} (known: "
                     f"{', '.join(t[0] for t in table)})")
        table = [t for t in table if t[0] in keys]
    a.model = next((p for k, _, p, _ in table if k == REFERENCE_MODEL), None)
    a.model_display = display_path(a.model) if a.model else None

    started = _dt.datetime.now(_dt.timezone.utc)
    t0 = time.monotonic()
    greedy, logits, noise, longs, others, models = [], [], None, [], [], []
    try:
        with tempfile.TemporaryDirectory(prefix="ember-validate-") as tmp:
            stress = os.path.join(tmp, "stress.txt")
            with open(stress, "w", encoding="utf-8") as f:
                f.write(STRESS_TEXT)
            tok_files = [(p, p) for p in TOKENIZE_FILES if os.path.exists(p)]
            tok_files.append(("stress-text", stress))
            for key, label, path, chat in table:
                models.append(validate_models.run_model(a, key, label, path, chat, only, tok_files))
            ref = next((m for m in models if m["key"] == REFERENCE_MODEL), None)
            if (ref is None or ref["status"] != "ok") and only & set(REFERENCE_SECTIONS):
                log(f"{', '.join(sorted(only & set(REFERENCE_SECTIONS)))}: the reference model "
                    f"{REFERENCE_MODEL} is not selected or does not run: skipped")
                only -= set(REFERENCE_SECTIONS)
            if "greedy" in only:
                for name, prompt in GREEDY_PROMPTS:
                    log(f"greedy: {name}")
                    r = check_greedy(a, name, prompt, tmp)
                    greedy.append(r)
                    if r["error"]:
                        log(f"  -> ERROR: {r['error']}")
                    else:
                        tie = r.get("tie")
                        log("  -> " + ", ".join(
                            f"vs {c} peer {fmt_div(d)}" for c, d in r["div"].items())
                            + (f" (peer default vs precise: {fmt_div(r['peer_self_div'])})"
                               if "peer_self_div" in r else "")
                            + (f"; margins peer {tie['peer']['margin']:.4f} "
                               f"ember {tie['ember']['margin']:.4f}" if tie else ""))
                noise = noise_summary(greedy)
                if noise:
                    log(f"near-tie threshold T = {noise['T']:.4f} ({TIE_QUANTILE * 100:.0f}th pct of "
                        f"{noise['n_shifts']} default-vs-precise margin shifts)")
                apply_gate(a, greedy, noise)
                for r in greedy:
                    log(f"  {r['name']}: " + ("PASS" if r["ok"] else "FAIL") + f" ({r['verdict']})")
            if "logits" in only:
                for name, prompt in LOGITS_PROMPTS:
                    log(f"logits: {name}")
                    r = check_logits(a, name, prompt, tmp)
                    logits.append(r)
                    if r["error"]:
                        log(f"  -> ERROR: {r['error']}")
                    else:
                        log(f"  -> max_abs {r['max_abs']:.4g} mean_abs {r['mean_abs']:.4g} "
                            f"KL {r['kl']:.3e} argmax {r['argmax_peer']}/{r['argmax_ember']}"
                            + (f" (peer default vs precise: KL {r['peer_self']['kl']:.3e})"
                               if "peer_self" in r else ""))
            if "greedy" in only:
                for label, path, n_bytes in GGML_LONG:
                    if not os.path.exists(path):
                        continue
                    for threads in GGML_LONG_THREADS:
                        log(f"ggml numerics, long prompt: {label}, {threads} thread(s)")
                        with open(path, "rb") as f:
                            prompt = f.read()[:n_bytes].decode("utf-8", errors="ignore")
                        r = check_ggml(a, a.model, prompt, a.n_predict, threads, tmp)
                        r["label"] = label
                        longs.append(r)
                        log("  -> " + (f"ERROR: {r['error']}" if r["error"] else
                                       f"{r['n_prompt']} prompt tokens; greedy {fmt_div(r['div'])}; "
                                       f"logits {'bit-identical' if r['logits_identical'] else 'DIFFER'}"))
            if "greedy" in only:
                for label, fname in GGML_OTHER_MODELS:
                    model = os.path.join(BENCH_DIR, fname)
                    if not os.path.exists(model):
                        log(f"ggml numerics, {label}: {model} not generated (bench/compare.sh); skipped")
                        continue
                    for plabel, prompt in GGML_OTHER_PROMPTS:
                        if prompt is None:
                            with open("/usr/share/common-licenses/GPL-3", "rb") as f:
                                prompt = f.read()[:1400].decode("utf-8", errors="ignore")
                        log(f"ggml numerics, {label}: {plabel}")
                        r = check_ggml(a, model, prompt, GGML_OTHER_N, a.threads, tmp)
                        r.update(label=label, plabel=plabel)
                        others.append(r)
                        log("  -> " + (f"ERROR: {r['error']}" if r["error"] else
                                       f"{r['n_prompt']} prompt tokens; greedy {fmt_div(r['div'])}; "
                                       f"logits {'bit-identical' if r['logits_identical'] else 'DIFFER'}"))
    except CmdError as e:
        # a failure on the peer side: the harness itself is broken
        log(f"peer failure: {e}")
        return 2

    failed = any(r["error"] or not r["ok"] for r in greedy) or \
        any(validate_models.model_failed(m) for m in models) or \
        any(r["error"] for r in logits) or \
        any(r["div_ggml"] is not None for r in greedy if not r["error"]) or \
        any(not r["ggml_identical"] for r in logits if not r["error"]) or \
        any(r["error"] or not r["ok"] for r in longs) or \
        any(r["error"] or not r["ok"] for r in others)
    write_report(a, greedy, logits, models, noise, started, time.monotonic() - t0, failed, longs,
                 others)
    n_g = sum(1 for r in greedy if r["ok"])
    n_id = sum(1 for r in greedy if not r["error"] and r["div"]["default"] is None)
    n_gg = sum(1 for r in greedy if not r["error"] and r["div_ggml"] is None)
    n_gl = sum(1 for r in logits if not r["error"] and r["ggml_identical"])
    n_lo = sum(1 for r in longs if not r["error"] and r["ok"])
    n_ot = sum(1 for r in others if not r["error"] and r["ok"])
    if greedy or logits or longs or others:
        log(f"--numerics ggml: greedy identical {n_gg}/{len(greedy)}, logits bit-identical "
            f"{n_gl}/{len(logits)}, long prompts identical {n_lo}/{len(longs)}, other weight "
            f"types identical {n_ot}/{len(others)}")
        log(f"greedy identical to the default peer: {n_id}/{len(greedy)}; "
            f"greedy passing gate {a.gate}: {n_g}/{len(greedy)}")
    for m in models:
        log(f"[{m['key']}] " + validate_models.model_line(m))
    log(f"report: {a.out}")
    log("RESULT: " + ("FAIL" if failed else "PASS"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
