#!/usr/bin/env python3
"""Two `ember serve` behind nginx (Debian), on loopback, as docs/DEPLOY.md sets them up.

Starts two servers on free ports and nginx (its own prefix in a temporary
folder, `daemon off`) with both as one upstream, then sends greedy completions
through nginx from 4 client threads and kills one server (SIGKILL) in the
middle of the run. Checks: every request either completes with the right text
(the same model answers the same prompt the same way on either server) or
fails cleanly (an HTTP error or a closed connection, never a wrong or
truncated-but-200 answer), and a retry of every failed one succeeds; after the
kill, requests keep succeeding through the surviving server. Every wait is
bounded; every process is killed at the end. Exits 77 (ctest: skipped) when
nginx is not installed.

usage: nginx_lb_test.py --ember PATH/TO/ember --model MODEL.gguf
"""
import argparse
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

from serve_util import check, exit_status, free_port, start_server

NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None)
if NGINX is None:
    print("EMBER_SKIPPED: nginx is not installed (scripts/setup.sh installs it)")
    sys.exit(77)



def get(port, path):
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        c.request("GET", path)
        r = c.getresponse()
        return r.status, r.read()
    except OSError:
        return None, b""


def complete(port, prompt):
    """(status or None on a connection error, text or None)."""
    body = json.dumps({"prompt": prompt, "max_tokens": 24, "temperature": 0, "ignore_eos": True})
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        c.request("POST", "/v1/completions", body, {"Content-Type": "application/json"})
        r = c.getresponse()
        data = r.read()
        if r.status != 200:
            return r.status, None
        return 200, json.loads(data)["choices"][0]["text"]
    except (OSError, http.client.HTTPException, ValueError, KeyError):
        return None, None


NGINX_CONF = """
worker_processes 1;
daemon off;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
events {{ worker_connections 256; }}
http {{
  access_log off;
  client_body_temp_path {prefix}/body;
  proxy_temp_path {prefix}/proxy;
  fastcgi_temp_path {prefix}/fastcgi;
  uwsgi_temp_path {prefix}/uwsgi;
  scgi_temp_path {prefix}/scgi;
  upstream ember {{
    server 127.0.0.1:{a} max_fails=1 fail_timeout=30s;
    server 127.0.0.1:{b} max_fails=1 fail_timeout=30s;
  }}
  server {{
    listen 127.0.0.1:{port};
    location / {{
      proxy_pass http://ember;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
      proxy_read_timeout 300s;
      proxy_next_upstream error timeout http_502 http_503 non_idempotent;
      proxy_next_upstream_tries 2;
    }}
  }}
}}
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ember", required=True)
    ap.add_argument("--model", required=True)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="ember-nginx-")
    procs = []
    try:
        flags = ("-c", "512", "-t", "1", "--parallel", "2")
        a, port_a = start_server(args.ember, args.model, os.path.join(tmp, "a.log"), *flags)
        procs.append(a)
        b, port_b = start_server(args.ember, args.model, os.path.join(tmp, "b.log"), *flags)
        procs.append(b)
        port = free_port()
        with open(os.path.join(tmp, "nginx.conf"), "w") as f:
            f.write(NGINX_CONF.format(prefix=tmp, a=port_a, b=port_b, port=port))
        nginx = subprocess.Popen([NGINX, "-p", tmp, "-e", os.path.join(tmp, "error.log"), "-c",
                                  os.path.join(tmp, "nginx.conf")],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        procs.append(nginx)
        deadline = time.time() + 30
        while get(port, "/health")[0] != 200:
            if time.time() > deadline or nginx.poll() is not None:
                raise RuntimeError("nginx did not come up:\n" +
                                   open(os.path.join(tmp, "error.log")).read())
            time.sleep(0.1)

        prompts = [f"Request {i}: the weather today is" for i in range(6)]
        expected = {p: complete(port_b, p)[1] for p in prompts}
        check(all(t for t in expected.values()), "the surviving server answers every prompt")
        check(all(complete(port_a, p)[1] == expected[p] for p in prompts),
              "both servers give the same greedy text")

        results = []  # (prompt, status, text, retry_status, retry_text)
        lock = threading.Lock()
        done = [0]

        def client(k):
            for i in range(8):
                p = prompts[(k + i) % len(prompts)]
                status, text = complete(port, p)
                retry = (None, None)
                if status != 200:
                    retry = complete(port, p)
                with lock:
                    results.append((p, status, text, retry[0], retry[1]))
                    done[0] += 1

        threads = [threading.Thread(target=client, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        while done[0] < 8 and any(t.is_alive() for t in threads):
            time.sleep(0.01)
        a.send_signal(signal.SIGKILL)  # one server dies mid-run
        killed_after = done[0]
        for t in threads:
            t.join(timeout=240)
        check(not any(t.is_alive() for t in threads), "every client finished")
        check(len(results) == 32, f"32 requests made ({len(results)})")
        wrong = [r for r in results if r[1] == 200 and r[2] != expected[r[0]]]
        check(not wrong, f"no 200 answer is wrong or cut short ({len(wrong)})")
        failed = [r for r in results if r[1] != 200]
        check(all(r[3] == 200 and r[4] == expected[r[0]] for r in failed),
              f"every failed request succeeded when retried ({len(failed)} failed)")
        print(f"killed one server after {killed_after} of 32 requests; "
              f"{len(results) - len(failed)} completed at once, {len(failed)} after a retry")
        after = [complete(port, p) for p in prompts]
        check(all(s == 200 and t == expected[p] for (s, t), p in zip(after, prompts)),
              "after the kill, requests succeed through the surviving server")
    finally:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
    # (An exception above leaves tmp with the logs for a look.)
    status = exit_status()
    if status != 0:  # the servers' and nginx's logs, before they go
        for name in ("a.log", "b.log", "error.log"):
            path = os.path.join(tmp, name)
            if os.path.exists(path):
                print(f"--- {name}:\n" + open(path, errors="replace").read())
    shutil.rmtree(tmp, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
