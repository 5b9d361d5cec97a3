#!/usr/bin/env python3
"""The chat page of `ember serve` in headless Chromium (Debian `chromium`).

Starts the server, opens `/?q=TEXT&temperature=0&max_tokens=N` (the page sends
TEXT when it opens and streams the reply), and checks:
- the DOM after the stream holds the user's message and the assistant's reply,
  and the reply is the text the API gives for the same request (greedy);
- a screenshot of the page with the streamed reply is a valid PNG of the
  window's size, and differs from a screenshot of the empty page where the
  two messages are (the reply is visible, not only in the DOM).
Chromium is driven over the DevTools protocol on a pipe: the test waits for
the page to say its stream ended (body[data-state=idle]) before it reads the
messages and takes the screenshot. Every wait is bounded; every process is
stopped at the end. Exits 77 (ctest: skipped) without
chromium.

usage: browser_test.py --ember PATH/TO/ember --model MODEL.gguf
"""
import argparse
import base64
import json
import os
import re
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
import zlib

from serve_util import check, exit_status, start_server

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if CHROMIUM is None:
    print("EMBER_SKIPPED: chromium is not installed (scripts/setup.sh installs it)")
    sys.exit(77)

WIDTH, HEIGHT = 900, 700


class Chromium:
    """Headless Chromium driven over the DevTools protocol on a pipe
    (--remote-debugging-pipe: JSON messages ending in NUL, ours on its fd 3,
    its on fd 4). Every wait is bounded."""

    def __init__(self, profile):
        to_r, self.to_w = os.pipe()
        self.from_r, from_w = os.pipe()

        def fds():
            os.dup2(to_r, 3)
            os.dup2(from_w, 4)

        self.proc = subprocess.Popen(
            [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--remote-debugging-pipe", f"--user-data-dir={profile}",
             f"--window-size={WIDTH},{HEIGHT}", "--hide-scrollbars", "about:blank"],
            preexec_fn=fds, pass_fds=(3, 4, to_r, from_w), stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        os.close(to_r)
        os.close(from_w)
        self.buf, self.next_id, self.session = b"", 0, None
        targets = self.call("Target.getTargets")["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        self.session = self.call("Target.attachToTarget", targetId=page["targetId"],
                                 flatten=True)["sessionId"]
        # The viewport itself (--window-size includes the window's frame).
        self.call("Emulation.setDeviceMetricsOverride", width=WIDTH, height=HEIGHT,
                  deviceScaleFactor=1, mobile=False)

    def call(self, method, timeout=60, **params):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params}
        if self.session and not method.startswith("Target."):
            msg["sessionId"] = self.session
        os.write(self.to_w, json.dumps(msg).encode() + b"\0")
        deadline = time.time() + timeout
        while True:
            while b"\0" not in self.buf:
                left = deadline - time.time()
                if left <= 0 or not select.select([self.from_r], [], [], left)[0]:
                    raise TimeoutError(method)
                chunk = os.read(self.from_r, 1 << 20)
                if not chunk:
                    raise RuntimeError("chromium closed the pipe")
                self.buf += chunk
            line, self.buf = self.buf.split(b"\0", 1)
            reply = json.loads(line)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})

    def eval(self, expression):
        r = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return r.get("result", {}).get("value")

    def open(self, url, ready_js, timeout=60):
        self.call("Page.navigate", url=url)
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.eval(ready_js):
                return True
            time.sleep(0.05)
        return False

    def screenshot(self, path):
        data = self.call("Page.captureScreenshot", format="png")["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def close(self):
        try:
            self.call("Browser.close", timeout=10)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def png_pixels(path):
    """(width, height, rows of RGB(A) bytes) of an 8-bit PNG, unfiltered."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", body[:10])
            if depth != 8 or color not in (2, 6):
                raise ValueError(f"unexpected PNG format (depth {depth}, color {color})")
            bpp = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + ((a + b) >> 1)) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ember", required=True)
    ap.add_argument("--model", required=True)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="ember-browser-")
    proc, port = start_server(args.ember, args.model, os.path.join(tmp, "serve.log"), "-c", "512",
                              "-t", "1")
    try:
        question = "Hello there, what is a lighthouse?"
        req = {"messages": [{"role": "user", "content": question}], "temperature": 0,
               "max_tokens": 24}
        r = urllib.request.Request(f"http://127.0.0.1:{port}/v1/chat/completions",
                                   json.dumps(req).encode(), {"Content-Type": "application/json"})
        with urllib.request.urlopen(r, timeout=60) as resp:
            expected = json.load(resp)["choices"][0]["message"]["content"]
        check(len(expected) > 0, "the API answers the question")

        url = (f"http://127.0.0.1:{port}/?" +
               urllib.parse.urlencode({"q": question, "temperature": 0, "max_tokens": 24}))
        browser = Chromium(os.path.join(tmp, "profile"))
        try:
            empty_png = os.path.join(tmp, "empty.png")
            reply_png = os.path.join(tmp, "reply.png")
            check(browser.open(f"http://127.0.0.1:{port}/", "document.readyState === 'complete'"),
                  "the page loads")
            browser.screenshot(empty_png)
            check(browser.open(url, "document.body.dataset.state === 'idle'"),
                  "the page streams the reply to its end")
            msgs = browser.eval("JSON.stringify([...document.querySelectorAll('.msg')]"
                                ".map(e => [e.className, e.textContent]))")
            msgs = json.loads(msgs or "[]")
            check([m[0] for m in msgs] == ["msg user", "msg assistant"],
                  f"two messages in the page ({msgs!r})")
            if len(msgs) == 2:
                check(msgs[0][1] == question, "the user's message is shown")
                check(msgs[1][1] == expected,
                      "the streamed reply is the API's reply for the same request")
            browser.screenshot(reply_png)
        finally:
            browser.close()
        w, h, empty = png_pixels(empty_png)
        w2, h2, reply = png_pixels(reply_png)
        check((w, h) == (WIDTH, HEIGHT) and (w2, h2) == (WIDTH, HEIGHT),
              f"screenshots of {WIDTH}x{HEIGHT} ({w}x{h}, {w2}x{h2})")
        changed = sum(1 for a, b in zip(empty, reply) for x, y in zip(a, b) if x != y)
        check(changed > 2000, f"the reply is visible in the screenshot ({changed} bytes differ)")
        keep = os.environ.get("EMBER_SCREENSHOT_DIR")
        if keep:
            shutil.copy(reply_png, os.path.join(keep, "ember-serve-page.png"))
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(tmp, ignore_errors=True)
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
