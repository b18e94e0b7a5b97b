#!/usr/bin/env python3
"""Latency and memory of `msgaudit server` (a benchmark, not a test).

Drives the server over stdio as an editor would: initialize on ROOT, open FILE, then
edit it. For each edit (a comment line appended: a small change that moves no
finding), it sends didChange and didSave and measures the time until the server has
published the analysis of that version (its log line after each published run), and
the server's resident memory (VmRSS, from /proc) after it.

    bench/lsp.py --bin target/release/msgaudit --root fixtures/demo \
        --file src/consumer.rs --edits 1000
    bench/lsp.py --bin target/release/msgaudit --root ../vector --file src/app.rs --edits 20

--burst N first sends N edits without waiting (typing faster than the analysis), then
waits for the last one's result (FILE must have findings, or --inject add some, for
that wait): the server must drop the stale runs and stay bounded.
Python 3 standard library only; Linux (/proc).
"""

import argparse
import json
import os
import queue
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse


def uri_of(path):
    return "file://" + urllib.parse.quote(os.path.realpath(path))


def frame(body):
    """One LSP message: the header, then the body (bytes)."""
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def read_messages(out, put):
    """Reads LSP messages from `out` and gives each, decoded, to `put`, until the
    stream ends (bench/lsp_hostile.py shares it)."""
    while True:
        length = None
        while True:
            line = out.readline()
            if not line:
                return
            line = line.strip()
            if not line:
                break
            name, _, value = line.partition(b":")
            if name.lower() == b"content-length":
                length = int(value)
        put(json.loads(out.read(length)))


class Server:
    def __init__(self, binary, root):
        self.proc = subprocess.Popen(
            [binary, "server"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.messages = queue.Queue()
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()
        self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": uri_of(root),
                "capabilities": {},
            },
        )
        self.notify("initialized", {})

    def _read(self):
        read_messages(self.proc.stdout, self.messages.put)

    def send(self, message):
        self.proc.stdin.write(frame(json.dumps(message).encode()))
        self.proc.stdin.flush()

    def notify(self, method, params):
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method, params):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            m = self.messages.get(timeout=600)
            if m.get("id") == self.next_id and "method" not in m:
                return m.get("result")

    def wait_run(self, uri, version, has_findings):
        """Until the run that analyzed `version` of `uri` is published. With findings
        in the file, that is their publication under `version`; without, the run's
        log line (runs are sequential here: each edit waits for its result)."""
        while True:
            m = self.messages.get(timeout=600)
            method = m.get("method")
            if method == "textDocument/publishDiagnostics":
                p = m["params"]
                if has_findings and p["uri"] == uri and p.get("version") == version:
                    return len(p["diagnostics"])
            elif method == "window/logMessage" and not has_findings:
                return m["params"]["message"]
            elif method == "window/showMessage":
                raise SystemExit("server error: " + m["params"]["message"])

    def rss_kib(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def stop(self):
        self.request("shutdown", None)
        self.notify("exit", None)
        self.proc.wait(timeout=60)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("--file", required=True, help="path relative to ROOT")
    ap.add_argument("--edits", type=int, default=20)
    ap.add_argument("--burst", type=int, default=0)
    ap.add_argument(
        "--inject",
        help="a file whose text each edit appends (e.g. a fixture with a defect): the "
        "edit's result is then the finding appearing in FILE",
    )
    a = ap.parse_args()
    injected = ""
    if a.inject:
        with open(a.inject, encoding="utf-8") as f:
            injected = "\n" + f.read()

    path = os.path.join(a.root, a.file)
    uri = uri_of(path)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    server = Server(a.bin, a.root)
    start = time.monotonic()
    server.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "rust", "version": 1, "text": text}},
    )
    # The first run's log line; the file's findings, if any, come before it.
    findings = 0
    while True:
        m = server.messages.get(timeout=600)
        if m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri:
            findings = len(m["params"]["diagnostics"])
        if m.get("method") == "window/logMessage" and m["params"]["message"].startswith("msgaudit:"):
            if findings or "findings" in m["params"]["message"]:
                log = m["params"]["message"]
                break
    has_findings = findings > 0
    print(f"open: {time.monotonic() - start:.3f} s, {findings} findings in the file ({log})")
    rss = [server.rss_kib()]
    print(f"rss after open: {rss[0] / 1024:.1f} MiB")

    version = 1
    if a.burst and not (has_findings or injected):
        raise SystemExit("--burst needs a FILE with findings, or --inject")
    if a.burst:
        start = time.monotonic()
        for i in range(a.burst):
            version += 1
            server.notify(
                "textDocument/didChange",
                {
                    "textDocument": {"uri": uri, "version": version},
                    "contentChanges": [{"text": text + f"// burst {i}\n" + injected}],
                },
            )
        # The last version's run (runs of older texts are dropped as stale, or
        # published if they ended before the next edit arrived).
        server.wait_run(uri, version, True)
        print(f"burst of {a.burst} edits: {time.monotonic() - start:.3f} s to the last one's result")
        rss.append(server.rss_kib())
        print(f"rss after the burst: {rss[-1] / 1024:.1f} MiB")

    latencies = []
    for i in range(a.edits):
        version += 1
        edited = text + f"// edit {i}\n" + injected
        t0 = time.monotonic()
        server.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": edited}]},
        )
        server.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
        # didChange and didSave each start a run: wait for the one that is published.
        n = server.wait_run(uri, version, has_findings or bool(injected))
        if injected and i == 0:
            print(f"findings in the file after the first edit: {n}")
        latencies.append(time.monotonic() - t0)
        rss.append(server.rss_kib())
        if i + 1 in (1, 10, 100, 500, 1000, 2000, 3000, 5000) or i + 1 == a.edits:
            print(f"after {i + 1} edits: rss {rss[-1] / 1024:.1f} MiB")
    if latencies:
        latencies.sort()
        p = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))]
        print(
            f"edit -> published: median {statistics.median(latencies):.3f} s, "
            f"p90 {p(0.9):.3f} s, max {latencies[-1]:.3f} s over {len(latencies)} edits"
        )
        print(
            f"rss: min {min(rss) / 1024:.1f} MiB, max {max(rss) / 1024:.1f} MiB, "
            f"last {rss[-1] / 1024:.1f} MiB"
        )
    server.stop()


if __name__ == "__main__":
    sys.exit(main())
