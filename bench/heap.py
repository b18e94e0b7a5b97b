#!/usr/bin/env python3
"""heap.py MASSIF_OUT: where the peak heap of a msgaudit run goes, by owner.

Reads a massif profile (bench/heap.sh writes one) and sums the peak snapshot's
allocations by who made them: syntax trees (any stack through `syn::`),
proc-macro2's span tables, the out-of-memory reserve (address space, never touched:
not resident), and otherwise the innermost msgaudit function that asked for the
memory. Prints MB, share of the peak and owner, largest first.
"""
import collections
import re
import sys


def frame(desc):
    desc = desc.split(": ", 1)[-1]
    return re.sub(r" \(in .*\)$", "", desc)


def owner(frames):
    if any("take_reserve" in f for f in frames):
        return "out-of-memory reserve (not resident)"
    if any("syn::" in f for f in frames):
        return "syntax trees (syn)"
    if any("proc_macro2" in f for f in frames):
        return "span tables (proc-macro2)"
    ours = [f for f in frames if "msgaudit::" in f and "support::alloc" not in f]
    if ours:
        return ours[0][:110]
    return "below the profile's threshold"


def main(path):
    lines = open(path, encoding="utf-8", errors="replace").read().split("\n")
    start = next((i + 1 for i, l in enumerate(lines) if l.startswith("heap_tree=peak")), None)
    if start is None:
        sys.exit(f"{path}: no peak snapshot")
    stack, sums = [], collections.Counter()
    for line in lines[start:]:
        m = re.match(r"^( *)n(\d+): (\d+) (.*)$", line)
        if not m:
            break
        depth = len(m.group(1))
        stack = stack[:depth] + [frame(m.group(4))]
        if int(m.group(2)) == 0:
            sums[owner(stack[1:])] += int(m.group(3))
    total = sum(sums.values())
    print(f"| MB | share | owner |\n|---:|---:|---|")
    for name, b in sums.most_common(int(sys.argv[2]) if len(sys.argv) > 2 else 20):
        print(f"| {b / 1e6:.1f} | {100 * b / total:.1f}% | {name} |")
    print(f"| {total / 1e6:.1f} | 100% | peak heap |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1])
