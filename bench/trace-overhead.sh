#!/bin/sh
# What --trace costs and how well its split closes: `latscope timer` on one CPU with and
# without --trace, alternating (so drift and the host's noise hit both alike), then p50/p99/max
# of each run, the per-sample remainder (the part the events do not explain) and the share
# of samples joined. Needs root. Usage: bench/trace-overhead.sh [PAIRS] [SECONDS] [CPU]
set -eu
PAIRS=${1:-5}
SECS=${2:-10}
CPU=${3:-$(($(nproc) - 1))}
BIN=${LATSCOPE:-target/release/latscope}
OUT=$(mktemp -d)
i=1
while [ "$i" -le "$PAIRS" ]; do
    "$BIN" timer --cpus "$CPU" -D "${SECS}s" --quiet --export-json "$OUT/plain-$i.json"
    "$BIN" timer --cpus "$CPU" -D "${SECS}s" --quiet --trace --export-json "$OUT/trace-$i.json"
    i=$((i + 1))
done
python3 - "$OUT" "$PAIRS" <<'PY'
import json, sys
out, pairs = sys.argv[1], int(sys.argv[2])
def th(path):
    r = json.load(open(path))
    return r["scenarios"][0]
print(f"{'run':<8} {'p50 µs':>8} {'p99 µs':>8} {'max µs':>9} | {'joined':>12} {'rem p50':>8} {'rem p99':>8} {'rem max':>8} {'events':>8} {'lost':>5}")
for i in range(1, pairs + 1):
    for kind in ("plain", "trace"):
        s = th(f"{out}/{kind}-{i}.json")
        t = s["threads"][0]
        line = f"{kind}-{i:<3} {t['p50_ns']/1e3:8.2f} {t['p99_ns']/1e3:8.2f} {t['max_ns']/1e3:9.2f}"
        if kind == "trace":
            tr = s["trace"]
            tt = tr["threads"][0]
            rem = next(p for p in tt["parts"] if p["metric"] == "remainder")
            lost = sum(c["overrun"] + c["dropped"] + c["missed_events"] for c in tr["losses"]["per_cpu"])
            line += f" | {tt['samples_joined']:>5}/{tt['samples_total']:<6} {rem['p50_ns']/1e3:8.2f} {rem['p99_ns']/1e3:8.2f} {rem['max_ns']/1e3:8.2f} {tr['events_recorded']:>8} {lost:>5}"
        print(line)
PY
echo "JSON files in $OUT"
