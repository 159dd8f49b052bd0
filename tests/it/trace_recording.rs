//! `--trace`'s recording layer for real, as root: the decoder checked field by field against
//! the kernel's own text of the same buffer, the instance gone after every ending (normal,
//! panic, killed + `latscope restore`), losses counted with a tiny buffer, and a mounted
//! tracefs left mounted.

use crate::common;

use common::latency_lock as lock;
use latscope::trace::{render_text_line, EventKind, TraceConfig, TraceSession};
use std::path::Path;

/// A little of everything: sleeps (hrtimers, switches, wake-ups), page faults, a child.
fn workload(ms: u64) {
    let end = std::time::Instant::now() + std::time::Duration::from_millis(ms);
    while std::time::Instant::now() < end {
        let v: Vec<u8> = vec![1; 1 << 20];
        std::hint::black_box(&v);
        std::thread::sleep(std::time::Duration::from_micros(200));
        let _ = std::process::Command::new("true").status();
    }
}

fn records_events_and_removes_the_instance() {
    let _l = lock();
    let s = TraceSession::start(&TraceConfig::default()).unwrap();
    let name = s.instance_name().to_string();
    assert!(common::trace_instances().contains(&name));
    workload(200);
    let r = s.stop().unwrap();
    assert!(
        !common::trace_instances().contains(&name),
        "instance left behind"
    );
    eprintln!(
        "{} events, {} pages, {:?}, notes {:?}, missing {:?}",
        r.events.len(),
        r.stats.pages,
        r.stats,
        r.notes,
        r.missing_events
    );
    assert!(r.events.len() > 100);
    assert!(r.events.windows(2).all(|w| w[0].ts_ns <= w[1].ts_ns));
    assert!(r
        .events
        .iter()
        .all(|e| e.ts_ns >= r.started_ns - 1_000_000 && e.ts_ns <= r.ended_ns));
    assert!(r
        .events
        .iter()
        .any(|e| matches!(e.kind, EventKind::SchedSwitch { .. })));
    assert_eq!(r.stats.undecodable, 0);
}

/// /proc/kallsyms, to compare addresses with the names the kernel's text prints.
struct Kallsyms(Vec<(u64, String)>);

impl Kallsyms {
    fn load() -> Kallsyms {
        let text = std::fs::read_to_string("/proc/kallsyms").unwrap_or_default();
        let mut v: Vec<(u64, String)> = text
            .lines()
            .filter_map(|l| {
                let mut f = l.split_whitespace();
                let a = u64::from_str_radix(f.next()?, 16).ok()?;
                let _t = f.next()?;
                Some((a, f.next()?.to_string()))
            })
            .filter(|(a, _)| *a != 0)
            .collect();
        v.sort();
        Kallsyms(v)
    }

    /// `name+0xoff` of an address.
    fn name_of(&self, addr: u64) -> Option<(String, u64)> {
        let i = self.0.partition_point(|(a, _)| *a <= addr);
        let (a, n) = self.0.get(i.checked_sub(1)?)?;
        Some((n.clone(), addr - a))
    }
}

/// Compares one value of ours with the kernel's text of the same field. Returns what was
/// compared ("exact", "symbol", "skipped").
fn same_value(
    key: &str,
    ours: &str,
    kernel: &str,
    syms: &Kallsyms,
) -> Result<&'static str, String> {
    if ours == kernel {
        return Ok("exact");
    }
    // %ps / %pS: the kernel prints a symbol (`name` or `name+0xoff/0xsize`) where we print
    // the address; compare through kallsyms.
    if let Some(hex) = ours.strip_prefix("0x") {
        let addr = u64::from_str_radix(hex, 16).map_err(|e| e.to_string())?;
        if !kernel.starts_with("0x") {
            if syms.0.is_empty() {
                return Ok("skipped");
            }
            let (name, off) = syms.name_of(addr).ok_or("no symbol")?;
            let (kname, koff) = match kernel.split_once('+') {
                Some((n, rest)) => {
                    let o = rest.split('/').next().unwrap_or("0x0");
                    (
                        n,
                        u64::from_str_radix(o.trim_start_matches("0x"), 16).unwrap_or(u64::MAX),
                    )
                }
                // %ps prints the name alone.
                None => (kernel, off),
            };
            // Several symbols can share an address: any of them will do.
            if (name == kname || syms.0.iter().any(|(a, n)| n == kname && *a == addr - off))
                && off == koff
            {
                return Ok("symbol");
            }
            return Err(format!(
                "{key}: {ours} is {name}+0x{off:x}, kernel says {kernel}"
            ));
        }
    }
    Err(format!("{key}: ours {ours:?} kernel {kernel:?}"))
}

/// The decoder against the kernel's own text rendering of the same buffer, field by field.
/// The drain thread is held before the workload, so the `trace` file shows the unread tail
/// of each CPU's buffer (the whole workload, whatever the drain read before the hold): that
/// tail must equal the tail of our events.
fn decoder_matches_the_kernels_text_field_by_field() {
    let _l = lock();
    let syms = Kallsyms::load();
    let mut compared = 0;
    let mut kinds = std::collections::BTreeMap::<String, usize>::new();
    let mut how = std::collections::BTreeMap::<&str, usize>::new();
    {
        let s = TraceSession::start(&TraceConfig::default()).unwrap();
        // Raw pointers in the text (%p), so they compare exactly.
        std::fs::write(s.instance_dir().join("options/hash-ptr"), "0").unwrap();
        s.hold_drain();
        workload(200);
        s.pause().unwrap();
        let text =
            latscope::trace::record::format::read_tracefs_file(&s.instance_dir().join("trace"))
                .unwrap();
        let r = s.stop().unwrap();
        assert!(!r.losses.any(), "{:?}", r.losses);
        for &cpu in &r.cpus {
            let kernel: Vec<_> = text
                .lines()
                .filter_map(latscope::trace::analysis::text::split_line)
                .filter(|h| h.cpu == cpu)
                .collect();
            let ours: Vec<_> = r.events.iter().filter(|e| e.cpu == cpu).collect();
            assert!(
                kernel.len() <= ours.len(),
                "cpu {cpu}: text has more events than we decoded"
            );
            let tail = &ours[ours.len() - kernel.len()..];
            for (k, e) in kernel.iter().zip(tail) {
                let ctx = format!("\nkernel: {k:?}\nours:   {}", render_text_line(e));
                assert_eq!(
                    k.ts_text,
                    format!(
                        "{}.{:06}",
                        (e.ts_ns + 500) / 1000 / 1_000_000,
                        (e.ts_ns + 500) / 1000 % 1_000_000
                    ),
                    "{ctx}"
                );
                assert_eq!(k.pid, e.pid, "{ctx}");
                assert_eq!(
                    k.flags,
                    latscope::trace::analysis::text::flags_text(e.flags, e.preempt_count),
                    "{ctx}"
                );
                assert_eq!(
                    k.name,
                    latscope::trace::analysis::text::event_name(&e.kind),
                    "{ctx}"
                );
                let kf: std::collections::HashMap<_, _> =
                    latscope::trace::analysis::text::field_pairs(k.fields)
                        .into_iter()
                        .collect();
                for (key, ours_v) in latscope::trace::analysis::text::field_pairs(
                    &latscope::trace::analysis::text::fields_text(&e.kind),
                ) {
                    let kv = kf
                        .get(&key)
                        .unwrap_or_else(|| panic!("kernel lacks {key}{ctx}"));
                    match same_value(&key, &ours_v, kv, &syms) {
                        Ok(h) => *how.entry(h).or_default() += 1,
                        Err(m) => panic!("{m}{ctx}"),
                    }
                }
                *kinds.entry(k.name.to_string()).or_default() += 1;
                compared += 1;
            }
        }
    }
    eprintln!("compared {compared} events: {kinds:?}; values {how:?}");
    assert!(compared >= 200, "only {compared} events in the unread tail");
    assert!(kinds.contains_key("sched_switch") && kinds.contains_key("hrtimer_start"));
}

fn instance_is_removed_when_a_panic_drops_the_session() {
    let _l = lock();
    let name = std::sync::Mutex::new(String::new());
    let r = std::panic::catch_unwind(|| {
        let s = TraceSession::start(&TraceConfig::default()).unwrap();
        *name.lock().unwrap() = s.instance_name().to_string();
        panic!("probe failed");
    });
    assert!(r.is_err());
    let name = name.into_inner().unwrap();
    assert!(!name.is_empty());
    assert!(
        !common::trace_instances().contains(&name),
        "{name} left behind"
    );
}

/// A dead PID: a child that has exited and been reaped.
fn dead_pid() -> u32 {
    let mut c = std::process::Command::new("true").spawn().unwrap();
    let pid = c.id();
    c.wait().unwrap();
    pid
}

fn latscope_restore_removes_the_instance_of_a_dead_run() {
    let _l = lock();
    let pid = dead_pid();
    let name = format!("latscope-{pid}");
    let dir = Path::new("/sys/kernel/tracing/instances").join(&name);
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("events/sched/sched_switch/enable"), "1").unwrap();
    let live = format!("latscope-{}", std::process::id());
    let live_dir = Path::new("/sys/kernel/tracing/instances").join(&live);
    std::fs::create_dir(&live_dir).unwrap();
    let out = common::latscope().arg("restore").output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let left = common::trace_instances();
    let _ = std::fs::remove_dir(&live_dir);
    assert!(
        stdout.contains(&format!("removed tracefs instance {name}")),
        "{stdout}"
    );
    assert!(!left.contains(&name), "{name} still there");
    assert!(
        left.contains(&live),
        "the instance of a live process was removed"
    );
}

fn a_running_session_refuses_a_second_one_in_the_same_process() {
    let _l = lock();
    let s = TraceSession::start(&TraceConfig::default()).unwrap();
    let e = TraceSession::start(&TraceConfig::default())
        .err()
        .expect("refused");
    assert!(
        e.to_string().starts_with(&format!(
            "instance {} in use by running latscope PID",
            s.instance_name()
        )),
        "{e}"
    );
    drop(s);
}

fn a_tiny_buffer_reports_its_losses() {
    let _l = lock();
    let cfg = TraceConfig {
        buffer_kb_per_cpu: 4,
        ..TraceConfig::default()
    };
    let s = TraceSession::start(&cfg).unwrap();
    // Hold the drain thread: the 4 KB buffers overflow within milliseconds.
    s.pause().unwrap();
    std::fs::write(s.instance_dir().join("tracing_on"), "1").unwrap();
    workload(100);
    let r = s.stop().unwrap();
    eprintln!("{:?}", r.losses);
    assert!(r.losses.any());
    assert!(
        r.losses
            .per_cpu
            .iter()
            .map(|c| c.overrun + c.dropped)
            .sum::<u64>()
            > 0
    );
}

fn a_mounted_tracefs_stays_mounted() {
    let _l = lock();
    let mounted = || {
        std::fs::read_to_string("/proc/self/mounts")
            .unwrap()
            .lines()
            .any(|l| l.split_whitespace().nth(2) == Some("tracefs"))
    };
    assert!(mounted());
    let t = latscope::trace::record::tracefs::Tracefs::open().unwrap();
    assert!(!t.mounted_by_us());
    drop(t);
    let s = TraceSession::start(&TraceConfig::default()).unwrap();
    s.stop().unwrap();
    assert!(mounted(), "tracefs was unmounted");
}

/// This module's tests, for tests/it/main.rs.
pub fn cases() -> Vec<common::Case> {
    common::cases_unless(
        common::no_tracing(),
        &[
            (
                "records_events_and_removes_the_instance",
                records_events_and_removes_the_instance,
            ),
            (
                "decoder_matches_the_kernels_text_field_by_field",
                decoder_matches_the_kernels_text_field_by_field,
            ),
            (
                "instance_is_removed_when_a_panic_drops_the_session",
                instance_is_removed_when_a_panic_drops_the_session,
            ),
            (
                "latscope_restore_removes_the_instance_of_a_dead_run",
                latscope_restore_removes_the_instance_of_a_dead_run,
            ),
            (
                "a_running_session_refuses_a_second_one_in_the_same_process",
                a_running_session_refuses_a_second_one_in_the_same_process,
            ),
            (
                "a_tiny_buffer_reports_its_losses",
                a_tiny_buffer_reports_its_losses,
            ),
            (
                "a_mounted_tracefs_stays_mounted",
                a_mounted_tracefs_stays_mounted,
            ),
        ],
    )
}
