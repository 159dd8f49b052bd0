#!/usr/bin/env bash
# Peak resident memory (ru_maxrss, /usr/bin/time) of `--raw` runs: the timer at each
# sample count of COUNTS (busy method, 10 µs period, so 10^7 samples take ~100 s) and
# `noise -l 20000000` bounded by 5 s (its raw buffer is sized by -l). Each run holds the
# latency-test lock. The raw file goes to a temporary directory and its size is printed.
# Usage: bench/raw-rss.sh [CPU] [COUNTS]   (as root; LATSCOPE=binary to skip the build)
#   e.g. bench/raw-rss.sh 1 "1000000 10000000"
set -euo pipefail
cd "$(dirname "$0")/.."
CPU=${1:-1}
COUNTS=${2:-"1000000 10000000"}
LOCK=/tmp/latscope-latency-tests.lock
if [ -z "${LATSCOPE:-}" ]; then
  cargo build --release -q
  LATSCOPE=${CARGO_TARGET_DIR:-$PWD/target}/release/latscope
fi
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

# Prints "peak_KiB raw_bytes" of one run of the command (its --raw goes to $OUT/raw.csv).
peak() {
  rm -f "$OUT/raw.csv"
  flock "$LOCK" /usr/bin/time -o "$OUT/time" -f %M "$@" --raw "$OUT/raw.csv" >/dev/null 2>"$OUT/stderr" || {
    cat "$OUT/stderr" >&2
    return 1
  }
  echo "$(tail -1 "$OUT/time") $(stat -c %s "$OUT/raw.csv")"
}

echo "samples peak_KiB raw_bytes   # $LATSCOPE timer --method busy -i 10 -p 95 -a $CPU -l N -q --raw FILE"
for n in $COUNTS; do
  echo "$n $(peak "$LATSCOPE" timer --method busy -i 10 -p 95 -a "$CPU" -l "$n" -q)"
done
echo "noise $(peak "$LATSCOPE" noise -a "$CPU" -l 20000000 -D 5s -q)   # noise -a $CPU -l 20000000 -D 5s -q --raw FILE"
