//! The analysis on event sequences recorded on this project's 6.18 VM
//! (tests/fixtures/trace/*.txt, kernel text format, read by `text::parse_text_line`).

use crate::result::trace::{TraceThread, SWITCH_IN_PLACEMENT};
use crate::trace::analysis::account::{CauseKind, SilenceBounds};
use crate::trace::analysis::analyze::timer_parts;
use crate::trace::analysis::attribution::{attribute, spike_events, AttributionConfig};
use crate::trace::analysis::noise_classify::{classify_gaps, NoiseGap};
use crate::trace::analysis::split::{
    split_timer, NotJoined, SplitConfig, TimerMethod, TimerSample, TimerSplit,
};
use crate::trace::analysis::text::parse_text_line;
use crate::trace::analysis::threshold::Threshold;
use crate::trace::analysis::timeline::{LostSpan, Policy, Timeline};
use crate::trace::analysis::wake_split::{split_wake, WakeNotJoined, WakeSample};
use crate::trace::event::{CpuLosses, Event, Losses};

pub(super) const TIMER_TID: i32 = 16117;

/// A fixture's events in time order; `#` lines and blank lines are skipped.
/// Events from trace lines written out in a test (kernel text format), in time order.
pub(super) fn parse_lines(lines: &[&str]) -> Vec<Event> {
    let mut events: Vec<Event> = lines
        .iter()
        .map(|l| parse_text_line(l).unwrap_or_else(|| panic!("cannot read {l:?}")))
        .collect();
    events.sort_by_key(|e| e.ts_ns);
    events
}

pub(super) fn load(name: &str) -> Vec<Event> {
    let path = format!("{}/tests/fixtures/trace/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut events: Vec<Event> = text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .map(|l| parse_text_line(l).unwrap_or_else(|| panic!("{path}: cannot read {l:?}")))
        .collect();
    events.sort_by_key(|e| e.ts_ns);
    events
}

/// Samples 492-496 of the recorded run (`--raw`), then one from 563.48 s.
pub(super) fn timer_samples() -> Vec<TimerSample> {
    [
        (563_315_783_323, 26_343),
        (563_316_783_323, 23_841),
        (563_317_783_323, 22_531),
        (563_318_783_323, 2_150_018),
        (563_321_783_323, 30_983),
        (563_483_783_323, 85_991),
    ]
    .iter()
    .map(|&(deadline_ns, latency_ns)| TimerSample {
        deadline_ns,
        latency_ns,
    })
    .collect()
}

/// The timer samples of timer_stall.txt split against its timeline (CPU 1, clock_nanosleep).
fn stall_split(tl: &Timeline) -> TimerSplit {
    split_timer(
        tl,
        TIMER_TID,
        1,
        TimerMethod::ClockNanosleep,
        &timer_samples(),
        &SplitConfig::default(),
    )
}

#[test]
fn plain_wakeups_split_into_parts_that_sum_to_the_latency() {
    let events = load("timer_stall.txt");
    let tl = Timeline::new(&events);
    let split = stall_split(&tl);
    // The first sample's deadline lies before the excerpt's first event.
    assert_eq!(split.samples[0].not_joined, Some(NotJoined::OutsideWindow));
    assert_eq!(split.counts.total, 6);
    assert_eq!(split.counts.joined, 5);
    assert_eq!(split.counts.outside_window, 1);
    for s in &split.samples {
        assert_eq!(s.parts().iter().sum::<i64>(), s.latency_ns as i64, "{s:?}");
    }
    // Sample 493: woken from idle; this kernel traced no switch from swapper, so the
    // switch-in is placed at its lower bound, the local_timer exit, 3 µs before the
    // thread's first event (its rseq_update).
    let s = &split.samples[1];
    assert!(s.joined && s.switch_in_inferred);
    assert_eq!(s.irq_latency_ns, 563_316_798_000 - 563_316_783_323);
    assert_eq!(s.switch_in_ns, Some(563_316_804_000));
    assert_eq!(s.wake_to_run_ns, 6_000);
    assert_eq!(s.switch_in_uncertainty_ns, 3_000);
    assert_eq!(s.to_user_ns, 3_000);
    assert!(!s.no_rseq);
    // Sample 495: the stall; the switch from stall-inj is traced, rseq 1 µs later.
    let s = &split.samples[3];
    assert!(s.joined && !s.switch_in_inferred);
    assert_eq!(s.irq_latency_ns, 563_318_791_000 - 563_318_783_323);
    assert_eq!(s.wake_to_run_ns, 563_320_932_000 - 563_318_791_000);
    assert_eq!(s.to_user_ns, 1_000);
    assert!(s.remainder_ns.abs() < 5_000, "{s:?}");
}

/// The kernel's untraced switches out of idle: every such sample is counted, its switch-in
/// placed at the CPU's last event before the thread's first one that is not the thread's,
/// the parts it bounds marked, a note says so, and `to_user` reads no unmeasured 0.
#[test]
fn untraced_switch_ins_are_counted_placed_at_their_lower_bound_and_noted() {
    let events = load("timer_stall.txt");
    let tl = Timeline::new(&events);
    let split = stall_split(&tl);
    let inferred: Vec<_> = split
        .samples
        .iter()
        .filter(|s| s.switch_in_inferred)
        .collect();
    // Samples 493, 494, 496 and the one at 563.48 s woke an idle CPU; 495 (the stall)
    // was switched in from stall-inj, traced.
    assert_eq!(inferred.len(), 4);
    assert_eq!(split.counts.switch_in_inferred, 4);
    let cpu1: Vec<&Event> = events.iter().filter(|e| e.cpu == 1).collect();
    for s in &inferred {
        let wake = s.deadline_ns + s.latency_ns;
        let first_own = cpu1
            .iter()
            .position(|e| e.pid == TIMER_TID && e.ts_ns >= s.deadline_ns)
            .unwrap();
        assert!(cpu1[first_own].ts_ns <= wake + 2_000);
        let before = cpu1[..first_own]
            .iter()
            .rev()
            .find(|e| e.pid != TIMER_TID)
            .unwrap();
        assert_eq!(s.switch_in_ns, Some(before.ts_ns), "{s:?}");
        assert_eq!(
            s.switch_in_uncertainty_ns,
            cpu1[first_own].ts_ns - before.ts_ns
        );
        assert!(s.to_user_ns > 0 && s.wake_to_run_ns >= 0, "{s:?}");
        assert_eq!(s.parts().iter().sum::<i64>(), s.latency_ns as i64);
    }
    let mut t = TraceThread {
        cpu: 1,
        tid: TIMER_TID,
        ..Default::default()
    };
    timer_parts(&mut t, &split, "clock-nanosleep");
    assert_eq!(
        (t.samples_joined, t.switch_in_inferred, t.no_rseq),
        (5, 4, 0)
    );
    assert_eq!(t.switch_in_placement.as_deref(), Some(SWITCH_IN_PLACEMENT));
    let part = |name: &str| t.parts.iter().find(|p| p.metric.name() == name).unwrap();
    use crate::result::extras::Bound;
    assert_eq!(part("wake_to_run").extra.bound, Some(Bound::Lower));
    assert_eq!(part("wake_to_run").extra.bounded_samples, Some(4));
    assert_eq!(part("to_user").extra.bound, Some(Bound::Upper));
    assert_eq!(part("irq_latency").extra.bound, None);
    assert_eq!(part("to_user").summary.samples, 5);
    assert!(part("to_user").summary.p50_ns > 0);
    assert_eq!(t.notes.len(), 1);
    assert!(
        t.notes[0].starts_with("switch-in not traced for 4 of 5 joined samples"),
        "{}",
        t.notes[0]
    );
}

/// What the timer's own `--trace` records (`probe_events(ProbeKind::Timer)`: no
/// sched_wakeup, no local_timer entry/exit, no rseq_update on the wake path): the same
/// recorded events cut to that set still join every sample, place an untraced switch-in at
/// the hrtimer's expiry (now the CPU's previous traced event, the thread's clock read its
/// upper bound), report to_user as not measured and name the stall's thread.
#[test]
fn the_timer_event_set_still_splits_places_and_attributes() {
    let keep = crate::trace::record::instance::probe_events(crate::result::ProbeKind::Timer);
    let events: Vec<Event> = load("timer_stall.txt")
        .into_iter()
        .filter(|e| keep.contains(&e.kind.tracepoint().as_str()))
        .collect();
    let tl = Timeline::new(&events);
    let split = stall_split(&tl);
    assert_eq!(
        (split.counts.joined, split.counts.switch_in_inferred),
        (5, 4)
    );
    let s = &split.samples[1];
    assert!(s.switch_in_inferred);
    assert_eq!(s.switch_in_ns, s.expire_entry_ns);
    assert_eq!(split.counts.no_rseq, 5);
    assert!(s.no_rseq);
    assert_eq!((s.wake_to_run_ns, s.to_user_ns), (0, 0));
    let wake = s.deadline_ns + s.latency_ns;
    let expiry = s.expire_entry_ns.unwrap();
    assert_eq!(
        s.remainder_ns,
        (wake - expiry) as i64,
        "after the expiry everything is the remainder"
    );
    // The thread's first event after the expiry is now its next hrtimer_start, stamped
    // 0.84 µs after its clock read (the text has µs stamps), inside the clock slack; without
    // the slack it lies beyond the sample, and the clock read itself bounds the switch-in.
    assert_eq!(s.switch_in_uncertainty_ns, 10_000);
    let strict = SplitConfig {
        clock_slack_ns: 0,
        ..SplitConfig::default()
    };
    let samples = timer_samples();
    let split0 = split_timer(
        &tl,
        TIMER_TID,
        1,
        TimerMethod::ClockNanosleep,
        &samples,
        &strict,
    );
    assert_eq!(
        (split0.counts.joined, split0.counts.switch_in_inferred),
        (5, 4)
    );
    let s0 = &split0.samples[1];
    assert_eq!(s0.switch_in_ns, Some(expiry));
    assert_eq!(s0.switch_in_uncertainty_ns, wake - expiry);
    assert_eq!(s0.parts().iter().sum::<i64>(), s0.latency_ns as i64);
    let cfg = AttributionConfig {
        threshold: Threshold::Fixed(1_000_000),
        ..Default::default()
    };
    let a = attribute(&tl, &split, &cfg);
    let top = &a.spikes[0].causes[0];
    assert_eq!((top.name.as_str(), top.pid), ("stall-inj", Some(16118)));
    assert_eq!((top.policy, top.priority), (Some(Policy::Rt), Some(99)));
}

#[test]
fn a_fifo_99_stall_is_attributed_with_pid_priority_and_run_time() {
    let events = load("timer_stall.txt");
    let tl = Timeline::new(&events);
    let split = stall_split(&tl);
    let cfg = AttributionConfig {
        threshold: Threshold::Fixed(1_000_000),
        ..Default::default()
    };
    let a = attribute(&tl, &split, &cfg);
    assert_eq!(a.spikes.len(), 1);
    let spike = &a.spikes[0];
    let top = &spike.causes[0];
    assert_eq!(top.kind, CauseKind::Task);
    assert_eq!((top.name.as_str(), top.pid), ("stall-inj", Some(16118)));
    assert_eq!((top.policy, top.priority), (Some(Policy::Rt), Some(99)));
    // Nesting: the two local_timer interrupts and the SCHED softirq inside stall-inj's run
    // are charged to themselves only; everything adds up to the interval exactly.
    let vector = spike
        .causes
        .iter()
        .find(|c| c.kind == CauseKind::Vector)
        .unwrap();
    assert_eq!((vector.name.as_str(), vector.count), ("local_timer", 2));
    assert_eq!(vector.duration_ns, 7_000 + 20_000);
    let softirq = spike
        .causes
        .iter()
        .find(|c| c.kind == CauseKind::Softirq)
        .unwrap();
    assert_eq!(
        (softirq.name.as_str(), softirq.duration_ns),
        ("SCHED", 1_000)
    );
    let interval = spike.window_end_ns - spike.deadline_ns;
    let explained: u64 = spike.causes.iter().map(|c| c.duration_ns).sum();
    assert_eq!(explained + spike.unexplained_ns, interval);
    // The interval runs to the clock read: the measuring thread's own return to user
    // space after its switch-in (to_user + remainder, a few µs) is named by nothing.
    let own = spike.deadline_ns + spike.latency_ns - split.samples[3].switch_in_ns.unwrap();
    assert_eq!(spike.unexplained_ns, own);
    assert!(own < 10_000, "{own}");
    assert_eq!(top.duration_ns, interval - own - 28_000);
    let line = spike.render();
    assert!(
        line.starts_with("2.15 ms: stall-inj/16118 FIFO/RR 99 ran 2.12 ms; local_timer"),
        "{line}"
    );
    assert_eq!(
        a.summary.render(),
        "stall-inj/16118 1 spike, 2.12 ms; local_timer (vector 236) 1 spike, 27 µs; softirq SCHED 1 spike, 1 µs"
    );
    let window = spike_events(&events, spike, 100_000);
    assert!(window.first().unwrap().ts_ns >= spike.deadline_ns - 100_000);
    assert!(window.last().unwrap().ts_ns <= spike.window_end_ns);
}

#[test]
fn a_silent_late_timer_interrupt_on_an_idle_cpu_is_the_hypervisor() {
    let events = load("timer_stall.txt");
    let tl = Timeline::new(&events);
    let split = stall_split(&tl);
    // 58 µs with no event at all after the deadline on an idle CPU; the default bound is
    // 100 µs, this test asks for 50 µs.
    let cfg = AttributionConfig {
        threshold: Threshold::Fixed(80_000),
        bounds: SilenceBounds {
            running_ns: 5_000_000,
            waiting_ns: 50_000,
        },
        ..Default::default()
    };
    let a = attribute(&tl, &split, &cfg);
    let spike = a.spikes.iter().find(|s| s.latency_ns == 85_991).unwrap();
    let top = &spike.causes[0];
    assert_eq!(top.kind, CauseKind::Hypervisor);
    assert_eq!(top.duration_ns, 563_483_841_000 - 563_483_783_323);
    assert!(spike
        .render()
        .contains("no guest activity: hypervisor/SMI 57.68 µs"));
    assert_eq!(a.summary.entries[0].label, "stall-inj/16118");
    assert!(a.summary.render().contains("hypervisor 1 spike, 57.68 µs"));
}

#[test]
fn samples_on_a_cpu_with_lost_events_are_not_joined_nor_attributed() {
    let events = load("timer_stall.txt");
    let spans = [LostSpan {
        cpu: 1,
        from_ns: 563_319_000_000,
        to_ns: 563_319_500_000,
    }];
    let tl = Timeline::new(&events).with_lost_spans(&spans);
    let split = stall_split(&tl);
    assert_eq!(split.samples[3].not_joined, Some(NotJoined::LostEvents));
    assert_eq!(split.counts.lost_events, 1);
    assert!(split.samples[4].joined);
    let cfg = AttributionConfig {
        threshold: Threshold::Fixed(1_000_000),
        ..Default::default()
    };
    let a = attribute(&tl, &split, &cfg);
    assert!(a.spikes[0].causes.is_empty());
    assert_eq!(a.spikes[0].unexplained_ns, 2_150_018);
    assert!(a.spikes[0].render().contains("events lost"));
    // Counters without a time (per-CPU stats) distrust the whole CPU.
    let losses = Losses {
        per_cpu: vec![CpuLosses {
            cpu: 1,
            overrun: 3,
            ..Default::default()
        }],
    };
    let tl = Timeline::new(&events).with_losses(&losses);
    let split = stall_split(&tl);
    assert_eq!(split.counts.joined, 0);
}

#[test]
fn samples_outside_the_trace_and_busy_samples_are_counted_apart() {
    let events = load("timer_stall.txt");
    let tl = Timeline::new(&events);
    let early = [TimerSample {
        deadline_ns: 1_000,
        latency_ns: 10,
    }];
    let split = split_timer(
        &tl,
        TIMER_TID,
        1,
        TimerMethod::ClockNanosleep,
        &early,
        &SplitConfig::default(),
    );
    assert_eq!(split.counts.outside_window, 1);
    let split = split_timer(
        &tl,
        TIMER_TID,
        1,
        TimerMethod::Busy,
        &timer_samples(),
        &SplitConfig::default(),
    );
    assert_eq!(split.counts.busy, 6);
    assert!(split
        .samples
        .iter()
        .all(|s| s.remainder_ns == s.latency_ns as i64));
}

#[test]
fn noise_gaps_are_classified_like_osnoise() {
    let events = load("noise_gaps.txt");
    let tl = Timeline::new(&events);
    let gaps = [
        NoiseGap {
            start_ns: 580_817_492_809,
            gap_ns: 46_910,
        },
        NoiseGap {
            start_ns: 580_817_664_956,
            gap_ns: 24_016,
        },
        NoiseGap {
            start_ns: 580_743_805_218,
            gap_ns: 366_868,
        },
    ];
    let classes = classify_gaps(&tl, 1, 16725, &gaps, SilenceBounds::default());
    for c in &classes {
        eprintln!("{}", c.render());
    }
    // An IRQ and its softirq.
    let kinds: Vec<CauseKind> = classes[0].causes.iter().map(|c| c.kind).collect();
    assert!(kinds.contains(&CauseKind::Irq) && kinds.contains(&CauseKind::Softirq));
    // Nothing traced at all.
    assert_eq!(classes[1].dominant, Some(CauseKind::Hypervisor));
    assert_eq!(classes[1].causes[0].duration_ns, 24_016);
    // The FIFO 95 noise thread preempted (state R) while bash (nice 0) ran: RT throttling.
    assert_eq!(classes[2].dominant, Some(CauseKind::RtThrottling));
    let top = &classes[2].causes[0];
    assert_eq!(
        (top.name.as_str(), top.policy),
        ("bash", Some(Policy::Other))
    );
    for c in &classes {
        let explained: u64 = c.causes.iter().map(|c| c.duration_ns).sum();
        assert!(explained + c.unexplained_ns <= c.gap_ns, "{c:?}");
    }
}

#[test]
fn a_wake_up_through_eventfd_splits_into_wakeup_switch_and_return() {
    let events = load("wake_eventfd.txt");
    let tl = Timeline::new(&events);
    let sample = WakeSample {
        t0_ns: 579_080_481_190,
        t1_ns: 579_080_507_353,
    };
    let split = split_wake(&tl, 16697, &[sample], 2_000);
    let s = &split[0];
    assert!(s.joined, "{s:?}");
    assert_eq!(s.cpu, Some(1));
    assert_eq!(s.to_waking_ns, Some(579_080_482_000 - 579_080_481_190));
    assert_eq!(s.to_wakeup_ns, 579_080_499_000 - 579_080_481_190);
    // No switch from idle traced: placed at its lower bound, the call_function_single
    // exit right after the wakeup, 8 µs before the wakee's rseq_update.
    assert!(s.switch_in_inferred);
    assert_eq!(s.switch_ns, 0);
    assert_eq!(s.switch_in_uncertainty_ns, 8_000);
    assert_eq!(s.to_user_ns, 8_000);
    assert_eq!(
        s.to_wakeup_ns + s.switch_ns + s.to_user_ns + s.remainder_ns,
        s.response_ns as i64
    );
    // A wakee that was never asleep has no wake-up to split.
    let none = split_wake(&tl, 4242, &[sample], 2_000);
    assert!(!none[0].joined);
}

/// A wakee woken (from CPU 0) while still on CPU 1, before it switched out to sleep:
/// `NotAsleep`. With its switch-out traced and no switch back in: `NoSwitchIn`.
#[test]
fn a_wakee_woken_before_it_slept_is_not_asleep_not_a_missing_switch() {
    let mut lines = vec![
        "<idle>-0 [001] d...2.. 10.000000: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=wakee next_pid=200 next_prio=4",
        "waker-100 [000] d...4.. 10.000150: sched_wakeup: comm=wakee pid=200 prio=4 target_cpu=001",
        "<idle>-0 [000] d..h1.. 10.000300: local_timer_entry: vector=236",
    ];
    let sample = WakeSample {
        t0_ns: 10_000_140_000,
        t1_ns: 10_000_200_000,
    };
    let events = parse_lines(&lines);
    let s = &split_wake(&Timeline::new(&events), 200, &[sample], 2_000)[0];
    assert_eq!(s.not_joined, Some(WakeNotJoined::NotAsleep), "{s:?}");
    lines.push("wakee-200 [001] d...2.. 10.000120: sched_switch: prev_comm=wakee prev_pid=200 prev_prio=4 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120");
    let events = parse_lines(&lines);
    let s = &split_wake(&Timeline::new(&events), 200, &[sample], 2_000)[0];
    assert_eq!(s.not_joined, Some(WakeNotJoined::NoSwitchIn), "{s:?}");
}
