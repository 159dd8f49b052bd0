#!/usr/bin/env bash
# latscope and cyclictest alternately on the same CPU (both FIFO 95, 1 ms, cpu_dma_latency
# held at 0, 10 000 samples), then `latscope compare` of all runs against the first.
# Usage: bench/latscope_vs_cyclictest.sh [CPU] [ROUNDS]   (as root)
set -euo pipefail
cpu=${1:-0}
rounds=${2:-2}
bin=${LATSCOPE:-target/release/latscope}
out=$(mktemp -d)
files=()
for i in $(seq 1 "$rounds"); do
  "$bin" timer -l 10000 --warmup 0 --cpus "$cpu" -q --dma-latency 0 --export-json "$out/ls$i.json" 2>/dev/null
  cyclictest -m -q -l 10000 -i 1000 -p 95 -a "$cpu" -t 1 -h 2000 --json="$out/ct$i.json" >/dev/null
  files+=("$out/ls$i.json" "$out/ct$i.json")
done
"$bin" compare "${files[@]}" --export-html "$out/compare.html"
echo "files and compare.html in $out"
