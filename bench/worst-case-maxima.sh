#!/usr/bin/env bash
# How long `latscope report RESULT --worst-case` takes on a saved result of 100 000
# seconds: one thread whose per-second maxima are 30 µs + Gumbel(10 µs, 2 µs), drawn with a
# fixed seed (Python's random, seed 1) into a copy of tests/fixtures/run.json. The target
# (issue 37): under 2 s. Prints the wall and CPU time of each of RUNS runs, then the
# estimate of the last. Needs no root and no latency lock (it measures no latency).
# Usage: bench/worst-case-maxima.sh [RUNS] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-3}
SECONDS_OF_MAXIMA=${2:-100000}
if [ -z "${LATSCOPE:-}" ]; then
  cargo build --release -q
  LATSCOPE=${CARGO_TARGET_DIR:-$PWD/target}/release/latscope
fi
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

python3 - "$OUT/big.json" "$SECONDS_OF_MAXIMA" <<'PY'
import json, math, random, sys
path, n = sys.argv[1], int(sys.argv[2])
r = json.load(open("tests/fixtures/run.json"))
r["scenarios"] = r["scenarios"][:1]
sc = r["scenarios"][0]
sc["threads"] = sc["threads"][:1]
rng = random.Random(1)
# Gumbel by inversion: location − scale · ln(−ln U)
m = [round((30 + 10 - 2 * math.log(-math.log(1 - rng.random()))) * 1000) for _ in range(n)]
th = sc["threads"][0]
th["per_second_max_ns"] = m
th["samples"] = n * 1000
th["max_ns"] = max(m)
json.dump(r, open(path, "w"))
PY

TIMEFORMAT='wall %R s, user %U s, sys %S s'
for i in $(seq 1 "$RUNS"); do
  echo -n "run $i/$RUNS: "
  { time "$LATSCOPE" report "$OUT/big.json" --worst-case >"$OUT/out.txt" 2>&1; } 2>&1
done
sed -n '/^Worst case beyond the samples/,$p' "$OUT/out.txt"
