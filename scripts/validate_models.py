#!/usr/bin/env python3
"""Per-model checks of ember against llama.cpp, driven by scripts/validate_compare.py.

For each model of the table (validate_compare.py's MODELS, plus --extra-model):
  * probe: `ember info -m M`; a model ember refuses as unsupported is reported
    as "not supported by ember yet" and its checks are skipped;
  * tokenization: the ids of long real texts must be identical (check_tokenize);
  * teacher-forced: the same token ids (the first TF_TOKENS of a real text, as
    llama.cpp tokenizes it) through both engines, every position's logits:
    `peer_tool logits --tokens IDS --all` (one batch) and
    `ember eval --tokens IDS --all-logits` (one token per eval; ember's logits
    do not depend on the chunking). Per position: top-1 agreement and
    KL(peer || ember) of the next-token distributions, streamed row by row
    (Gemma's 262,144-token vocabulary makes 600 MiB per side and text);
  * perplexity: `ember perplexity -f F -c 512 --chunks K` against
    `llama-perplexity -f F -c 512 --chunks K`, the same method and chunks;
  * greedy continuations of CONT_PROMPTS (one in the model's chat format):
    identical to the peer, or the first divergence with both sides' margins
    between the two candidate tokens (analyze_divergence, as for the reference
    model) and whether it is a near-tie for llama.cpp itself (margin below
    T_tf, the 99th percentile of the margin shifts between llama.cpp's default
    and precise configurations over the teacher-forced positions).

  * reference (distance to exact math): the first REF_TOKENS tokens of the
    first text through the plain-float reference forward
    (bench/reference_logits.cpp: doubles, no activation rounding, no KV cache),
    also with only the int8 activation rounding both engines do
    (--int8-acts), and KL(exact || x) for ember and both peer configurations:
    which engine is nearer exact math, and how much of the distance that
    rounding alone makes.

Only tokenization mismatches and failing ember commands on a model ember loads
fail the run; the targets (TARGETS) are reported, next to llama.cpp's own
default-vs-precise spread.
"""

from __future__ import annotations

import argparse
import glob
import json
import math
import os
import re
import subprocess
import sys
import tempfile

from validate_common import (CmdError, analyze_divergence, check_tokenize, display_path,
                             first_mismatch, fmt_div, fmt_tok, ids_of, log, md_cell,
                             parse_ids, parse_json_obj, peer_cmd, quantile, run, sha256_of,
                             strip_eog, top_ids)

try:
    import numpy as np
except ImportError:  # the stdlib fallback is the same arithmetic, much slower
    np = None

# ----------------------------------------------------------------- test data


def _first_glob(pattern: str) -> str:
    hits = sorted(glob.glob(pattern))
    return hits[0] if hits else pattern


# Real texts for the teacher-forced comparison: legal prose, Python source,
# technical prose. The first TF_TOKENS tokens of each (those present).
TF_TEXTS = [
    ("GPL-3", "/usr/share/common-licenses/GPL-3"),
    ("textwrap.py", _first_glob("/usr/lib/python3*/textwrap.py")),
    ("dpkg triggers.txt", "/usr/share/doc/dpkg/spec/triggers.txt"),
]
TF_TOKENS = 600

# Perplexity texts (each needs 2 * 512 tokens: llama-perplexity refuses less).
PPL_TEXTS = [
    ("GPL-3", "/usr/share/common-licenses/GPL-3"),
    ("textwrap.py", _first_glob("/usr/lib/python3*/textwrap.py")),
]
PPL_CTX = 512
PPL_CHUNKS = 4

# Chat formats by name; {msg} is the user's message. BOS, when the model adds
# one, comes from the tokenizer (add_special) on both sides.
CHAT_FORMATS = {
    "chatml": "<|im_start|>user\n{msg}<|im_end|>\n<|im_start|>assistant\n",
    "gemma": "<start_of_turn>user\n{msg}<end_of_turn>\n<start_of_turn>model\n",
    "llama3": ("<|start_header_id|>user<|end_header_id|>\n\n{msg}<|eot_id|>"
               "<|start_header_id|>assistant<|end_header_id|>\n\n"),
    None: "User: {msg}\nAssistant:",  # no known format: plain text
}
CHAT_MESSAGE = "Write a short poem about the sea."

# (name, prompt); None is the chat turn in the model's format.
CONT_PROMPTS = [
    ("prose", "The old lighthouse keeper climbed the winding stairs every evening, and"),
    ("code", 'def fibonacci(n):\n    """Return the n-th Fibonacci number."""\n'),
    ("list", "Here is a list of five fruits that are high in vitamin C:\n1."),
    ("question", "Question: How do airplanes stay in the air?\nAnswer: "),
    ("french", "Il était une fois, dans un petit village de Provence, une boulangère qui"),
    ("chinese", "长城是中国古代最伟大的建筑之一，它"),
    ("json", '{"name": "Alice", "age": 30, "languages": ["English", '),
    ("c", "#include <stdio.h>\n\nint main(void) {\n    int sum = 0;\n    for (int i = 1; i <= 10; ++i)"),
    ("math", "The derivative of x^3 + 2x with respect to x is"),
    ("chat", None),
]
CONT_N = 64

TARGETS = dict(top1=99.0, kl_mean=1e-3, ppl_rel=0.5)  # %, nats, %
REF_TOKENS = 128  # the reference forward is O(n^2) in doubles: ~20-120 s per model
WORST_K = 5  # worst positions listed per model
TIE_QUANTILE = 0.99


def guess_chat_format(key: str):
    k = key.lower()
    for word, fmt in (("gemma", "gemma"), ("llama", "llama3"), ("qwen", "chatml"),
                      ("smol", "chatml")):
        if word in k:
            return fmt
    return None


# ----------------------------------------------------------------- probe


def probe(a) -> dict:
    """Whether ember loads the model: ok (with its architecture), unsupported
    (ember refuses it cleanly), or error."""
    try:
        out, _ = run([a.ember, "info", "-m", a.model])
    except CmdError as e:
        line = str(e).splitlines()[0]
        m = re.search(r"ember: error: (.*)\)$", line) or re.search(r"\((.*)\)$", line)
        msg = (m.group(1) if m else line).replace(a.model + ": ", "")
        arch = re.search(r"unsupported architecture '([^']*)'", msg)
        if "unsupported" in msg or "not supported" in msg:
            return dict(status="unsupported", arch=arch.group(1) if arch else None, msg=msg)
        return dict(status="error", arch=None, msg=msg)
    arch = re.search(r"^architecture:\s*(\S+)", out.decode("utf-8", "replace"), re.M)
    return dict(status="ok", arch=arch.group(1) if arch else "?", msg="")


# ----------------------------------------------------------------- teacher-forced


def _rows(path: str, n_vocab: int):
    """The rows of an `--all` logits file, one at a time (f32 LE)."""
    import array
    size = n_vocab * 4
    with open(path, "rb") as f:
        while True:
            b = f.read(size)
            if not b:
                return
            if len(b) != size:
                raise CmdError(f"{path}: truncated row ({len(b)} of {size} bytes)")
            if np is not None:
                yield np.frombuffer(b, dtype="<f4")
            else:
                v = array.array("f")
                v.frombytes(b)
                if sys.byteorder == "big":
                    v.byteswap()
                yield v


def _log_softmax(v):
    if np is not None:
        x = v.astype(np.float64)
        x -= x.max()
        x -= math.log(float(np.exp(x).sum()))
        return x
    m = max(v)
    lse = m + math.log(math.fsum(math.exp(x - m) for x in v))
    return [x - lse for x in v]


def _kl(lp, lq) -> float:
    """KL(p || q) from log-probabilities, in nats."""
    if np is not None:
        return max(0.0, float((np.exp(lp) * (lp - lq)).sum()))  # no BLAS threads
    return max(0.0, math.fsum(math.exp(a) * (a - b) for a, b in zip(lp, lq)))


def _finite(v) -> bool:
    if np is not None:
        return bool(np.isfinite(v).all())
    return all(math.isfinite(x) for x in v)


def _top2(v, lp):
    """[(id, p), (id, p)] of the two most likely tokens."""
    return [(t, math.exp(float(lp[t]))) for t in top_ids(v, 2)]


def _margin_shifts(ref, other, k=5):
    t = top_ids(ref, k)
    a1 = t[0]
    return [abs((float(ref[a1]) - float(ref[b])) - (float(other[a1]) - float(other[b])))
            for b in t[1:]]


def check_teacher(a, label, path, tmp) -> dict:
    """Every position's next-token distribution, ember vs the peer, on the same ids."""
    res = dict(label=label, path=path, error=None, rows=[])
    out, _ = run([a.peer, "tokenize", "-m", a.model, "-f", path])
    ids = parse_ids(out, "peer_tool tokenize")[:a.tf_tokens]
    res["n"] = len(ids)
    id_list = ",".join(map(str, ids))
    files = {}
    try:
        for cfg in a.peer_configs:
            files[cfg] = os.path.join(tmp, f"tf_{cfg}.f32")
            o, _ = run(peer_cmd(a, "logits", cfg, "--tokens", id_list, "--all", "-o", files[cfg]))
            n_vocab = int(parse_json_obj(o, "peer_tool logits")["n_vocab"])
        files["ember"] = os.path.join(tmp, "tf_ember.f32")
        try:
            run([a.ember, "eval", "-m", a.model, "--tokens", id_list, "--all-logits",
                 "--logits-out", files["ember"], "-t", str(a.threads), "-c", str(max(len(ids), 8))],
                timeout=3600)
        except CmdError as e:
            res["error"] = str(e)
            return res
        want = len(ids) * n_vocab * 4
        for k, f in files.items():
            if os.path.getsize(f) != want:
                raise CmdError(f"{k} logits: {os.path.getsize(f)} bytes, expected {want} "
                               f"({len(ids)} x {n_vocab} f32)")
        readers = {k: _rows(f, n_vocab) for k, f in files.items()}
        for pos in range(len(ids)):
            D, E = next(readers["default"]), next(readers["ember"])
            Q = next(readers["precise"]) if "precise" in readers else None
            r = dict(pos=pos, next=ids[pos + 1] if pos + 1 < len(ids) else None)
            if not (_finite(D) and _finite(E) and (Q is None or _finite(Q))):
                r.update(kl=math.inf, agree=False, finite=False)
                res["rows"].append(r)
                continue
            ld, le = _log_softmax(D), _log_softmax(E)
            r["kl"] = _kl(ld, le)
            r["top_peer"], r["top_ember"] = _top2(D, ld), _top2(E, le)
            r["agree"] = r["top_peer"][0][0] == r["top_ember"][0][0]
            if Q is not None:
                lq = _log_softmax(Q)
                q1 = top_ids(Q, 1)[0]
                r["kl_precise"] = _kl(lq, le)            # KL(precise || ember)
                r["agree_precise"] = q1 == r["top_ember"][0][0]
                r["kl_self"] = _kl(ld, lq)               # KL(default || precise)
                r["agree_self"] = q1 == r["top_peer"][0][0]
                r["shifts"] = _margin_shifts(D, Q)
            res["rows"].append(r)
    finally:
        for f in files.values():
            if os.path.exists(f):
                os.remove(f)
    return res


def check_reference(a, tmp) -> dict:
    """KL(exact || x) per position for ember, the peer configurations and the
    reference with int8 activations, over the first REF_TOKENS of TF_TEXTS[0]."""
    res = dict(error=None, stats={})
    ref_bin = os.path.join(os.path.dirname(a.ember), "ember_reference_logits")
    if not os.path.exists(ref_bin):
        res["error"] = f"{ref_bin} not built (cmake --build build --target ember_reference_logits)"
        return res
    out, _ = run([a.peer, "tokenize", "-m", a.model, "-f", TF_TEXTS[0][1]])
    ids = parse_ids(out, "peer_tool tokenize")[:REF_TOKENS]
    id_list = ",".join(map(str, ids))
    res["n"] = len(ids)
    files = {"exact": os.path.join(tmp, "ref_exact.f32"),
             "int8 activations": os.path.join(tmp, "ref_int8.f32"),
             "ember": os.path.join(tmp, "ref_ember.f32")}
    try:
        run([ref_bin, a.model, id_list, files["exact"]], timeout=3600)
        run([ref_bin, a.model, id_list, files["int8 activations"], "--int8-acts"], timeout=3600)
        run([a.ember, "eval", "-m", a.model, "--tokens", id_list, "--all-logits", "--logits-out",
             files["ember"], "-t", str(a.threads), "-c", str(max(len(ids), 8))], timeout=3600)
        n_vocab = 0
        for cfg in a.peer_configs:
            files[f"llama.cpp {cfg}"] = os.path.join(tmp, f"ref_peer_{cfg}.f32")
            o, _ = run(peer_cmd(a, "logits", cfg, "--tokens", id_list, "--all", "-o",
                                files[f"llama.cpp {cfg}"]))
            n_vocab = int(parse_json_obj(o, "peer_tool logits")["n_vocab"])
        readers = {k: _rows(f, n_vocab) for k, f in files.items()}
        kls = {k: [] for k in files if k != "exact"}
        agree = {k: 0 for k in kls}
        for _ in ids:
            X = next(readers["exact"])
            lx, x1 = _log_softmax(X), top_ids(X, 1)[0]
            for k in kls:
                V = next(readers[k])
                kls[k].append(_kl(lx, _log_softmax(V)))
                agree[k] += top_ids(V, 1)[0] == x1
        for k, v in kls.items():
            res["stats"][k] = dict(mean=math.fsum(v) / len(v), median=quantile(v, 0.5),
                                   p99=quantile(v, 0.99), max=max(v),
                                   top1=100.0 * agree[k] / len(v))
    except CmdError as e:
        res["error"] = str(e)
    finally:
        for f in files.values():
            if os.path.exists(f):
                os.remove(f)
    return res


def tf_summary(rows) -> dict | None:
    """Top-1 agreement and the KL distribution over a list of position rows."""
    if not rows:
        return None
    kls = [r["kl"] for r in rows]
    s = dict(n=len(rows), top1=100.0 * sum(r["agree"] for r in rows) / len(rows),
             kl_mean=math.fsum(kls) / len(kls), kl_median=quantile(kls, 0.5),
             kl_p99=quantile(kls, 0.99), kl_max=max(kls))
    if all("kl_precise" in r for r in rows):
        s["precise_top1"] = 100.0 * sum(r["agree_precise"] for r in rows) / len(rows)
        s["precise_kl_mean"] = math.fsum(r["kl_precise"] for r in rows) / len(rows)
        s["self_top1"] = 100.0 * sum(r["agree_self"] for r in rows) / len(rows)
        s["self_kl_mean"] = math.fsum(r["kl_self"] for r in rows) / len(rows)
        shifts = [x for r in rows for x in r["shifts"]]
        s["T"] = quantile(shifts, TIE_QUANTILE) if shifts else None
    return s


# ----------------------------------------------------------------- perplexity

_FINAL = re.compile(rb"Final estimate: PPL = ([0-9.]+) \+/- ([0-9.]+)")

# llama-perplexity's flags for the precise configuration (peer_tool's --fa off --kv f32)
PPL_PEER_FLAGS = {"default": [], "precise": ["-fa", "off", "-ctk", "f32", "-ctv", "f32"]}


def check_ppl(a, label, path) -> dict:
    res = dict(label=label, path=path, error=None, peer={})
    common = ["-m", a.model, "-f", path, "-c", str(PPL_CTX), "--chunks", str(a.ppl_chunks),
              "-t", str(a.threads)]
    for cfg in a.peer_configs:
        p = run_peer_ppl([a.llama_perplexity, *common, *PPL_PEER_FLAGS[cfg]])
        res["peer"][cfg] = p
    try:
        out, _ = run([a.ember, "perplexity", *common, "--json"], timeout=3600)
        e = parse_json_obj(out, "ember perplexity --json")
    except CmdError as e:
        res["error"] = str(e)
        return res
    res["ember"] = float(e["ppl"])
    res["n_scored"] = int(e["n_scored"])
    for cfg, p in res["peer"].items():
        res[f"diff_{cfg}"] = 100.0 * (res["ember"] - p) / p
    return res


def run_peer_ppl(cmd) -> float:
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=3600)
    m = _FINAL.search(p.stdout) or _FINAL.search(p.stderr)
    if p.returncode != 0 or not m:
        tail = p.stderr.decode("utf-8", "replace").strip().splitlines()[-3:]
        raise CmdError(f"llama-perplexity: exit code {p.returncode}, no final estimate\n    "
                       + "\n    ".join(tail))
    return float(m.group(1))


# ----------------------------------------------------------------- greedy


def check_continuation(a, name, prompt, T, tmp) -> dict:
    res = dict(name=name, prompt=prompt, error=None, peers={}, div={})
    for cfg in a.peer_configs:
        out, _ = run(peer_cmd(a, "greedy", cfg, "-p", prompt, "-n", str(CONT_N)))
        res["peers"][cfg] = parse_json_obj(out, f"peer_tool greedy ({cfg})")
    peer = res["peer"] = res["peers"]["default"]
    if "precise" in res["peers"]:
        res["peer_self_div"] = first_mismatch(ids_of(peer), ids_of(res["peers"]["precise"]))
    try:
        out, _ = run([a.ember, "run", "-m", a.model, "-p", prompt, "-n", str(CONT_N), "--temp",
                      "0", "--json", "-t", str(a.threads)])
        ember = parse_json_obj(out, "ember run")
        res["ember"] = ember
        res["ember_n_prompt"] = int(ember["n_prompt"])
        for cfg, pj in res["peers"].items():
            res["div"][cfg] = first_mismatch(ids_of(pj), strip_eog(ids_of(ember), pj))
        res["ember_ids"] = strip_eog(ids_of(ember), peer)
        if res["div"]["default"] is not None:
            res["tie"] = analyze_divergence(a, name, res, tmp)
            if T is not None:
                res["tie"]["near_tie"] = res["tie"]["peer"]["margin"] < T
    except (CmdError, KeyError, ValueError) as e:
        res["error"] = str(e)
    return res


# ----------------------------------------------------------------- driver


def run_model(a, key, label, path, chat, sections, tokenize_files) -> dict:
    """All selected checks on one model; `a` is the run's arguments."""
    m = dict(key=key, label=label, path=path, chat=chat, status="missing")
    if not os.path.exists(path):
        log(f"[{key}] {display_path(path)} not found: skipped")
        return m
    am = argparse.Namespace(**vars(a))
    am.model = path
    m.update(probe(am))
    m["bytes"], m["sha"] = os.path.getsize(path), sha256_of(path)[:16]
    if m["status"] != "ok":
        what = "not supported by ember yet" if m["status"] == "unsupported" else "ember ERROR"
        log(f"[{key}] {what}: {m['msg']}")
        return m
    log(f"[{key}] {label}: architecture {m['arch']}")
    with tempfile.TemporaryDirectory(prefix=f"ember-validate-{key}-") as tmp:
        if "tokenize" in sections:
            m["tokenize"] = []
            for tlabel, tpath in tokenize_files:
                r = check_tokenize(am, tlabel, tpath)
                m["tokenize"].append(r)
                log(f"[{key}] tokenize {tlabel}: " + (
                    f"ERROR {r['error']}" if r["error"] else
                    f"identical ({r['n_peer']} tokens)" if r["ok"] else f"MISMATCH at {r['div']}"))
        if "teacher" in sections:
            m["teacher"] = []
            for tlabel, tpath in TF_TEXTS:
                if not os.path.exists(tpath):
                    log(f"[{key}] teacher-forced {tlabel}: {tpath} not found, skipped")
                    continue
                log(f"[{key}] teacher-forced: {tlabel}")
                r = check_teacher(am, tlabel, tpath, tmp)
                r["summary"] = tf_summary(r["rows"])
                m["teacher"].append(r)
                s = r["summary"]
                log(f"[{key}]   -> " + (f"ERROR {r['error']}" if r["error"] else
                                       f"{s['n']} positions, top-1 {s['top1']:.2f}%, KL mean "
                                       f"{s['kl_mean']:.3e} max {s['kl_max']:.3e}"))
            m["tf_all"] = tf_summary([row for r in m["teacher"] if not r["error"]
                                      for row in r["rows"]])
            worst = sorted(((row["kl"], r["label"], row) for r in m["teacher"] if not r["error"]
                            for row in r["rows"]), key=lambda x: -x[0])[:WORST_K]
            m["worst"] = [(lbl, row) for _, lbl, row in worst]
            if m["worst"]:
                toks = sorted({t for _, row in m["worst"] for t, _ in
                               row.get("top_peer", []) + row.get("top_ember", [])}
                              | {row["next"] for _, row in m["worst"] if row["next"] is not None})
                out, _ = run([a.peer, "pieces", "-m", path, "--tokens", ",".join(map(str, toks))])
                m["pieces"] = dict(zip(toks, json.loads(out.decode("utf-8", "replace"))))
        if "reference" in sections:
            log(f"[{key}] distance to exact math ({REF_TOKENS} tokens, reference forward)")
            r = check_reference(am, tmp)
            m["reference"] = r
            log(f"[{key}]   -> " + (f"ERROR {r['error']}" if r["error"] else ", ".join(
                f"{k} {v['mean']:.2e}" for k, v in r["stats"].items())))
        if "ppl" in sections:
            m["ppl"] = []
            for plabel, ppath in PPL_TEXTS:
                if not os.path.exists(ppath):
                    continue
                log(f"[{key}] perplexity: {plabel}")
                r = check_ppl(am, plabel, ppath)
                m["ppl"].append(r)
                log(f"[{key}]   -> " + (f"ERROR {r['error']}" if r["error"] else
                                       f"ember {r['ember']:.4f}, peer {r['peer']['default']:.4f} "
                                       f"({r['diff_default']:+.2f}%)"))
        if "continuations" in sections:
            T = (m.get("tf_all") or {}).get("T")
            fmt = CHAT_FORMATS.get(chat, CHAT_FORMATS[None])
            m["cont"] = []
            for name, prompt in CONT_PROMPTS:
                if prompt is None:
                    prompt = fmt.format(msg=CHAT_MESSAGE)
                log(f"[{key}] greedy: {name}")
                r = check_continuation(am, name, prompt, T, tmp)
                m["cont"].append(r)
                tie = r.get("tie")
                log(f"[{key}]   -> " + (f"ERROR {r['error']}" if r["error"] else
                                       fmt_div(r["div"]["default"]) +
                                       (f"; margins peer {tie['peer']['margin']:.4f} ember "
                                        f"{tie['ember']['margin']:.4f}" if tie else "")))
    return m


def model_failed(m) -> bool:
    if m["status"] == "error":
        return True
    if m["status"] != "ok":
        return False
    return (any(r["error"] or not r["ok"] for r in m.get("tokenize", []))
            or any(r["error"] for k in ("teacher", "ppl", "cont") for r in m.get(k, [])))


# ----------------------------------------------------------------- report


def model_line(m) -> str:
    """One line of results, for the log and the report's Result."""
    if m["status"] == "missing":
        return f"{m['label']}: file not found, skipped"
    if m["status"] == "unsupported":
        return f"{m['label']}: not supported by ember yet"
    if m["status"] == "error":
        return f"{m['label']}: ember ERROR ({m['msg']})"
    parts = []
    if m.get("tokenize"):
        parts.append("tokenization " + _tok_cell(m).strip("*"))
    s = m.get("tf_all")
    if s:
        parts.append(f"teacher-forced top-1 {s['top1']:.2f}%, KL mean {_e(s['kl_mean'])}")
    rs = [r for r in m.get("ppl", []) if not r["error"]]
    if rs:
        parts.append("ppl " + ", ".join(f"{r['diff_default']:+.2f}%" for r in rs))
    if m.get("cont"):
        parts.append(f"greedy identical {_cont_cell(m)}")
    errors = sum(1 for k in ("teacher", "ppl", "cont") for r in m.get(k, []) if r["error"])
    if errors:
        parts.append(f"**{errors} ember errors**")
    return f"{m['label']}: " + (", ".join(parts) if parts else "loads")


def _e(x) -> str:
    return f"{x:.2e}" if math.isfinite(x) else "inf"


def _meets(ok: bool) -> str:
    return "" if ok else " ✗"


def _ppl_cells(m):
    """ember / peer (diff) over the perplexity texts, for the summary table."""
    rs = [r for r in m.get("ppl", []) if not r["error"]]
    if not rs:
        return "-"
    return "<br>".join(f"{r['ember']:.3f} / {r['peer']['default']:.3f} ({r['diff_default']:+.2f}%"
                       f"{_meets(abs(r['diff_default']) <= TARGETS['ppl_rel'])})" for r in rs)


def _cont_cell(m):
    rs = [r for r in m.get("cont", []) if not r["error"]]
    if not m.get("cont"):
        return "-"
    n_id = sum(1 for r in rs if r["div"]["default"] is None)
    n_err = len(m["cont"]) - len(rs)
    return f"{n_id}/{len(m['cont'])}" + (f" ({n_err} errors)" if n_err else "")


def _tok_cell(m):
    rs = m.get("tokenize")
    if not rs:
        return "-"
    n_ok = sum(1 for r in rs if not r["error"] and r["ok"])
    return f"{n_ok}/{len(rs)} identical" if n_ok == len(rs) else f"**{n_ok}/{len(rs)} identical**"


def _tok(m, t, p=None):
    piece = m.get("pieces", {}).get(t, "?")
    s = json.dumps(piece, ensure_ascii=False).replace("|", "\\|").replace("`", "'")
    return f"`{s}`" + (f" {p:.3f}" if p is not None else f" ({t})")


def write_models(w, a, models):
    """The Models section: a summary table, then one subsection per model."""
    w("## Models")
    w("")
    w("Every model of the table in `scripts/validate_compare.py` (`MODELS`; "
      "`--models KEY,...` picks some, `--extra-model KEY=PATH` or `VALIDATE_EXTRA_MODELS` adds "
      "others) against the default peer. Targets: teacher-forced top-1 agreement ≥ "
      f"{TARGETS['top1']:g}%, mean KL(peer‖ember) ≤ {TARGETS['kl_mean']:g}, perplexity within "
      f"{TARGETS['ppl_rel']:g}% (✗: missed). They are reported, not gated: only a tokenization "
      "mismatch or a failing ember command fails the run. For scale, *llama.cpp default vs "
      "precise* is llama.cpp against itself (`--fa off --kv f32`) on the same positions.")
    w("")
    w("| model | arch | ember | tokenization | teacher-forced top-1 | KL mean | KL median | KL p99 "
      "| KL max | llama.cpp default vs precise: top-1 / KL mean | perplexity ember / peer (diff) "
      "| greedy identical |")
    w("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for m in models:
        arch = m.get("arch") or "?"
        if m["status"] == "missing":
            w(f"| {m['label']} | - | file not found: skipped |" + " - |" * 9)
            continue
        if m["status"] != "ok":
            what = ("not supported by ember yet" if m["status"] == "unsupported"
                    else "**ERROR**: " + m["msg"].replace("|", "/"))
            w(f"| {m['label']} | {arch} | {what} |" + " - |" * 9)
            continue
        s = m.get("tf_all")
        tf = "- | - | - | - | - | -" if not s else (
            f"{s['top1']:.2f}%{_meets(s['top1'] >= TARGETS['top1'])} | "
            f"{_e(s['kl_mean'])}{_meets(s['kl_mean'] <= TARGETS['kl_mean'])} | "
            f"{_e(s['kl_median'])} | {_e(s['kl_p99'])} | {_e(s['kl_max'])} | "
            + (f"{s['self_top1']:.2f}% / {_e(s['self_kl_mean'])}" if "self_top1" in s else "-"))
        w(f"| {m['label']} | {arch} | runs | {_tok_cell(m)} | {tf} | {_ppl_cells(m)} | "
          f"{_cont_cell(m)} |")
    w("")
    w("Tokenization: the texts of `TOKENIZE_FILES` and `stress-text`, a generated file (digits, "
      "contractions, whitespace runs, CJK, emoji, combining marks, code; `STRESS_TEXT` in "
      "`scripts/validate_compare.py`). "
      f"Teacher-forced: the first {a.tf_tokens} tokens of each of "
      f"{', '.join(l for l, p in TF_TEXTS if os.path.exists(p))} (llama.cpp's tokenization), "
      "the next-token distribution at every position. Perplexity: "
      f"{', '.join(l for l, p in PPL_TEXTS if os.path.exists(p))}, -c {PPL_CTX}, the first "
      f"{a.ppl_chunks} chunks. Greedy: {CONT_N} tokens of {len(CONT_PROMPTS)} prompts.")
    w("")
    for m in models:
        if m["status"] == "ok":
            write_model(w, a, m)


def write_model(w, a, m):
    precise = "precise" in a.peer_configs
    w(f"### {m['label']}")
    w("")
    w(f"`{display_path(m['path'])}` ({m['bytes']:,} bytes, sha256 `{m['sha']}…`), architecture "
      f"`{m['arch']}`, chat format `{m['chat']}`.")
    w("")
    if m.get("tokenize"):
        w("| tokenization | bytes | tokens peer / ember | identical |")
        w("|---|---|---|---|")
        for r in m["tokenize"]:
            if r["error"]:
                w(f"| `{r['label']}` | {r['bytes']:,} | - | **ERROR** {r['error'].splitlines()[0]} |")
                continue
            mm = "yes" if r["ok"] else (f"**NO**, from token {r['div']} (peer `{r['peer_ctx']}` "
                                        f"ember `{r['ember_ctx']}`)")
            w(f"| `{r['label']}` | {r['bytes']:,} | {r['n_peer']} / {r['n_ember']} | {mm} |")
        w("")
    if m.get("teacher"):
        hdr = "| teacher-forced | positions | top-1 | KL mean | KL median | KL p99 | KL max |"
        sep = "|---|---|---|---|---|---|---|"
        if precise:
            hdr += " vs precise peer: top-1 / KL mean | llama.cpp default vs precise: top-1 / KL mean |"
            sep += "---|---|"
        w(hdr)
        w(sep)
        rows = [(r["label"], r) for r in m["teacher"]]
        for lbl, r in rows + [("**all**", dict(summary=m.get("tf_all"), error=None))]:
            s = r["summary"]
            if r["error"] or not s:
                w(f"| {lbl} | - | **ERROR** {(r['error'] or '').splitlines()[0]} | | | | |"
                  + (" | |" if precise else ""))
                continue
            row = (f"| {lbl} | {s['n']} | {s['top1']:.2f}% | {_e(s['kl_mean'])} | "
                   f"{_e(s['kl_median'])} | {_e(s['kl_p99'])} | {_e(s['kl_max'])} |")
            if precise and "precise_top1" in s:
                row += (f" {s['precise_top1']:.2f}% / {_e(s['precise_kl_mean'])} | "
                        f"{s['self_top1']:.2f}% / {_e(s['self_kl_mean'])} |")
            w(row)
        w("")
        if m.get("worst"):
            w(f"Largest KL(peer‖ember), the {len(m['worst'])} worst positions (position i: the "
              "distribution of token i+1 given tokens 0..i; top-2 with probabilities):")
            w("")
            w("| text | position | KL | next token in the text | default peer top-2 | ember top-2 |")
            w("|---|---|---|---|---|---|")
            for lbl, row in m["worst"]:
                nxt = "-" if row["next"] is None else _tok(m, row["next"])
                tp = ", ".join(_tok(m, t, p) for t, p in row.get("top_peer", []))
                te = ", ".join(_tok(m, t, p) for t, p in row.get("top_ember", []))
                w(f"| {lbl} | {row['pos']} | {_e(row['kl'])} | {nxt} | {tp} | {te} |")
            w("")
    if m.get("reference"):
        r = m["reference"]
        if r["error"]:
            w(f"Distance to exact math: **ERROR** {r['error'].splitlines()[0]}")
        else:
            w(f"Distance to exact math: KL(exact‖x) of the next-token distributions over the "
              f"first {r['n']} tokens of {TF_TEXTS[0][0]}, *exact* being the plain-float "
              "reference forward (`ember_reference_logits`: doubles, no activation rounding, no "
              "KV cache); *int8 activations* is the same with only the int8 rounding of every "
              "matrix input that both engines do; top-1 = agreement with exact's argmax.")
            w("")
            w("| vs exact | KL mean | KL median | KL p99 | KL max | top-1 |")
            w("|---|---|---|---|---|---|")
            for k, v in r["stats"].items():
                w(f"| {k} | {_e(v['mean'])} | {_e(v['median'])} | {_e(v['p99'])} | "
                  f"{_e(v['max'])} | {v['top1']:.1f}% |")
        w("")
    if m.get("ppl"):
        hdr = "| perplexity | tokens scored | llama.cpp default | ember | diff |"
        sep = "|---|---|---|---|---|"
        if precise:
            hdr += " llama.cpp precise | ember vs precise |"
            sep += "---|---|"
        w(hdr)
        w(sep)
        for r in m["ppl"]:
            if r["error"]:
                w(f"| {r['label']} | - | {r['peer'].get('default', '-')} | **ERROR** "
                  f"{r['error'].splitlines()[0]} | - |" + (" - | - |" if precise else ""))
                continue
            row = (f"| {r['label']} | {r['n_scored']} | {r['peer']['default']:.4f} | "
                   f"{r['ember']:.4f} | {r['diff_default']:+.2f}% |")
            if precise:
                row += f" {r['peer']['precise']:.4f} | {r['diff_precise']:+.2f}% |"
            w(row)
        w("")
    if m.get("cont"):
        T = (m.get("tf_all") or {}).get("T")
        hdr = ("| greedy | prompt | n_prompt peer/ember | vs default peer | at the divergence: "
               "peer token / ember token | peer margin | ember margin |")
        sep = "|---|---|---|---|---|---|---|"
        if precise:
            hdr += " near-tie (< T_tf) | vs precise peer | default vs precise |"
            sep += "---|---|---|"
        w(hdr)
        w(sep)
        for r in m["cont"]:
            p = r.get("peer", {})
            if r["error"]:
                w(f"| {r['name']} | {md_cell(r['prompt'], 50)} | {p.get('n_prompt', '?')}/- | "
                  f"**ERROR** {r['error'].splitlines()[0].replace('|', '/')} | | | |"
                  + (" | | |" if precise else ""))
                continue
            d = r["div"]["default"]
            tie = r.get("tie")
            toks = pm = em = nt = "-"
            if tie:
                pp = tie.get("pieces", ["?", "?"])
                toks = (fmt_tok(pp[0], tie["peer_tok"], tie["peer_eog"]) + " / "
                        + fmt_tok(pp[1], tie["ember_tok"], tie["ember_eog"]))
                pm, em = f"{tie['peer']['margin']:.4f}", f"{tie['ember']['margin']:.4f}"
                if "near_tie" in tie:
                    nt = "yes" if tie["near_tie"] else "**no**"
            row = (f"| {r['name']} | {md_cell(r['prompt'], 50)} | {p.get('n_prompt', '?')}/"
                   f"{r.get('ember_n_prompt', '?')} | {'identical' if d is None else f'**diverges at {d}**'} "
                   f"| {toks} | {pm} | {em} |")
            if precise:
                row += (f" {nt} | {fmt_div(r['div'].get('precise'))} | "
                        f"{fmt_div(r.get('peer_self_div'))} |")
            w(row)
        w("")
        n_id = sum(1 for r in m["cont"] if not r["error"] and r["div"]["default"] is None)
        line = f"Identical to the default peer for all {CONT_N} tokens: **{n_id}/{len(m['cont'])}**"
        if precise:
            n_self = sum(1 for r in m["cont"] if r.get("peer_self_div") is None)
            line += f"; llama.cpp's default vs its precise configuration: {n_self}/{len(m['cont'])}"
        w(line + ".")
        if T is not None:
            w("")
            w(f"Divergence indices count generated tokens; *peer margin* = logit(peer's token) − "
              "logit(ember's token) in the default peer's logits there, *ember margin* the reverse "
              f"in ember's. T_tf = {T:.4f}: the {TIE_QUANTILE * 100:.0f}th percentile of how much "
              "llama.cpp's precise configuration moves its default's top-1/top-k margins (k = "
              "2..5) over the teacher-forced positions; a peer margin below it is a near-tie for "
              "llama.cpp itself.")
        w("")
