//! `--isolate` and `latscope restore` on the real machine (as root, real cpusets): the
//! shield confines a process started before it, the cpuset tree and IRQ affinities are
//! byte-for-byte what they were afterwards, and `restore` cleans up after SIGKILL.
//! Tests that change global cpusets hold one file lock, so they never overlap, and a
//! guard kills what they started and runs `latscope restore` even when they fail.

use crate::common;

// `latscope()` here is a std Command: these tests spawn, kill and wait for it.
use common::latscope_command as latscope;
use latscope::sys::cpuset::{self, CpusetMount};
use latscope::sys::filelock::FileLock;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Every value the isolation may touch, by path.
type Snapshot = BTreeMap<String, String>;

fn snapshot(mount: &CpusetMount) -> Snapshot {
    let mut snap = Snapshot::new();
    let root = mount.root().to_path_buf();
    let mut dirs = vec![root.clone()];
    dirs.extend(cpuset::child_dirs(&root));
    for dir in dirs {
        snap.insert(dir.display().to_string(), "<dir>".into());
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.is_file())
            .filter(|p| {
                let name = p.file_name().unwrap().to_str().unwrap();
                (name.starts_with("cpuset.") || name == "cgroup.subtree_control")
                    && name != "cpuset.memory_pressure"
            })
            .collect();
        files.sort();
        for f in files {
            if let Ok(v) = std::fs::read_to_string(&f) {
                snap.insert(f.display().to_string(), v);
            }
        }
    }
    for irq in latscope::sys::irq::list() {
        let p = format!("/proc/irq/{irq}/smp_affinity_list");
        if let Ok(v) = std::fs::read_to_string(&p) {
            snap.insert(p, v);
        }
    }
    for p in [
        "/proc/irq/default_smp_affinity",
        "/sys/devices/virtual/workqueue/cpumask",
    ] {
        if let Ok(v) = std::fs::read_to_string(p) {
            snap.insert(p.into(), v);
        }
    }
    snap
}

fn assert_same(before: &Snapshot, after: &Snapshot) {
    for (k, v) in before {
        assert_eq!(after.get(k), Some(v), "{k} changed");
    }
    for k in after.keys() {
        assert!(before.contains_key(k), "{k} appeared");
    }
}

/// Kills what a test started and undoes any isolation left, also when the test panics.
struct Cleanup {
    children: Vec<Child>,
    /// Cpusets a test made itself, removed after its children are gone.
    dirs: Vec<PathBuf>,
    _lock: FileLock,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
        let _ = latscope().arg("restore").output();
        for d in self.dirs.iter().rev() {
            for _ in 0..100 {
                if std::fs::remove_dir(d).is_ok() || !d.exists() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    }
}

/// Why isolation cannot be tested here (None: it can): one CPU, or no cpuset access.
fn isolation_unavailable() -> Option<String> {
    if latscope::sys::affinity::online_cpus().len() < 2 {
        return Some("needs two online CPUs".into());
    }
    latscope::isolate::check_available()
        .err()
        .map(|e| e.to_string())
}

/// Why a test of one cgroup flavour cannot run here: the other flavour holds the cpuset
/// controller (or isolation is unavailable altogether).
fn unless_flavour(v2: bool) -> Option<String> {
    if let Some(why) = isolation_unavailable() {
        return Some(why);
    }
    let mount = latscope::isolate::check_available().expect("checked");
    match (&mount, v2) {
        (CpusetMount::V1 { root, .. }, true) => Some(format!(
            "this machine binds the cpuset controller to cgroup v1 ({}), so the v2 partition cannot be made",
            root.display()
        )),
        (CpusetMount::V2 { .. }, false) => {
            Some("this machine has cgroup v2: the v1 cpusets cannot be made".into())
        }
        _ => None,
    }
}

/// Takes the test lock (the one every latency test holds) and the cpuset mount; the
/// caller has checked `isolation_unavailable`.
fn setup() -> (CpusetMount, Cleanup) {
    let mount = latscope::isolate::check_available().expect("isolation available");
    let lock = FileLock::exclusive(std::path::Path::new("/tmp/latscope-latency-tests.lock"))
        .expect("test lock");
    let cleanup = Cleanup {
        children: Vec::new(),
        dirs: Vec::new(),
        _lock: lock,
    };
    // A previous run of these tests that was killed may have left something behind.
    let _ = latscope().arg("restore").output();
    (mount, cleanup)
}

/// The isolated cpuset's directory, once the measuring thread has entered it.
fn wait_until_shielded(mount: &CpusetMount, pid: u32, child: &mut Child) -> PathBuf {
    let rt = mount.root().join(format!("latscope-{pid}-rt"));
    let tasks = match mount {
        CpusetMount::V1 { .. } => rt.join("tasks"),
        CpusetMount::V2 { .. } => rt.join("cgroup.procs"),
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if cpuset::task_ids(&tasks).is_ok_and(|t| !t.is_empty()) {
            return rt;
        }
        if let Ok(Some(status)) = child.try_wait() {
            panic!("latscope exited before isolating: {status}");
        }
        assert!(Instant::now() < deadline, "isolation not applied in 30 s");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn status_field(pid: u32, field: &str) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix(field).map(|v| v.trim().to_string()))
        .unwrap()
}

fn last_cpu(pid: u32) -> usize {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    latscope::sys::procfs::parse_stat(&text).unwrap().processor
}

fn no_leftovers(mount: &CpusetMount) {
    let left: Vec<_> = std::fs::read_dir(mount.root())
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with("latscope"))
        .map(|e| e.path())
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    let state = latscope::isolate::state_dir();
    let files: Vec<_> = std::fs::read_dir(&state)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().starts_with("isolation-"))
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default();
    assert!(files.is_empty(), "state files left: {files:?}");
}

fn shield_confines_an_unpinned_process_and_restores_exactly() {
    let (mount, mut cleanup) = setup();
    let before = snapshot(&mount);
    let spinner = Command::new("sh")
        .args(["-c", "while :; do :; done"])
        .spawn()
        .unwrap();
    let spinner_pid = spinner.id();
    cleanup.children.push(spinner);
    let all = latscope::units::format_cpu_list(&latscope::sys::affinity::online_cpus());
    assert_eq!(status_field(spinner_pid, "Cpus_allowed_list:"), all);
    let json = tempfile::NamedTempFile::new().unwrap();
    let run = latscope()
        .args(["timer", "--isolate", "1", "-D", "4s", "-q", "--export-json"])
        .arg(json.path())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let run_pid = run.id();
    cleanup.children.push(run);
    wait_until_shielded(&mount, run_pid, cleanup.children.last_mut().unwrap());

    let system = latscope::units::format_cpu_list(
        &latscope::sys::affinity::online_cpus()
            .into_iter()
            .filter(|&c| c != 1)
            .collect::<Vec<_>>(),
    );
    assert_eq!(status_field(spinner_pid, "Cpus_allowed_list:"), system);
    for _ in 0..20 {
        assert_ne!(
            last_cpu(spinner_pid),
            1,
            "the spinner ran on isolated CPU 1"
        );
        std::thread::sleep(Duration::from_millis(50));
    }

    let status = cleanup.children.last_mut().unwrap().wait().unwrap();
    assert!(status.success(), "latscope failed: {status}");
    assert_same(&before, &snapshot(&mount));
    no_leftovers(&mount);
    assert_eq!(status_field(spinner_pid, "Cpus_allowed_list:"), all);
}

fn json_reports_what_the_isolation_did() {
    let (mount, _cleanup) = setup();
    let before = snapshot(&mount);
    let json = tempfile::NamedTempFile::new().unwrap();
    common::assert_success(
        latscope()
            .args(["timer", "--isolate", "1", "-D", "2s", "-q", "--export-json"])
            .arg(json.path())
            .output()
            .unwrap(),
    );
    let run: serde_json::Value =
        serde_json::from_slice(&std::fs::read(json.path()).unwrap()).unwrap();
    let scenario = &run["scenarios"][0];
    assert_eq!(scenario["params"]["cpus"], serde_json::json!([1]));
    assert_eq!(scenario["params"]["isolate"], serde_json::json!([1]));
    let iso = &scenario["isolation"];
    assert_eq!(iso["mechanism"], mount.mechanism());
    assert_eq!(iso["isolated_cpus"], serde_json::json!([1]));
    assert!(!iso["system_cpus"].as_array().unwrap().contains(&1.into()));
    for list in [
        "moved_irqs",
        "unmovable_irqs",
        "unmovable_tasks",
        "kthreads_staying",
    ] {
        assert!(iso[list].is_array(), "{list} missing: {iso}");
    }
    if matches!(mount, CpusetMount::V1 { .. }) {
        assert!(iso["moved_tasks"].as_u64().unwrap() > 0, "{iso}");
        // Per-CPU kernel threads of CPU 1 (migration/1 at least) cannot leave it.
        let staying = iso["kthreads_staying"].as_array().unwrap();
        assert!(
            staying
                .iter()
                .any(|k| k.as_str().unwrap().starts_with("migration/1")),
            "{staying:?}"
        );
    }
    for irq in iso["moved_irqs"].as_array().unwrap() {
        let to = latscope::units::parse_cpu_list_plain(irq["to"].as_str().unwrap()).unwrap();
        assert!(!to.contains(&1), "{irq}");
    }
    assert_same(&before, &snapshot(&mount));
    no_leftovers(&mount);
}

fn restore_undoes_a_run_killed_with_sigkill() {
    let (mount, mut cleanup) = setup();
    let before = snapshot(&mount);
    let run = latscope()
        .args(["timer", "--isolate", "1", "-D", "30s", "-q"])
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = run.id();
    cleanup.children.push(run);
    let rt = wait_until_shielded(&mount, pid, cleanup.children.last_mut().unwrap());
    let child = cleanup.children.last_mut().unwrap();
    child.kill().unwrap(); // SIGKILL: no destructor, no restorer runs
    child.wait().unwrap();
    assert!(rt.is_dir(), "the killed run's cpuset should still be there");
    assert_ne!(snapshot(&mount), before);

    let out = latscope().arg("restore").output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.contains(&format!("restored the isolation of run {pid}")),
        "{stdout}"
    );
    assert_same(&before, &snapshot(&mount));
    no_leftovers(&mount);

    let again = latscope().arg("restore").output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&again.stdout),
        "nothing to restore\n"
    );
}

fn refuses_all_cpus_and_offline_cpus() {
    let online = latscope::sys::affinity::online_cpus();
    let all = latscope::units::format_cpu_list(&online);
    let out = latscope()
        .args(["timer", "--isolate", &all, "-D", "1s"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing would be left"));
    let offline = (online.iter().max().unwrap() + 1).to_string();
    let out = latscope()
        .args(["timer", "--isolate", &offline, "-D", "1s"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not online"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn emergency_restorer_restores_while_the_guard_is_alive() {
    let (mount, _cleanup) = setup();
    let before = snapshot(&mount);
    let guard = latscope::isolate::IsolationGuard::apply(&[1]).unwrap();
    assert_eq!(
        latscope::isolate::current_system_cpus(),
        Some(guard.report().system_cpus.clone())
    );
    assert_ne!(snapshot(&mount), before);
    // What the second Ctrl-C runs before exiting at once.
    latscope::interrupt::run_restorers();
    assert_same(&before, &snapshot(&mount));
    drop(guard); // restoring again finds nothing left to undo
    assert_same(&before, &snapshot(&mount));
    assert_eq!(latscope::isolate::current_system_cpus(), None);
    no_leftovers(&mount);
}

fn narrows_an_existing_cpuset_and_restores_it() {
    let (mount, mut cleanup) = setup();
    // A cpuset someone else made, using every CPU, with a task in it.
    let theirs = mount
        .root()
        .join(format!("lstest-existing-{}", std::process::id()));
    std::fs::create_dir(&theirs).unwrap();
    cleanup.dirs.push(theirs.clone());
    let all = latscope::units::format_cpu_list(&latscope::sys::affinity::online_cpus());
    let root_mems = cpuset::read_value(&mount.knob(mount.root(), "mems")).unwrap();
    cpuset::write_value(&mount.knob(&theirs, "cpus"), &all).unwrap();
    cpuset::write_value(&mount.knob(&theirs, "mems"), &root_mems).unwrap();
    let sleeper = Command::new("sleep").arg("60").spawn().unwrap();
    cpuset::move_task(&theirs.join("tasks"), sleeper.id() as i32).unwrap();
    cleanup.children.push(sleeper);
    let before = snapshot(&mount);

    let json = tempfile::NamedTempFile::new().unwrap();
    let run = latscope()
        .args(["timer", "--isolate", "1", "-D", "2s", "-q", "--export-json"])
        .arg(json.path())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = run.id();
    cleanup.children.push(run);
    wait_until_shielded(&mount, pid, cleanup.children.last_mut().unwrap());
    let narrowed = cpuset::read_value(&mount.knob(&theirs, "cpus")).unwrap();
    assert!(
        !latscope::units::parse_cpu_list_plain(&narrowed)
            .unwrap()
            .contains(&1),
        "{narrowed}"
    );
    let status = cleanup.children.last_mut().unwrap().wait().unwrap();
    assert!(status.success());
    let run: serde_json::Value =
        serde_json::from_slice(&std::fs::read(json.path()).unwrap()).unwrap();
    let listed = run["scenarios"][0]["isolation"]["narrowed_cpusets"].to_string();
    assert!(listed.contains("lstest-existing"), "{listed}");
    assert_same(&before, &snapshot(&mount));
    no_leftovers(&mount);
}

fn every_probe_runs_shielded_with_a_load_beside_it() {
    let (mount, _cleanup) = setup();
    let before = snapshot(&mount);
    let runs: [&[&str]; 3] = [
        &["wake", "--competitors", "2", "--mechanism", "eventfd"],
        &["noise", "--policy", "fifo", "-p", "50"],
        &["net", "--size", "64"],
    ];
    for args in runs {
        let json = tempfile::NamedTempFile::new().unwrap();
        let out = latscope()
            .args(args)
            .args([
                "--isolate",
                "1",
                "--load",
                "cpu:50%",
                "-D",
                "1s",
                "--warmup",
                "0",
                "-q",
            ])
            .arg("--export-json")
            .arg(json.path())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: {stderr}");
        let run: serde_json::Value =
            serde_json::from_slice(&std::fs::read(json.path()).unwrap()).unwrap();
        let scenario = &run["scenarios"][0];
        assert_eq!(
            scenario["params"]["isolate"],
            serde_json::json!([1]),
            "{args:?}"
        );
        assert!(
            scenario["isolation"].is_object(),
            "{args:?}: no isolation report"
        );
        let load = &scenario["loads"][0];
        assert_eq!(load["kind"], "cpu", "{args:?}");
        assert!(
            !load["cpus"].as_array().unwrap().contains(&1.into()),
            "{args:?}: the load ran on the shielded CPU: {load}"
        );
        assert!(
            scenario["threads"][0]["samples"].as_u64().unwrap() > 0,
            "{args:?}"
        );
    }
    assert_same(&before, &snapshot(&mount));
    no_leftovers(&mount);
}

/// This module's tests, for tests/it/main.rs.
pub fn cases() -> Vec<common::Case> {
    let mut cases = common::cases_unless(
        isolation_unavailable(),
        &[
            (
                "json_reports_what_the_isolation_did",
                json_reports_what_the_isolation_did,
            ),
            (
                "restore_undoes_a_run_killed_with_sigkill",
                restore_undoes_a_run_killed_with_sigkill,
            ),
            (
                "emergency_restorer_restores_while_the_guard_is_alive",
                emergency_restorer_restores_while_the_guard_is_alive,
            ),
            (
                "every_probe_runs_shielded_with_a_load_beside_it",
                every_probe_runs_shielded_with_a_load_beside_it,
            ),
        ],
    );
    cases.extend([
        common::case(
            "shield_confines_an_unpinned_process_and_restores_exactly_cgroup_v1",
            shield_confines_an_unpinned_process_and_restores_exactly,
        )
        .unless(unless_flavour(false)),
        common::case(
            "shield_confines_an_unpinned_process_and_restores_exactly_cgroup_v2",
            shield_confines_an_unpinned_process_and_restores_exactly,
        )
        .unless(unless_flavour(true)),
        common::case(
            "refuses_all_cpus_and_offline_cpus",
            refuses_all_cpus_and_offline_cpus,
        ),
        // v2 partitions take their CPUs from every other cgroup at once: nothing to narrow.
        common::case(
            "narrows_an_existing_cpuset_and_restores_it",
            narrows_an_existing_cpuset_and_restores_it,
        )
        .unless(unless_flavour(false)),
    ]);
    cases
}
