#!/usr/bin/env bash
# Times msgaudit on the hostile shapes of tests/run_bounds.rs at bench sizes: nested
# loops, thousands of receive/effect/ack triples, one message acked between thousands
# of effects, sequential ifs, match arms, async blocks, functions calling all later
# ones, and dense tokens at the token bound; issue 38's shapes: 4 000 acking `if`s in
# a row (one receive, each branch acks then writes), 3 000 labelled blocks that break
# after an ack, 10 000 receive/write/ack triples with `?` (ack first, and in a
# transaction); issue 43's 1 000 channel sends beside 1 000 vector pushes; 20 000 unread bindings; and, run at --jobs 1/2/4/8, six crates of 100 000 small functions.
#
#   bench/hostile.sh [BASE_BINARY]
#
# Prints, per shape, wall time (s) and peak RSS (MiB) of this build's release binary,
# and of BASE_BINARY when given (e.g. an older release, for ratios measured in one
# run). Runs each shape once per binary, interleaved; killed after TIMEOUT seconds
# (default 120). FORMAT picks the output format (default human, the one a terminal and
# CI show: it draws a snippet per finding, so it is timed with the analysis).
set -euo pipefail

HERE=$(cd "$(dirname "$0")/.." && pwd)
BASE=${1:-}
TIMEOUT=${TIMEOUT:-120}
TREE=$(mktemp -d)
trap 'rm -rf "$TREE"' EXIT
(cd "$HERE" && cargo build --release --quiet --bin msgaudit)
NEW=${CARGO_TARGET_DIR:-$HERE/target}/release/msgaudit

python3 - "$TREE" <<'EOF'
import os, sys
root = sys.argv[1]
HDR = "use lapin::options::BasicAckOptions;\n"
R = "let d = consumer.next().await.unwrap().unwrap();\n"
A = "d.ack(BasicAckOptions::default()).await.unwrap();\n"
I = 'sqlx::query("INSERT INTO t (a) VALUES (1)").execute(&pool).await.unwrap();\n'
def crate(name, text):
    os.makedirs(f"{root}/{name}/src")
    open(f"{root}/{name}/Cargo.toml", "w").write(
        f'[package]\nname = "{name}"\nversion = "0.1.0"\n[dependencies]\nlapin = "2"\nsqlx = "0.7"\n')
    open(f"{root}/{name}/src/main.rs", "w").write(text)
def handler(body):
    return HDR + ("async fn handle(consumer: lapin::Consumer, pool: sqlx::PgPool, "
                  "xs: Vec<u8>, c: bool) {\n") + body + "}\n"
crate("loops_30", handler("for x in xs.iter() {\n" * 30 + R + I + A + "}\n" * 30))
crate("triples_5000", handler((R + I + A) * 5000))
crate("acks_5000", handler(R + (A + I) * 5000))
crate("ifs_5000", handler(R + "".join(f"if xs.len() == {i} {{ {I} }}\n" for i in range(5000)) + A))
crate("arms_20000", handler(R + "match xs.len() {\n" +
                            "".join(f"{i} => {{ {I} }}\n" for i in range(20000)) + "_ => {}\n}\n" + A))
crate("async_1000", handler(R + "".join(f"let f{i} = async {{ {I} }};\nf{i}.await;\n"
                                        for i in range(1000)) + A))
fan = HDR
for i in range(100):
    fan += f"async fn f{i}(pool: &sqlx::PgPool) {{\n" + "".join(
        f"f{j}(pool).await;\n" for j in range(i + 1, 100)) + I.replace("&pool", "pool") + "}\n"
fan += "async fn handle(consumer: lapin::Consumer, pool: sqlx::PgPool) {\n" + R + A + "f0(&pool).await;\n}\n"
crate("fan_100", fan)
crate("braces_at_bound", handler(R + "{}" * 495_000 + "\n" + A))
crate("semicolons_10mb", handler(R + ";" * 10_000_000 + "\n" + A))
crate("acking_ifs_4000", handler(R + "".join(f"if c {{ {A}{I} }}\n" for i in range(4000))))
crate("labelled_breaks_3000", handler("".join(
    f"'l{i}: {{ {R}{A} if c {{ break 'l{i}; }} {I} }}\n" for i in range(3000))))
IQ = I.replace(".unwrap();", "?;")
def fallible(body):
    return HDR + ("async fn handle(consumer: lapin::Consumer, pool: sqlx::PgPool) "
                  "-> anyhow::Result<()> {\n") + body + "Ok(())\n}\n"
crate("triples_ack_first_10000", fallible((R + A + IQ) * 10000))
crate("triples_in_tx_10000", fallible((R + "let mut tx = pool.begin().await?;\n"
      + IQ.replace("&pool", "&mut *tx") + "tx.commit().await?;\n" + A) * 10000))
# Issue 43: 1 000 channel sends in one handler, each followed by an ack, with a
# worker loop that writes; beside it the same handler with a vector push instead of
# the send (no channel): the worker loop runs once per entry, not once per send.
W = ("async fn worker(mut rx: tokio::sync::mpsc::Receiver<u8>, pool: sqlx::PgPool) {\n"
     "while let Some(x) = rx.recv().await {\n" + I + "}\n}\n")
def sends(stmt):
    return W + HDR + ("async fn handle(consumer: lapin::Consumer, pool: sqlx::PgPool, "
                      "tx: tokio::sync::mpsc::Sender<u8>, mut v: Vec<u8>) {\n") + (
        R + stmt + A) * 1000 + "}\n"
crate("channel_sends_1000", sends("tx.send(1).await.unwrap();\n"))
crate("vec_pushes_1000", sends("v.push(1);\n"))
# 20 000 bindings of a call's result that nothing reads again (each once looked
# through the rest of its block for a read: quadratic).
crate("unread_bindings_20000", fallible(R + A + "".join(
    f"let r{i} = pool.fetch_thing({i}).await;\n" for i in range(20000))))
wide = root + "/.wide"
for k in range(6):
    os.makedirs(f"{wide}/c{k}/src")
    open(f"{wide}/c{k}/Cargo.toml", "w").write(
        f'[package]\nname = "c{k}"\nversion = "0.1.0"\n[dependencies]\nlapin = "2"\n')
    open(f"{wide}/c{k}/src/main.rs", "w").write(
        HDR + "".join(f"fn f{i}() {{ }}\n" for i in range(100000)))
EOF

run() { # BINARY DIR [ARGS] -> "seconds MiB" (a timeout shows as its limit)
    # Cold runs: the analysis cache would answer the later runs of one tree (older
    # binaries ignore the variable).
    MSGAUDIT_NO_CACHE=1 /usr/bin/time -o "$TREE/.time" -f '%e %M' timeout "$TIMEOUT" "$1" check "$2" \
        --format "${FORMAT:-human}" "${@:3}" > /dev/null 2> /dev/null || true
    tail -1 "$TREE/.time" | awk '{ printf "%s %.0f", $1, $2 / 1024 }'
}

printf '%-18s %18s' shape "this (s, MiB)"
[ -n "$BASE" ] && printf ' %18s' "base (s, MiB)"
echo
for dir in "$TREE"/*/; do
    name=$(basename "$dir")
    printf '%-18s %18s' "$name" "$(run "$NEW" "$dir")"
    [ -n "$BASE" ] && printf ' %18s' "$(run "$BASE" "$dir")"
    echo
done
for jobs in 1 2 4 8; do
    name="six_wide_jobs_$jobs"
    printf '%-18s %18s' "$name" "$(run "$NEW" "$TREE/.wide" --jobs "$jobs")"
    [ -n "$BASE" ] && printf ' %18s' "$(run "$BASE" "$TREE/.wide" --jobs "$jobs")"
    echo
done
