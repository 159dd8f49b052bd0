#!/usr/bin/env bash
# What the timer slack does to a SCHED_OTHER timer: `latscope timer --policy other` at its
# default --timer-slack 1ns and at 50us (what a program that never sets its slack has),
# in alternating pairs on one CPU, 1 ms, LOOPS samples each. Prints the median avg, p99
# and max of each. Every run holds the latency-test lock.
# Usage: bench/timer-slack.sh [CPU] [PAIRS] [LOOPS]
set -euo pipefail
cd "$(dirname "$0")/.."
CPU=${1:-1}
PAIRS=${2:-5}
LOOPS=${3:-10000}
LOCK=/tmp/latscope-latency-tests.lock
if [ -z "${LATSCOPE:-}" ]; then
  cargo build --release -q
  LATSCOPE=${CARGO_TARGET_DIR:-$PWD/target}/release/latscope
fi
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
for i in $(seq 1 "$PAIRS"); do
  for slack in 1ns 50us; do
    echo "pair $i/$PAIRS: --timer-slack $slack" >&2
    flock "$LOCK" "$LATSCOPE" timer --policy other -a "$CPU" -i 1000 -l "$LOOPS" --warmup 0 -q \
      --timer-slack "$slack" --export-json "$OUT/$slack-$i.json" 2>/dev/null
  done
done
python3 - "$OUT" "$PAIRS" <<'PY'
import json, statistics, sys
out, pairs = sys.argv[1], int(sys.argv[2])
for slack in ("1ns", "50us"):
    rows = []
    for i in range(1, pairs + 1):
        t = json.load(open(f"{out}/{slack}-{i}.json"))["scenarios"][0]["threads"][0]
        rows.append((t["mean_ns"] / 1e3, t["p99_ns"] / 1e3, t["max_ns"] / 1e3))
    med = [statistics.median(r[j] for r in rows) for j in range(3)]
    each = "; ".join(f"{a:.1f}/{p:.1f}/{m:.0f}" for a, p, m in rows)
    print(f"--timer-slack {slack:>4}: median avg {med[0]:.1f} µs, p99 {med[1]:.1f} µs, max {med[2]:.0f} µs  (pairs: {each})")
PY
