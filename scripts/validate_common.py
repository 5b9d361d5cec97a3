#!/usr/bin/env python3
"""Helpers shared by scripts/validate_compare.py and scripts/validate_models.py:
running commands, reading logits files, the statistics on them, Markdown cells,
and the two checks both use (tokenization, the analysis of a greedy divergence).
Python stdlib only; numpy is used when present."""

from __future__ import annotations

import array
import hashlib
import json
import math
import os
import platform
import shlex
import subprocess
import sys
import time



# ----------------------------------------------------------------- helpers


class CmdError(Exception):
    pass


def run(cmd, timeout=900, env=None):
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                           env=None if env is None else {**os.environ, **env})
    except FileNotFoundError as e:
        raise CmdError(f"{cmd[0]}: not found ({e})") from None
    except subprocess.TimeoutExpired:
        raise CmdError(f"timed out after {timeout}s: {shlex.join(cmd)}") from None
    dt = time.monotonic() - t0
    if p.returncode != 0:
        err = p.stderr.decode("utf-8", "replace").strip().splitlines()[-5:]
        last = err[-1].strip() if err else "no stderr"
        raise CmdError(f"exit code {p.returncode} ({last})\n    command: {shlex.join(cmd)}\n    "
                       + "\n    ".join(err))
    return p.stdout, dt


def parse_json_obj(raw: bytes, what: str) -> dict:
    text = raw.decode("utf-8", "replace").strip()
    try:
        obj = json.loads(text)
    except json.JSONDecodeError:
        # tolerate extra lines around the object: take the last line that parses
        obj = None
        for line in reversed(text.splitlines()):
            line = line.strip()
            if line.startswith("{"):
                try:
                    obj = json.loads(line)
                    break
                except json.JSONDecodeError:
                    pass
        if obj is None:
            raise CmdError(f"{what}: stdout is not a JSON object: {text[:200]!r}")
    if not isinstance(obj, dict):
        raise CmdError(f"{what}: stdout JSON is not an object")
    return obj


def parse_ids(raw: bytes, what: str) -> list[int]:
    try:
        return [int(x) for x in raw.decode("ascii").split()]
    except (UnicodeDecodeError, ValueError):
        raise CmdError(f"{what}: output is not a list of integers: {raw[:200]!r}") from None


def read_f32le(path: str) -> list[float]:
    a = array.array("f")
    with open(path, "rb") as f:
        data = f.read()
    if len(data) % 4:
        raise CmdError(f"{path}: size {len(data)} is not a multiple of 4")
    a.frombytes(data)
    if sys.byteorder == "big":
        a.byteswap()
    return a


def logits_stats(peer, ember) -> dict:
    """max/mean abs diff, KL(peer||ember) of the softmaxes, argmax of both."""
    try:
        import numpy as np  # optional

        p = np.asarray(peer, dtype=np.float64)
        q = np.asarray(ember, dtype=np.float64)
        if not (np.all(np.isfinite(p)) and np.all(np.isfinite(q))):
            raise FloatingPointError
        d = np.abs(p - q)
        lp = p - p.max()
        lp -= np.log(np.exp(lp).sum())
        lq = q - q.max()
        lq -= np.log(np.exp(lq).sum())
        kl = float(np.sum(np.exp(lp) * (lp - lq)))
        top_p = [int(i) for i in np.argsort(-p, kind="stable")[:5]]
        top_q = [int(i) for i in np.argsort(-q, kind="stable")[:5]]
        return dict(max_abs=float(d.max()), mean_abs=float(d.mean()), kl=max(kl, 0.0),
                    argmax_peer=int(np.argmax(p)), argmax_ember=int(np.argmax(q)),
                    top5_overlap=len(set(top_p) & set(top_q)), finite=True)
    except ImportError:
        pass
    except FloatingPointError:
        return dict(max_abs=math.inf, mean_abs=math.inf, kl=math.inf,
                    argmax_peer=-1, argmax_ember=-1, top5_overlap=0, finite=False)

    if not all(math.isfinite(x) for x in peer) or not all(math.isfinite(x) for x in ember):
        return dict(max_abs=math.inf, mean_abs=math.inf, kl=math.inf,
                    argmax_peer=-1, argmax_ember=-1, top5_overlap=0, finite=False)
    n = len(peer)
    diffs = [abs(a - b) for a, b in zip(peer, ember)]

    def log_softmax(v):
        m = max(v)
        lse = m + math.log(math.fsum(math.exp(x - m) for x in v))
        return [x - lse for x in v]

    lp, lq = log_softmax(peer), log_softmax(ember)
    kl = math.fsum(math.exp(a) * (a - b) for a, b in zip(lp, lq))

    def top(v, k):
        return sorted(range(n), key=lambda i: (-v[i], i))[:k]

    tp, tq = top(peer, 5), top(ember, 5)
    return dict(max_abs=max(diffs), mean_abs=math.fsum(diffs) / n, kl=max(kl, 0.0),
                argmax_peer=tp[0], argmax_ember=tq[0], top5_overlap=len(set(tp) & set(tq)),
                finite=True)


try:
    import numpy as _np
except ImportError:  # the stdlib fallbacks below are slower but equivalent
    _np = None


def logit_rows(path: str, n_vocab: int) -> list:
    """An `--all` logits file: one row of n_vocab floats per position."""
    a = read_f32le(path)
    if len(a) % n_vocab:
        raise CmdError(f"{path}: {len(a)} floats is not a multiple of n_vocab {n_vocab}")
    if _np is not None:
        return list(_np.asarray(a, dtype=_np.float32).reshape(-1, n_vocab))
    return [a[i:i + n_vocab] for i in range(0, len(a), n_vocab)]


def top_ids(v, k: int) -> list[int]:
    """The k highest logits' ids, best first; ties to the lower id (like argmax)."""
    if _np is not None:
        v = _np.asarray(v)
        part = _np.argpartition(-v, k)[:k + 1] if k < len(v) else _np.arange(len(v))
        cand = sorted(int(i) for i in part)
        return sorted(cand, key=lambda i: (-float(v[i]), i))[:k]
    import heapq
    return heapq.nsmallest(k, range(len(v)), key=lambda i: (-v[i], i))


def rank_of(v, t: int) -> int:
    """1-based rank of token t (1 = the argmax, ties to the lower id)."""
    x = v[t]
    if _np is not None:
        v = _np.asarray(v)
        return 1 + int(_np.count_nonzero(v > x)) + int(_np.count_nonzero(v[:t] == x))
    return 1 + sum(1 for y in v if y > x) + sum(1 for y in v[:t] if y == x)


def log_sum_exp(v) -> float:
    if _np is not None:
        v = _np.asarray(v, dtype=_np.float64)
        m = float(v.max())
        return m + math.log(float(_np.exp(v - m).sum()))
    m = max(v)
    return m + math.log(math.fsum(math.exp(x - m) for x in v))


def pair_view(v, own: int, other: int) -> dict:
    """One side's view of a decision between its own token and the other's."""
    lse = log_sum_exp(v)
    top = top_ids(v, 1)[0]
    return dict(margin=float(v[own]) - float(v[other]),
                rank_own=rank_of(v, own), rank_other=rank_of(v, other),
                p_own=math.exp(float(v[own]) - lse), p_other=math.exp(float(v[other]) - lse),
                argmax=top, consistent=top == own)


def margin_shifts(ref, other, k=5) -> list[float]:
    """|margin(top1, top_j) in ref - the same margin in other| for j = 2..k, with
    top-k taken from ref: how much `other` moves the decision-relevant gaps."""
    t = top_ids(ref, k)
    a = t[0]
    return [abs((float(ref[a]) - float(ref[b])) - (float(other[a]) - float(other[b]))) for b in t[1:]]


def quantile(xs, q: float) -> float:
    """Nearest-rank quantile: the ceil(q*n)-th smallest value."""
    s = sorted(xs)
    if not s:
        return math.nan
    return s[max(0, min(len(s) - 1, math.ceil(q * len(s)) - 1))]


def first_mismatch(a, b):
    """Index of the first differing element, len of the shorter if one is a
    prefix of the other, None if identical."""
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    if len(a) != len(b):
        return min(len(a), len(b))
    return None


def md_code(s: str) -> str:
    """A Python-style literal of s, safe inside a Markdown table cell."""
    r = json.dumps(s, ensure_ascii=False)
    return "`" + r.replace("|", "\\|").replace("`", "'") + "`"


def md_cell(s: str, limit=160) -> str:
    s = s if len(s) <= limit else s[:limit] + "…"
    return md_code(s)


def sha256_of(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def git_rev(repo: str) -> str:
    try:
        out = subprocess.run(["git", "-C", repo, "rev-parse", "--short", "HEAD"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=10)
        rev = out.stdout.decode().strip()
        if out.returncode != 0 or not rev:
            return "(no commit)"
        dirty = subprocess.run(["git", "-C", repo, "status", "--porcelain", "--untracked-files=no"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=10)
        return rev + ("-dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"


def log(msg):
    print(f"[validate] {msg}", file=sys.stderr, flush=True)


# ----------------------------------------------------------------- peer and ember

# Peer configurations. "default" is llama.cpp's library default (flash attention
# AUTO -> enabled on CPU, F16 KV cache); "precise" is the most precise one it
# offers (no flash attention, F32 KV cache). The two already disagree with each
# other noticeably on SmolLM2 (see the report), so both are shown; --gate picks
# which one ember's greedy tokens must match (tie-aware: see the module docstring).
PEER_CONFIGS = {
    "default": [],
    "precise": ["--fa", "off", "--kv", "f32"],
}


def peer_cmd(a, mode, cfg, *args):
    cmd = [a.peer, mode, "-m", a.model, *args, *PEER_CONFIGS[cfg]]
    if a.peer_threads:
        cmd += ["-t", str(a.peer_threads)]
    return cmd


def ids_of(obj):
    return [int(x) for x in obj["tokens"]]


def strip_eog(ember_ids, peer_obj):
    """peer_tool leaves out the end-of-generation token; ember's list may end with it."""
    stop = peer_obj.get("stop_token")
    if stop is not None and len(ember_ids) == len(peer_obj["tokens"]) + 1 and ember_ids[-1] == stop:
        return ember_ids[:-1]
    return ember_ids


def analyze_divergence(a, name, res, tmp):
    """Both sides' logits at the first divergence from the default peer: the
    context is prompt + the i generated tokens both agree on. The peer runs it
    with greedy's schedule (prompt in one call, then one token per call), so
    its logits are bit-identical to those its greedy choice was based on;
    `ember eval --tokens` evaluates the context in one batch."""
    d = res["div"]["default"]
    peer = res["peer"]
    pt, et = ids_of(peer), res["ember_ids"]
    prompt_ids = [int(x) for x in peer["prompt_tokens"]]
    ctx = prompt_ids + pt[:d]
    ids = ",".join(map(str, ctx))
    out = dict(index=d, n_ctx=len(ctx), peer_eog=False, ember_eog=False)
    views = {}
    for cfg in a.peer_configs:
        f = os.path.join(tmp, f"div_peer_{cfg}_{name}.f32")
        o, _ = run(peer_cmd(a, "logits", cfg, "--tokens", ids, "--prefill", str(len(prompt_ids)),
                            "-o", f))
        views[cfg] = read_f32le(f)
    ef = os.path.join(tmp, f"div_ember_{name}.f32")
    run([a.ember, "eval", "-m", a.model, "--tokens", ids, "--logits-out", ef])  # CmdError -> ember error
    if not os.path.exists(ef):
        raise CmdError(f"ember eval did not write {ef}")
    E = read_f32le(ef)
    if len(E) != len(views["default"]):
        raise CmdError(f"n_vocab differs: peer {len(views['default'])}, ember {len(E)}")
    # the two candidates; a side that stopped there chose an end-of-generation token
    if d < len(pt):
        ptok = pt[d]
    else:
        ptok = peer.get("stop_token")
        out["peer_eog"] = True
        if ptok is None:
            ptok = top_ids(views["default"], 1)[0]
    if d < len(et):
        etok = et[d]
    else:  # ember's token list does not include its EOG token: take its argmax there
        etok = top_ids(E, 1)[0]
        out["ember_eog"] = True
    out["peer_tok"], out["ember_tok"] = ptok, etok
    out["peer"] = pair_view(views["default"], ptok, etok)    # margin: peer's token - ember's
    out["ember"] = pair_view(E, etok, ptok)                  # margin: ember's token - peer's
    if "precise" in views:
        out["precise"] = pair_view(views["precise"], ptok, etok)  # margin: peer's token - ember's
    # how much ember moves this pair's margin relative to the default peer
    out["shift"] = abs(out["peer"]["margin"] + out["ember"]["margin"])
    o, _ = run([a.peer, "pieces", "-m", a.model, "--tokens", f"{ptok},{etok}"])
    try:
        out["pieces"] = json.loads(o.decode("utf-8", "replace"))
    except json.JSONDecodeError:
        out["pieces"] = ["?", "?"]
    return out


def check_tokenize(a, label, path):
    peer_cmd_ = [a.peer, "tokenize", "-m", a.model, "-f", path]
    ember_cmd = [a.ember, "tokenize", "-m", a.model, "-f", path]
    res = dict(label=label, path=path, ok=False, error=None)
    with open(path, "rb") as f:
        data = f.read()
    res["bytes"] = len(data)
    out, _ = run(peer_cmd_)
    pt = parse_ids(out, "peer_tool tokenize")
    res["n_peer"] = len(pt)
    try:
        out, res["ember_s"] = run(ember_cmd)
        et = parse_ids(out, "ember tokenize")
    except CmdError as e:
        res["error"] = str(e)
        return res
    res["n_ember"] = len(et)
    res["div"] = first_mismatch(pt, et)
    res["ok"] = res["div"] is None
    if not res["ok"]:
        i = res["div"]
        res["peer_ctx"] = pt[max(0, i - 3): i + 5]
        res["ember_ctx"] = et[max(0, i - 3): i + 5]
    return res


def fmt_div(d):
    return "identical" if d is None else f"diverges at {d}"


def fmt_tok(piece, tid, eog=False):
    s = json.dumps(piece, ensure_ascii=False).replace("|", "\\|").replace("`", "'")
    return f"`{s}` ({tid}{', EOG' if eog else ''})"


def display_path(p: str) -> str:
    home = os.path.expanduser("~")
    ap = os.path.abspath(p)
    if ap.startswith(home + os.sep):
        return "~" + ap[len(home):]
    return p
