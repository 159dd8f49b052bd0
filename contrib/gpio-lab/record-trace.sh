#!/bin/sh
# Records the kernel's own trace (text format, trace_clock=mono) around a short
# `latscope gpio --drive sim` run in the lab guest, with the run's --raw samples: the
# provenance of tests/fixtures/trace/gpio_sim_*.txt (the gpio split's unit tests).
#   contrib/gpio-lab/run.sh --kernel rt -- sh /lab/record-trace.sh [LATSCOPE GPIO ARGS...]
# (default: --in sim-in --drive sim --period 2ms -l 20 --warmup 0 -q)
# The events are those `latscope gpio --trace` records (src/trace/record/instance.rs).
t=/sys/kernel/tracing
i=$t/instances/fixture
mkdir "$i" || exit 1
echo mono >"$i/trace_clock"
echo 8192 >"$i/buffer_size_kb"
for e in sched/sched_switch sched/sched_waking sched/sched_wakeup \
  irq/irq_handler_entry irq/irq_handler_exit irq/softirq_entry irq/softirq_exit \
  irq_vectors/local_timer_entry irq_vectors/local_timer_exit \
  irq_vectors/reschedule_entry irq_vectors/reschedule_exit \
  irq_vectors/call_function_entry irq_vectors/call_function_exit \
  irq_vectors/call_function_single_entry irq_vectors/call_function_single_exit \
  irq_vectors/irq_work_entry irq_vectors/irq_work_exit \
  exceptions/page_fault_user exceptions/page_fault_kernel rseq/rseq_update; do
  echo 1 >"$i/events/$e/enable" || echo "record-trace: no $e"
done
[ $# -gt 0 ] || set -- --in sim-in --drive sim --period 2ms -l 20 --warmup 0 -q
echo 1 >"$i/tracing_on"
latscope gpio "$@" --raw /tmp/fixture.csv --export-json /tmp/fixture.json >/dev/null
echo "fact record_rc=$?"
echo 0 >"$i/tracing_on"
echo "=== BEGIN raw ==="
cat /tmp/fixture.csv
echo "=== END raw ==="
echo "=== BEGIN trace ==="
echo "# latscope gpio $* ($(uname -r) $(uname -v), lab guest); trace_clock=mono."
# From 1 ms before the first edge to 1 ms after the last edge's read (the run's start and
# exit are not wanted): the serial console is slow, and what it has not written when the
# guest powers off is lost.
window=$(awk -F, 'NR > 1 && $4 == "total" { if (!a) a = $6; if ($6 + $7 > b) b = $6 + $7 }
  END { printf "%.6f %.6f", (a - 1000000) / 1e9, (b + 1000000) / 1e9 }' /tmp/fixture.csv)
grep -v '^#' "$i/trace" | awk -v from="${window% *}" -v to="${window#* }" '{
  for (f = 1; f <= NF; f++) if ($f ~ /^[0-9]+\.[0-9]+:$/) {
    if ($f + 0 >= from + 0 && $f + 0 <= to + 0) print
    break
  }
}'
echo "=== END trace ==="
rmdir "$i"
sleep 5
