#!/usr/bin/env python3
"""Soak `ember serve`: a mixed load for a while, the server's memory sampled.

    python3 scripts/soak_serve.py --ember build/bin/ember -m MODEL [--minutes 10]
                                  [--clients 4] [--parallel 2] [--csv OUT.csv]

Starts `ember serve --parallel P` on a free loopback port and runs C client
threads for the given time, each picking at random (seeded) among:
completions and chat, streamed or not; a stream the client drops after a few
chunks (the server must cancel it); JSON-schema output; malformed JSON, wrong
types, an empty messages array, an oversized max_tokens, an unknown route;
a request that hangs up before the reply. Every 10 s it records the server's
RSS (VmRSS from /proc) and open file descriptors. At the end it prints the
requests by outcome, the RSS curve, and the RSS growth from the first minute
(after warm-up) to the end; exit status 1 when a request got an unexpected
answer (a 5xx, a wrong shape), the server died, or it did not exit 0 on SIGTERM.
Standard library only.
"""
import argparse
import http.client
import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        m = re.search(r"VmRSS:\s+(\d+) kB", f.read())
    return int(m.group(1)) if m else 0


def n_fds(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def start(ember, model, parallel, log_path):
    log = open(log_path, "wb")
    proc = subprocess.Popen([ember, "serve", "-m", model, "--host", "127.0.0.1", "--port", "0",
                             "--parallel", str(parallel), "-c", "1024", "-t", "2"],
                            stdout=log, stderr=subprocess.STDOUT)
    deadline = time.time() + 120
    while time.time() < deadline:
        m = re.search(r"listening on http://127\.0\.0\.1:(\d+)\n", open(log_path).read())
        if m:
            try:  # ready when the model is loaded (503 while loading)
                r, _ = request(int(m.group(1)), "GET", "/health", timeout=5)
                if r.status == 200:
                    return proc, int(m.group(1))
            except OSError:
                pass
        if proc.poll() is not None:
            sys.exit("server exited:\n" + open(log_path).read())
        time.sleep(0.1)
    proc.kill()
    sys.exit("server did not start")


def request(port, method, path, body=None, read=True, timeout=120):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
    c.request(method, path, data, {"Content-Type": "application/json"})
    r = c.getresponse()
    return r, c


SCHEMA = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 12},
                                           "age": {"type": "integer"}},
          "required": ["name", "age"], "additionalProperties": False}


def one(port, rng, counts, lock, bad):
    kind = rng.choice(["completion", "chat", "stream", "chat_stream", "drop_stream", "schema",
                       "bad_json", "bad_type", "empty_messages", "huge_max", "unknown_route",
                       "hang_up"])
    n = rng.randint(4, 48)
    msgs = [{"role": "user", "content": f"Tell me about the number {rng.randint(0, 999)}."}]
    outcome = kind
    try:
        if kind in ("completion", "stream", "drop_stream"):
            body = {"prompt": f"Item {rng.randint(0, 99)}: the", "max_tokens": n,
                    "temperature": rng.choice([0, 0.8]), "stream": kind != "completion"}
            r, c = request(port, "POST", "/v1/completions", body)
            if r.status != 200:
                bad.append(f"{kind}: HTTP {r.status}")
            elif kind == "drop_stream":
                r.read1(256)
                c.close()  # the server should cancel the rest
            else:
                data = r.read()
                if kind == "stream" and b"data: [DONE]" not in data:
                    bad.append("stream without [DONE]")
        elif kind in ("chat", "chat_stream"):
            r, c = request(port, "POST", "/v1/chat/completions",
                           {"messages": msgs, "max_tokens": n, "stream": kind == "chat_stream"})
            data = r.read()
            if r.status != 200:
                bad.append(f"{kind}: HTTP {r.status}")
            elif kind == "chat":
                json.loads(data)["choices"][0]["message"]["content"]
        elif kind == "schema":
            r, c = request(port, "POST", "/v1/chat/completions",
                           {"messages": msgs, "max_tokens": 64,
                            "response_format": {"type": "json_schema",
                                                "json_schema": {"name": "p", "schema": SCHEMA}}})
            data = r.read()
            if r.status != 200:
                bad.append(f"schema: HTTP {r.status}")
            else:
                reply = json.loads(data)["choices"][0]
                if reply["finish_reason"] == "stop":
                    obj = json.loads(reply["message"]["content"])
                    if set(obj) != {"name", "age"}:
                        bad.append("schema: wrong object")
        elif kind == "hang_up":
            s = socket.create_connection(("127.0.0.1", port), timeout=10)
            body = json.dumps({"prompt": "x", "max_tokens": n}).encode()
            s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: "
                      b"application/json\r\nContent-Length: " + str(len(body)).encode() +
                      b"\r\n\r\n" + body[:len(body) // 2])
            s.close()
        else:
            path, body, want = {
                "bad_json": ("/v1/completions", b"{\"prompt\": ", 400),
                "bad_type": ("/v1/completions", {"prompt": "x", "max_tokens": "many"}, 400),
                "empty_messages": ("/v1/chat/completions", {"messages": []}, 400),
                "huge_max": ("/v1/completions", {"prompt": "x", "max_tokens": 10 ** 9}, 400),
                "unknown_route": ("/v1/nothing", {}, 404),
            }[kind]
            r, c = request(port, "POST", path, body)
            data = r.read()
            if r.status != want or "error" not in json.loads(data):
                bad.append(f"{kind}: HTTP {r.status}, wanted {want} with an error body")
    except (OSError, http.client.HTTPException, ValueError, KeyError) as e:
        bad.append(f"{kind}: {type(e).__name__}: {e}")
        outcome = kind + " (exception)"
    with lock:
        counts[outcome] = counts.get(outcome, 0) + 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ember", required=True)
    ap.add_argument("-m", "--model", required=True)
    ap.add_argument("--minutes", type=float, default=10)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--parallel", type=int, default=2)
    ap.add_argument("--csv")
    a = ap.parse_args()
    log = os.path.join(tempfile.mkdtemp(prefix="ember-soak-"), "serve.log")
    proc, port = start(a.ember, a.model, a.parallel, log)
    counts, lock, bad, stop = {}, threading.Lock(), [], threading.Event()

    def client(seed):
        rng = random.Random(seed)
        while not stop.is_set():
            one(port, rng, counts, lock, bad)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(a.clients)]
    for t in threads:
        t.start()
    t0, samples = time.time(), []
    try:
        while time.time() - t0 < a.minutes * 60:
            if proc.poll() is not None:
                bad.append("the server died")
                break
            samples.append((time.time() - t0, rss_kib(proc.pid), n_fds(proc.pid)))
            print(f"{samples[-1][0]:6.0f} s  RSS {samples[-1][1] / 1024:7.1f} MiB  "
                  f"fds {samples[-1][2]:4d}  requests {sum(counts.values())}", flush=True)
            time.sleep(10)
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=180)
        proc.send_signal(signal.SIGTERM)
        try:
            rc = proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            rc = "killed"
    if rc != 0:
        bad.append(f"the server exited with {rc} on SIGTERM")
    if a.csv:
        with open(a.csv, "w") as f:
            f.write("seconds,rss_kib,fds\n")
            for s in samples:
                f.write(f"{s[0]:.0f},{s[1]},{s[2]}\n")
    print("requests:", json.dumps(dict(sorted(counts.items()))))
    warm = [s for s in samples if s[0] >= 60] or samples
    if warm:
        print(f"RSS after the first minute {warm[0][1] / 1024:.1f} MiB, at the end "
              f"{warm[-1][1] / 1024:.1f} MiB (max {max(s[1] for s in warm) / 1024:.1f}): growth "
              f"{(warm[-1][1] - warm[0][1]) / 1024:+.1f} MiB; fds {warm[0][2]} -> {warm[-1][2]}")
    for b in bad[:20]:
        print("unexpected:", b)
    print(f"{len(bad)} unexpected answers")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
