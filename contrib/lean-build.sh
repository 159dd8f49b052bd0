#!/usr/bin/env bash
# Builds a lean latscope: the functions a measuring run executes are linked together at the
# front of the program text, so a run keeps ~0.7 MB of latscope's text resident instead of
# ~3 MB (bench/README.md, "Peak memory"). The kernel maps the cached pages around every
# first touch (64 KB, or a whole large folio), and a run touches a few hundred functions
# spread over 4.4 MB; placed together they fill a few such windows.
#
# Two passes, because the order names the functions of this very build (their mangled
# names carry hashes that change with the toolchain and the dependencies):
#   1. cargo build --release;
#   2. run the main jobs once under valgrind's callgrind, which lists every function they
#      execute (timer with the default and the busy method, with the table and the JSON);
#   3. link the binary again with that list as LLD's --symbol-ordering-file (Rust links
#      x86-64 Linux with LLD since 1.90; GNU ld has no such option, and the script says so).
# Needs valgrind. Run it as the user who builds; as root the profiled runs use SCHED_FIFO 95
# and /dev/cpu_dma_latency as the real ones do, otherwise SCHED_OTHER (the few functions
# that set up a real-time run then stay in the cold part of the text).
#
# Usage: contrib/lean-build.sh [OUT]            default OUT: target/lean/latscope
#        STATIC=1 contrib/lean-build.sh [OUT]   a static glibc build (for boards), as README.md
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target}
OUT=${1:-$TARGET_DIR/lean/latscope}
HOST=$(rustc -vV | sed -n 's/^host: //p')
CARGO_ARGS=(--release --locked)
BIN=$TARGET_DIR/release/latscope
if [ "${STATIC:-0}" = 1 ]; then
  # crt-static needs --target, or it reaches the proc-macro crates too (README.md).
  export RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+crt-static"
  CARGO_ARGS+=(--target "$HOST")
  BIN=$TARGET_DIR/$HOST/release/latscope
fi
command -v valgrind >/dev/null || {
  echo "lean-build: needs valgrind (apt-get install valgrind) to list the functions a run executes" >&2
  exit 2
}
if [ "$(id -u)" = 0 ]; then
  RUN=(-p 95 --dma-latency 0)
else
  RUN=(--policy other)
  echo "lean-build: not root: profiling at SCHED_OTHER (as root, the real-time set-up is listed too)" >&2
fi

echo "lean-build: 1/3 cargo build ${CARGO_ARGS[*]}" >&2
cargo build "${CARGO_ARGS[@]}" -q
readelf -p .comment "$BIN" | grep -q LLD || {
  echo "lean-build: $BIN was not linked by LLD; the function order needs LLD's --symbol-ordering-file (Rust >= 1.90 on x86-64 Linux uses it by default, elsewhere add -C link-arg=-fuse-ld=lld)" >&2
  exit 2
}

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
CPU=$(($(nproc) - 1))
echo "lean-build: 2/3 the functions the main jobs execute (callgrind, CPU $CPU)" >&2
profile() {
  valgrind --tool=callgrind --demangle=no --callgrind-out-file="$WORK/cg.%p" "$BIN" "$@" \
    >/dev/null 2>"$WORK/valgrind.log" || {
    tail -20 "$WORK/valgrind.log" >&2
    exit 1
  }
}
profile timer "${RUN[@]}" -i 1000 -l 300 -a "$CPU"
profile timer "${RUN[@]}" -i 1000 -l 300 -a "$CPU" -q --export-json "$WORK/run.json"
profile timer "${RUN[@]}" --method busy -i 10 -l 3000 -a "$CPU" -q
# callgrind names a function once per file with its id (fn=(12) name), after that by id.
grep -ohE '^c?fn=\([0-9]+\) .+' "$WORK"/cg.* | sed -E 's/^c?fn=\([0-9]+\) //' | sort -u >"$WORK/executed"
nm "$BIN" | awk '$2 ~ /^[tTwW]$/ {print $3}' | sort -u >"$WORK/defined"
ORDER=$TARGET_DIR/lean/hot-functions-$([ "${STATIC:-0}" = 1 ] && echo static || echo dynamic).txt
mkdir -p "$(dirname "$ORDER")" "$(dirname "$OUT")"
comm -12 "$WORK/executed" "$WORK/defined" >"$ORDER"
echo "lean-build: $(wc -l <"$ORDER") functions executed ($ORDER)" >&2

echo "lean-build: 3/3 linking again with that order" >&2
# `cargo rustc` applies the link arguments to the binary only: the library is not rebuilt,
# so the names in the list stay the names in the binary.
cargo rustc "${CARGO_ARGS[@]}" -q --bin latscope -- \
  -C link-arg=-Wl,--symbol-ordering-file="$ORDER" -C link-arg=-Wl,--no-warn-symbol-ordering
# The text must now start with a function of the list, or LLD ignored it.
first=$(nm -n "$BIN" | awk '$2 ~ /^[tT]$/ && !seen {print $3; seen = 1}')
grep -qxF "$first" "$ORDER" || {
  echo "lean-build: the linked text starts with $first, not with a listed function: the order was not applied" >&2
  exit 1
}
cp "$BIN" "$OUT.tmp" && mv "$OUT.tmp" "$OUT"
# The next plain `cargo build` links target/release/latscope again without the order.
echo "lean-build: $OUT" >&2
