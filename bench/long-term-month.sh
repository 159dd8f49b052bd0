#!/usr/bin/env bash
# How long `latscope report DIR` takes on a month of daily interval files (issue 39): 30
# files as `latscope watch` writes them with --rotate 1d (watch-HOST-2026-11-DD.json, each
# 00:00 to 24:00 UTC), made from the recorded runs of tests/fixtures/long_term: each day is
# one of them with its per-second maxima repeated to 86 400 a CPU (two CPUs: 5.2 million
# in the month) and its sample count scaled alike. The target: well under a second for the
# table. Prints the wall and CPU time of each of RUNS runs of the table and of the HTML,
# then of one run with --worst-case (each CPU's fit over the month, 10 000 blocks of 260 s).
# Needs no root and no latency lock (it measures no latency).
# Usage: bench/long-term-month.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-3}
if [ -z "${LATSCOPE:-}" ]; then
  cargo build --release -q
  LATSCOPE=${CARGO_TARGET_DIR:-$PWD/target}/release/latscope
fi
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

python3 - "$OUT" <<'PY'
import glob, json, sys
out = sys.argv[1]
runs = [json.load(open(p)) for p in sorted(glob.glob("tests/fixtures/long_term/watch-*.json"))]
for day in range(1, 31):
    r = json.loads(json.dumps(runs[(day - 1) % len(runs)]))
    r["started_at"] = f"2026-11-{day:02}T00:00:00Z"
    r["finished_at"] = f"2026-12-01T00:00:00Z" if day == 30 else f"2026-11-{day + 1:02}T00:00:00Z"
    for sc in r["scenarios"]:
        sc["started_at"] = r["started_at"]
        for th in sc["threads"]:
            m = th["per_second_max_ns"]
            scale = 86400 / len(m)
            th["per_second_max_ns"] = (m * (86400 // len(m) + 1))[:86400]
            th["samples"] = round(th["samples"] * scale)
    json.dump(r, open(f"{out}/watch-{r['system']['hostname']}-2026-11-{day:02}.json", "w"))
PY
echo "$(ls "$OUT" | wc -l) files, $(du -sh "$OUT" | cut -f1)"
TIMEFORMAT='wall %R s, user %U s, sys %S s'
for i in $(seq 1 "$RUNS"); do
  echo -n "table $i/$RUNS: "
  { time "$LATSCOPE" report "$OUT" >"$OUT/table.txt" 2>&1; } 2>&1
done
for i in $(seq 1 "$RUNS"); do
  echo -n "html $i/$RUNS: "
  { time "$LATSCOPE" report "$OUT" -f html -o "$OUT/month.html" 2>&1; } 2>&1
done
echo -n "table --worst-case: "
{ time "$LATSCOPE" report "$OUT" --worst-case >"$OUT/table.txt" 2>&1; } 2>&1
sed -n '1,2p;/^Worst case beyond/,/^  fit/p' "$OUT/table.txt"
