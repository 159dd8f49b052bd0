#!/usr/bin/env bash
# `latscope cyclictest` beside cyclictest with the same argument list, in alternating
# pairs (odd pairs cyclictest first, even pairs latscope first) on one CPU: at
# SCHED_OTHER (no -p: rt-tests 2.4 runs `--policy=other -p0` at FIFO 2) and at -p95.
# Each run: -m -q -i1000 -l LOOPS -a CPU -t1 -h 100000 --json=FILE (the histogram gives
# p99; both hold /dev/cpu_dma_latency at 0). Prints, per policy, each pair's avg, p99 and
# max and the median of the per-pair ratios latscope/cyclictest.
# Every run holds the latency-test lock, so no test measures meanwhile.
# Usage: [POLICIES="other fifo"] bench/dropin-parity.sh [CPU] [PAIRS] [LOOPS]   (as root)
set -euo pipefail
cd "$(dirname "$0")/.."
CPU=${1:-1}
PAIRS=${2:-9}
LOOPS=${3:-10000}
LOCK=/tmp/latscope-latency-tests.lock
command -v cyclictest >/dev/null || { apt-get update -qq && apt-get install -y -qq rt-tests; }
if [ -z "${LATSCOPE:-}" ]; then
  cargo build --release -q
  LATSCOPE=${CARGO_TARGET_DIR:-$PWD/target}/release/latscope
fi
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

run() { # TAG TOOL... : one run under the lock, its --json into $OUT/TAG.json
  local tag=$1; shift
  flock "$LOCK" "$@" -m -q -i1000 -l "$LOOPS" -a "$CPU" -t1 -h 100000 ${PRIO:+"$PRIO"} \
    --json="$OUT/$tag.json" >/dev/null 2>&1
}

for policy in ${POLICIES:-other fifo}; do
  PRIO=""
  [ "$policy" = fifo ] && PRIO=-p95
  for i in $(seq 1 "$PAIRS"); do
    echo "$policy pair $i/$PAIRS" >&2
    if [ $((i % 2)) -eq 1 ]; then
      run "$policy-c$i" cyclictest
      run "$policy-l$i" "$LATSCOPE" cyclictest
    else
      run "$policy-l$i" "$LATSCOPE" cyclictest
      run "$policy-c$i" cyclictest
    fi
  done
done

python3 - "$OUT" "$PAIRS" <<'PY'
import json, statistics, sys
out, pairs = sys.argv[1], int(sys.argv[2])
def stats(tag):
    t = json.load(open(f"{out}/{tag}.json"))["thread"]["0"]
    hist = sorted((int(k), v) for k, v in t["histogram"].items())
    # Samples beyond the histogram count as its end (none at 100 000 µs buckets here).
    total = t["cycles"]
    seen, p99 = 0, None
    for us, v in hist:
        seen += v
        if p99 is None and seen >= 0.99 * total:
            p99 = us
    return t["avg"], (p99 if p99 is not None else t["max"]), t["max"]
import os
for policy, label in (("other", "SCHED_OTHER (no -p)"), ("fifo", "SCHED_FIFO 95 (-p95)")):
    if policy not in os.environ.get("POLICIES", "other fifo").split():
        continue
    print(f"{label}: {pairs} pairs, avg/p99/max µs")
    ratios = []
    for i in range(1, pairs + 1):
        c, l = stats(f"{policy}-c{i}"), stats(f"{policy}-l{i}")
        ratios.append([l[j] / c[j] if c[j] else float("nan") for j in range(3)])
        print(f"  {i}: cyclictest {c[0]:.1f}/{c[1]}/{c[2]}  latscope {l[0]:.1f}/{l[1]}/{l[2]}"
              f"  ratio {ratios[-1][0]:.2f}/{ratios[-1][1]:.2f}/{ratios[-1][2]:.2f}")
    med = [statistics.median(r[j] for r in ratios) for j in range(3)]
    print(f"  median ratio latscope/cyclictest: avg {med[0]:.2f}  p99 {med[1]:.2f}  max {med[2]:.2f}")
PY
