//! Tests only: the timer probe's warm-up and measured phases (timer.rs).

use super::*;
use crate::sys::sched::Policy;

#[test]
fn warm_up_goes_to_scratch_and_the_measured_recorder_is_never_cleared() {
    let period_ns = 200_000;
    let settings = CommonSettings {
        cpus: vec![0],
        policy: Policy::Other,
        priority: 0,
        warmup_ns: 4_000_000,
        samples: Some(10),
        duration_ns: None,
        keep_raw: true,
        worst_case: false,
        timer_slack_ns: Some(1),
    };
    let config = RecorderConfig {
        deadline_ns: period_ns,
        series_seconds: 2,
        raw_capacity: 10,
    };
    let mut recorders = Recorders {
        measured: Recorder::standalone(&config),
        scratch: Recorder::scratch(&config, Arc::default()),
    };
    let stop = AtomicBool::new(false);
    let start_ns = clock::monotonic_ns() + 1_000_000;
    let m = warm_up_then_measure(
        &mut BusyWaiter,
        &mut recorders,
        start_ns,
        period_ns,
        &settings,
        Limits {
            break_above_ns: u64::MAX,
            shared_end: None,
        },
        &stop,
    );
    let rec = &recorders.measured;
    assert_eq!(rec.count(), 10);
    assert_eq!(
        rec.histogram_clears(),
        0,
        "the measured histogram was zeroed"
    );
    assert!(
        recorders.scratch.count() >= 1,
        "the warm-up recorded into scratch"
    );
    // Every measured deadline is after the warm-up, on the same absolute grid.
    let first_deadline = rec.raw()[0][0];
    assert_eq!(first_deadline, m.started_ns);
    assert!(first_deadline >= start_ns + settings.warmup_ns);
    assert_eq!((first_deadline - start_ns) % period_ns, 0);
}
