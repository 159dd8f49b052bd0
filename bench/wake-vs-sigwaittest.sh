#!/usr/bin/env bash
# `latscope wake --mechanism signal` beside rt-tests' sigwaittest: both threads on one
# CPU, SCHED_FIFO at the same priority, the same interval and loop count, run in
# alternation so machine noise falls on both. Prints a markdown table (µs).
#
# usage: sudo bench/wake-vs-sigwaittest.sh [CPU] [PRIO] [INTERVAL_US] [LOOPS] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
CPU=${1:-1}
PRIO=${2:-95}
INTERVAL_US=${3:-1000}
LOOPS=${4:-10000}
ROUNDS=${5:-3}
LATSCOPE=${LATSCOPE:-./target/release/latscope}
command -v sigwaittest >/dev/null || { echo "sigwaittest not found (apt install rt-tests)" >&2; exit 1; }
[ -x "$LATSCOPE" ] || cargo build --release --quiet
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "| round | tool | samples | min | avg | p50 | p99 | max | waker call p50 |"
echo "|---|---|---|---|---|---|---|---|---|"
for round in $(seq 1 "$ROUNDS"); do
  # sigwaittest only warns when it cannot pin (e.g. a cpuset took the CPU away): retry.
  for try in $(seq 1 10); do
    sigwaittest -a "$CPU" -p "$PRIO" -i "$INTERVAL_US" -l "$LOOPS" -q --json="$tmp/swt.json" >/dev/null 2>"$tmp/swt.err"
    grep -q "Could not set CPU affinity" "$tmp/swt.err" || break
    echo "round $round: sigwaittest could not pin to CPU $CPU (try $try), retrying" >&2
    sleep 10
  done
  python3 - "$tmp/swt.json" "$round" "$LOOPS" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["thread"]["0"]["receiver"]
print(f"| {sys.argv[2]} | sigwaittest | {sys.argv[3]} | {r['min']} | {r['avg']:.1f} | – | – | {r['max']} | – |")
PY
  # latscope refuses to run unpinned: retry while the CPU is unavailable.
  for try in $(seq 1 10); do
    if "$LATSCOPE" wake --mechanism signal --waker-cpu "$CPU" --wakee-cpu "$CPU" \
      --policy fifo -p "$PRIO" -i "${INTERVAL_US}us" -l "$LOOPS" --warmup 0 -q \
      --export-json "$tmp/wake.json" 2>"$tmp/wake.err"; then
      break
    fi
    echo "round $round: latscope failed (try $try): $(tail -1 "$tmp/wake.err"); retrying" >&2
    sleep 10
  done
  python3 - "$tmp/wake.json" "$round" <<'PY'
import json, sys
threads = json.load(open(sys.argv[1]))["scenarios"][0]["threads"]
t = [t for t in threads if t["metric"] == "response"][0]
c = [t for t in threads if t["metric"] == "call"][0]
us = lambda ns: f"{ns / 1000:.1f}"
print(f"| {sys.argv[2]} | latscope wake signal | {t['samples']} | {us(t['min_ns'])} | {us(t['mean_ns'])} | {us(t['p50_ns'])} | {us(t['p99_ns'])} | {us(t['max_ns'])} | {us(c['p50_ns'])} |")
PY
done
