#!/usr/bin/env bash
# Soak of `latscope watch` (issue 39), time-compressed: a 100 µs period on one CPU for
# SECONDS seconds (default 600: ~6 M samples), intervals rotated every minute. Every 5 s
# the watch's resident memory (VmRSS) and open descriptors go into a CSV, and its
# /proc/PID/smaps is copied at one minute and near the end; at the end the
# peak RSS after the first minute is compared with the RSS at one minute (flat: memory
# bounded whatever the duration), and the interval files' sample counts are summed. Holds
# the latency-test lock for its whole duration. Not for CI.
# Usage: bench/watch-soak.sh [SECONDS] [CPU]   (as root; LATSCOPE=binary to skip the build;
# ROTATE=10s etc. for more rotations in a shorter soak, 1m by default)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
SECONDS_TOTAL=${1:-600}
CPU=${2:-1}
EVERY=5
ROTATE=${ROTATE:-1m}
LOCK=/tmp/latscope-latency-tests.lock
if [ -z "${LATSCOPE:-}" ]; then
  cargo build --release -q
  LATSCOPE=${CARGO_TARGET_DIR:-$PWD/target}/release/latscope
fi
OUT=${SOAK_OUT:-$(mktemp -d /tmp/latscope-watch-soak.XXXXXX)}
mkdir -p "$OUT/watch"
CSV=$OUT/rss.csv
exec 9>"$LOCK"
echo "# waiting for $LOCK"
flock 9
echo "elapsed_s,rss_kib,fds" >"$CSV"
"$LATSCOPE" watch --cpus "$CPU" --interval 100us --rotate "$ROTATE" --dir "$OUT/watch" \
  -D "${SECONDS_TOTAL}s" 2>"$OUT/watch.stderr" 9>&- &
pid=$!
start=$(date +%s)
echo "# watch (pid $pid) for $SECONDS_TOTAL s on CPU $CPU, --rotate $ROTATE; samples in $CSV"
while kill -0 "$pid" 2>/dev/null; do
  elapsed=$(($(date +%s) - start))
  held=$(proc_rss_fds "$pid")
  [ -n "$held" ] && echo "$elapsed,$held" >>"$CSV"
  # /proc/PID/smaps at one minute and the latest before the end: which mapping grew.
  if [ "$elapsed" -ge 60 ]; then
    [ -f "$OUT/smaps-1min" ] || cp "/proc/$pid/smaps" "$OUT/smaps-1min" 2>/dev/null || true
    [ "$elapsed" -le $((SECONDS_TOTAL - EVERY)) ] && cp "/proc/$pid/smaps" "$OUT/smaps-last" 2>/dev/null || true
  fi
  sleep "$EVERY"
done
set +e
wait "$pid"
code=$?
set -e
echo "watch exit $code"
awk -F, 'NR > 1 {
    if ($1 <= 60) at60 = $2
    else { if ($2 > peak) peak = $2; if (!after) after = $2 }
    if ($3 > fdmax) fdmax = $3
    last = $2; n++ }
  END { printf "rss samples %d  at 1 min %d KiB  peak after 1 min %d KiB  last %d KiB  growth %+d KiB  max fds %d\n",
        n, at60, peak, last, peak - at60, fdmax }' "$CSV"
if [ -f "$OUT/smaps-1min" ] && [ -f "$OUT/smaps-last" ]; then
  echo "mappings whose Rss changed from one minute to the end:"
  smaps_rss_changes "$OUT/smaps-1min" "$OUT/smaps-last"
fi
python3 - "$OUT/watch" <<'PY'
import glob, json, sys
files = sorted(glob.glob(sys.argv[1] + "/*.json"))
n = m = 0
for f in files:
    t = json.load(open(f))["scenarios"][0]["threads"][0]
    n += t["samples"]
    m = max(m, t["max_ns"])
print(f"interval files {len(files)}  samples {n}  max {m / 1000:.1f} us")
PY
