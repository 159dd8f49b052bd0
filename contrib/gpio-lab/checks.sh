#!/bin/sh
# The lab's checks of latscope gpio, all in one boot (tests/it/gpio.rs runs this through
# run.sh on each kernel and judges what it prints): each check's result file between
# "=== BEGIN NAME ===" and "=== END NAME ===", and "fact NAME=VALUE" lines for what the
# guest saw itself (gpio-sim's value file, the IRQ thread's priority in /proc, exit codes).
# Under emulation the figures are emulation noise: only counts and order are judged.
sim=$GPIO_SIM_DIR
pull=$sim/sim_gpio0/pull
out_value=$sim/sim_gpio1/value
fact() { echo "fact $1=$2"; }
stamp() { echo "fact uptime_$1=$(cut -d" " -f1 /proc/uptime)"; }
# JSON files on one line (indentation and line breaks dropped; JSON strings hold none):
# the serial console of a TCG guest is slow, and a run's JSON is thousands of lines.
section() {
  echo "=== BEGIN $1 ==="
  case $2 in
    *.json) sed 's/^ *//' "$2" 2>/dev/null | tr -d '\n' ;;
    *) cat "$2" 2>/dev/null ;;
  esac
  echo
  echo "=== END $1 ==="
}
# Edges from the shell, spaced so the simulator's irq_work and the IRQ thread see each one
# (edges closer than that are merged by the kernel before any event exists).
edges() {
  i=0
  while [ "$i" -lt "$1" ]; do
    echo pull-up >"$pull"; usleep 3000
    echo pull-down >"$pull"; usleep 3000
    i=$((i + 1))
  done
}
# The edges the kernel saw on latscope's line: its IRQ's count in /proc/interrupts, summed
# over the CPUs. On a loaded host the simulator's irq_work can run after the next pull, and
# the kernel merges the two edges before any event exists: what latscope must count is what
# the kernel saw, which this tells apart from what the shell wrote.
line_irqs() {
  awk '/latscope/ { s = 0; for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) s += $i; print s; exit }' \
    /proc/interrupts
}
irq_thread_pid() {
  for c in /proc/[0-9]*/comm; do
    case $(cat "$c" 2>/dev/null) in irq/*-latscope*) basename "$(dirname "$c")"; return ;; esac
  done
}
wait_for_irq_thread() {
  n=0
  while [ -z "$(irq_thread_pid)" ] && [ "$n" -lt 200 ]; do usleep 50000; n=$((n + 1)); done
  sleep 1
}

# kill -STOP is asynchronous: a reader woken by an edge just before it lands reads that edge
# first. Wait until every thread of PID is stopped (state T in /proc/PID/task/*/stat).
wait_stopped() {
  n=0
  while [ "$n" -lt 200 ]; do
    running=0
    for stat in /proc/"$1"/task/*/stat; do
      state=$(sed 's/.*) //' "$stat" 2>/dev/null | cut -d' ' -f1)
      [ "$state" = T ] || [ "$state" = t ] || running=1
    done
    [ "$running" = 0 ] && return 0
    usleep 10000; n=$((n + 1))
  done
}

fact kernel "$(uname -r) $(uname -v)"
latscope gpio --list >/tmp/list.txt; fact list_rc $?
section list /tmp/list.txt

stamp counts
# N stimuli, N samples, 0 missed; the stages of each sample in order (--raw).
latscope gpio --in sim-in --drive sim --period 2ms -l 300 --warmup 0 -q \
  --export-json /tmp/counts.json --raw /tmp/counts.csv >/dev/null
fact counts_rc $?
section counts /tmp/counts.json
section counts_raw /tmp/counts.csv

stamp stopped
# A stopped reader: 10 edge pairs read, 50 while it is stopped (event buffer 8), 5 after.
echo pull-down >"$pull"
latscope gpio --in sim-in --edge both --event-buffer 8 -D 120s --warmup 0 -q \
  --export-json /tmp/stopped.json >/dev/null &
pid=$!
wait_for_irq_thread
i0=$(line_irqs)
edges 10; sleep 1
i1=$(line_irqs)
kill -STOP "$pid"; wait_stopped "$pid"; edges 50
i2=$(line_irqs)
kill -CONT "$pid"; sleep 1
edges 5; sleep 1
i3=$(line_irqs)
kill -INT "$pid"; wait "$pid"; fact stopped_rc $?
fact stopped_edges 130
fact stopped_irqs "$((i1 - i0)) $((i2 - i1)) $((i3 - i2))"
section stopped /tmp/stopped.json

stamp respond
# The response line follows the input (respond, both edges): read back through gpio-sim.
echo pull-down >"$pull"
latscope gpio --mode respond --in sim-in --out sim-out --edge both -D 120s --warmup 0 -q \
  --export-json /tmp/respond.json >/dev/null &
pid=$!
wait_for_irq_thread
seen=""
for level in up down up down; do
  echo "pull-$level" >"$pull"; sleep 1
  seen="$seen$(cat "$out_value")"
done
kill -INT "$pid"; wait "$pid"; fact respond_rc $?
fact respond_values "$seen"
section respond /tmp/respond.json

stamp irq
# The IRQ thread found, set to FIFO 70 for the run (seen in /proc), and restored.
latscope gpio --in sim-in --drive sim --irq-priority 70 -D 120s --warmup 0 -q \
  --export-json /tmp/irq.json >/dev/null &
pid=$!
wait_for_irq_thread
tid=$(irq_thread_pid)
# /proc/TID/stat: field 40 rt_priority, 41 policy (after the name in parentheses).
fact irq_thread_during "$(sed 's/.*) //' "/proc/$tid/stat" | awk '{print $39, $38}')"
kill -INT "$pid"; wait "$pid"; fact irq_rc $?
section irq /tmp/irq.json
stamp killed
# The runner's checkpoints: SIGKILL mid-run, then `latscope report` shows the partial
# scenario from the journal's last checkpoint.
latscope gpio --in sim-in --drive sim --period 2ms -D 120s --warmup 0 -q \
  --checkpoint 500ms --export-json /tmp/killed.json >/dev/null &
pid=$!
wait_for_irq_thread
sleep 3
kill -KILL "$pid"; wait "$pid"; fact killed_rc $?
# Wide enough for every column (a file is 80 columns, which leaves samples out).
COLUMNS=200 latscope report /tmp/killed.json --export-json /tmp/killed-report.json >/tmp/killed.txt
fact killed_report_rc $?
section killed_table /tmp/killed.txt
section killed /tmp/killed-report.json

stamp traced
# --trace splits every edge: joined by its kernel stamp, parts summing to irq→user.
# 20 ms apart: under TCG on a busy host one wake-up took 9.6 ms, and an edge that
# comes while the reader still works on the last is read without a wake-up (NoWakeup).
latscope gpio --in sim-in --drive sim --period 20ms -l 30 --warmup 0 -q --trace \
  --export-json /tmp/traced.json >/dev/null
fact traced_rc $?
section traced /tmp/traced.json

stamp hte
# --event-clock hte on a kernel without a hardware timestamp engine: a clear refusal.
latscope gpio --in sim-in --drive sim --event-clock hte -l 5 --warmup 0 -q >/dev/null 2>/tmp/hte.txt
fact hte_rc $?
section hte /tmp/hte.txt

stamp study
# The interrupt-response study on the simulated line: its table per load.
latscope suite --preset irq-response --gpio-in sim-in --gpio-drive sim --samples 200 \
  --warmup 0 -q --export-markdown /tmp/study.md >/dev/null
fact study_rc $?
section study /tmp/study.md
stamp end
