#!/usr/bin/env bash
# Where a run's peak memory goes: msgaudit built with the C allocator
# (`--features system-alloc`, so that the profiler sees every allocation) and run under
# valgrind's massif, then summed by owner (bench/heap.py). A benchmark, not a test.
#
#   bench/heap.sh TREE [JOBS]       (default JOBS=1; valgrind runs threads one at a time)
#
# Environment: CARGO_TARGET_DIR (default target-heap/ beside the sources: the feature
# changes the binary, so it gets its own directory), OUT (the massif profile; default
# /tmp/msgaudit-heap.massif), TOP (rows printed; default 20).
set -euo pipefail
TREE=${1:?usage: bench/heap.sh TREE [JOBS]}
JOBS=${2:-1}
HERE=$(cd "$(dirname "$0")/.." && pwd)
TARGET=${CARGO_TARGET_DIR:-$HERE/target-heap}
OUT=${OUT:-/tmp/msgaudit-heap.massif}
command -v valgrind >/dev/null || { echo "bench/heap.sh: valgrind is needed (apt-get install valgrind)" >&2; exit 2; }
(cd "$HERE" && CARGO_TARGET_DIR=$TARGET cargo build --release --quiet --bin msgaudit --features system-alloc)
valgrind --tool=massif --massif-out-file="$OUT" --depth=40 --threshold=0.02 \
    "$TARGET/release/msgaudit" check "$TREE" --format json --no-cache --jobs "$JOBS" >/dev/null 2>"$OUT.log" || true
python3 "$HERE/bench/heap.py" "$OUT" "${TOP:-20}"
