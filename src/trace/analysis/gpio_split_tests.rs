//! The GPIO split on a trace recorded in the lab's PREEMPT_RT guest
//! (tests/fixtures/trace/gpio_sim_rt.txt and its run's `--raw` file gpio_sim_rt.csv, both
//! from contrib/gpio-lab/record-trace.sh): 20 simulated edges, IRQ thread on CPU 0, the
//! measuring thread (tid 131) on CPU 1.

use crate::trace::analysis::gpio_split::{split_gpio, GpioNotJoined, GpioSample};
use crate::trace::analysis::tests::load;
use crate::trace::analysis::timeline::Timeline;

const TID: i32 = 131;

/// The run's edges: t1 = drive stamp + drive→irq, t2 = t1 + irq→user.
fn samples() -> Vec<GpioSample> {
    let path = format!(
        "{}/tests/fixtures/trace/gpio_sim_rt.csv",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap();
    let column = |metric: &str| -> Vec<(u64, u64)> {
        text.lines()
            .map(|l| l.split(',').collect::<Vec<_>>())
            .filter(|f| f.len() == 7 && f[3] == metric)
            .map(|f| (f[5].parse().unwrap(), f[6].parse().unwrap()))
            .collect()
    };
    column("drive_to_irq")
        .into_iter()
        .zip(column("irq_to_user"))
        .map(|((t0, d), (_, u))| GpioSample {
            irq_ns: t0 + d,
            user_ns: t0 + d + u,
        })
        .collect()
}

#[test]
fn every_edge_of_the_lab_run_splits_into_parts_that_sum_to_irq_to_user() {
    let events = load("gpio_sim_rt.txt");
    let tl = Timeline::new(&events);
    let samples = samples();
    assert_eq!(samples.len(), 20);
    let split = split_gpio(&tl, TID, &samples, 2_000);
    // The excerpt ends 57 µs before the last edge's read (its rseq_update is the last
    // event): that edge lies outside the trace, the other 19 join.
    let (last, split) = split.split_last().unwrap();
    assert_eq!(
        last.not_joined,
        Some(GpioNotJoined::OutsideWindow),
        "{last:?}"
    );
    assert_eq!(last.remainder_ns, last.irq_to_user_ns as i64);
    for s in split {
        assert!(s.joined, "{s:?}");
        assert_eq!(
            s.parts().iter().sum::<i64>(),
            s.irq_to_user_ns as i64,
            "{s:?}"
        );
        // gpio-sim's interrupt (the consumer is named latscope-PID) on the writer's CPU.
        assert_eq!(s.irq, Some((24, 1)), "{s:?}");
        assert_eq!(s.cpu, Some(1), "{s:?}");
        assert!(s.irq_thread_ns.is_some_and(|n| n > 0), "{s:?}");
        for p in &s.parts()[..4] {
            assert!(*p >= 0, "{s:?}");
        }
    }
}

#[test]
fn an_edge_splits_at_its_irq_thread_wakeup_switch_and_return() {
    let events = load("gpio_sim_rt.txt");
    let tl = Timeline::new(&events);
    // Edge 1: hard IRQ 23.681541-.681548 on CPU 1 (t1 inside), irq/24-latscope switched in
    // on CPU 0 at .693520, its sched_wakeup of the reader at .704779, the reader's switch
    // in on CPU 1 at .705439 (out of idle, traced here), its rseq_update at .705624.
    let s = &split_gpio(&tl, TID, &samples()[1..2], 2_000)[0];
    assert_eq!(s.irq_ns, 23_681_545_960);
    assert_eq!(s.irq_thread_ns, Some(23_693_520_000 - 23_681_545_960));
    assert_eq!(s.to_wakeup_ns, 23_704_779_000 - 23_693_520_000);
    assert_eq!(s.switch_ns, 23_705_439_000 - 23_704_779_000);
    assert!(!s.switch_in_inferred);
    assert_eq!(s.to_user_ns, 23_705_624_000 - 23_705_439_000);
    assert_eq!(s.remainder_ns, 23_705_678_690 - 23_705_624_000);
}

#[test]
fn an_edge_without_its_irq_or_its_wakeup_is_not_joined_and_says_why() {
    let events = load("gpio_sim_rt.txt");
    let tl = Timeline::new(&events);
    let edge = samples()[1];
    // A stamp no hard IRQ handler brackets (t1 200 µs later: not the IRQ's).
    let moved = GpioSample {
        irq_ns: edge.irq_ns + 200_000,
        ..edge
    };
    let s = &split_gpio(&tl, TID, &[moved], 2_000)[0];
    assert_eq!(s.not_joined, Some(GpioNotJoined::NoIrq), "{s:?}");
    // A thread that was never woken.
    let s = &split_gpio(&tl, 4242, &[edge], 2_000)[0];
    assert_eq!(s.not_joined, Some(GpioNotJoined::NoWakeup), "{s:?}");
    assert_eq!(s.parts().iter().sum::<i64>(), s.irq_to_user_ns as i64);
}

/// A reader woken by its IRQ thread (CPU 0) while still on CPU 1, before it switched out
/// to sleep in its read: `NotAsleep`. The same edge with its switch-out traced, and no
/// switch back in: `NoSwitchIn`.
#[test]
fn a_reader_woken_before_it_slept_is_not_asleep_not_a_missing_switch() {
    let lines = |switch_out: bool| -> Vec<crate::trace::event::Event> {
        let mut text = vec![
            "<idle>-0 [001] d...2.. 10.000000: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=latscope-cpu1 next_pid=131 next_prio=4",
            "latscope-cpu1-131 [001] d..h1.. 10.000100: irq_handler_entry: irq=24 name=latscope-125",
            "latscope-cpu1-131 [001] d..h1.. 10.000110: irq_handler_exit: irq=24 ret=handled",
            "<idle>-0 [000] d...2.. 10.000130: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=irq/24-latscope next_pid=130 next_prio=49",
            "irq/24-latscope-130 [000] d...4.. 10.000150: sched_wakeup: comm=latscope-cpu1 pid=131 prio=4 target_cpu=001",
            "irq/24-latscope-130 [000] d...2.. 10.000160: sched_switch: prev_comm=irq/24-latscope prev_pid=130 prev_prio=49 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120",
            "<idle>-0 [000] d..h1.. 10.000300: local_timer_entry: vector=236",
        ];
        if switch_out {
            text.push("latscope-cpu1-131 [001] d...2.. 10.000120: sched_switch: prev_comm=latscope-cpu1 prev_pid=131 prev_prio=4 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120");
        }
        crate::trace::analysis::tests::parse_lines(&text)
    };
    let edge = GpioSample {
        irq_ns: 10_000_105_000,
        user_ns: 10_000_200_000,
    };
    for (switch_out, why) in [
        (false, GpioNotJoined::NotAsleep),
        (true, GpioNotJoined::NoSwitchIn),
    ] {
        let events = lines(switch_out);
        let tl = Timeline::new(&events);
        let s = &split_gpio(&tl, TID, &[edge], 2_000)[0];
        assert_eq!(s.not_joined, Some(why), "{s:?}");
        assert_eq!(s.parts().iter().sum::<i64>(), s.irq_to_user_ns as i64);
    }
}
