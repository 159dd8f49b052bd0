//! Tests of account.rs on hand-built event sequences: who is charged for a wake-up's
//! delay (a task running on past it, one switched in over it, an unrecorded switch out of
//! idle, the wake-up known from an hrtimer expiry).

use super::*;
use crate::trace::event::TaskRef;

fn task(comm: &str, pid: i32, prio: i32) -> TaskRef {
    TaskRef {
        comm: comm.into(),
        pid,
        prio,
    }
}

fn ev(ts_ns: u64, pid: i32, kind: EventKind) -> Event {
    Event {
        ts_ns,
        cpu: 1,
        pid,
        flags: 0,
        preempt_count: 0,
        kind,
    }
}

fn switch(ts_ns: u64, prev: TaskRef, prev_state: i64, next: TaskRef) -> Event {
    let pid = prev.pid;
    ev(
        ts_ns,
        pid,
        EventKind::SchedSwitch {
            prev,
            prev_state,
            next,
        },
    )
}

const ME: i32 = 500;

/// The measuring thread (FIFO 95: traced prio 4) is woken at 10 µs while `kworker`
/// (nice 0) runs; it is switched in at 400 µs.
fn woken_while(kworker_switched_in_after_wakeup: bool) -> Vec<Event> {
    let me = task("latscope", ME, 4);
    let other = task("kworker/1:2", 77, 120);
    let mut events = vec![];
    if kworker_switched_in_after_wakeup {
        // Throttled: the thread was runnable and switched out, the kworker chosen.
        events.push(switch(5_000, me.clone(), 0, other.clone()));
    } else {
        events.push(switch(5_000, task("swapper/1", 0, 120), 0, other.clone()));
        events.push(ev(
            10_000,
            77,
            EventKind::SchedWakeup {
                task: me.clone(),
                target_cpu: 1,
            },
        ));
    }
    events.push(switch(400_000, other, 0, me));
    events
}

#[test]
fn a_task_running_on_past_the_wakeup_is_not_preempted_one_switched_in_is_throttling() {
    for (switched_in, want) in [
        (false, CauseKind::NotPreempted),
        (true, CauseKind::RtThrottling),
    ] {
        let events = woken_while(switched_in);
        let tl = Timeline::new(&events);
        let acc = account(&tl, 1, 10_000, 400_000, ME, SilenceBounds::default());
        let top = &acc.causes[0];
        assert_eq!(top.kind, want, "{acc:?}");
        assert_eq!(top.pid, Some(77));
        assert_eq!(top.duration_ns, 390_000);
    }
}

/// The timer's `--trace` records no sched_wakeup: the wake-up is its hrtimer's expiry,
/// and a task running on past it is still "not preempted".
#[test]
fn a_wakeup_known_from_the_hrtimer_expiry_counts_as_one() {
    let mut events = woken_while(false);
    events[1] = ev(
        10_000,
        77,
        EventKind::HrtimerExpireEntry {
            hrtimer: 1,
            now_ns: 10_000,
            function: 2,
        },
    );
    let tl = Timeline::new(&events);
    let bounds = SilenceBounds::default();
    let top = account(&tl, 1, 10_000, 400_000, ME, bounds).causes[0].kind;
    assert_eq!(top, CauseKind::Task);
    let acc = account_woken(&tl, 1, (10_000, 400_000), ME, Some(10_000), bounds);
    assert_eq!(acc.causes[0].kind, CauseKind::NotPreempted, "{acc:?}");
    assert_eq!(acc.causes[0].duration_ns, 390_000);
}

/// An hrtimer expiring on CPU 1 in the context of `pid`.
fn expiry(ts_ns: u64, pid: i32, hrtimer: u64, function: u64) -> Event {
    let now_ns = ts_ns as i64;
    let kind = EventKind::HrtimerExpireEntry {
        hrtimer,
        now_ns,
        function,
    };
    ev(ts_ns, pid, kind)
}

/// The end of a local timer interrupt in idle context.
fn idle_timer_exit(ts_ns: u64) -> Event {
    let name = "local_timer".into();
    ev(ts_ns, 0, EventKind::VectorExit { name, vector: 236 })
}

/// `from` switched out asleep for the idle task.
fn to_idle(ts_ns: u64, from: TaskRef) -> Event {
    switch(ts_ns, from, 1, task("swapper/1", 0, 120))
}

/// `pid` arms hrtimer `hrtimer` with callback `function`.
fn arm(ts_ns: u64, pid: i32, hrtimer: u64, function: u64) -> Event {
    let kind = EventKind::HrtimerStart {
        hrtimer,
        function,
        expires_ns: 0,
        softexpires_ns: 0,
        mode: 0,
    };
    ev(ts_ns, pid, kind)
}

/// The kernel recorded no switch out of idle: a FIFO 99 spinner woken on the idle CPU
/// at 20 µs (its wakeup and the interrupt's exit in idle context) shows its first own
/// event only at 2 ms. It ran from the interrupt's exit at 22 µs, not from 2 ms, and
/// the deadline at 1 ms falls inside its run, not into idle or a silent stretch.
#[test]
fn a_switch_out_of_idle_the_kernel_did_not_record_is_implied_by_the_wakeup() {
    let spinner = task("stall-inj", 99, 0);
    let task = spinner.clone();
    let events = vec![
        to_idle(1_000, self::task("latscope", ME, 49)),
        ev(
            20_000,
            0,
            EventKind::SchedWakeup {
                task,
                target_cpu: 1,
            },
        ),
        idle_timer_exit(22_000),
        expiry(2_000_000, 99, 1, 2),
        switch(3_022_000, spinner, 1, self::task("latscope", ME, 49)),
    ];
    let tl = Timeline::new(&events);
    assert_eq!(tl.switched_in_before(&events[3]), Some(22_000));
    let acc = account(&tl, 1, 1_000_000, 3_022_000, ME, SilenceBounds::default());
    assert_eq!(acc.causes.len(), 1, "{acc:?}");
    assert_eq!(acc.causes[0].pid, Some(99));
    assert_eq!(acc.causes[0].duration_ns, 2_022_000);
    let list = tl.cpu(1);
    let slices = crate::trace::analysis::analyze::run_slices(&tl, list);
    let ran: Vec<(u64, u64)> = slices
        .iter()
        .filter(|s| s.pid == 99)
        .map(|s| (s.in_ns, s.out_ns))
        .collect();
    assert_eq!(ran, [(22_000, 3_022_000)]);
}

/// The timer's `--trace` records no sched_wakeup: the expiry in idle context of the
/// hrtimer the spinner armed (its clock_nanosleep) is its wake-up.
#[test]
fn the_expiry_of_the_hrtimer_a_task_armed_is_its_wakeup() {
    let events = vec![
        arm(500, 99, 7, 3),
        to_idle(1_000, task("stall-inj", 99, 0)),
        expiry(20_000, 0, 7, 3),
        expiry(2_000_000, 99, 1, 2),
    ];
    let tl = Timeline::new(&events);
    assert_eq!(tl.switched_in_before(&events[3]), Some(20_000));
}

/// A timer armed before the recording has no known owner: its expiry in idle is a
/// wake-up of whoever runs next when its callback is a sleeper's (one the trace shows
/// armed right before its task went to sleep), and of nobody otherwise.
#[test]
fn the_expiry_of_a_sleepers_timer_armed_before_the_recording_wakes_who_runs_next() {
    for (callback, implied) in [(3, Some(20_000)), (4, None)] {
        let events = vec![
            arm(500, ME, 7, 3),
            to_idle(1_000, task("latscope", ME, 49)),
            expiry(20_000, 0, 9, callback),
            expiry(2_000_000, 99, 1, 2),
        ];
        let tl = Timeline::new(&events);
        assert_eq!(tl.switched_in_before(&events[3]), implied, "{callback}");
    }
}

/// Without a recorded wakeup of the task onto that CPU, nothing is implied.
#[test]
fn no_switch_is_implied_without_a_wakeup() {
    let events = vec![
        to_idle(1_000, task("latscope", ME, 49)),
        idle_timer_exit(22_000),
        expiry(2_000_000, 99, 1, 2),
    ];
    let tl = Timeline::new(&events);
    assert_eq!(tl.switched_in_before(&events[2]), None);
}
