//! What a user without root is told (issue 12, item 14): one line naming what is really
//! needed (root, CAP_SYS_NICE), with the permission exit code 4, and what needs no root
//! (`suite --policy other`) runs. Each test runs the binary as `nobody`.

use crate::common;
use std::process::{Command, Output};

/// The test binary copied where `nobody` may run it (the target directory may not be).
struct NobodyBinary {
    dir: tempfile::TempDir,
}

impl NobodyBinary {
    fn new() -> Self {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::Builder::new()
            .prefix("latscope-nobody-")
            .tempdir()
            .unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let bin = dir.path().join("latscope");
        std::fs::copy(common::latscope_path(), &bin).unwrap();
        std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
        Self { dir }
    }

    /// Runs latscope as `nobody` in the binary's directory (writable by nobody: no).
    fn run(&self, args: &[&str]) -> Output {
        Command::new("setpriv")
            .args([
                "--reuid=nobody",
                "--regid=nogroup",
                "--clear-groups",
                "--inh-caps=-all",
            ])
            .arg(self.dir.path().join("latscope"))
            .args(args)
            .current_dir("/")
            .output()
            .unwrap()
    }
}

/// Exit code, and stderr: one line (the error), containing every needle.
fn refused(out: &Output, code: i32, needles: &[&str], never: &[&str]) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "not one line:\n{stderr}");
    for n in needles {
        assert!(stderr.contains(n), "lacks '{n}':\n{stderr}");
    }
    for n in never {
        assert!(!stderr.contains(n), "says '{n}':\n{stderr}");
    }
}

fn item14_priority_without_rt_permission_is_a_permission_error() {
    let bin = NobodyBinary::new();
    let out = bin.run(&["timer", "-p", "80", "-l", "10"]);
    refused(
        &out,
        4,
        &["--priority 80", "CAP_SYS_NICE", "sudo", "--policy other"],
        &["allowed 0-0"],
    );
}

fn item14_isolate_and_dma_refusals_name_root_not_setcap() {
    let bin = NobodyBinary::new();
    let online = latscope::sys::affinity::online_cpus();
    let last = online.last().unwrap().to_string();
    if online.len() > 1 {
        let out = bin.run(&["timer", "--isolate", &last, "-l", "10"]);
        refused(&out, 4, &["--isolate", "needs root", "sudo"], &["setcap"]);
    }
    let out = bin.run(&["timer", "--dma-latency", "0", "-l", "10"]);
    refused(
        &out,
        4,
        &["--dma-latency", "needs root", "sudo"],
        &["setcap"],
    );
}

fn item14_suite_policy_other_runs_without_root() {
    let bin = NobodyBinary::new();
    let out = bin.run(&[
        "suite",
        "--preset",
        "quick",
        "--policy",
        "other",
        "--samples",
        "20",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("other"), "not at SCHED_OTHER:\n{stdout}");
}

fn item14_non_root_restore_of_a_stale_state_says_it_needs_root() {
    // A stale state file makes every --isolate run refuse: only while no test measures.
    let _lock = common::latency_lock();
    let dir = latscope::isolate::state_dir();
    std::fs::create_dir_all(&dir).unwrap();
    // A dead run's state that changed nothing (so a root restore is harmless too).
    let pid = dead_pid();
    let path = dir.join(format!("isolation-{pid}.json"));
    struct Remove(std::path::PathBuf);
    impl Drop for Remove {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }
    let _remove = Remove(path.clone());
    let state = serde_json::json!({
        "version": 1, "pid": pid, "pid_start_time": 1, "boot_id": "",
        "mechanism": "cgroup-v1", "cpuset_root": "/sys/fs/cgroup/cpuset", "v1_prefix": "cpuset.",
        "isolated_cpus": [1], "system_cpus": [0], "created_dirs": [], "knobs": [],
        "irqs": [], "irq_default_affinity": null, "moved_tasks": []
    });
    std::fs::write(&path, serde_json::to_vec(&state).unwrap()).unwrap();
    let bin = NobodyBinary::new();
    let out = bin.run(&["restore"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stdout}{stderr}");
    let ours: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains(&path.display().to_string()))
        .collect();
    assert_eq!(ours.len(), 1, "{stdout}");
    assert!(ours[0].contains("needs root"), "{stdout}");
    assert!(!stdout.contains("restored the isolation"), "{stdout}");
    assert!(!stdout.contains("Permission denied"), "{stdout}");
    assert!(path.exists(), "a non-root restore removed the state file");
}

/// The exec-load processes of this test still alive (their command lines hold the marks).
fn marked_processes() -> Vec<String> {
    let out = Command::new("pgrep")
        .args(["-a", "-f", "^sleep 740[12]"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

/// Without root an `exec:` load runs in a user namespace owning a PID namespace, so its
/// grandchildren die with a `kill -9`ed latscope too (where unprivileged user namespaces
/// are allowed; skipped otherwise).
fn exec_load_grandchildren_die_with_a_sigkilled_non_root_run() {
    let _lock = common::latency_lock();
    let bin = NobodyBinary::new();
    let mut child = Command::new("setpriv")
        .args(["--reuid=nobody", "--regid=nogroup", "--clear-groups"])
        .arg(bin.dir.path().join("latscope"))
        .args(["timer", "-D", "30s", "-q", "--load"])
        .arg("exec:\"sh -c 'sleep 7401 & sleep 7402'\"")
        .current_dir("/")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while marked_processes().len() < 2 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let started = marked_processes();
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(started.len(), 2, "{started:?}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
    while !marked_processes().is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let left = marked_processes();
    for line in &left {
        if let Some(pid) = line.split_whitespace().next() {
            let _ = Command::new("kill").args(["-9", pid]).status();
        }
    }
    assert_eq!(left, Vec::<String>::new(), "outlived latscope");
}

/// Why unprivileged user namespaces cannot be made here (None: they can).
fn no_unprivileged_user_namespaces() -> Option<String> {
    let out = Command::new("setpriv")
        .args(["--reuid=nobody", "--regid=nogroup", "--clear-groups"])
        .args(["unshare", "--user", "--pid", "--fork", "true"])
        .output()
        .ok()?;
    (!out.status.success()).then(|| {
        format!(
            "unprivileged user namespaces are not allowed here: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )
    })
}

/// A process id no process has now.
fn dead_pid() -> i32 {
    let mut child = Command::new("true").spawn().unwrap();
    let pid = child.id() as i32;
    child.wait().unwrap();
    pid
}

/// Why these tests cannot run here (None: they can).
fn cannot_switch_to_nobody() -> Option<String> {
    if latscope::sys::process::effective_uid() != 0 {
        return Some("needs root to become nobody".into());
    }
    common::missing("setpriv", "util-linux")
}

/// This module's tests, for tests/it/main.rs.
pub fn cases() -> Vec<common::Case> {
    let mut cases = common::cases_unless(
        cannot_switch_to_nobody(),
        &[
            (
                "item14_priority_without_rt_permission_is_a_permission_error",
                item14_priority_without_rt_permission_is_a_permission_error,
            ),
            (
                "item14_isolate_and_dma_refusals_name_root_not_setcap",
                item14_isolate_and_dma_refusals_name_root_not_setcap,
            ),
            (
                "item14_suite_policy_other_runs_without_root",
                item14_suite_policy_other_runs_without_root,
            ),
            (
                "item14_non_root_restore_of_a_stale_state_says_it_needs_root",
                item14_non_root_restore_of_a_stale_state_says_it_needs_root,
            ),
        ],
    );
    cases.push(
        common::case(
            "exec_load_grandchildren_die_with_a_sigkilled_non_root_run",
            exec_load_grandchildren_die_with_a_sigkilled_non_root_run,
        )
        .unless(cannot_switch_to_nobody().or_else(no_unprivileged_user_namespaces)),
    );
    cases
}
