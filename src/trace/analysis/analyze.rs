//! The bridge from a recording and the probe's samples to `scenario.trace`: the timer split
//! and attribution (split, attribution), noise gap classes (noise_classify), the wake split
//! (wake_split; the GPIO edge's in analyze_gpio.rs), each part's full statistics, `--raw` split columns, and the worst spike's
//! events and timeline. Timer and wake spikes are both accounted by account.rs; every task
//! cause also gets its whole run slice (`ran_ns`, from the run slices below).

use crate::probe::ProbeOutput;
use crate::result::extras::{Bound, FirstIterations};
use crate::result::trace::{
    CauseSummary, TimelineSpan, TraceResult, TraceSpike, TraceThread, SWITCH_IN_PLACEMENT,
};
use crate::result::{Metric, ProbeKind};
use crate::trace::analysis::account::{Cause, CauseKind, SilenceBounds};
use crate::trace::analysis::attribution::{
    attribute as attribute_split, attribute_response, summarize, AttributionConfig, Spike,
    SummaryEntry,
};
use crate::trace::analysis::gpio_split::{split_gpio, GpioSample};
use crate::trace::analysis::noise_classify::{classify_gaps, NoiseGap};
use crate::trace::analysis::parts::{mark_bound, part_result};
use crate::trace::analysis::split::{
    split_timer, SampleSplit, SplitConfig, TimerMethod, TimerSample, TimerSplit,
};
use crate::trace::analysis::threshold::Threshold;
use crate::trace::analysis::timeline::{softirq_name, Timeline};
use crate::trace::analysis::wake_split::{split_wake, WakeSample, WakeSplit};
use crate::trace::event::{Event, EventKind};
use crate::trace::record::session::Recording;
use std::collections::BTreeMap;

/// The most spikes kept in the result (worst first).
pub const MAX_SPIKES: usize = 1000;
/// Events shown for the worst spike, at most.
const MAX_WORST_EVENTS: usize = 2000;
/// How far before the worst spike's stamp its events start.
const WORST_MARGIN_NS: u64 = 100_000;

/// The sample series of each measuring thread: (cpu, rows of (stamp_ns, value_ns, row)).
fn samples(kind: ProbeKind, output: &ProbeOutput) -> Vec<(usize, &crate::result::RawSeries)> {
    output
        .raw
        .iter()
        .filter(|r| match kind {
            ProbeKind::Wake => r.metric == Metric::Response,
            ProbeKind::Gpio => r.metric == Metric::IrqToUser,
            _ => true,
        })
        .map(|r| (r.cpu, r))
        .collect()
}

/// What every thread's analysis reads.
struct Ctx<'a> {
    tl: &'a Timeline<'a>,
    threshold: Threshold,
    /// The scenario's method: the label of the parts.
    method: &'a str,
}

/// Where a thread's analysis puts what the scenario's trace shows.
struct Sink<'a> {
    threshold_ns: &'a mut u64,
    cause_summary: &'a mut Vec<CauseSummary>,
    /// (spike, its window's start, end).
    spikes: &'a mut Vec<(TraceSpike, u64, u64)>,
}

/// Each measuring thread's series: (cpu, index in `output.raw`).
fn series_index(kind: ProbeKind, output: &ProbeOutput) -> Vec<(usize, usize)> {
    samples(kind, output)
        .iter()
        .map(|(cpu, r)| {
            (
                *cpu,
                output
                    .raw
                    .iter()
                    .position(|x| std::ptr::eq(x, *r))
                    .unwrap_or(0),
            )
        })
        .collect()
}

/// Fills threads (join counts, parts), spikes, cause summary and the worst spike's events;
/// for the timer also the split columns of `--raw`. `method` is the scenario's (its
/// `params.method`, the label of the parts) and, for the timer, how its samples join
/// hrtimers.
pub fn analyze(
    kind: ProbeKind,
    method: &str,
    timer_method: Option<TimerMethod>,
    rec: &Recording,
    output: &mut ProbeOutput,
    result: &mut TraceResult,
) {
    let mut sorted: Vec<Event> = rec.events.clone();
    sorted.sort_by_key(|e| e.ts_ns);
    let tl = Timeline::new(&sorted).with_losses(&rec.losses);
    let threshold = match result.threshold_source.as_str() {
        "--trace-threshold" => Threshold::Fixed(result.threshold_ns),
        _ => Threshold::P999,
    };
    let ctx = Ctx {
        tl: &tl,
        threshold,
        method,
    };
    let mut spikes: Vec<(TraceSpike, u64, u64)> = Vec::new();
    let series = series_index(kind, output);
    let mut sink = Sink {
        threshold_ns: &mut result.threshold_ns,
        cause_summary: &mut result.cause_summary,
        spikes: &mut spikes,
    };
    for t in &mut result.threads {
        if t.role == "waker" {
            continue;
        }
        let Some(&(_, ri)) = series.iter().find(|(cpu, _)| *cpu == t.cpu) else {
            continue;
        };
        let n = output.raw[ri].columns.len();
        let rows: Vec<Vec<u64>> = output.raw[ri]
            .rows()
            .map(|r| r.iter().map(|&v| v as u64).collect())
            .collect();
        t.samples_total = rows.len() as u64;
        match kind {
            ProbeKind::Timer => {
                if let Some(m) = timer_method {
                    timer_thread(&ctx, t, &rows, m, &mut output.raw[ri], &mut sink);
                }
            }
            ProbeKind::Noise => noise_thread(&ctx, t, &rows, n, &mut sink),
            ProbeKind::Gpio => {
                let samples = super::analyze_gpio::gpio_samples(&output.raw, t.cpu);
                gpio_thread(&ctx, t, &samples, &mut sink);
            }
            ProbeKind::Wake | ProbeKind::Net | ProbeKind::Lava => {
                let first = output
                    .threads
                    .iter_mut()
                    .find(|r| r.metric == Metric::Response && r.cpu == t.cpu)
                    .and_then(|r| r.extra.first_iterations.as_mut());
                wake_thread(&ctx, t, &rows, n, first, &mut sink);
            }
        }
    }
    spikes.sort_by_key(|s| std::cmp::Reverse(s.0.latency_ns));
    worst_spike(result, &sorted, &tl, &spikes);
    if kind == ProbeKind::Noise {
        result.cause_summary = summarize_fallback(&spikes);
    }
    result
        .cause_summary
        .sort_by_key(|c| std::cmp::Reverse(c.total_ns));
    result.spikes = spikes.into_iter().take(MAX_SPIKES).map(|s| s.0).collect();
}

/// The worst spike's events and timeline (from `WORST_MARGIN_NS` before it).
fn worst_spike(
    result: &mut TraceResult,
    sorted: &[Event],
    tl: &Timeline,
    spikes: &[(TraceSpike, u64, u64)],
) {
    let Some(&(_, from, to)) = spikes.first() else {
        return;
    };
    let a = sorted.partition_point(|e| e.ts_ns < from.saturating_sub(WORST_MARGIN_NS));
    let b = sorted.partition_point(|e| e.ts_ns <= to);
    result.worst_spike_events = sorted[a..b.max(a)]
        .iter()
        .take(MAX_WORST_EVENTS)
        .map(crate::trace::analysis::text::render_text_line)
        .collect();
    result.worst_spike_spans = timeline_spans(tl, &sorted[a..b.max(a)], from, to);
}

/// A timer thread: its samples joined to hrtimers and split, the split columns of
/// `--raw`, spikes attributed.
fn timer_thread(
    ctx: &Ctx,
    t: &mut TraceThread,
    rows: &[Vec<u64>],
    method: TimerMethod,
    raw: &mut crate::result::RawSeries,
    sink: &mut Sink,
) {
    let n = raw.columns.len();
    let cpu = t.cpu as u32;
    let samples: Vec<TimerSample> = rows
        .iter()
        .map(|r| TimerSample {
            deadline_ns: r[0],
            latency_ns: r[n - 1],
        })
        .collect();
    let split = split_timer(
        ctx.tl,
        t.tid,
        cpu,
        method,
        &samples,
        &SplitConfig::default(),
    );
    timer_parts(t, &split, ctx.method);
    split_columns(raw, &split, rows.len());
    let attribution = attribute_split(
        ctx.tl,
        &split,
        &AttributionConfig {
            threshold: ctx.threshold,
            ..AttributionConfig::default()
        },
    );
    *sink.threshold_ns = attribution.threshold_ns;
    let slices = run_slices(ctx.tl, ctx.tl.cpu(cpu));
    sink.spikes.extend(
        attribution
            .spikes
            .iter()
            .map(|sp| trace_spike(t.cpu, sp, &slices)),
    );
    for e in &attribution.summary.entries {
        merge_summary(sink.cause_summary, e);
    }
}

/// A noise thread: its gaps in classes by dominant cause, those above the threshold as
/// spikes.
fn noise_thread(ctx: &Ctx, t: &mut TraceThread, rows: &[Vec<u64>], n: usize, sink: &mut Sink) {
    let gaps: Vec<NoiseGap> = rows
        .iter()
        .map(|r| NoiseGap {
            start_ns: r[0],
            gap_ns: r[n - 1],
        })
        .collect();
    let classes = classify_gaps(ctx.tl, t.cpu as u32, t.tid, &gaps, SilenceBounds::default());
    let values: Vec<u64> = gaps.iter().map(|g| g.gap_ns).collect();
    let limit = ctx.threshold.resolve(&values);
    *sink.threshold_ns = limit;
    for g in &classes {
        let class = if g.unknown {
            "not_classified".to_string()
        } else {
            g.dominant
                .map(kind_name)
                .unwrap_or_else(|| "unexplained".into())
        };
        *t.classes.entry(class).or_default() += 1;
        if !g.unknown {
            t.samples_joined += 1;
        }
        if g.gap_ns > limit {
            let end = g.start_ns + g.gap_ns;
            let spike = TraceSpike {
                cpu: t.cpu,
                at_ns: g.start_ns,
                latency_ns: g.gap_ns,
                causes: g
                    .causes
                    .iter()
                    .map(|c| cause_json(c, &[], g.start_ns, end))
                    .collect(),
                unexplained_ns: g.unexplained_ns,
                line: g.render(),
            };
            sink.spikes.push((spike, g.start_ns, end));
        }
    }
    let unknown = t.samples_total - t.samples_joined;
    if unknown > 0 {
        t.not_joined
            .insert("outside the trace or events lost".into(), unknown);
    }
}

/// The wakee: its responses split into waking, wakeup, switch, to_user (and its first
/// iterations' switch times), spikes accounted.
fn wake_thread(
    ctx: &Ctx,
    t: &mut TraceThread,
    rows: &[Vec<u64>],
    n: usize,
    first: Option<&mut FirstIterations>,
    sink: &mut Sink,
) {
    let cpu = t.cpu as u32;
    let samples: Vec<WakeSample> = rows
        .iter()
        .map(|r| WakeSample {
            t0_ns: r[0],
            t1_ns: r[1],
        })
        .collect();
    let splits = split_wake(ctx.tl, t.tid, &samples, 2_000);
    if let Some(first) = first {
        crate::trace::analysis::wake_split::add_first_iteration_switches(
            ctx.tl, t.tid, first, 2_000,
        );
    }
    wake_parts(t, &samples, &splits, ctx.method);
    let values: Vec<u64> = rows.iter().map(|r| r[n - 1]).collect();
    let limit = ctx.threshold.resolve(&values);
    *sink.threshold_ns = limit;
    // Each spike accounted as the timer's are (account.rs): who held the wakee's CPU from
    // the waker's stamp to the wakee's.
    let slices = run_slices(ctx.tl, ctx.tl.cpu(cpu));
    let wake_spikes: Vec<Spike> = rows
        .iter()
        .enumerate()
        .filter(|(_, r)| r[n - 1] > limit)
        .map(|(i, r)| {
            attribute_response(
                ctx.tl,
                cpu,
                i,
                r[0],
                r[n - 1],
                t.tid,
                SilenceBounds::default(),
            )
        })
        .collect();
    sink.spikes
        .extend(wake_spikes.iter().map(|sp| trace_spike(t.cpu, sp, &slices)));
    for e in &summarize(&wake_spikes).entries {
        merge_summary(sink.cause_summary, e);
    }
}

/// The measuring thread: its edges split, the parts' statistics, spikes accounted (who
/// held its CPU from t1 to t2).
fn gpio_thread(ctx: &Ctx, t: &mut TraceThread, samples: &[GpioSample], sink: &mut Sink) {
    let cpu = t.cpu as u32;
    t.samples_total = samples.len() as u64;
    let splits = split_gpio(ctx.tl, t.tid, samples, 2_000);
    super::analyze_gpio::gpio_parts(t, &splits, ctx.method);
    let values: Vec<u64> = splits.iter().map(|s| s.irq_to_user_ns).collect();
    let limit = ctx.threshold.resolve(&values);
    *sink.threshold_ns = limit;
    let slices = run_slices(ctx.tl, ctx.tl.cpu(cpu));
    let spikes: Vec<Spike> = splits
        .iter()
        .enumerate()
        .filter(|(_, s)| s.irq_to_user_ns > limit)
        .map(|(i, s)| {
            attribute_response(
                ctx.tl,
                cpu,
                i,
                s.irq_ns,
                s.irq_to_user_ns,
                t.tid,
                SilenceBounds::default(),
            )
        })
        .collect();
    sink.spikes
        .extend(spikes.iter().map(|sp| trace_spike(t.cpu, sp, &slices)));
    for e in &summarize(&spikes).entries {
        merge_summary(sink.cause_summary, e);
    }
}

/// A timer thread's join counts and parts: `to_user` only from samples with the thread's
/// rseq_update (the others are not measured, not 0), and where the switch-in was inferred
/// (placed at its lower bound) `wake_to_run` marked a lower bound and `to_user` an upper
/// one, each with a note for the table and the JSON.
pub(crate) fn timer_parts(t: &mut TraceThread, split: &TimerSplit, method: &str) {
    let c = &split.counts;
    t.samples_joined = c.joined;
    for (why, count) in [
        ("busy (nothing to split)", c.busy),
        ("outside the trace window", c.outside_window),
        ("events lost there", c.lost_events),
        ("no hrtimer_start with this deadline", c.no_hrtimer_start),
        ("no hrtimer expiry", c.no_expiry),
        ("no switch-in", c.no_switch_in),
    ] {
        if count > 0 {
            t.not_joined.insert(why.into(), count);
        }
    }
    let joined: Vec<&SampleSplit> = split.samples.iter().filter(|s| s.joined).collect();
    let values = |i: usize, with_rseq: bool| -> Vec<(u64, i64)> {
        joined
            .iter()
            .filter(|s| !with_rseq || !s.no_rseq)
            .map(|s| (s.deadline_ns, s.parts()[i]))
            .collect()
    };
    let inferred_with_rseq = joined
        .iter()
        .filter(|s| s.switch_in_inferred && !s.no_rseq)
        .count() as u64;
    let mut parts = [
        part_result(t.cpu, method, Metric::IrqLatency, &values(0, false)),
        part_result(t.cpu, method, Metric::WakeToRun, &values(1, false)),
        part_result(t.cpu, method, Metric::ToUser, &values(2, true)),
        part_result(t.cpu, method, Metric::Remainder, &values(3, false)),
    ];
    mark_bound(&mut parts[1], Bound::Lower, c.switch_in_inferred);
    mark_bound(&mut parts[2], Bound::Upper, inferred_with_rseq);
    if c.no_rseq > 0 {
        parts[2].extra.not_measured_samples = Some(c.no_rseq);
        parts[3].extra.includes_to_user_samples = Some(c.no_rseq);
    }
    t.parts.extend(parts);
    t.switch_in_inferred = c.switch_in_inferred;
    t.no_rseq = c.no_rseq;
    if c.switch_in_inferred > 0 {
        t.switch_in_placement = Some(SWITCH_IN_PLACEMENT.into());
        let rest = if inferred_with_rseq > 0 {
            "to_user an upper bound (≤)"
        } else {
            "the remainder an upper bound"
        };
        t.notes.push(format!(
            "switch-in not traced for {} of {} joined samples (no sched_switch into the thread \
             was recorded): placed at the CPU's previous traced event, the earliest it can \
             have been, so there wake_to_run is a lower bound (≥) and {rest}; their sum is \
             exact",
            c.switch_in_inferred, c.joined
        ));
    }
    if c.no_rseq > 0 {
        t.notes.push(format!(
            "to_user not measured for {} of {} joined samples (no rseq_update of the thread; \
             the timer's --trace leaves that event off the wake path): their return to user \
             space is in remainder",
            c.no_rseq, c.joined
        ));
    }
}

/// The wakee's join counts and parts, as `timer_parts`: `to_user` only where its
/// rseq_update was traced, `switch` a lower and `to_user` an upper bound where the
/// switch-in was inferred.
fn wake_parts(t: &mut TraceThread, samples: &[WakeSample], splits: &[WakeSplit], method: &str) {
    let mut why: BTreeMap<String, u64> = BTreeMap::new();
    let mut parts: [Vec<(u64, i64)>; 4] = Default::default();
    let (mut inferred, mut inferred_with_rseq) = (0u64, 0u64);
    for (s, w) in samples.iter().zip(splits) {
        if w.joined {
            t.samples_joined += 1;
            inferred += u64::from(w.switch_in_inferred);
            inferred_with_rseq += u64::from(w.switch_in_inferred && !w.no_rseq);
            t.no_rseq += u64::from(w.no_rseq);
            for (i, v) in [w.to_wakeup_ns, w.switch_ns, w.to_user_ns, w.remainder_ns]
                .into_iter()
                .enumerate()
            {
                if i != 2 || !w.no_rseq {
                    parts[i].push((s.t0_ns, v));
                }
            }
        } else if let Some(n) = w.not_joined {
            *why.entry(format!("{n:?}")).or_default() += 1;
        }
    }
    t.not_joined = why;
    for (i, name) in [
        Metric::ToWakeup,
        Metric::Switch,
        Metric::ToUser,
        Metric::Remainder,
    ]
    .iter()
    .enumerate()
    {
        t.parts.push(part_result(t.cpu, method, *name, &parts[i]));
    }
    mark_bound(&mut t.parts[1], Bound::Lower, inferred);
    mark_bound(&mut t.parts[2], Bound::Upper, inferred_with_rseq);
    t.switch_in_inferred = inferred;
    if inferred > 0 {
        t.switch_in_placement = Some(SWITCH_IN_PLACEMENT.into());
        t.notes.push(format!(
            "switch-in not traced for {inferred} of {} joined samples: placed at the CPU's \
             previous traced event, the earliest it can have been, so there switch is a lower \
             bound (≥) and to_user an upper bound (≤); their sum is exact",
            t.samples_joined
        ));
    }
    if t.no_rseq > 0 {
        t.notes.push(format!(
            "to_user not measured for {} of {} joined samples (no rseq_update of the wakee): \
             their return to user space is in remainder",
            t.no_rseq, t.samples_joined
        ));
    }
}

/// The split as `--raw` columns, empty where not joined (and `to_user_ns` where it was
/// not measured).
fn split_columns(raw: &mut crate::result::RawSeries, split: &TimerSplit, rows: usize) {
    if split.samples.len() != rows {
        return;
    }
    let mut values = Vec::with_capacity(split.samples.len() * 6);
    for s in &split.samples {
        values.extend([s.deadline_ns as i64, s.latency_ns as i64]);
        for (i, p) in s.parts().into_iter().enumerate() {
            let measured = s.joined && !(i == 2 && s.no_rseq);
            values.push(if measured {
                p
            } else {
                crate::result::RawSeries::EMPTY
            });
        }
    }
    raw.columns = [
        "deadline_ns",
        "latency_ns",
        "irq_latency_ns",
        "wake_to_run_ns",
        "to_user_ns",
        "remainder_ns",
    ]
    .map(String::from)
    .to_vec();
    raw.values = values;
}

/// A timer or wake spike as the result keeps it, with the interval it covers.
fn trace_spike(cpu: usize, sp: &Spike, slices: &[Slice]) -> (TraceSpike, u64, u64) {
    let causes = sp
        .causes
        .iter()
        .map(|c| cause_json(c, slices, sp.deadline_ns, sp.window_end_ns))
        .collect();
    (
        TraceSpike {
            cpu,
            at_ns: sp.deadline_ns,
            latency_ns: sp.latency_ns,
            causes,
            unexplained_ns: sp.unexplained_ns,
            line: sp.render(),
        },
        sp.deadline_ns,
        sp.window_end_ns,
    )
}

fn kind_name(k: CauseKind) -> String {
    serde_json::to_value(k)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default()
}

/// A cause as JSON: the analysis's fields, its label, and for tasks `ran_ns`, the whole
/// run slices of that task overlapping [from, to] (switch-in to switch-out).
fn cause_json(c: &Cause, slices: &[Slice], from: u64, to: u64) -> serde_json::Value {
    let mut v = serde_json::to_value(c).unwrap_or_default();
    v["label"] = c.label().into();
    if let Some(pid) = c.pid {
        let ran: u64 = slices
            .iter()
            .filter(|s| s.pid == pid && s.out_ns > from && s.in_ns < to)
            .map(|s| s.out_ns - s.in_ns)
            .sum();
        if ran > 0 {
            v["ran_ns"] = ran.into();
        }
    }
    v
}

fn merge_summary(out: &mut Vec<CauseSummary>, e: &SummaryEntry) {
    match out.iter_mut().find(|c| c.cause == e.label) {
        Some(c) => {
            c.spikes += e.spikes;
            c.dominant_in += e.dominant_in;
            c.total_ns += e.duration_ns;
        }
        None => out.push(CauseSummary {
            kind: kind_name(e.kind),
            cause: e.label.clone(),
            spikes: e.spikes,
            dominant_in: e.dominant_in,
            total_ns: e.duration_ns,
        }),
    }
}

fn summarize_fallback(spikes: &[(TraceSpike, u64, u64)]) -> Vec<CauseSummary> {
    let mut out: Vec<CauseSummary> = Vec::new();
    for (s, _, _) in spikes {
        let mut best: Option<(String, u64)> = None;
        for c in &s.causes {
            let label = c["label"]
                .as_str()
                .or(c["cause"].as_str())
                .unwrap_or("?")
                .to_string();
            let ns = c["duration_ns"].as_u64().or(c["ns"].as_u64()).unwrap_or(0);
            if best.as_ref().is_none_or(|b| ns > b.1) {
                best = Some((label.clone(), ns));
            }
            let kind = c["kind"].as_str().unwrap_or("").to_string();
            match out.iter_mut().find(|x| x.cause == label) {
                Some(x) => {
                    x.spikes += 1;
                    x.total_ns += ns;
                }
                None => out.push(CauseSummary {
                    kind,
                    cause: label.clone(),
                    spikes: 1,
                    dominant_in: 0,
                    total_ns: ns,
                }),
            }
        }
        if let Some((label, _)) = best {
            if let Some(x) = out.iter_mut().find(|x| x.cause == label) {
                x.dominant_in += 1;
            }
        }
    }
    out
}

/// The worst spike as spans per CPU for the HTML timeline: tasks (from run slices), IRQs,
/// softirqs, and the spike's start and end marked. A task whose slice has no name (`<...>`,
/// the kernel's comm cache missed it) takes the last name the whole trace gave its pid.
fn timeline_spans(tl: &Timeline, events: &[Event], from: u64, to: u64) -> Vec<TimelineSpan> {
    let mut spans = vec![
        TimelineSpan {
            cpu: usize::MAX,
            start_ns: from,
            end_ns: from,
            kind: "deadline".into(),
            label: "deadline".into(),
        },
        TimelineSpan {
            cpu: usize::MAX,
            start_ns: to,
            end_ns: to,
            kind: "switch_in".into(),
            label: "switch-in / wake".into(),
        },
    ];
    let mut by_cpu: BTreeMap<u32, Vec<&Event>> = BTreeMap::new();
    for e in events {
        by_cpu.entry(e.cpu).or_default().push(e);
    }
    for (cpu, evs) in by_cpu {
        for s in run_slices(tl, &evs) {
            spans.push(TimelineSpan {
                cpu: cpu as usize,
                start_ns: s.in_ns,
                end_ns: s.out_ns,
                kind: "task".into(),
                label: format!("{}/{}", known_comm(tl, &s.comm, s.pid), s.pid),
            });
        }
        let mut open: Option<(u64, String, &str)> = None;
        for e in &evs {
            match &e.kind {
                EventKind::IrqHandlerEntry { irq, name } => {
                    open = Some((e.ts_ns, format!("irq {irq} {name}"), "irq"))
                }
                EventKind::SoftirqEntry { vec } => {
                    open = Some((
                        e.ts_ns,
                        format!("softirq {}", softirq_name(*vec)),
                        "softirq",
                    ))
                }
                EventKind::IrqHandlerExit { .. } | EventKind::SoftirqExit { .. } => {
                    if let Some((t, label, kind)) = open.take() {
                        spans.push(TimelineSpan {
                            cpu: cpu as usize,
                            start_ns: t,
                            end_ns: e.ts_ns,
                            kind: kind.into(),
                            label,
                        });
                    }
                }
                _ => {}
            }
        }
    }
    spans
}

/// `comm`, or the name the trace knows `pid` by when `comm` is unknown (`<...>` or empty).
fn known_comm<'a>(tl: &'a Timeline, comm: &'a str, pid: i32) -> &'a str {
    if !comm.is_empty() && comm != "<...>" {
        return comm;
    }
    tl.task(pid)
        .map(|t| t.comm.as_str())
        .filter(|c| !c.is_empty() && *c != "<...>")
        .unwrap_or(comm)
}

/// One task's stretch on a CPU: from its switch-in to its switch-out.
#[derive(Debug, Clone)]
pub struct Slice {
    pub in_ns: u64,
    pub out_ns: u64,
    pub comm: String,
    pub pid: i32,
    pub prio: i32,
}

/// The run slices of one CPU's events (sorted by time). Besides sched_switch, an event whose
/// `common_pid` is not the task believed running starts a slice of that pid (so a lost
/// or unrecorded switch-in does not hide who ran); its name and priority come from the
/// last sched_waking/wakeup/switch naming it. A slice out of idle that the kernel did not
/// record starts where `tl` implies it (`Timeline::switched_in_before`).
pub fn run_slices(tl: &Timeline, events: &[&Event]) -> Vec<Slice> {
    let mut names: BTreeMap<i32, (String, i32)> = BTreeMap::new();
    let mut slices: Vec<Slice> = Vec::new();
    let mut open: Option<Slice> = None;
    let switch_to =
        |open: &mut Option<Slice>, slices: &mut Vec<Slice>, ts, comm: String, pid, prio| {
            if let Some(mut s) = open.take() {
                s.out_ns = ts;
                slices.push(s);
            }
            *open = Some(Slice {
                in_ns: ts,
                out_ns: ts,
                comm,
                pid,
                prio,
            });
        };
    for e in events {
        match &e.kind {
            EventKind::SchedSwitch { prev, next, .. } => {
                names.insert(prev.pid, (prev.comm.clone(), prev.prio));
                names.insert(next.pid, (next.comm.clone(), next.prio));
                switch_to(
                    &mut open,
                    &mut slices,
                    e.ts_ns,
                    next.comm.clone(),
                    next.pid,
                    next.prio,
                );
                continue;
            }
            EventKind::SchedWaking { task, .. } | EventKind::SchedWakeup { task, .. } => {
                names.insert(task.pid, (task.comm.clone(), task.prio));
            }
            _ => {}
        }
        if open.as_ref().is_some_and(|s| s.pid != e.pid) || open.is_none() {
            let (comm, prio) = names
                .get(&e.pid)
                .cloned()
                .unwrap_or_else(|| ("<...>".into(), 120));
            let comm = if e.pid == 0 { "swapper".into() } else { comm };
            let from_idle = open.as_ref().is_none_or(|s| s.pid == 0);
            let ts = match tl.switched_in_before(e) {
                Some(t) if from_idle && open.as_ref().is_none_or(|s| s.in_ns <= t) => t,
                _ => e.ts_ns,
            };
            switch_to(&mut open, &mut slices, ts, comm, e.pid, prio);
        }
    }
    if let Some(mut s) = open {
        s.out_ns = events.last().map_or(s.in_ns, |e| e.ts_ns);
        slices.push(s);
    }
    slices
}
