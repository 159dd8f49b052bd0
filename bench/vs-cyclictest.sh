#!/usr/bin/env bash
# latscope timer --method clock-nanosleep beside cyclictest, alternately on the same CPU:
# FIFO 95, 1 ms, 20 000 loops, five pairs, both holding /dev/cpu_dma_latency at 0.
# Prints the median of each tool's avg, p99 and max, their ratios, peak RSS (median and
# largest of the runs) and CPU time. HIST sets cyclictest's -h (default 100000 µs buckets,
# so the p99 is read from its histogram; the peak-memory comparison uses HIST=20000, 5000
# loops: bench/README.md, "Peak memory").
# MODE=cyclictest runs the drop-in instead, `latscope cyclictest` with cyclictest's own
# argument list, and reads its --json file with the same parser as cyclictest's.
# Every run holds the latency-test lock, so no test measures meanwhile.
# Usage: [HIST=N] bench/vs-cyclictest.sh [CPU] [PAIRS] [LOOPS] [MODE]   (as root; MODE timer|cyclictest)
set -euo pipefail
cd "$(dirname "$0")/.."
CPU=${1:-1}
PAIRS=${2:-5}
LOOPS=${3:-20000}
MODE=${4:-timer}
HIST=${HIST:-100000}
LOCK=/tmp/latscope-latency-tests.lock
command -v cyclictest >/dev/null || { apt-get update -qq && apt-get install -y -qq rt-tests; }
if [ -z "${LATSCOPE:-}" ]; then
  cargo build --release -q
  LATSCOPE=${CARGO_TARGET_DIR:-$PWD/target}/release/latscope
fi
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

# Runs a command, records its peak RSS (KiB), CPU time (s) and exit code from GNU time
# (wait4's rusage of a small C parent: a child of Python would report Python's own peak,
# which it inherits across exec).
measure() {
  local tag=$1; shift
  flock "$LOCK" /usr/bin/time -o "$OUT/$tag.time" -f "%M %U %S %x" "$@" >/dev/null 2>&1 || true
  awk 'END {printf "%s %.3f %s\n", $1, $2 + $3, $4}' "$OUT/$tag.time" >"$OUT/$tag.rusage"
}

CYCLICTEST_ARGS=(-m -q -l "$LOOPS" -i 1000 -p 95 -a "$CPU" -t 1 -h "$HIST")
for i in $(seq 1 "$PAIRS"); do
  echo "pair $i/$PAIRS: cyclictest" >&2
  measure "c$i" cyclictest "${CYCLICTEST_ARGS[@]}" --json="$OUT/c$i.json"
  echo "pair $i/$PAIRS: latscope $MODE" >&2
  if [ "$MODE" = cyclictest ]; then
    measure "l$i" "$LATSCOPE" cyclictest "${CYCLICTEST_ARGS[@]}" --json="$OUT/l$i.json"
  else
    measure "l$i" "$LATSCOPE" timer --method clock-nanosleep -i 1000 -l "$LOOPS" -p 95 -a "$CPU" \
      --dma-latency 0 --warmup 0 -q --export-json "$OUT/l$i.json"
  fi
done

python3 - "$OUT" "$PAIRS" "$MODE" <<'PY'
import json, statistics, sys
out, pairs, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def cyc(i, tag="c"):
    t = json.load(open(f"{out}/{tag}{i}.json"))["thread"]["0"]
    hist = sorted((int(k), v) for k, v in t["histogram"].items())
    total, seen, p99 = sum(v for _, v in hist), 0, None
    for us, v in hist:
        seen += v
        if p99 is None and seen >= 0.99 * total:
            p99 = us
    return t["avg"], p99, t["max"]
def lat(i):
    if mode == "cyclictest":
        return cyc(i, "l")
    t = json.load(open(f"{out}/l{i}.json"))["scenarios"][0]["threads"][0]
    return t["mean_ns"] / 1e3, t["p99_ns"] / 1e3, t["max_ns"] / 1e3
def rusage(tag):
    rss, cpu, rc = open(f"{out}/{tag}.rusage").read().split()
    return int(rss), float(cpu)
rows = {"cyclictest": [cyc(i) for i in range(1, pairs + 1)],
        "latscope": [lat(i) for i in range(1, pairs + 1)]}
ru = {"cyclictest": [rusage(f"c{i}") for i in range(1, pairs + 1)],
      "latscope": [rusage(f"l{i}") for i in range(1, pairs + 1)]}
med = {k: [statistics.median(r[j] for r in v) for j in range(3)] for k, v in rows.items()}
print(f"{'tool':<11} {'avg µs':>8} {'p99 µs':>8} {'max µs':>9} {'RSS KiB median/max':>19} {'CPU s':>7}")
rss_med = {}
for k in rows:
    rss_med[k] = statistics.median(r[0] for r in ru[k])
    rss = f"{rss_med[k]:.0f}/{max(r[0] for r in ru[k])}"
    cpu = statistics.median(r[1] for r in ru[k])
    print(f"{k:<11} {med[k][0]:>8.2f} {med[k][1]:>8.2f} {med[k][2]:>9.2f} {rss:>19} {cpu:>7.3f}")
c, l = med["cyclictest"], med["latscope"]
print(f"ratio latscope/cyclictest: avg {l[0]/c[0]:.3f}  p99 {l[1]/c[1]:.3f}  max {l[2]/c[2]:.3f}"
      f"  peak RSS medians {rss_med['latscope'] - rss_med['cyclictest']:+.0f} KiB")
print("peak RSS per pair (KiB): " + ", ".join(
    f"{ru['cyclictest'][i][0]}/{ru['latscope'][i][0]}" for i in range(pairs)))
print("per pair (avg/p99/max µs):")
for i in range(pairs):
    print(f"  {i+1}: cyclictest {rows['cyclictest'][i][0]:.1f}/{rows['cyclictest'][i][1]}/{rows['cyclictest'][i][2]}"
          f"  latscope {rows['latscope'][i][0]:.1f}/{rows['latscope'][i][1]:.1f}/{rows['latscope'][i][2]:.1f}")
PY
