//! `--fail-above` judged per finished interval: a line on stderr naming the interval, the
//! CPU and the value, the metric's counter, and `--on-fail CMD ARGS...` run without a
//! shell, with the facts in its environment, killed after `--on-fail-timeout`. The hook
//! runs on its own thread: a slow or failing command is logged and never stops the watch;
//! at exit the watch waits for the hooks still running (each ends by its timeout).

use std::process::Command;
use std::time::{Duration, Instant};

/// What one failed interval tells the hook.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    pub interval_start: String,
    pub cpu: usize,
    pub max_ns: u64,
    pub limit_ns: u64,
    pub file: String,
}

impl Failure {
    /// The stderr line.
    pub fn line(&self) -> String {
        format!(
            "latscope watch: interval {} CPU {}: max {} above --fail-above {} ({})",
            self.interval_start,
            self.cpu,
            crate::units::human_ns(self.max_ns),
            crate::units::human_ns(self.limit_ns),
            self.file
        )
    }

    fn env(&self) -> [(&'static str, String); 5] {
        [
            ("LATSCOPE_INTERVAL_START", self.interval_start.clone()),
            ("LATSCOPE_MAX_NS", self.max_ns.to_string()),
            ("LATSCOPE_LIMIT_NS", self.limit_ns.to_string()),
            ("LATSCOPE_CPU", self.cpu.to_string()),
            ("LATSCOPE_FILE", self.file.clone()),
        ]
    }
}

/// Runs the hook for `failure` on a thread of its own (placed on `cpus`, SCHED_OTHER,
/// like every helper of the watch); its outcome is logged on stderr. The thread is
/// returned so that the watch can wait for it at exit.
pub fn run_hook(
    command: &[String],
    failure: Failure,
    timeout: Duration,
    cpus: Vec<usize>,
) -> Option<std::thread::JoinHandle<()>> {
    let command = command.to_vec();
    let spawned = std::thread::Builder::new()
        .name("latscope-on-fail".into())
        .spawn(move || {
            super::server::helper_thread_placement(&cpus);
            if let Err(reason) = run_with_timeout(&command, &failure, timeout) {
                eprintln!(
                    "latscope watch: --on-fail {}: {reason} (the watch goes on)",
                    command[0]
                );
            }
        });
    match spawned {
        Ok(thread) => Some(thread),
        Err(e) => {
            eprintln!("latscope watch: --on-fail: cannot start a thread: {e}");
            None
        }
    }
}

/// At exit: waits for the hooks still running, saying so when there are any (each is
/// killed by its own thread after `timeout`, so this ends within it).
pub fn wait_for_hooks(hooks: Vec<std::thread::JoinHandle<()>>, timeout: Duration) {
    let running = hooks.iter().filter(|h| !h.is_finished()).count();
    if running > 0 {
        eprintln!(
            "latscope watch: waiting for {running} --on-fail hook{} (at most --on-fail-timeout {})",
            if running == 1 { "" } else { "s" },
            crate::units::human_ns(timeout.as_nanos() as u64)
        );
    }
    for hook in hooks {
        let _ = hook.join();
    }
}

/// The hook's run: Ok when it exited 0 within the timeout.
pub fn run_with_timeout(
    command: &[String],
    failure: &Failure,
    timeout: Duration,
) -> Result<(), String> {
    let (program, args) = command.split_first().ok_or("no command")?;
    let mut child = Command::new(program)
        .args(args)
        .envs(failure.env())
        .stdin(std::process::Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot run it: {e}"))?;
    let started = Instant::now();
    // Polled every 20 ms: std has no wait with a timeout, and a hook runs rarely.
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => return Ok(()),
            Ok(Some(status)) => return Err(format!("exited with {status}")),
            Ok(None) if started.elapsed() >= timeout => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "still running after --on-fail-timeout {}; killed",
                    crate::units::human_ns(timeout.as_nanos() as u64)
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(format!("cannot wait for it: {e}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure() -> Failure {
        Failure {
            interval_start: "2026-11-28T10:00:00Z".into(),
            cpu: 1,
            max_ns: 312_000,
            limit_ns: 200_000,
            file: "/tmp/x.json".into(),
        }
    }

    #[test]
    fn the_hook_gets_the_facts_and_a_slow_one_is_killed() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("env");
        let script = format!("env | grep ^LATSCOPE_ | sort > {}", out.display());
        let cmd: Vec<String> = ["sh", "-c", &script]
            .iter()
            .map(|s| s.to_string())
            .collect();
        run_with_timeout(&cmd, &failure(), Duration::from_secs(5)).unwrap();
        let env = std::fs::read_to_string(&out).unwrap();
        assert!(
            env.contains("LATSCOPE_MAX_NS=312000") && env.contains("LATSCOPE_CPU=1"),
            "{env}"
        );
        assert!(
            env.contains("LATSCOPE_INTERVAL_START=2026-11-28T10:00:00Z"),
            "{env}"
        );
        let slow: Vec<String> = ["sleep", "5"].iter().map(|s| s.to_string()).collect();
        let t = Instant::now();
        let e = run_with_timeout(&slow, &failure(), Duration::from_millis(200)).unwrap_err();
        assert!(
            e.contains("killed") && t.elapsed() < Duration::from_secs(2),
            "{e}"
        );
        let missing = vec!["/nonexistent/hook".to_string()];
        assert!(run_with_timeout(&missing, &failure(), Duration::from_secs(1)).is_err());
        assert!(failure().line().contains("CPU 1: max 312"));
    }

    #[test]
    fn the_watch_waits_at_exit_for_a_hook_still_running() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("done");
        let script = format!("sleep 0.3; echo $LATSCOPE_CPU > {}", out.display());
        let cmd: Vec<String> = ["sh", "-c", &script]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let hook = run_hook(&cmd, failure(), Duration::from_secs(5), Vec::new());
        wait_for_hooks(hook.into_iter().collect(), Duration::from_secs(5));
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "1\n");
    }
}
