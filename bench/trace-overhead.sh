#!/usr/bin/env bash
# What --trace costs the CPU it measures, judged by the kernel's own record: `latscope timer`
# with and without --trace in alternating pairs (the order swapped every other pair, so drift
# and the host's noise hit both arms alike), while a second tracefs instance of this script
# records on the measured CPU in BOTH arms (like is compared with like): rseq_update,
# sys_exit(clock_nanosleep) and hrtimer_expire_entry, and the interrupts, IPIs, softirqs and
# page faults that never fire on a quiet wake-up (so they cost neither arm anything there).
# Each `--raw` sample (deadline + latency = latscope's clock read) is joined to its thread's
# last sys_exit / rseq_update before it: "sample − kernel return to user". Prints per run
# and the medians per arm: the run's p50/p99, that difference's p50/p99/max and how many
# samples it put above 10 µs (the rare large tail; `guest` = how many of those had any
# guest event in between, the rest lost their time where the guest records nothing: the
# host), the kernel's wake path (hrtimer expiry → sys_exit) and expiry → sample, which is
# all the time a trace event on the wake path can add, without the host's timer delivery.
# Every run holds the latency-test lock. Needs root. KEEP=DIR keeps the raw files.
# TRACE_ARGS= the "trace" arm's options (default `--trace`; an empty TRACE_ARGS runs both arms
# alike: the measure's own noise floor, an A/A run).
# Usage: bench/trace-overhead.sh [PAIRS] [LOOPS] [CPU]   (LATSCOPE= a built binary)
set -euo pipefail
cd "$(dirname "$0")/.."
PAIRS=${1:-9}
LOOPS=${2:-5000}
CPU=${3:-1}
read -r -a TRACE_ARGS <<<"${TRACE_ARGS---trace}"
LOCK=/tmp/latscope-latency-tests.lock
if [ -z "${LATSCOPE:-}" ]; then
  cargo build --release -q --locked
  LATSCOPE=${CARGO_TARGET_DIR:-$PWD/target}/release/latscope
fi
OUT=$(mktemp -d)
MNT=""
REF=""
cleanup() {
  [ -n "${REPORT_ONLY:-}" ] && return 0
  if [ -n "$REF" ] && [ -d "$REF" ]; then
    echo 0 >"$REF/tracing_on" || true
    rmdir "$REF" || true
  fi
  if [ -n "$MNT" ]; then umount "$MNT" && rmdir "$MNT"; fi
  if [ -n "${KEEP:-}" ]; then mkdir -p "$KEEP" && cp -r "$OUT"/. "$KEEP"/; fi
  rm -rf "$OUT"
}
trap cleanup EXIT
TRACEFS=$(awk '$3 == "tracefs" {print $2; exit}' /proc/mounts)
if [ -z "$TRACEFS" ]; then
  MNT=$(mktemp -d)
  mount -t tracefs nodev "$MNT"
  TRACEFS=$MNT
fi
MASK=$(printf '%x' $((1 << CPU)))

# The reference: own instance, mono clock (CLOCK_MONOTONIC, as latscope's samples), CPU only,
# raw output (pid cpu ts_ns "type: ID"), made before latscope starts so its probes run first.
# EVENTS are the reference proper; DIAG fire only when something interrupts the CPU.
EVENTS="rseq/rseq_update syscalls/sys_exit_clock_nanosleep timer/hrtimer_expire_entry"
DIAG="irq/irq_handler_entry irq/softirq_entry irq_vectors/reschedule_entry
  irq_vectors/call_function_entry irq_vectors/call_function_single_entry
  irq_vectors/irq_work_entry exceptions/page_fault_user exceptions/page_fault_kernel"
ref_start() {
  REF=$TRACEFS/instances/trace-overhead-ref-$$
  mkdir "$REF"
  echo mono >"$REF/trace_clock"
  echo "$MASK" >"$REF/tracing_cpumask"
  echo 4096 >"$REF/buffer_size_kb"
  echo 1 >"$REF/options/raw"
  for e in $EVENTS $DIAG; do echo 1 >"$REF/events/$e/enable"; done
  echo 1 >"$REF/tracing_on"
}
ref_stop() { # TAG
  echo 0 >"$REF/tracing_on"
  cat "$REF/trace" >"$OUT/$1.ref"
  cat "$REF/per_cpu/cpu$CPU/stats" >"$OUT/$1.refstats"
  for e in $EVENTS $DIAG; do echo "${e#*/} $(cat "$REF/events/$e/id")"; done >"$OUT/$1.ids"
  rmdir "$REF"
  REF=""
}
one() { # TAG [--trace]
  local tag=$1; shift
  exec 9>"$LOCK"
  flock 9
  ref_start
  "$LATSCOPE" timer --method clock-nanosleep -i 1000 -l "$LOOPS" -p 95 -a "$CPU" \
    --dma-latency 0 --warmup 0 -q --raw "$OUT/$tag.csv" --export-json "$OUT/$tag.json" "$@" \
    >/dev/null 2>"$OUT/$tag.err" || { cat "$OUT/$tag.err" >&2; exit 1; }
  ref_stop "$tag"
  exec 9>&-
}
if [ -n "${REPORT_ONLY:-}" ]; then OUT=$REPORT_ONLY; KEEP=""; PAIRS=$(ls "$OUT"/plain-*.csv | wc -l); fi
[ -n "${REPORT_ONLY:-}" ] || for i in $(seq 1 "$PAIRS"); do
  echo "pair $i/$PAIRS" >&2
  if [ $((i % 2)) -eq 1 ]; then
    one "plain-$i"; one "trace-$i" "${TRACE_ARGS[@]}"
  else
    one "trace-$i" "${TRACE_ARGS[@]}"; one "plain-$i"
  fi
done

python3 - "$OUT" "$PAIRS" <<'PY'
import bisect, csv, json, statistics, sys
out, pairs = sys.argv[1], int(sys.argv[2])
TAIL_NS = 10_000

def pct(v, q):
    if not v:
        return float("nan")
    v = sorted(v)
    return v[min(len(v) - 1, max(0, int(-(-q * len(v) // 1)) - 1))]

REF_NAMES = {"sys_exit_clock_nanosleep": "exit", "rseq_update": "rseq",
             "hrtimer_expire_entry": "expire"}

def ref_events(tag):
    """(pid, kind) -> stamps of the reference events, and the stamps of every event on the
    CPU but the thread's own returns to user (to see whether the guest did anything)."""
    names = dict(line.split()[::-1] for line in open(f"{out}/{tag}.ids"))
    ev, other, busy = {}, [], []
    for line in open(f"{out}/{tag}.ref"):
        f = line.split()
        if len(f) < 5 or f[0].startswith("#") or f[3] != "type:" or f[4] not in names:
            continue
        kind = REF_NAMES.get(names[f[4]], "diag")
        if kind != "exit" and kind != "rseq":
            other.append(int(f[2]))
        if kind == "diag" or kind != "expire" and f[0] != "0":
            busy.append((int(f[2]), int(f[0])))
        if kind == "diag":
            continue
        # hrtimer expiries run in interrupts: whatever pid was current, so pid 0 for all.
        pid = 0 if kind == "expire" else int(f[0])
        ev.setdefault((pid, kind), []).append(int(f[2]))
    return ev, sorted(other), sorted(busy)

def run(tag):
    rows = list(csv.DictReader(open(f"{out}/{tag}.csv")))
    samples = [(int(r["deadline_ns"]), int(r["latency_ns"])) for r in rows if r["metric"] == "latency"]
    ev, other, busy = ref_events(tag)
    # The measuring thread: the pid with the most clock_nanosleep exits on the CPU.
    pid = max((k[0] for k in ev if k[1] == "exit"), key=lambda p: len(ev[(p, "exit")]))
    res = {"n": len(samples), "guest": 0}
    # Clean wake-ups: since the previous sample nothing but the measuring thread returned to
    # user space on the CPU and no interrupt, IPI, softirq or page fault was recorded there
    # (another task or CPU's work there is neither --trace's cost nor the host's).
    stamps = [b for b in busy if not (b[1] == pid)]
    bts = [b[0] for b in stamps]
    clean, prev = [], None
    for d, lat in samples:
        lo = prev if prev is not None else d - 1_000_000
        k = bisect.bisect_right(bts, lo)
        clean.append(not (k < len(bts) and bts[k] <= d + lat))
        prev = d + lat
    for kind in ("exit", "rseq"):
        ts = sorted(ev.get((pid, kind), []))
        diffs = []
        for d, lat in samples:
            wake = d + lat
            i = bisect.bisect_right(ts, wake) - 1
            if i >= 0 and ts[i] >= d:
                diffs.append(wake - ts[i])
                # A tail sample: did anything run in the guest between the return and the read?
                if kind == "exit" and wake - ts[i] > TAIL_NS:
                    j = bisect.bisect_right(other, ts[i])
                    res["guest"] += j < len(other) and other[j] <= wake
        res[kind] = diffs
    # The kernel's wake path: the first hrtimer expiry at or after the deadline to the
    # thread's sys_exit (every event recorded in between costs its time here).
    exp, ex = sorted(ev.get((0, "expire"), [])), sorted(ev.get((pid, "exit"), []))
    path, to_sample, clean_e2s = [], [], []
    for (d, lat), ok in zip(samples, clean):
        i, j = bisect.bisect_left(exp, d), bisect.bisect_right(ex, d + lat) - 1
        if i < len(exp) and j >= 0 and d <= exp[i] <= ex[j]:
            path.append(ex[j] - exp[i])
            to_sample.append(d + lat - exp[i])
            if ok:
                clean_e2s.append(d + lat - exp[i])
    res["path"], res["to_sample"] = path, to_sample
    res["clean_lat"] = [lat for (d, lat), ok in zip(samples, clean) if ok]
    res["clean_e2s"] = clean_e2s
    t = json.load(open(f"{out}/{tag}.json"))["scenarios"][0]["threads"][0]
    res["p50"], res["p99"] = t["p50_ns"], t["p99_ns"]
    tr = json.load(open(f"{out}/{tag}.json"))["scenarios"][0].get("trace")
    res["irq_work"] = tr["events_by_type"].get("irq_vectors:irq_work_entry", 0) if tr else None
    lost = open(f"{out}/{tag}.refstats").read()
    res["ref_lost"] = sum(int(l.split(":")[1]) for l in lost.splitlines()
                          if l.split(":")[0] in ("overrun", "dropped events"))
    return res

us = lambda ns: f"{ns / 1e3:.2f}"
head = (f"{'run':<9} {'p50':>7} {'p99':>7} | {'joined':>11} {'d50':>6} {'d99':>6} {'dmax':>8} {'>10µs':>5} {'guest':>5} | "
        f"{'rseq d50':>8} {'d99':>6} {'dmax':>8} {'>10µs':>5} | {'path50':>6} {'path99':>6} {'exp→s50':>7} | {'clean':>5} {'c.p50':>6} {'c.e→s50':>7}")
print("µs; d = sample − kernel return to user (left: sys_exit of clock_nanosleep, right: rseq_update);")
print("guest = samples with d > 10 µs that had any guest event (interrupt, IPI, softirq, page fault, hrtimer)")
print("between; path = the kernel's wake path, hrtimer expiry → sys_exit; exp→s = hrtimer expiry → sample;")
print("clean = samples with nothing else on the CPU since the previous one (no other task's return to user,")
print("no interrupt, IPI, softirq or page fault), c.p50 their p50, c.e→s50 their expiry → sample p50;")
print("irq_work = irq_work interrupts on the CPU (trace runs)")
print(head)
agg = {"plain": [], "trace": []}
for i in range(1, pairs + 1):
    for arm in ("plain", "trace"):
        r = run(f"{arm}-{i}")
        e, q, w = r["exit"], r["rseq"], r["path"]
        row = (r["p50"], r["p99"], pct(e, .5), pct(e, .99), max(e), sum(x > TAIL_NS for x in e),
               pct(q, .5), pct(q, .99), max(q), sum(x > TAIL_NS for x in q), pct(w, .5), pct(w, .99),
               pct(r["to_sample"], .5), r["guest"], len(r["clean_lat"]), pct(r["clean_lat"], .5),
               pct(r["clean_e2s"], .5))
        agg[arm].append(row)
        print(f"{arm}-{i:<3} {us(row[0]):>7} {us(row[1]):>7} | {len(e):>5}/{r['n']:<5} {us(row[2]):>6} {us(row[3]):>6} {us(row[4]):>8} {row[5]:>5} {row[13]:>5} | "
              f"{us(row[6]):>8} {us(row[7]):>6} {us(row[8]):>8} {row[9]:>5} | {us(row[10]):>6} {us(row[11]):>6} {us(row[12]):>7} | {row[14]:>5} {us(row[15]):>6} {us(row[16]):>7}"
              + (f"  irq_work {r['irq_work']}" if r["irq_work"] is not None else "")
              + (f"  reference lost {r['ref_lost']}" if r["ref_lost"] else ""))
print("medians over the pairs:")
for arm, rows in agg.items():
    m = [statistics.median(r[j] for r in rows) for j in range(17)]
    worst = max(r[4] for r in rows), max(r[8] for r in rows)
    print(f"{arm:<9} {us(m[0]):>7} {us(m[1]):>7} | {'':>11} {us(m[2]):>6} {us(m[3]):>6} {us(m[4]):>8} {m[5]:>5.0f} {m[13]:>5.0f} | "
          f"{us(m[6]):>8} {us(m[7]):>6} {us(m[8]):>8} {m[9]:>5.0f} | {us(m[10]):>6} {us(m[11]):>6} {us(m[12]):>7} | {m[14]:>5.0f} {us(m[15]):>6} {us(m[16]):>7}   worst dmax {us(worst[0])} / {us(worst[1])}")
p, t = agg["plain"], agg["trace"]
d = lambda j: statistics.median(b[j] - a[j] for a, b in zip(p, t))
print(f"trace − plain, median of the pairs' differences: run p50 {us(d(0))}, d99 (exit) {us(d(3))}, "
      f"d99 (rseq) {us(d(7))}, wake path p50 {us(d(10))}, expiry → sample p50 {us(d(12))}; "
      f"clean wake-ups: p50 {us(d(15))}, expiry → sample p50 {us(d(16))}")
PY
