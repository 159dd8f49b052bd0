#!/bin/sh
# Runs in the arm64 lab's guest (record-facts.sh): prints the machine facts latscope reads
# on an ARM board (cpuinfo, interrupts, device tree, tracefs events, which IRQs' affinity
# can be set) and latscope's own view, each as a section `==> NAME <==` that
# record-facts.sh writes to NAME under its output folder; fixtures are made from these.
section() { echo "==> $1 <=="; }
show() { section "$1"; shift; "$@" 2>&1; echo "[exit $?]"; }
show cpuinfo cat /proc/cpuinfo
show interrupts cat /proc/interrupts
show cmdline cat /proc/cmdline
show uname uname -a
show realtime cat /sys/kernel/realtime
show dt-compatible sh -c 'tr "\0" "\n" </proc/device-tree/compatible'
show dt-model sh -c 'tr "\0" "\n" </proc/device-tree/model'
show dt-find find /proc/device-tree/ -maxdepth 2
show hypervisor ls -la /sys/hypervisor
mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
show available_events cat /sys/kernel/tracing/available_events
section smp_affinity
# Each IRQ's affinity written back unchanged: per-CPU interrupts refuse (EIO).
for f in /proc/irq/*/smp_affinity; do
  irq=${f#/proc/irq/}
  irq=${irq%/smp_affinity}
  name=$(awk -v n="$irq:" '$1 == n {print $NF}' /proc/interrupts)
  mask=$(cat "$f")
  if err=$( (echo "$mask" >"$f") 2>&1); then
    echo "irq $irq ($name) mask $mask: writable"
  else
    echo "irq $irq ($name) mask $mask: not writable: ${err##*: }"
  fi
done
show tty ls /sys/class/tty
show kernel-config-preempt sh -c 'grep -E "^CONFIG_PREEMPT|^CONFIG_HZ=|^CONFIG_NO_HZ" /boot/config-*'
show doctor.txt latscope doctor --quick --export-json /tmp/doctor.json
show doctor.json cat /tmp/doctor.json
show timer.json latscope timer -D 1s --export-json -
show timer-trace.txt latscope timer -D 2s --trace
show gpio-list latscope gpio --list
echo "==> end <=="
