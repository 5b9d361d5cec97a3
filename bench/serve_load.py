#!/usr/bin/env python3
"""Load on `ember serve`: K streaming clients at once, K = 1, 2, 4, 8.

    python3 bench/serve_load.py --ember build-bench/bin/ember -m MODEL [-t 2] [-n 128] [--peer llama-server]
                                [--clients 1,2,4,8] [--reps 3] [--modes batched,separate]

For each mode (batched: continuous batching, the default of `ember serve
--parallel N`; separate: --no-cont-batching, each slot its own passes; with
--peer, llama-server with -np N, --cont-batching and N x 512 cells) one
server is started on a free loopback port with --parallel max(clients). For
each K, K clients send /v1/completions requests at the same moment (streamed,
temperature 0, ignore_eos, n tokens, each its own prompt of about 40 tokens)
and read the SSE stream. Reported per K (median over the repetitions, with the
range of the aggregate): aggregate generated tokens/s (all tokens / wall time
from the first request to the last [DONE]), its ratio to one client's, the
aggregate decode rate (each client's tokens after its first over the time
from its first token to its last, summed over the clients: prompts and time
to first token left out, which TTFT reports) and its ratio, p50 and
p99 time to first token and p50 / p99 inter-token latency over every client's
tokens. Standard library only (http.client).
"""
import argparse
import http.client
import json
import socket
import statistics
import subprocess
import sys
import threading
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(ember, model, threads, parallel, mode, ctx, peer=None):
    port = free_port()
    if mode == "llama-server":
        # Its -c is the whole cache, split between the slots.
        cmd = [peer, "-m", model, "--host", "127.0.0.1", "--port", str(port), "-np",
               str(parallel), "-c", str(ctx * parallel), "-t", str(threads), "-tb", str(threads),
               "--cont-batching"]
    else:
        cmd = [ember, "serve", "-m", model, "--host", "127.0.0.1", "--port", str(port),
               "--parallel", str(parallel), "-c", str(ctx), "-t", str(threads)]
        if mode == "separate":
            cmd.append("--no-cont-batching")
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while time.time() < deadline:
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            c.request("GET", "/health")
            if c.getresponse().status == 200:
                return proc, port
        except OSError:
            pass
        if proc.poll() is not None:
            sys.exit(f"{cmd[0]} exited: " + proc.stderr.read())
        time.sleep(0.2)
    proc.kill()
    sys.exit(f"{cmd[0]} did not become ready")


def one_client(port, prompt, n, start, out):
    """Streams one completion; out gets (t_first, [token times], n_tokens)."""
    start.wait()
    t0 = time.perf_counter()
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    body = json.dumps({"prompt": prompt, "max_tokens": n, "temperature": 0, "ignore_eos": True,
                       "stream": True, "stream_options": {"include_usage": True}})
    c.request("POST", "/v1/completions", body, {"Content-Type": "application/json"})
    r = c.getresponse()
    times, tokens = [], None
    buf = b""
    while True:
        chunk = r.read1(65536)
        if not chunk:
            break
        buf += chunk
        while b"\n\n" in buf:
            event, buf = buf.split(b"\n\n", 1)
            if not event.startswith(b"data: "):
                continue
            data = event[6:]
            if data == b"[DONE]":
                break
            j = json.loads(data)
            if j.get("usage"):
                tokens = j["usage"]["completion_tokens"]
            if j.get("choices") and j["choices"][0].get("text"):
                times.append(time.perf_counter())
    # llama-server may send no usage chunk: its stream has one token per chunk.
    out.append((t0, times, tokens if tokens is not None else len(times)))


def run(port, k, n, rep):
    start = threading.Event()
    out = []
    words = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu".split()
    threads = []
    for i in range(k):
        prompt = f"Client {i}, run {rep}: " + " ".join(words[(i + j) % len(words)] for j in range(30))
        t = threading.Thread(target=one_client, args=(port, prompt, n, start, out))
        t.start()
        threads.append(t)
    t_start = time.perf_counter()
    start.set()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t_start
    total = sum(o[2] for o in out)
    ttft = [o[1][0] - o[0] for o in out if o[1]]
    itl = [b - a for o in out for a, b in zip(o[1], o[1][1:])]
    # Decode alone: each client's tokens after its first over the time from
    # its first to its last, summed over the clients (they decode together).
    decode = sum((o[2] - 1) / (o[1][-1] - o[1][0]) for o in out if len(o[1]) > 1)
    return total / wall, decode, ttft, itl


def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))] if v else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ember", required=True)
    ap.add_argument("-m", "--model", required=True)
    ap.add_argument("-t", "--threads", type=int, default=2)
    ap.add_argument("-n", type=int, default=128)
    ap.add_argument("--clients", default="1,2,4,8")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--modes", default="batched,separate")
    ap.add_argument("--peer", help="llama-server binary: adds the mode llama-server")
    a = ap.parse_args()
    clients = [int(x) for x in a.clients.split(",")]
    print(f"# {a.model}, {a.threads} thread(s), {a.n} tokens per client, {a.reps} repetitions")
    print("| mode | clients | aggregate tok/s (range) | x 1 client | decode tok/s (range) | "
          "x 1 client | TTFT p50 / p99 ms | inter-token p50 / p99 ms |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    modes = a.modes.split(",") + (["llama-server"] if a.peer else [])
    for mode in modes:
        proc, port = start_server(a.ember, a.model, a.threads, max(clients), mode, 512, a.peer)
        try:
            run(port, 1, 8, -1)  # warm-up
            base = dbase = None
            for k in clients:
                rates, decodes, ttft, itl = [], [], [], []
                for rep in range(a.reps):
                    r, d, t, i = run(port, k, a.n, rep)
                    rates.append(r)
                    decodes.append(d)
                    ttft += t
                    itl += i
                med, dmed = statistics.median(rates), statistics.median(decodes)
                base, dbase = base or med, dbase or dmed
                print(f"| {mode} | {k} | {med:.1f} ({min(rates):.1f}..{max(rates):.1f}) | "
                      f"{med / base:.2f} | {dmed:.1f} ({min(decodes):.1f}..{max(decodes):.1f}) | "
                      f"{dmed / dbase:.2f} | {pct(ttft, .5) * 1e3:.0f} / {pct(ttft, .99) * 1e3:.0f} | "
                      f"{pct(itl, .5) * 1e3:.1f} / {pct(itl, .99) * 1e3:.1f} |", flush=True)
        finally:
            proc.terminate()
            proc.wait(timeout=30)


if __name__ == "__main__":
    main()
