//! `latscope doctor --try FIX` for real, as root on this machine: `--try timer-migration`
//! end to end (an A/B line on sched.timer_migration, the knob read back as it was), and
//! a run killed with SIGKILL while the fix is applied, after which `latscope restore`
//! puts the knob back (read to check). Bad FIX values are refused in doctor.rs.

use crate::common::{self, latscope};
use serde_json::Value;
use std::time::{Duration, Instant};

const KNOB: &str = "/proc/sys/kernel/timer_migration";

fn knob() -> String {
    std::fs::read_to_string(KNOB).unwrap().trim().to_string()
}

fn cannot_try() -> Option<String> {
    if latscope::sys::process::effective_uid() != 0 {
        return Some("needs root (writes kernel.timer_migration)".into());
    }
    match std::fs::read_to_string(KNOB) {
        Err(e) => Some(format!("{KNOB}: {e}")),
        Ok(v) if v.trim() == "0" => Some("timer_migration is 0 here: nothing to try".into()),
        Ok(_) => None,
    }
}

/// Runs `latscope restore` when dropped (a failed test leaves nothing changed).
struct RestoreAfter(Vec<std::process::Child>);

impl Drop for RestoreAfter {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
        let _ = latscope().arg("restore").output();
    }
}

fn try_fix_measures_and_restores_the_knob() {
    let _lock = common::latency_lock();
    let _cleanup = RestoreAfter(Vec::new());
    let before = knob();
    let out = latscope()
        .args(["doctor", "--pairs", "1", "--try", "timer-migration"])
        .args(["--export-json", "-"])
        .output()
        .unwrap();
    assert_eq!(knob(), before, "timer_migration not restored");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&out.stderr));
    });
    let f = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "sched.timer_migration")
        .unwrap();
    let m = &f["measured"][0];
    let line = m["summary"].as_str().unwrap_or_default();
    assert!(
        line.starts_with(&format!("timer_migration {before} → 0: p99 "))
            && line.contains(": within noise (sign test: lower in ")
            && line.contains(" of 1 pair, p = "),
        "{f}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(m["test"]["verdict"], "within_noise", "{m}");
    assert_eq!(m["test"]["pairs"], 1, "{m}");
    assert_eq!(m["restored"], true, "{m}");
    // The cap and the time were said up front, before the first run.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("latscope doctor: measuring 2 A/Bs of up to 1 pair (5 s a pair; fewer than 6 cannot decide)") && stderr.contains(": at most "),
        "{stderr}"
    );
    let pair = m["pairs_ns"][0].as_array().unwrap();
    assert!(pair.iter().all(|v| v.as_u64().unwrap() > 0), "{m}");
}

/// The state file of run `pid`, once its knob is applied.
fn wait_for_fix(pid: u32, child: &mut std::process::Child) -> std::path::PathBuf {
    let state = std::path::PathBuf::from(format!("/run/latscope/tunable-{pid}.json"));
    let deadline = Instant::now() + Duration::from_secs(60);
    while !(state.exists() && knob() == "0") {
        assert!(
            child.try_wait().unwrap().is_none(),
            "doctor ended before applying"
        );
        assert!(Instant::now() < deadline, "never applied the fix");
        std::thread::sleep(Duration::from_millis(20));
    }
    state
}

fn restore_puts_the_knob_back_after_sigkill() {
    let _lock = common::latency_lock();
    let before = knob();
    let child = common::latscope_command()
        .args(["doctor", "--pairs", "1", "--try", "timer-migration"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut cleanup = RestoreAfter(vec![child]);
    let state = wait_for_fix(pid, &mut cleanup.0[0]);
    cleanup.0[0].kill().unwrap(); // SIGKILL: no Drop, no restorer
    cleanup.0[0].wait().unwrap();
    assert_eq!(knob(), "0", "the killed run's fix should still be applied");
    let out = latscope().arg("restore").output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.contains(&format!("put back the tunables of run {pid}")),
        "{stdout}"
    );
    assert_eq!(knob(), before, "{stdout}");
    assert!(!state.exists(), "{stdout}");
}

pub fn cases() -> Vec<common::Case> {
    vec![
        common::case(
            "try_fix_measures_and_restores_the_knob",
            try_fix_measures_and_restores_the_knob,
        )
        .unless(cannot_try()),
        common::case(
            "restore_puts_the_knob_back_after_sigkill",
            restore_puts_the_knob_back_after_sigkill,
        )
        .unless(cannot_try()),
    ]
}
