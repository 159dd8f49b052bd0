#!/usr/bin/env bash
# Soak: the memory-load and wake-methods presets at full size, one after the other, for
# SECONDS seconds (default one hour). Every 10 s latscope's resident memory (VmRSS) and its
# open descriptors are sampled into a CSV; at the end the last run gets SIGINT, and the
# machine is compared with how it was before: cpusets, IRQ affinities, the default IRQ
# affinity, the workqueue mask, /dev/cpu_dma_latency, RT throttling, tracefs instances,
# latscope's state files, scratch files and processes. The whole soak holds the
# latency-test lock (no test of another worktree changes the machine meanwhile, so the
# before/after comparison is latscope's alone). Not for CI.
# Usage: bench/soak.sh [SECONDS] [CPU]   (as root; LATSCOPE=binary to skip the build)
#   e.g. bench/soak.sh 3600 1
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
SECONDS_TOTAL=${1:-3600}
CPU=${2:-1}
EVERY=10
LOCK=/tmp/latscope-latency-tests.lock
if [ -z "${LATSCOPE:-}" ]; then
  cargo build --release -q
  LATSCOPE=${CARGO_TARGET_DIR:-$PWD/target}/release/latscope
fi
OUT=${SOAK_OUT:-$(mktemp -d /tmp/latscope-soak.XXXXXX)}
mkdir -p "$OUT"
CSV=$OUT/samples.csv

# Everything a run could leave changed, one line per item, sorted.
machine_state() {
  local f
  for f in /proc/irq/*/smp_affinity_list; do echo "$f $(cat "$f" 2>/dev/null)"; done
  echo "default_smp_affinity $(cat /proc/irq/default_smp_affinity)"
  echo "workqueue $(cat /sys/devices/virtual/workqueue/cpumask 2>/dev/null)"
  echo "rt_runtime $(cat /proc/sys/kernel/sched_rt_runtime_us)"
  echo "cpu_dma_latency $(python3 -c 'import struct;print(struct.unpack("i",open("/dev/cpu_dma_latency","rb").read(4))[0])')"
  find /sys/fs/cgroup -maxdepth 2 -type d -name 'latscope-*' 2>/dev/null | sed 's/^/cgroup /'
  for f in /sys/fs/cgroup/cpuset/cpuset.cpus /sys/fs/cgroup/cpuset/cpuset.sched_load_balance; do
    [ -e "$f" ] && echo "$f $(cat "$f")"
  done
  ls /sys/kernel/tracing/instances 2>/dev/null | grep latscope | sed 's/^/tracefs /' || true
  ls /run/latscope 2>/dev/null | grep -v '^isolate.lock$' | sed 's/^/state /' || true
  ls -d /tmp/latscope-io-* 2>/dev/null | sed 's/^/scratch /' || true
  pgrep -x latscope | sed 's/^/process latscope /' || true
}

exec 9>"$LOCK"
echo "# waiting for $LOCK"
flock 9
machine_state | sort >"$OUT/before.txt"
echo "elapsed_s,preset,pid,rss_kib,fds" >"$CSV"
start=$(date +%s)
end=$((start + SECONDS_TOTAL))
runs=0
presets=(memory-load wake-methods)
echo "# soak for $SECONDS_TOTAL s on CPU $CPU with $LATSCOPE; samples in $CSV"
while [ "$(date +%s)" -lt "$end" ]; do
  preset=${presets[$((runs % 2))]}
  "$LATSCOPE" suite --preset "$preset" --cpus "$CPU" -q \
    --export-json "$OUT/run-$runs-$preset.json" >/dev/null 2>"$OUT/run-$runs.stderr" 9>&- &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    if [ "$(date +%s)" -ge "$end" ]; then
      kill -INT "$pid" 2>/dev/null || true
      break
    fi
    held=$(proc_rss_fds "$pid")
    [ -n "$held" ] && echo "$(($(date +%s) - start)),$preset,$pid,$held" >>"$CSV"
    sleep "$EVERY"
  done
  set +e
  wait "$pid"
  code=$?
  set -e
  echo "run $runs ($preset, pid $pid): exit $code"
  runs=$((runs + 1))
done
sleep 1
machine_state | sort >"$OUT/after.txt"

echo
echo "# RSS (KiB) and descriptors per preset: first sample, min, max, last"
for preset in "${presets[@]}"; do
  awk -F, -v p="$preset" '$2 == p {
      if (!n++) { r0 = $4; f0 = $5; rmin = rmax = $4; fmin = fmax = $5 }
      if ($4 < rmin) rmin = $4; if ($4 > rmax) rmax = $4
      if ($5 < fmin) fmin = $5; if ($5 > fmax) fmax = $5
      r1 = $4; f1 = $5 }
    END { if (n) printf "%-13s samples %4d  rss %d %d %d %d  fds %d %d %d %d\n", p, n, r0, rmin, rmax, r1, f0, fmin, fmax, f1 }' "$CSV"
done
echo
if diff -u "$OUT/before.txt" "$OUT/after.txt"; then
  echo "machine as before: yes ($(wc -l <"$OUT/before.txt") items compared)"
else
  echo "machine as before: NO (diff above)"
  exit 1
fi
