"""What the Python tests of `ember serve` share: checks that record their
failures, free loopback ports, and a server started on port 0 whose port is
read from its log, ready when /health says 200. Every wait is bounded."""
import re
import socket
import subprocess
import time
import urllib.request

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)
    return cond


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(ember, model, log_path, *flags):
    """`ember serve -m model --host 127.0.0.1 --port 0 flags...`: (process, port)."""
    log = open(log_path, "wb")
    proc = subprocess.Popen([ember, "serve", "-m", model, "--host", "127.0.0.1", "--port", "0"] +
                            list(flags), stdout=log, stderr=subprocess.STDOUT)
    deadline = time.time() + 120
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("server exited:\n" + open(log_path).read())
        m = re.search(r"listening on http://127\.0\.0\.1:(\d+)\n", open(log_path).read())
        if m:
            try:
                url = f"http://127.0.0.1:{m.group(1)}/health"
                with urllib.request.urlopen(url, timeout=2) as r:
                    if r.status == 200:
                        return proc, int(m.group(1))
            except OSError:
                pass
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError("server not ready in time:\n" + open(log_path).read())


def stop_server(proc, timeout=30):
    """SIGTERM, then SIGKILL after `timeout` s; the exit status (or "killed")."""
    if proc.poll() is not None:
        return proc.returncode
    proc.terminate()
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return "killed"


def exit_status(log_path=None):
    """The exit status: 0 when every check passed (prints the log otherwise)."""
    if failures:
        if log_path:
            print("server log:\n" + open(log_path).read())
        print(f"{len(failures)} check(s) failed")
        return 1
    print("all checks passed")
    return 0
