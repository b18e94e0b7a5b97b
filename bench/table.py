#!/usr/bin/env python3
"""Formats bench/table.sh's raw TSV as issue 40's markdown table.

    bench/table.py RESULTS.tsv

Per tree, --jobs and tool: the median over the rounds that passed of wall time, CPU time
(user + sys) and peak RSS, and for msgaudit's rows the ratios of its medians to
parse-only's (same tree and jobs). Lines starting with `# machine` and `# tree` describe
the run and the trees.
"""

import statistics
import sys

TOOLS = ["msgaudit cold", "msgaudit warm", "msgaudit touched", "parse-only", "ast-grep"]


def main(path):
    machine, end, trees, rows = None, None, [], []
    header = None
    for line in open(path):
        line = line.rstrip("\n")
        if line.startswith("# machine\t"):
            machine = line.split("\t")[1:]
        elif line.startswith("# end\t"):
            end = line.split("\t")[1:]
        elif line.startswith("# tree\t"):
            trees.append(line.split("\t")[1:])
        elif header is None:
            header = line.split("\t")
        elif line:
            rows.append(dict(zip(header, line.split("\t"))))
    if machine:
        m = [f for f in machine if f]
        print(f"Machine: {m[0]} ({m[1]}); {m[2]}; " + "; ".join(m[3:]) + ".")
        print()
    for t in trees:
        print(f"- **{t[0]}**: " + ", ".join(t[1:]))
    print()
    groups, order = {}, []
    for r in rows:
        key = (r["tree"], r["jobs"], r["tool"])
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append(r)

    def med(key):
        ok = [r for r in groups.get(key, []) if r["status"] == "ok" and r["wall_s"] != "NA"]
        if not ok:
            return None
        wall = statistics.median(float(r["wall_s"]) for r in ok)
        cpu = statistics.median(float(r["user_s"]) + float(r["sys_s"]) for r in ok)
        rss = statistics.median(int(r["maxrss_kib"]) for r in ok) / 1024
        return wall, cpu, rss, len(ok)

    print("| tree | jobs | tool | wall s | CPU s | peak RSS MiB | wall / parse-only | CPU / parse-only |")
    print("|---|---:|---|---:|---:|---:|---:|---:|")
    seen = []
    for tree, jobs, _ in order:
        if (tree, jobs) in seen:
            continue
        seen.append((tree, jobs))
        base = med((tree, jobs, "parse-only"))
        tools = [t for t in TOOLS if (tree, jobs, t) in groups]
        tools += [t for (a, b, t) in order if (a, b) == (tree, jobs) and t not in tools]
        for tool in tools:
            rs = groups[(tree, jobs, tool)]
            m = med((tree, jobs, tool))
            n = len(rs)
            if m is None:
                print(f"| {tree} | {jobs} | {tool} | failed ({n}/{n}) | | | | |")
                continue
            wall, cpu, rss, ok = m
            flag = "" if ok == n else f" ({n - ok}/{n} failed)"
            notes = {r["note"].split()[0] for r in rs if r.get("note")}
            label = tool
            if tool == "msgaudit warm" and notes and notes != {"hit"}:
                label += " (cache: " + ", ".join(sorted(notes)) + ")"
            rw = rc = ""
            if tool.startswith("msgaudit") and base:
                rw = f"{wall / base[0]:.2f}" if base[0] > 0 else ""
                rc = f"{cpu / base[1]:.2f}" if base[1] > 0 else ""
            print(f"| {tree} | {jobs} | {label}{flag} | {wall:.2f} | {cpu:.2f} | {rss:.0f} | {rw} | {rc} |")
    print()
    tail = f" Ended {end[0]}, {end[1]}." if end else ""
    print(f"Medians of the rounds that passed; raw runs: `{path}`.{tail}")


if __name__ == "__main__":
    main(sys.argv[1])
