#!/usr/bin/env bash
# The function order that keeps a run's program text small (bench/README.md, "Peak memory"):
# the functions a measuring run executes, linked together at the front of the text, so a
# `latscope timer` run keeps ~1.1 MB of latscope's text resident instead of ~3 MB, while the
# list names this build's functions (a fresh clone's build renames ~8 % of them and keeps
# ~2.2 MB: bench/README.md). The kernel maps the cached pages around every first touch
# (64 KB, or a whole large folio), and a run touches about 900 functions spread over 6.5 MB.
#
# `cargo build --release` applies the committed list, contrib/lean/hot-functions.txt, by
# itself (build.rs; x86-64 glibc with Rust >= 1.90, which links with LLD). This script
#   --update   writes that list again from this build (after a toolchain, dependency or
#              version change, or when --check fails), then builds with it;
#   --check    says how much of the list still names this build's executed functions, and
#              fails below LEAN_MIN_PERCENT (default 90) or when the order was not applied;
#   [OUT]      links a binary with a list made for this very build (STATIC=1: glibc
#              linked statically too, for boards; the committed list names the dynamic
#              build's functions, not these).
# The list is made by running the main jobs once under valgrind's callgrind, which names
# every function they execute (timer with the default and the busy method, with the table
# and the JSON), kept if the binary defines them. The names are mangled with hashes that
# change with the toolchain, the dependencies and the crate's version, not with its code;
# a name the build lacks is skipped by LLD (--no-warn-symbol-ordering), so a stale list
# costs memory, never a build.
# Needs valgrind. As root the profiled runs use SCHED_FIFO 95 and /dev/cpu_dma_latency as
# the real ones do, otherwise SCHED_OTHER (the functions that set up a real-time run then
# stay in the cold part of the text).
#
# Usage: contrib/lean-build.sh --update | --check
#        contrib/lean-build.sh [OUT]            default OUT: target/lean/latscope
#        STATIC=1 contrib/lean-build.sh [OUT]   a static glibc build (for boards), as README.md
set -euo pipefail
cd "$(dirname "$0")/.."
MODE=build
case "${1:-}" in
--update | --check) MODE=${1#--} && shift ;;
-*) sed -n '2,/^set -euo/p' "$0" | sed '$d' >&2 && exit 2 ;;
esac
COMMITTED=contrib/lean/hot-functions.txt
TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target}
OUT=${1:-$TARGET_DIR/lean/latscope}
HOST=$(rustc -vV | sed -n 's/^host: //p')
CARGO_ARGS=(--release --locked)
BIN=$TARGET_DIR/release/latscope
if [ "${STATIC:-0}" = 1 ]; then
  [ "$MODE" = build ] || { echo "lean-build: STATIC=1 makes a binary only; the committed list is the dynamic build's" >&2 && exit 2; }
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
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# The linked text must start with a function of the list, or LLD did not apply it.
order_applied() {
  local first
  first=$(nm -n "$BIN" | awk '$2 ~ /^[tT]$/ && !seen {print $3; seen = 1}')
  grep -qxF "$first" "$1" || {
    echo "lean-build: the linked text starts with $first, not with a listed function: the order was not applied" >&2
    return 1
  }
}

echo "lean-build: 1/3 cargo build ${CARGO_ARGS[*]}" >&2
cargo build "${CARGO_ARGS[@]}" -q
readelf -p .comment "$BIN" | grep -q LLD || {
  echo "lean-build: $BIN was not linked by LLD; the function order needs LLD's --symbol-ordering-file (Rust >= 1.90 on x86-64 Linux uses it by default, elsewhere add -C link-arg=-fuse-ld=lld)" >&2
  exit 2
}

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
comm -12 "$WORK/executed" "$WORK/defined" >"$WORK/order"
echo "lean-build: $(wc -l <"$WORK/order") of latscope's functions executed" >&2

if [ "$MODE" = check ]; then
  grep -v '^#' "$COMMITTED" | sort -u >"$WORK/listed"
  executed=$(wc -l <"$WORK/order")
  listed=$(wc -l <"$WORK/listed")
  matched=$(comm -12 "$WORK/order" "$WORK/listed" | wc -l)
  defined=$(comm -12 "$WORK/defined" "$WORK/listed" | wc -l)
  percent=$((100 * matched / executed))
  echo "lean-build: $COMMITTED: $matched of the $executed executed functions listed ($percent %);" \
    "$defined of its $listed names defined in this build" >&2
  order_applied "$WORK/listed"
  [ "$percent" -ge "${LEAN_MIN_PERCENT:-90}" ] || {
    echo "lean-build: the list is stale (below ${LEAN_MIN_PERCENT:-90} %): run contrib/lean-build.sh --update and commit $COMMITTED" >&2
    exit 1
  }
  exit 0
fi

if [ "$MODE" = update ]; then
  ORDER=$PWD/$COMMITTED
  {
    echo "# The functions a latscope timer run executes, linked first by build.rs (LLD's"
    echo "# --symbol-ordering-file). Written by contrib/lean-build.sh --update for"
    echo "# $(rustc -V), $(git log -1 --format='commit %h' 2>/dev/null || echo 'no commit'); names, not code, go stale."
    cat "$WORK/order"
  } >"$ORDER.tmp"
  mv "$ORDER.tmp" "$ORDER"
  unset LATSCOPE_SYMBOL_ORDER
else
  ORDER=$TARGET_DIR/lean/hot-functions-$([ "${STATIC:-0}" = 1 ] && echo static || echo dynamic).txt
  mkdir -p "$(dirname "$ORDER")"
  cp "$WORK/order" "$ORDER"
  export LATSCOPE_SYMBOL_ORDER=$ORDER
fi
echo "lean-build: 3/3 linking again in that order ($ORDER)" >&2
# build.rs passes the list to the linker; its change reruns it, and the names stay those of
# the profiled build (they depend on the crate's metadata, not on the link arguments).
cargo build "${CARGO_ARGS[@]}" -q
order_applied "$ORDER"
if [ "$MODE" = update ]; then
  echo "lean-build: $ORDER written; $BIN linked in its order" >&2
  exit 0
fi
mkdir -p "$(dirname "$OUT")"
cp "$BIN" "$OUT.tmp" && mv "$OUT.tmp" "$OUT"
# The next plain `cargo build` links target/release/latscope again in the committed order.
echo "lean-build: $OUT" >&2
