//! Tests only: plan.rs and options.rs on command lines, against a made-up 4-CPU machine.

use super::*;

fn machine() -> Machine {
    Machine {
        online: vec![0, 1, 2, 3],
        realtime_permitted: true,
        rt_throttling: Some((950_000, 1_000_000)),
    }
}

fn plan(text: &str) -> Result<CyclictestPlan, UserError> {
    let words: Vec<String> = text.split_whitespace().map(String::from).collect();
    plan_words(&words)
}

fn plan_words(words: &[String]) -> Result<CyclictestPlan, UserError> {
    let cpus = Cpus {
        available: vec![0, 1, 2, 3],
        configured: 4,
    };
    resolve(&parse(words)?, &machine(), &cpus)
}

fn settings(p: &CyclictestPlan) -> &crate::probe::CommonSettings {
    &p.plan.scenarios[0].settings
}

#[test]
fn smp_runs_a_thread_per_cpu_at_one_priority() {
    let p = plan("-m -S -p95 -i1000 -h400 -q -l 10").unwrap();
    assert_eq!(settings(&p).cpus, vec![0, 1, 2, 3]);
    assert_eq!(
        (settings(&p).policy, settings(&p).priority),
        (Policy::Fifo, 95)
    );
    assert_eq!(p.output.histogram, Some(400));
    assert!(p.output.quiet);
}

#[test]
fn threads_and_affinity_go_round_robin() {
    let p = plan("-t 5 -a 1-2 -l 10").unwrap();
    assert_eq!(settings(&p).cpus, vec![1, 2, 1, 2, 1]);
    assert_eq!(p.output.main_affinity, Some(vec![1, 2]), "-a pins main too");
    let p = plan("-t -l 10").unwrap();
    assert_eq!(settings(&p).cpus, vec![0, 1, 2, 3]);
    // openSUSE's `-a -t`: -a without a set, -t without a number: a thread per CPU.
    let p = plan("-a -t -p 99 -l 100 -v").unwrap();
    assert_eq!(settings(&p).cpus, vec![0, 1, 2, 3]);
    // cyclictest's default: one SCHED_OTHER thread.
    let p = plan("-l 10").unwrap();
    assert_eq!(settings(&p).cpus, vec![0]);
    assert_eq!(settings(&p).policy, Policy::Other);
    assert_eq!(
        (p.output.policy_name.as_str(), p.output.other_shown),
        ("other", true)
    );
}

#[test]
fn duration_units_intervals_and_distance() {
    let p = plan("-D 2m -q -t 2 -i 200").unwrap();
    assert_eq!(settings(&p).duration_ns, Some(120_000_000_000));
    assert_eq!((settings(&p).samples, p.distance_us), (None, 500));
    assert_eq!(p.plan.scenarios[0].probe.period_ns(), 200_000);
    assert_eq!(p.intervals_us(), [200, 700]);
    // -h sets the distance to 0 (and says so when -d was given).
    let p = plan("-t 2 -d 100 -h 50 -l 5").unwrap();
    assert_eq!(p.distance_us, 0);
    assert!(p.output.notices[0].contains("distance is ignored"));
    assert!(plan("-D x").is_err() && plan("-i 5").is_err());
}

#[test]
fn policy_other_with_p0_stays_other_unlike_cyclictest() {
    let p = plan("--policy=other -p0 -l 10").unwrap();
    assert_eq!(settings(&p).policy, Policy::Other);
    assert!(
        p.output.notes[0].contains("stays SCHED_OTHER"),
        "{:?}",
        p.output.notes
    );
    let p = plan("--policy=fifo -l 10").unwrap();
    assert_eq!(
        (settings(&p).policy, settings(&p).priority),
        (Policy::Fifo, 2)
    );
}

/// cyclictest 2.4 runs batch and idle (and names it does not know) as SCHED_OTHER,
/// naming the policy asked for in its header; with a priority they become FIFO.
#[test]
fn batch_idle_and_unknown_policies_run_as_other() {
    for (name, shown) in [("batch", "batch"), ("idle", "idle"), ("foo", "other")] {
        let p = plan(&format!("--policy {name} -l 10")).unwrap();
        assert_eq!(settings(&p).policy, Policy::Other, "{name}");
        assert_eq!(p.output.policy_name, shown);
        assert!(p.output.other_shown);
    }
    assert!(plan("--policy foo -l 1").unwrap().output.notes[0].contains("'foo' runs as other"));
    let p = plan("-p 50 --policy batch -l 10").unwrap();
    assert_eq!(settings(&p).policy, Policy::Fifo);
    assert!(p.output.notices[0].contains("don't match"));
}

#[test]
fn priospread_lowers_each_thread_and_stops_at_other() {
    let p = plan("--priospread -p 2 -t 3 -l 10").unwrap();
    let probe = &p.plan.scenarios[0].probe;
    assert_eq!(p.output.thread_priority(0), 2);
    assert_eq!(p.output.thread_priority(2), 0);
    assert!(p.output.other_shown, "thread 2 runs SCHED_OTHER");
    assert_eq!(probe.period_ns(), 1_000_000);
    let p = plan("--priospread -t 3 -l 10").unwrap();
    assert_eq!(p.output.priority, 4, "threads + 1");
}

#[test]
fn lenient_numbers_and_stray_words_are_noted() {
    let words = ["-q", "-l", "10", "--latency=PM_QOS", "", "2"].map(String::from);
    let p = plan_words(&words).unwrap();
    assert_eq!(p.output.notes[0], "ignored '' '2' (not options)");
    assert!(p.output.notes[1].contains("PM_QOS"));
    let line = crate::cyclictest::format::note_line(&p.output.notes).unwrap();
    assert!(line.chars().count() <= 80, "{line}");
}

#[test]
fn refusals_name_the_option_and_why() {
    for (args, named) in [
        ("--smi", "--smi"),
        ("-c 2", "-c"),
        ("-o 5", "-o"),
        ("-A 10 --secaligned", "-A"),
        ("-a 7", "-a"),
        ("-p 100", "-p"),
    ] {
        let err = plan(args).err().expect(args).to_string();
        assert!(err.contains(named), "{args}: {err}");
    }
}

#[test]
fn clock_realtime_and_verbose_without_bounds_are_planned() {
    let p = plan("-c 1 -v -q").unwrap();
    let settings = settings(&p);
    assert_eq!((settings.samples, settings.duration_ns), (None, None));
    assert!(!settings.keep_raw, "-v streams from a ring, nothing kept");
}
