#!/usr/bin/env python3
"""Memory of `ember serve` against its slot count: N slots share the weights.

    python3 bench/serve_memory.py --ember build-bench/bin/ember -m MODEL [-c 1024] [--slots 1,2,4,8]

For each N: starts `ember serve --parallel N -c C`, sends N concurrent
requests that fill a good part of each slot's context, and reads the
server's peak RSS (VmHWM) and RSS after them (VmRSS) from /proc. Printed
beside: the file's tensor data (`ember info`) and one slot's KV cache (`ember
run`'s log line for the same -c), and the overhead RSS - tensor data - N x KV
(the runtime, the scratch buffers, the HTTP threads; ember's own layouts may
differ from the file's bytes by a few percent).
Standard library only.
"""
import argparse
import http.client
import json
import re
import socket
import subprocess
import sys
import threading
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def status(pid, key):
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(key + r":\s+(\d+) kB", f.read()).group(1)) / 1024


def post(port, body):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    c.request("POST", "/v1/completions", json.dumps(body), {"Content-Type": "application/json"})
    r = c.getresponse()
    r.read()
    return r.status


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ember", required=True)
    ap.add_argument("-m", "--model", required=True)
    ap.add_argument("-c", type=int, default=1024)
    ap.add_argument("--slots", default="1,2,4,8")
    a = ap.parse_args()
    # One slot's KV cache and the weights as loaded, as `ember run` reports them.
    log = subprocess.run([a.ember, "run", "-m", a.model, "-p", "x", "-n", "1", "-c", str(a.c),
                          "-t", "1"], capture_output=True, text=True).stderr
    kv = float(re.search(r"KV cache \w+, ([0-9.]+) MiB", log).group(1))
    info = subprocess.run([a.ember, "info", "-m", a.model], capture_output=True, text=True).stdout
    weights = float(re.search(r"([0-9.]+) MiB of tensor data", info).group(1))
    print(f"# {a.model}: tensor data {weights:.1f} MiB, KV cache per slot {kv:.1f} MiB "
          f"at -c {a.c}")
    print("| slots | peak RSS MiB | RSS after MiB | tensor data + slots x KV MiB | overhead MiB |")
    print("|---:|---:|---:|---:|---:|")
    words = "one two three four five six seven eight nine ten".split()
    for n in [int(x) for x in a.slots.split(",")]:
        port = free_port()
        proc = subprocess.Popen([a.ember, "serve", "-m", a.model, "--host", "127.0.0.1", "--port",
                                 str(port), "--parallel", str(n), "-c", str(a.c), "-t", "2"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.time() + 120
            while True:
                try:
                    c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                    c.request("GET", "/health")
                    if c.getresponse().status == 200:
                        break
                except OSError:
                    pass
                if time.time() > deadline or proc.poll() is not None:
                    sys.exit("server did not start")
                time.sleep(0.1)
            # Each slot: a prompt of ~a quarter of the context, then as many tokens.
            prompt = " ".join(words[i % 10] for i in range(a.c // 4))
            threads = [threading.Thread(target=post, args=(port, {
                "prompt": f"{i} " + prompt, "max_tokens": a.c // 4, "temperature": 0,
                "ignore_eos": True})) for i in range(n)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            peak, rss = status(proc.pid, "VmHWM"), status(proc.pid, "VmRSS")
            expected = weights + n * kv
            print(f"| {n} | {peak:.0f} | {rss:.0f} | {expected:.0f} | {rss - expected:+.0f} |",
                  flush=True)
        finally:
            proc.terminate()
            proc.wait(timeout=30)


if __name__ == "__main__":
    main()
