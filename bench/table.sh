#!/usr/bin/env bash
# Issue 40's benchmark table: msgaudit cold, warm and warm-after-one-edit against a
# parse-only baseline and ast-grep, per tree and per --jobs, measured interleaved.
#
#   bench/table.sh            markdown table on stdout, progress on stderr
#
# For each tree and each N of JOBS_LIST, REPEAT rounds of, one after the other:
#   msgaudit cold      msgaudit check TREE --format json --jobs N --no-cache
#   msgaudit warm      the same without --no-cache, on the unchanged tree (the cache was
#                      filled by a run before the first round)
#   msgaudit touched   a comment line appended to one .rs file of the tree's largest crate
#                      (unique per run, so the cache misses), one run, the file restored
#   parse-only         examples/parse_only.rs --jobs N TREE (read + syn::parse_file every .rs)
#   ast-grep           ast-grep run --lang rust -p '$X.commit($$$)' --threads N TREE
# each under /usr/bin/time -f '%e %U %S %M'. The table gives medians of wall time, CPU
# time (user+sys) and peak RSS, and msgaudit/parse-only ratios of the medians.
#
# Environment:
#   REPEAT      rounds per tree and jobs (default 3)
#   JOBS_LIST   --jobs values (default "1 2 $(nproc)", duplicates dropped)
#   TREES       any of: vector scouter synth1m synth2m (synthNm: N million lines) (default "vector synth1m synth2m scouter")
#   VECTOR_DIR  a checkout of vectordotdev/vector; unset: the pinned commit is cloned
#   SCOUTER_DIR a checkout of demml/scouter (the largest Rust workspace of the labelled
#               corpus after vector); unset: the pinned commit is cloned
#   BENCH_CACHE clones, tree copies, ast-grep (default ${XDG_CACHE_HOME:-~/.cache}/msgaudit-bench)
#   BENCH_INSTALL=1  install ast-grep (npm @ast-grep/cli) into BENCH_CACHE when not on PATH
#   AST_GREP    the ast-grep binary (default: `ast-grep` on PATH, then BENCH_CACHE's)
#   TSV         raw measurements (default bench/results/<UTC date>.tsv)
#   CARGO_TARGET_DIR  as for cargo
#
# Trees are measured on a copy under BENCH_CACHE/work (without target/, .git/ and
# .msgaudit_cache/), so that the cache and the touched file never land in a checkout.
# A tool that fails prints a line on stderr, is recorded as failed, and the table goes on.
set -uo pipefail

HERE=$(cd "$(dirname "$0")/.." && pwd)
REPEAT=${REPEAT:-3}
JOBS_LIST=${JOBS_LIST:-"1 2 $(nproc)"}
TREES=${TREES:-"vector synth1m synth2m scouter"}
BENCH_CACHE=${BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/msgaudit-bench}
TSV=${TSV:-$HERE/bench/results/$(date -u +%F).tsv}
TARGET=${CARGO_TARGET_DIR:-$HERE/target}
SEED=${SEED:-6}
# shellcheck disable=SC2016 # ast-grep's metavariables, not the shell's
PATTERN='$X.commit($$$)'

VECTOR_REPO=vectordotdev/vector
VECTOR_COMMIT=c3445d42d2799eb9afe102b71cba7ae96a80942b
SCOUTER_REPO=demml/scouter
SCOUTER_COMMIT=8faee5a0729b4a34c97ab14f2affa179bb898e42

say() { echo "table.sh: $*" >&2; }

if [ ! -x /usr/bin/time ]; then
    say "/usr/bin/time (GNU time) is needed for CPU time and peak RSS"; exit 2
fi
mkdir -p "$BENCH_CACHE/work" "$(dirname "$TSV")" || exit 2
(cd "$HERE" && cargo build --release --quiet --bin msgaudit --example parse_only) || {
    say "cargo build failed"; exit 2; }
MSGAUDIT=$TARGET/release/msgaudit
PARSE_ONLY=$TARGET/release/examples/parse_only

# ast-grep: on PATH (not shadow-utils' `sg`), else BENCH_CACHE's, else installed with npm
# when BENCH_INSTALL=1, else left out.
AST_GREP=${AST_GREP:-}
if [ -z "$AST_GREP" ]; then
    if command -v ast-grep > /dev/null; then
        AST_GREP=$(command -v ast-grep)
    elif [ -x "$BENCH_CACHE/ast-grep/node_modules/.bin/ast-grep" ]; then
        AST_GREP=$BENCH_CACHE/ast-grep/node_modules/.bin/ast-grep
    elif [ "${BENCH_INSTALL:-}" = 1 ] && command -v npm > /dev/null; then
        say "installing @ast-grep/cli with npm into $BENCH_CACHE/ast-grep"
        if npm install --no-audit --no-fund --prefix "$BENCH_CACHE/ast-grep" @ast-grep/cli >&2; then
            AST_GREP=$BENCH_CACHE/ast-grep/node_modules/.bin/ast-grep
        fi
    fi
fi
if [ -n "$AST_GREP" ] && ! "$AST_GREP" --version > /dev/null 2>&1; then
    say "$AST_GREP does not run; ast-grep left out"; AST_GREP=
fi
if [ -z "$AST_GREP" ]; then
    say "ast-grep not found (not on PATH; BENCH_INSTALL=1 installs @ast-grep/cli with npm): its rows are left out"
fi

# fetch REPO COMMIT DIR: a shallow clone of one commit, else GitHub's tarball.
fetch() {
    local repo=$1 commit=$2 dir=$3
    [ -d "$dir" ] && return 0
    say "fetching $repo at $commit into $dir"
    rm -rf "$dir.tmp" && mkdir -p "$dir.tmp"
    if git -C "$dir.tmp" init -q && git -C "$dir.tmp" fetch -q --depth 1 "https://github.com/$repo" "$commit" \
        && git -C "$dir.tmp" checkout -q FETCH_HEAD; then
        mv "$dir.tmp" "$dir"; return 0
    fi
    rm -rf "$dir.tmp" && mkdir -p "$dir.tmp"
    if curl -fsSL "https://codeload.github.com/$repo/tar.gz/$commit" | tar -xz -C "$dir.tmp" --strip-components 1; then
        mv "$dir.tmp" "$dir"; return 0
    fi
    rm -rf "$dir.tmp"; return 1
}

# source_of NAME: prints the directory the tree is copied from (cloned or generated).
source_of() {
    case $1 in
        vector)
            if [ -n "${VECTOR_DIR:-}" ]; then echo "$VECTOR_DIR"; return; fi
            fetch "$VECTOR_REPO" "$VECTOR_COMMIT" "$BENCH_CACHE/src/vector" && echo "$BENCH_CACHE/src/vector" ;;
        scouter)
            if [ -n "${SCOUTER_DIR:-}" ]; then echo "$SCOUTER_DIR"; return; fi
            fetch "$SCOUTER_REPO" "$SCOUTER_COMMIT" "$BENCH_CACHE/src/scouter" && echo "$BENCH_CACHE/src/scouter" ;;
        synth*m)
            local lines=${1#synth}
            lines=$(( ${lines%m} * 1000000 ))
            local dir=$BENCH_CACHE/src/synth-$lines-$SEED
            if [ ! -d "$dir" ]; then
                say "generating $lines lines into $dir"
                python3 "$HERE/bench/gen.py" "$dir.tmp" --lines "$lines" --seed "$SEED" > /dev/null \
                    && mv "$dir.tmp" "$dir" || return 1
            fi
            echo "$dir" ;;
        *) return 1 ;;
    esac
}

OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
COMMIT=$(git -C "$HERE" rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ -n "$(git -C "$HERE" status --porcelain -- src Cargo.toml Cargo.lock rules 2>/dev/null)" ]; then
    COMMIT="$COMMIT+dirty"
fi
CPU_MODEL=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)
{
    echo "# machine	$(nproc) cores	${CPU_MODEL:-unknown cpu}	$(date -u '+%Y-%m-%d %H:%M UTC')	commit $COMMIT	$("$MSGAUDIT" --version 2>/dev/null)	${AST_GREP:+$("$AST_GREP" --version)}	repeat $REPEAT	load at start $(cut -d' ' -f1-3 /proc/loadavg)"
    printf 'tree\tjobs\ttool\tround\twall_s\tuser_s\tsys_s\tmaxrss_kib\tstatus\tnote\n'
} > "$TSV"

# measure TREE JOBS TOOL ROUND CMD...: one timed run, one TSV row. Passes: exit 0 and 1
# (findings; ast-grep: no match), and msgaudit's 2 when it printed its JSON (input errors).
measure() {
    local tree=$1 jobs=$2 tool=$3 round=$4; shift 4
    local rc=0 status=ok note=
    /usr/bin/time -f '%e %U %S %M' -o "$OUT/time" "$@" > "$OUT/stdout" 2> "$OUT/stderr" || rc=$?
    if [ "$rc" -gt 1 ] && ! { [ "$rc" = 2 ] && [[ $tool == msgaudit* ]] && grep -q '"summary"' "$OUT/stdout"; }; then
        status="fail($rc)"
        say "$tree jobs=$jobs $tool round $round FAILED (exit $rc): $(grep -v '^Command exited' "$OUT/stderr" | tail -n 1)"
    fi
    if [[ $tool == msgaudit* ]]; then
        note=$(sed -n 's/^msgaudit: analysis cache: //p' "$OUT/stderr" | head -n 1)
    fi
    local t
    t=$(grep -E '^[0-9.]+ [0-9.]+ [0-9.]+ [0-9]+$' "$OUT/time" | tail -n 1)
    [ -n "$t" ] || t="NA NA NA NA"
    read -r wall user sys rss <<< "$t"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$tree" "$jobs" "$tool" "$round" \
        "$wall" "$user" "$sys" "$rss" "$status" "${note:-}" >> "$TSV"
}

declare -A SEEN
JOBS=()
for j in $JOBS_LIST; do
    if [ -z "${SEEN[$j]:-}" ]; then SEEN[$j]=1; JOBS+=("$j"); fi
done

for name in $TREES; do
    src=$(source_of "$name") || { say "tree $name: no source (clone failed or unknown name; skipped)"; continue; }
    tree=$BENCH_CACHE/work/$name
    rm -rf "$tree" && mkdir -p "$tree"
    (cd "$src" && tar -cf - --exclude=./target --exclude=./.git --exclude=.msgaudit_cache .) | tar -xf - -C "$tree" \
        || { say "tree $name: copying $src failed (skipped)"; continue; }
    # The largest crate (by lines of .rs under its nearest [package] Cargo.toml) and the file
    # of it to touch: its src/lib.rs or src/main.rs, else its largest .rs outside tests/.
    info=$(python3 - "$tree" <<'PY'
import os, sys
root = sys.argv[1]
def crate_of(d):
    while True:
        t = os.path.join(d, "Cargo.toml")
        if os.path.isfile(t) and "[package]" in open(t, errors="replace").read():
            return d
        if d == root or len(d) <= len(root):
            return root
        d = os.path.dirname(d)
crates, files, total, nfiles = {}, {}, 0, 0
for d, subdirs, names in os.walk(root):
    subdirs[:] = [s for s in subdirs if s not in ("target", ".git", ".msgaudit_cache")]
    for n in names:
        if n.endswith(".rs"):
            p = os.path.join(d, n)
            k = sum(1 for _ in open(p, "rb"))
            c = crate_of(d)
            crates[c] = crates.get(c, 0) + k
            files.setdefault(c, []).append((k, p))
            total += k
            nfiles += 1
c = max(crates, key=crates.get)
pick = next((os.path.join(c, "src", f) for f in ("lib.rs", "main.rs")
             if os.path.isfile(os.path.join(c, "src", f))), None)
if pick is None:
    rest = [f for f in files[c] if "/tests/" not in f[1] and "/benches/" not in f[1]] or files[c]
    pick = max(rest)[1]
rel = os.path.relpath(c, root)
rel = "the root package (.)" if rel == "." else rel
print(f"{nfiles}\t{total}\t{rel}\t{crates[c]}\t{len(files[c])}\t{os.path.relpath(pick, root)}")
PY
) || { say "tree $name: cannot read its crates (skipped)"; continue; }
    IFS=$'\t' read -r nfiles lines crate crate_lines crate_files touch <<< "$info"
    echo "# tree	$name	$nfiles .rs files	$lines lines	largest crate $crate: $crate_files files, $crate_lines lines	touched $touch" >> "$TSV"
    say "tree $name: $nfiles .rs files, $lines lines; largest crate $crate ($crate_lines lines); touching $touch"
    find "$tree" -type f -print0 | xargs -0 cat > /dev/null   # page cache
    cp "$tree/$touch" "$OUT/touch.orig"
    # Fill the cache for the warm runs (the key does not depend on --jobs).
    "$MSGAUDIT" check "$tree" --format json --quiet > /dev/null 2>&1
    for j in "${JOBS[@]}"; do
        for r in $(seq "$REPEAT"); do
            say "tree $name jobs $j round $r/$REPEAT"
            measure "$name" "$j" "msgaudit cold" "$r" "$MSGAUDIT" check "$tree" --format json --quiet --statistics --jobs "$j" --no-cache
            measure "$name" "$j" "msgaudit warm" "$r" "$MSGAUDIT" check "$tree" --format json --quiet --statistics --jobs "$j"
            echo "// msgaudit bench touch $j $r $(date +%s%N)" >> "$tree/$touch"
            measure "$name" "$j" "msgaudit touched" "$r" "$MSGAUDIT" check "$tree" --format json --quiet --statistics --jobs "$j"
            cp "$OUT/touch.orig" "$tree/$touch"
            measure "$name" "$j" "parse-only" "$r" "$PARSE_ONLY" --jobs "$j" "$tree"
            if [ -n "$AST_GREP" ]; then
                measure "$name" "$j" "ast-grep" "$r" "$AST_GREP" run --lang rust -p "$PATTERN" --threads "$j" "$tree"
            fi
        done
    done
done

echo "# end	$(date -u '+%Y-%m-%d %H:%M UTC')	load at end $(cut -d' ' -f1-3 /proc/loadavg)" >> "$TSV"
say "raw measurements: $TSV"
case $TSV in
    "$HERE"/*) (cd "$HERE" && python3 bench/table.py "${TSV#"$HERE"/}") ;;
    *) python3 "$HERE/bench/table.py" "$TSV" ;;
esac
