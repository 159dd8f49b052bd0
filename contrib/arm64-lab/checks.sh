#!/bin/sh
# The arm64 lab's checks of latscope, all in one boot (tests/it/arm64_lab.rs runs this
# through run.sh on each kernel and judges what it prints): each result between
# "=== BEGIN NAME ===" and "=== END NAME ===", and "fact NAME=VALUE" lines for what the
# guest saw itself (the PL061 line's IRQ count, exit codes, elapsed time). Under emulation
# the figures are emulation noise: counts, order, parts and wording are judged, never values.
# The edges are made by the host: `press N MS` asks run.sh to press QEMU's power button N
# times MS apart (QMP system_powerdown), each press a rise and, 100 ms later, a fall on
# line 3 of the PL061 (gpiochip0).
fact() { echo "fact $1=$2"; }
uptime_ms() { awk '{printf "%d", $1 * 1000}' /proc/uptime; }
# JSON files on one line: the serial console of a TCG guest is slow.
section() {
  echo "=== BEGIN $1 ==="
  case $2 in
    *.json) sed 's/^ *//' "$2" 2>/dev/null | tr -d '\n' ;;
    *) cat "$2" 2>/dev/null ;;
  esac
  echo
  echo "=== END $1 ==="
}
# The edges the kernel saw on latscope's line: its IRQ's count, summed over the CPUs.
line_irqs() {
  awk '/latscope/ { s = 0; for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) s += $i; print s; f = 1; exit }
       END { if (!f) print 0 }' /proc/interrupts
}
# Waits until the line's IRQ count has not moved for 1.5 s (the host's presses are over).
settle() {
  last=-1
  while [ "$(line_irqs)" != "$last" ]; do last=$(line_irqs); sleep 1.5; done
}

fact kernel "$(uname -r) $(uname -v)"
latscope gpio --list >/tmp/list.txt 2>&1; fact list_rc $?
section list /tmp/list.txt

# Respond mode with the default 1 s warm-up, presses before it starts (line not yet
# requested: no edge), during the warm-up and after: every edge the kernel saw is read
# once, in the warm-up or measured (warmup_edge_events + edge_events = the IRQ's count),
# and none is reported dropped. The first request of the line in this boot: its IRQ
# count starts at 0. Line 4 is the response output.
press 16 200
sleep 0.6
t0=$(uptime_ms)
latscope gpio --mode respond --in gpiochip0:3 --out gpiochip0:4 --edge both -D 120s -q \
  --export-json /tmp/respond.json >/dev/null 2>/tmp/respond.err &
pid=$!
sleep 2
settle
fact respond_irqs "$(line_irqs)"
kill -INT "$pid"; wait "$pid"; fact respond_rc $?
section respond /tmp/respond.json
section respond_err /tmp/respond.err

# -l counts measured edges only and ends the run when they are in, not at -D.
i0=$(line_irqs)
t0=$(uptime_ms)
press 20 200
latscope gpio --mode respond --in gpiochip0:3 --edge both -l 8 -D 100s -q \
  --export-json /tmp/samples.json >/dev/null 2>&1
fact samples_rc $?
fact samples_elapsed_ms "$(($(uptime_ms) - t0))"
section samples /tmp/samples.json
settle

# Loopback needs an output wired to an input: the virt machine wires nothing to the PL061
# but the power button, so latscope finds no wire and says so.
latscope gpio --in gpiochip0:2 --out gpiochip0:4 -l 10 --warmup 0 -q >/dev/null 2>/tmp/loopback.err
fact loopback_rc $?
section loopback_err /tmp/loopback.err

latscope timer -D 2s --warmup 0 -q --export-json /tmp/timer.json >/dev/null 2>&1
fact timer_rc $?
section timer /tmp/timer.json
# A low threshold: many spikes, so their causes show how the Arm IPIs are named.
latscope timer -D 2s --warmup 0 -q --trace --trace-threshold 50us --export-json /tmp/trace.json \
  >/dev/null 2>/tmp/trace.err
fact trace_rc $?
section trace /tmp/trace.json
section trace_err /tmp/trace.err
latscope wake -D 2s --warmup 0 -q --export-json /tmp/wake.json >/dev/null 2>&1
fact wake_rc $?
section wake /tmp/wake.json
latscope noise -D 2s --warmup 0 -q --export-json /tmp/noise.json >/dev/null 2>&1
fact noise_rc $?
section noise /tmp/noise.json
latscope doctor --quick --export-json /tmp/doctor.json >/tmp/doctor.txt 2>&1
fact doctor_rc $?
section doctor /tmp/doctor.json
section doctor_txt /tmp/doctor.txt
latscope suite --preset quick --samples 200 --warmup 0 -q --export-json /tmp/suite.json \
  >/dev/null 2>&1
fact suite_rc $?
section suite /tmp/suite.json
fact end "$(uptime_ms)"
