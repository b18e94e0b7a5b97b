#!/usr/bin/env python3
"""Hostile input for `msgaudit server` (issue 38, items 5-9): a measurement, not a test.

Each case generates its input, drives the server over stdio with raw bytes and prints
what happened and how long it took (tests/server.rs checks the same cases with
generous bounds; this measures them).

    bench/lsp_hostile.py --bin target/release/msgaudit            # every case
    bench/lsp_hostile.py --bin target/release/msgaudit exit --files 3000

Cases:
  length     Content-Length of 4 GiB, 3 GB and 64 MiB + 1 with no body: time to the
             error reply and to the process's end, its peak memory (VmHWM).
  malformed  invalid JSON, invalid UTF-8, a lone surrogate in a buffer, a request
             whose method is a number, an unknown method and a hover with bad
             params: the error code of each reply, then whether the session goes on.
  exit       a generated crate of --files files: `shutdown` and `exit` while its
             analysis runs; time from `exit` to the end of the process (goal: < 1 s).
  noroot     no workspace root: DIR/h.rs opened beside --files stray files in DIR;
             the files analyzed (from the log line) and the time to the result.
  unsaved    a crate with `mod consumer;` and src/consumer.rs only as a buffer: the
             findings published for it.
Python 3 standard library only; Linux (/proc).
"""

import argparse
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time

from lsp import frame, read_messages, uri_of

HERE = os.path.dirname(os.path.abspath(__file__))
HANDLER = os.path.join(
    HERE, "..", "fixtures", "ma001_ack_before_commit",
    "bad_lapin_qualified_acker_ack_before_insert.rs",
)


class Proc:
    def __init__(self, binary):
        self.cache = tempfile.TemporaryDirectory()
        env = dict(os.environ, XDG_CACHE_HOME=self.cache.name)
        self.proc = subprocess.Popen(
            [binary, "server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, env=env,
        )
        self.messages = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        read_messages(self.proc.stdout, self.messages.put)
        self.messages.put(None)

    def raw(self, data):
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message):
        self.raw(frame(json.dumps(message).encode()))

    def wait_for(self, wanted, timeout=600):
        while True:
            m = self.messages.get(timeout=timeout)
            if m is None or wanted(m):
                return m

    def initialize(self, root):
        self.send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                   "params": {"processId": None, "rootUri": root and uri_of(root),
                              "capabilities": {}}})
        self.wait_for(lambda m: m.get("id") == 1)
        self.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})

    def open(self, path, text, version=1):
        self.send({"jsonrpc": "2.0", "method": "textDocument/didOpen",
                   "params": {"textDocument": {"uri": uri_of(path), "languageId": "rust",
                                               "version": version, "text": text}}})

    def hwm_kib(self):
        try:
            with open(f"/proc/{self.proc.pid}/status") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1])
        except OSError:
            pass
        return 0

    def wait_exit(self, timeout=600):
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return "did not exit"


def handler():
    with open(HANDLER, encoding="utf-8") as f:
        return f.read()


def make_crate(d, files):
    os.makedirs(os.path.join(d, "src"), exist_ok=True)
    with open(os.path.join(d, "Cargo.toml"), "w") as f:
        f.write('[package]\nname = "large"\nversion = "0.1.0"\nedition = "2021"\n\n'
                '[dependencies]\nlapin = "2"\nsqlx = "0.8"\nfutures = "0.3"\n')
    text = handler()
    for i in range(files):
        with open(os.path.join(d, "src", f"m{i}.rs"), "w") as f:
            f.write(text.replace("ShipmentDispatched", f"ShipmentDispatched{i}")
                    .replace("fn consume", f"fn consume{i}"))
    with open(os.path.join(d, "src", "main.rs"), "w") as f:
        f.write("".join(f"mod m{i};\n" for i in range(files)) + "fn main() {}\n")


def case_length(a):
    for length in (4 << 30, 3_000_000_000, (64 << 20) + 1):
        p = Proc(a.bin)
        p.initialize(None)
        t0 = time.monotonic()
        p.raw(b"Content-Length: %d\r\n\r\n{" % length)
        reply = p.wait_for(lambda m: "error" in m, timeout=60)
        t1 = time.monotonic()
        hwm = p.hwm_kib()
        status = p.wait_exit(60)
        t2 = time.monotonic()
        error = reply and reply["error"]["code"]
        print(f"length {length}: reply {error} after {t1 - t0:.3f} s, exit status "
              f"{status} after {t2 - t0:.3f} s, peak rss {hwm / 1024:.1f} MiB")


def case_malformed(a):
    p = Proc(a.bin)
    with tempfile.TemporaryDirectory() as d:
        make_crate(d, 1)
        p.initialize(d)
        path = os.path.join(d, "src", "m0.rs")
        surrogate = ('{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":'
                     '{"uri":"%s","languageId":"rust","version":1,"text":"\\ud800"}}}'
                     % uri_of(path)).encode()
        cases = [
            ("invalid JSON", b'{"jsonrpc": "2.0", "id": 2, "method": ', None),
            ("invalid UTF-8", b'{"jsonrpc": "2.0", "id": 3, "method": "\xff"}', None),
            ("lone surrogate", surrogate, None),
            ("method is a number", b'{"jsonrpc":"2.0","id":4,"method":5}', 4),
            ("unknown method", b'{"jsonrpc":"2.0","id":5,"method":"x/y","params":5}', 5),
            ("hover, bad params", b'{"jsonrpc":"2.0","id":6,"method":"textDocument/hover",'
             b'"params":[1]}', 6),
        ]
        for name, body, id_ in cases:
            t0 = time.monotonic()
            p.raw(frame(body))
            m = p.wait_for(lambda m: "method" not in m and m.get("id") == id_, timeout=60)
            code = m and m.get("error", {}).get("code")
            print(f"{name}: {code} in {time.monotonic() - t0:.3f} s")
        p.open(path, handler(), 2)
        m = p.wait_for(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                       and m["params"].get("version") == 2, timeout=60)
        print("session goes on:", m is not None and len(m["params"]["diagnostics"]) > 0)
        p.send({"jsonrpc": "2.0", "id": 9, "method": "shutdown"})
        p.wait_for(lambda m: m.get("id") == 9)
        p.send({"jsonrpc": "2.0", "method": "exit"})
        print("exit status:", p.wait_exit(60))


def case_exit(a):
    with tempfile.TemporaryDirectory() as d:
        make_crate(d, a.files)
        for delay in (0.3, 1.0, 3.0):
            p = Proc(a.bin)
            p.initialize(d)
            time.sleep(delay)
            p.send({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
            p.wait_for(lambda m: m.get("id") == 2)
            t0 = time.monotonic()
            p.send({"jsonrpc": "2.0", "method": "exit"})
            status = p.wait_exit(600)
            print(f"{a.files} files, exit {delay:.1f} s into the run: process ended "
                  f"{time.monotonic() - t0:.3f} s after exit (status {status})")


def case_noroot(a):
    with tempfile.TemporaryDirectory() as d:
        text = handler()
        for i in range(a.files):
            with open(os.path.join(d, f"stray{i}.rs"), "w") as f:
                f.write(text)
        h = os.path.join(d, "h.rs")
        with open(h, "w") as f:
            f.write(text)
        p = Proc(a.bin)
        p.initialize(None)
        t0 = time.monotonic()
        p.open(h, text)
        m = p.wait_for(lambda m: m.get("method") == "window/logMessage"
                       and "files analyzed" in m["params"]["message"], timeout=600)
        print(f"no root, h.rs beside {a.files} stray files: {m and m['params']['message']} "
              f"({time.monotonic() - t0:.3f} s)")
        p.proc.kill()


def case_unsaved(a):
    with tempfile.TemporaryDirectory() as d:
        make_crate(d, 0)
        with open(os.path.join(d, "src", "main.rs"), "w") as f:
            f.write("mod consumer;\nfn main() {}\n")
        p = Proc(a.bin)
        p.initialize(d)
        path = os.path.join(d, "src", "consumer.rs")
        t0 = time.monotonic()
        p.open(path, handler())
        m = p.wait_for(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                       and m["params"]["uri"] == uri_of(path), timeout=60)
        codes = sorted(x["code"] for x in m["params"]["diagnostics"]) if m else None
        print(f"unsaved src/consumer.rs: {codes} in {time.monotonic() - t0:.3f} s")
        p.proc.kill()


CASES = {"length": case_length, "malformed": case_malformed, "exit": case_exit,
         "noroot": case_noroot, "unsaved": case_unsaved}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--files", type=int, default=8000, help="files of the generated trees")
    ap.add_argument("cases", nargs="*", help=" ".join(CASES) + " (default: all)")
    a = ap.parse_args()
    a.bin = os.path.abspath(a.bin)
    for c in a.cases or CASES:
        if c not in CASES:
            raise SystemExit(f"unknown case {c}: {' '.join(CASES)}")
        CASES[c](a)


if __name__ == "__main__":
    sys.exit(main())
