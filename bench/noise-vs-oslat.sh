#!/usr/bin/env bash
# latscope noise beside rt-tests' oslat: same CPU, same duration, same FIFO priority,
# one after the other. Prints both tools' figures in one table (run as root).
# Usage: bench/noise-vs-oslat.sh [CPU] [SECONDS] [RTPRIO]
set -euo pipefail
cd "$(dirname "$0")/.."
CPU=${1:-1}
SECS=${2:-10}
PRIO=${3:-95}
BIN=./target/release/latscope
OUT=${OUT:-$(mktemp -d)}
[ -x "$BIN" ] || cargo build --release
command -v oslat >/dev/null || { echo "oslat not found (apt-get install rt-tests)"; exit 1; }

# oslat: 1 µs buckets (bucket 32 collects everything from 32 µs up), 1 s pre-heat.
oslat --cpu-list "$CPU" --duration "$SECS" --rtprio "$PRIO" --json="$OUT/oslat.json" -q >/dev/null
# latscope: gaps above 1 µs after the loop cost; 1 s warm-up like oslat's pre-heat.
"$BIN" noise --cpus "$CPU" -D "${SECS}s" -p "$PRIO" --warmup 1s -q --export-json "$OUT/latscope.json" \
  2>"$OUT/latscope.stderr" || { cat "$OUT/latscope.stderr"; exit 1; }

jq -r --arg secs "$SECS" '
  .thread["0"] as $t
  | ($t.histogram | to_entries | map(select((.key|tonumber) >= 2) | .value) | add) as $gt1
  | ($t.histogram["32"]) as $ge32
  | "oslat\t\($t.cpu)\t\($t.duration)\t\($gt1 / $t.duration | floor)\t\($ge32 / $t.duration | floor)\t\($t.max)\t-"' \
  "$OUT/oslat.json" > "$OUT/rows.tsv"
jq -r '
  .scenarios[0].threads[0] as $t
  | ($t.extra.measured_ns / 1e9) as $d
  | ([$t.histogram[] | select(.[0] >= 32000) | .[1]] | add // 0) as $ge32
  | "latscope noise\t\($t.cpu)\t\($d * 1000 | round / 1000)\t\($t.extra.gaps_per_second | floor)\t\($ge32 / $d | floor)\t\($t.max_ns / 1000 | floor)\t\($t.extra.noise_percent)"' \
  "$OUT/latscope.json" >> "$OUT/rows.tsv"

printf 'tool\tcpu\tseconds\tgaps>1us/s\tgaps>=32us/s (oslat: >=31us)\tmax (us)\ttime lost (%%)\n'
cat "$OUT/rows.tsv"
echo "results: $OUT"
