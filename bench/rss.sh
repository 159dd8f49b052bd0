#!/usr/bin/env bash
# Peak resident memory (ru_maxrss, from /usr/bin/time) of `latscope timer` beside
# cyclictest: same CPU, SCHED_FIFO 95, 1 ms, same loop count, /dev/cpu_dma_latency held
# at 0 by both, PAIRS alternating pairs. Then latscope's peak RSS at each sample count of
# COUNTS (busy method, 10 µs period, so 10^7 samples take ~100 s). Every run holds the
# latency-test lock, so no other latency measurement runs meanwhile.
# Usage: bench/rss.sh [CPU] [PAIRS] [LOOPS] [COUNTS]   (as root)
#   e.g. bench/rss.sh 1 5 10000 "10000 1000000 10000000"
set -euo pipefail
cd "$(dirname "$0")/.."
CPU=${1:-1}
PAIRS=${2:-5}
LOOPS=${3:-10000}
COUNTS=${4:-"10000 1000000 10000000"}
LOCK=/tmp/latscope-latency-tests.lock
command -v cyclictest >/dev/null || { apt-get update -qq && apt-get install -y -qq rt-tests; }
if [ -z "${LATSCOPE:-}" ]; then
  cargo build --release -q
  LATSCOPE=${CARGO_TARGET_DIR:-$PWD/target}/release/latscope
fi
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

# Prints the peak RSS in KiB of one run of the command.
peak_kib() {
  flock "$LOCK" /usr/bin/time -o "$OUT/time" -f %M "$@" >/dev/null 2>"$OUT/stderr" || {
    cat "$OUT/stderr" >&2
    return 1
  }
  tail -1 "$OUT/time"
}

CYCLICTEST=(cyclictest -m -p95 -i1000 -l "$LOOPS" -a "$CPU" -q --latency=0)
LATSCOPE_TIMER=("$LATSCOPE" timer -p 95 -i 1000 -l "$LOOPS" -a "$CPU" -q --dma-latency 0)
echo "# ${CYCLICTEST[*]}"
echo "# ${LATSCOPE_TIMER[*]}"
echo "pair cyclictest_KiB latscope_KiB"
c_all=() l_all=()
for i in $(seq 1 "$PAIRS"); do
  c=$(peak_kib "${CYCLICTEST[@]}")
  l=$(peak_kib "${LATSCOPE_TIMER[@]}")
  c_all+=("$c") l_all+=("$l")
  echo "$i $c $l"
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
cm=$(median "${c_all[@]}") lm=$(median "${l_all[@]}")
echo "median $cm $lm  (latscope - cyclictest: $((lm - cm)) KiB)"

echo
echo "samples latscope_KiB   # $LATSCOPE timer --method busy -i 10 -p 95 -a $CPU -l N -q --dma-latency 0"
for n in $COUNTS; do
  echo "$n $(peak_kib "$LATSCOPE" timer --method busy -i 10 -p 95 -a "$CPU" -l "$n" -q --dma-latency 0)"
done
