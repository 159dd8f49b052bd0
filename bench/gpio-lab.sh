#!/usr/bin/env bash
# The GPIO lab's stage table (bench/README.md "GPIO response in the lab"): latscope gpio
# loopback through gpio-sim (--drive sim) on Debian's stock and PREEMPT_RT 6.1 kernels
# under QEMU TCG. EMULATED: every figure is the emulator's time, not a board's; it shows
# the split and the counts working on both kernels, never how fast a pin is answered.
# Usage (as root): bench/gpio-lab.sh [SAMPLES]   (default 2000 at a 2 ms period)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
samples=${1:-2000}
for kernel in stock rt; do
  echo "== kernel $kernel (emulated: QEMU TCG, gpio-sim) =="
  "$here/../contrib/gpio-lab/run.sh" --kernel "$kernel" -- sh -c \
    "latscope gpio --in sim-in --drive sim --period 2ms -l $samples --cpus 1 --irq-priority 96 -q --export-markdown - | grep '^|'; uname -v" \
    | grep -E '^\||PREEMPT|gpio-lab: exit'
done
