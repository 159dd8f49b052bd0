#!/usr/bin/env bash
# The arm64 lab's stage tables (bench/README.md "arm64 in the lab"): on Debian's arm64
# stock and PREEMPT_RT 6.1 kernels under QEMU TCG (contrib/arm64-lab/run.sh), latscope gpio
# respond on the PL061's line 3 pressed from the host (QMP system_powerdown, 60 presses
# 200 ms apart: 120 edges; the first 100 after the 1 s warm-up measured, each answered on
# line 4), then the default timer run. EMULATED: every figure is the emulator's time, not
# a board's; it shows the stages and the counts working on both kernels, never how fast an
# ARM board answers.
# Usage (as root): bench/arm64-lab.sh   (LATSCOPE=an aarch64 binary, else cross-built)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
for kernel in stock rt; do
  echo "== kernel $kernel (emulated: QEMU TCG, cortex-a57 x2, PL061 line 3 pressed by the host) =="
  "$here/../contrib/arm64-lab/run.sh" --kernel "$kernel" -- sh -c \
    "press 60 200; latscope gpio --mode respond --in gpiochip0:3 --out gpiochip0:4 --edge both --irq-priority 96 -l 100 -D 60s -q --export-markdown - | grep '^|'; latscope timer -q --export-markdown - | grep '^|'; uname -v" \
    | grep -E '^\||#1 SMP|arm64-lab: exit'
done
