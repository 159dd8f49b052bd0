#!/usr/bin/env bash
# Records the arm64 lab guest's machine facts (facts.sh: /proc/cpuinfo, /proc/interrupts,
# the device tree, tracefs events, IRQ affinity writability, latscope doctor/sysinfo/timer
# --trace) into OUT/NAME files, one per section, for fixtures of arm64 kernels.
# Usage (as root): contrib/arm64-lab/record-facts.sh [--kernel stock|rt] OUT
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
kernel=(--kernel stock)
if [ "${1:-}" = --kernel ]; then kernel=(--kernel "$2"); shift 2; fi
out=${1:?usage: record-facts.sh [--kernel stock|rt] OUT}
mkdir -p "$out"
console=$(mktemp)
trap 'rm -f "$console"' EXIT
"$here/run.sh" "${kernel[@]}" -- sh /lab/facts.sh | tee "$console" >/dev/null
awk -v out="$out" '
  /^==> .* <==$/ { if (file) close(file); name = $2; file = (name == "end") ? "" : out "/" name; next }
  file { print > file }
' "$console"
cp "$console" "$out/console.txt"
ls "$out"
