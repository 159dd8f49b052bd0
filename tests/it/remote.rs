//! `--host` (issue 13, "Remote runs without a farm") against this machine itself: an sshd of
//! the test's own on a free port of 127.0.0.1, with throwaway host and client keys, stands in
//! for a board. A run's result is fetched, two hosts run at once, the cached binary is
//! reused, a dropped connection leaves the "board" restored with its result kept, and an
//! unreachable host gets its own exit code.

use crate::common::*;
use crate::exit_paths::{diff, system_state};
use serde_json::Value;
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const SSHD: &str = "/usr/sbin/sshd";

/// An sshd for root on 127.0.0.1 only, killed on drop. Its sessions have a cache
/// directory (`XDG_CACHE_HOME`) and a `TMPDIR` of their own in its temporary directory, so
/// tests running at once never share a board's cache or scratch directories, and nothing
/// outlives the test.
pub(crate) struct Sshd {
    child: Child,
    dir: tempfile::TempDir,
    port: u16,
}

impl Sshd {
    pub(crate) fn start() -> Sshd {
        Sshd::start_with("")
    }

    /// An sshd with `extra` lines in its configuration (a `ForceCommand` standing for a
    /// board's login shell that prints, say).
    pub(crate) fn start_with(extra: &str) -> Sshd {
        let dir = tempfile::tempdir().expect("temp dir");
        let d = dir.path();
        for key in ["host", "client"] {
            let out = Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-f"])
                .arg(d.join(key))
                .output()
                .expect("ssh-keygen runs");
            assert!(out.status.success(), "ssh-keygen: {out:?}");
        }
        std::fs::copy(d.join("client.pub"), d.join("authorized_keys")).unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        std::fs::write(
            d.join("sshd_config"),
            format!(
                "Port {port}\nListenAddress 127.0.0.1\nHostKey {dir}/host\n\
                 AuthorizedKeysFile {dir}/authorized_keys\nPermitRootLogin prohibit-password\n\
                 PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n\
                 StrictModes no\nPidFile {dir}/sshd.pid\n\
                 SetEnv XDG_CACHE_HOME={dir}/cache TMPDIR={dir}/tmp\n{extra}\n",
                dir = d.display()
            ),
        )
        .unwrap();
        std::fs::create_dir(d.join("tmp")).unwrap();
        // The privilege separation directory sshd insists on.
        let _ = std::fs::create_dir_all("/run/sshd");
        let child = Command::new(SSHD)
            .args(["-D", "-e", "-f"])
            .arg(d.join("sshd_config"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("sshd starts");
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "sshd did not listen on {port}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Sshd { child, dir, port }
    }

    /// The board's `XDG_CACHE_HOME`: latscope's cache is `latscope` in it.
    pub(crate) fn cache(&self) -> std::path::PathBuf {
        self.dir.path().join("cache")
    }

    /// The board's `TMPDIR`, where its runs have their scratch directories.
    pub(crate) fn tmp(&self) -> std::path::PathBuf {
        self.dir.path().join("tmp")
    }

    /// Its temporary directory (config, keys; `cache` and `tmp` are in it).
    pub(crate) fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The `--ssh-option`s that reach it.
    pub(crate) fn options(&self) -> Vec<String> {
        [
            format!("-p{}", self.port),
            format!("-i{}", self.dir.path().join("client").display()),
            "-oStrictHostKeyChecking=no".into(),
            "-oUserKnownHostsFile=/dev/null".into(),
            "-oLogLevel=ERROR".into(),
        ]
        .iter()
        .map(|o| format!("--ssh-option={o}"))
        .collect()
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) fn unavailable() -> Option<String> {
    if latscope::sys::process::effective_uid() != 0 {
        return Some("needs root (an sshd for root@127.0.0.1)".into());
    }
    if !Path::new(SSHD).exists() {
        return Some("openssh-server not installed (apt-get install openssh-server)".into());
    }
    missing("ssh", "openssh-client").or_else(|| missing("ssh-keygen", "openssh-client"))
}

pub(crate) fn run_remote(sshd: &Sshd, args: &[&str]) -> Output {
    latscope()
        .args(args)
        .args(sshd.options())
        .output()
        .expect("latscope runs")
}

pub(crate) fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("result fetched"))
        .expect("valid JSON")
}

/// Every 1 ms period of a timer run's measuring time is accounted for on every thread,
/// measured or missed (the host's stops decide how many are missed, not latscope), and
/// some were measured. Returns the samples of all threads.
fn every_period_accounted(run: &Value, who: &str) -> u64 {
    let scenario = &run["scenarios"][0];
    let periods = scenario["elapsed_ns"].as_u64().expect("elapsed_ns") / 1_000_000;
    let mut all = 0;
    for t in scenario["threads"].as_array().expect("threads") {
        let samples = t["samples"].as_u64().expect("samples");
        let missed = t["missed"].as_u64().expect("missed");
        assert!(
            samples > 0 && (samples + missed).abs_diff(periods) <= 2,
            "{who}, CPU {}: {samples} samples + {missed} missed periods in {periods} periods of 1 ms",
            t["cpu"]
        );
        all += samples;
    }
    all
}

/// When a run's scenario started (RFC 3339, whole seconds), as seconds since the epoch.
fn started_s(run: &Value) -> u64 {
    let text = run["scenarios"][0]["started_at"]
        .as_str()
        .expect("started_at");
    humantime::parse_rfc3339(text)
        .expect("RFC 3339")
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// The board-side scratch directories and processes of the remote runs through `sshd`.
pub(crate) fn remote_leftovers(sshd: &Sshd) -> Vec<String> {
    let mut left: Vec<String> = std::fs::read_dir(sshd.tmp())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let ps = Command::new("pgrep")
        .args(["-af", &sshd.tmp().to_string_lossy()])
        .output()
        .unwrap();
    left.extend(
        text(&ps.stdout)
            .lines()
            .filter(|l| !l.contains("pgrep"))
            .map(|l| format!("process {l}")),
    );
    left
}

fn a_timer_run_over_ssh_brings_its_result_home() {
    let sshd = Sshd::start();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let raw = dir.path().join("raw.csv");
    let cpu = test_cpu().to_string();
    let out = {
        let _lock = latency_lock();
        run_remote(
            &sshd,
            &[
                "timer",
                "-D",
                "1s",
                "-a",
                &cpu,
                "--host",
                "root@127.0.0.1",
                "--export-json",
                json.to_str().unwrap(),
                "--raw",
                raw.to_str().unwrap(),
                "--export-csv",
                dir.path().join("run.csv").to_str().unwrap(),
            ],
        )
    };
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let run = read_json(&json);
    let samples = every_period_accounted(&run, "the board");
    assert_eq!(run["interrupted"], false);
    let raw_rows = std::fs::read_to_string(&raw).unwrap().lines().count() as u64;
    assert!(
        raw_rows >= samples,
        "{raw_rows} raw rows for {samples} samples"
    );
    assert!(dir.path().join("run.csv").exists(), "the local CSV export");
    assert!(
        text(&out.stdout).contains("clock-nanosleep"),
        "the board's table"
    );
    assert!(
        remote_leftovers(&sshd).is_empty(),
        "{:?}",
        remote_leftovers(&sshd)
    );
}

fn the_cached_binary_is_copied_once() {
    let sshd = Sshd::start();
    let _lock = latency_lock();
    // This sshd's cache starts empty, so the first run must copy.
    let cpu = test_cpu().to_string();
    let args = [
        "timer",
        "-l",
        "100",
        "-a",
        &cpu,
        "-q",
        "--host",
        "root@127.0.0.1",
    ];
    let first = run_remote(&sshd, &args);
    let second = run_remote(&sshd, &args);
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    assert_eq!(second.status.code(), Some(0), "{}", text(&second.stderr));
    assert!(
        text(&first.stderr).contains("copying latscope"),
        "{}",
        text(&first.stderr)
    );
    assert!(
        !text(&second.stderr).contains("copying latscope"),
        "{}",
        text(&second.stderr)
    );
    let cached = std::fs::read_dir(sshd.cache().join("latscope"))
        .unwrap()
        .count();
    assert!(cached <= 3, "{cached} cached binaries (at most 3 kept)");
}

fn two_hosts_run_at_once_with_a_result_each() {
    let sshd = Sshd::start();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let cpu = test_cpu().to_string();
    let out = {
        let _lock = latency_lock();
        run_remote(
            &sshd,
            &[
                "timer",
                "-D",
                "2s",
                "-a",
                &cpu,
                "--host",
                "root@127.0.0.1,root@localhost",
                "--export-json",
                json.to_str().unwrap(),
            ],
        )
    };
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let runs: Vec<Value> = ["root_127.0.0.1", "root_localhost"]
        .iter()
        .map(|host| {
            let run = read_json(&dir.path().join(format!("run.{host}.json")));
            every_period_accounted(&run, host);
            run
        })
        .collect();
    let stdout = text(&out.stdout);
    for host in ["[root@127.0.0.1]", "[root@localhost]"] {
        assert!(stdout.contains(host), "lines of {host} in\n{stdout}");
    }
    // At once: the two scenarios started within 2 s of each other (whole seconds); in turn,
    // the second would start after the first's 2 s and its own 1 s warm-up, 3 s or more.
    let (a, b) = (started_s(&runs[0]), started_s(&runs[1]));
    assert!(a.abs_diff(b) <= 2, "the scenarios started at {a} and {b} s");
}

/// A local latscope run with `--host`, killed if the test ends first (a panic would
/// otherwise leave it measuring, and isolating, for its whole duration).
pub(crate) struct LocalRun(Option<Child>);

impl LocalRun {
    pub(crate) fn start(sshd: &Sshd, args: &[&str]) -> LocalRun {
        let child = latscope_command()
            .args(args)
            .args(sshd.options())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("latscope starts");
        LocalRun(Some(child))
    }

    pub(crate) fn pid(&self) -> u32 {
        self.0.as_ref().expect("running").id()
    }

    /// The `ssh -tt` carrying the board's run, once the run there has started (its
    /// scratch directory has a pid file).
    pub(crate) fn wait_for_the_board_run(&mut self, sshd: &Sshd) -> String {
        let started = Instant::now();
        loop {
            let ssh = Command::new("pgrep")
                .args(["-P", &self.pid().to_string(), "-f", "--", " -tt "])
                .output()
                .unwrap();
            let running = std::fs::read_dir(sshd.tmp()).unwrap().flatten().any(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with(&format!("latscope-remote-{}-", self.pid()))
                    && e.path().join("pid").exists()
            });
            if let (Some(pid), true) = (text(&ssh.stdout).lines().next(), running) {
                return pid.to_string();
            }
            if let Ok(Some(status)) = self.0.as_mut().unwrap().try_wait() {
                panic!("latscope ended first: {status}");
            }
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "the board's run never started"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Its exit code and stderr, within `limit`.
    pub(crate) fn finish(&mut self, limit: Duration) -> (Option<i32>, String) {
        let deadline = Instant::now() + limit;
        let child = self.0.as_mut().unwrap();
        while child.try_wait().unwrap().is_none() {
            assert!(
                Instant::now() < deadline,
                "latscope did not end within {limit:?}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        let out = self.0.take().unwrap().wait_with_output().unwrap();
        (out.status.code(), text(&out.stderr))
    }
}

impl Drop for LocalRun {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn a_dropped_connection_restores_the_board_and_keeps_the_result() {
    let sshd = Sshd::start();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let cpu = test_cpu().to_string();
    let _lock = latency_lock();
    let before = system_state();
    let json_arg = json.to_string_lossy().into_owned();
    let mut run = LocalRun::start(
        &sshd,
        &[
            "timer",
            "-D",
            "60s",
            "-a",
            &cpu,
            "--isolate",
            &cpu,
            "-q",
            "--host",
            "root@127.0.0.1",
            "--export-json",
            &json_arg,
        ],
    );
    let ssh = run.wait_for_the_board_run(&sshd);
    // The isolation is in place on the "board" (a latscope-PID-rt cpuset).
    let started = Instant::now();
    let shielded = || {
        std::fs::read_dir("/sys/fs/cgroup/cpuset")
            .map(|rd| {
                rd.flatten()
                    .any(|e| e.file_name().to_string_lossy().starts_with("latscope-"))
            })
            .unwrap_or(false)
    };
    while !shielded() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the board never isolated CPU {cpu}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // The board's run warms up for 1 s, then measures; 3 s leave ~2 s of samples.
    std::thread::sleep(Duration::from_secs(3));
    // The connection drops: the ssh client carrying the run dies.
    Command::new("kill").args(["-9", &ssh]).status().unwrap();
    let (code, stderr) = run.finish(Duration::from_secs(90));
    assert_eq!(code, Some(130), "{stderr}");
    assert!(stderr.contains("ended before its run did"), "{stderr}");
    let result = read_json(&json);
    assert_eq!(result["interrupted"], true, "{}", result["interrupted"]);
    assert_eq!(result["interrupted_by"], "SIGHUP");
    every_period_accounted(&result, "the interrupted board run");
    let after = system_state();
    let changed = diff(&before, &after);
    assert!(
        changed.is_empty(),
        "the board is not as before: {changed:#?}"
    );
    assert!(
        remote_leftovers(&sshd).is_empty(),
        "{:?}",
        remote_leftovers(&sshd)
    );
}

/// Ctrl-C here reaches the board's run as SIGINT (over a second connection): it ends
/// the way a local Ctrl-C ends a run, its result is fetched and marked so, exit 130.
fn a_local_ctrl_c_interrupts_the_board_run() {
    let sshd = Sshd::start();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let json_arg = json.to_string_lossy().into_owned();
    let _lock = latency_lock();
    let mut run = LocalRun::start(
        &sshd,
        &[
            "timer",
            "-D",
            "60s",
            "-q",
            "--host",
            "root@127.0.0.1",
            "--export-json",
            &json_arg,
        ],
    );
    run.wait_for_the_board_run(&sshd);
    // The board's run warms up for 1 s, then measures; 3 s leave ~2 s of samples.
    std::thread::sleep(Duration::from_secs(3));
    Command::new("kill")
        .args(["-INT", &run.pid().to_string()])
        .status()
        .unwrap();
    let (code, stderr) = run.finish(Duration::from_secs(30));
    assert_eq!(code, Some(130), "{stderr}");
    assert!(stderr.contains("was sent SIGINT"), "{stderr}");
    let result = read_json(&json);
    assert_eq!(result["interrupted_by"], "SIGINT", "{stderr}");
    every_period_accounted(&result, "the interrupted board run");
    assert!(
        remote_leftovers(&sshd).is_empty(),
        "{:?}",
        remote_leftovers(&sshd)
    );
}

fn an_unreachable_host_exits_6_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = latscope()
        .args([
            "timer",
            "-D",
            "1s",
            "--host",
            "root@127.0.0.1",
            "--ssh-option=-p1",
            "--ssh-option=-oConnectTimeout=5",
            "--export-json",
        ])
        .arg(dir.path().join("run.json"))
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(6), "{stderr}");
    assert!(
        stderr.contains("cannot run on root@127.0.0.1 over ssh") && stderr.contains("--ssh-option"),
        "{stderr}"
    );
    assert!(!dir.path().join("run.json").exists());
}

fn resume_with_host_is_refused() {
    let out = latscope()
        .args([
            "suite",
            "--preset",
            "quick",
            "--resume",
            "--export-json",
            "/tmp/x.json",
            "--host",
            "root@board",
        ])
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--resume") && stderr.contains("on the board"),
        "{stderr}"
    );
}

pub fn cases() -> Vec<Case> {
    let mut cases = cases_unless(
        unavailable(),
        &[
            (
                "a_timer_run_over_ssh_brings_its_result_home",
                a_timer_run_over_ssh_brings_its_result_home,
            ),
            (
                "the_cached_binary_is_copied_once",
                the_cached_binary_is_copied_once,
            ),
            (
                "two_hosts_run_at_once_with_a_result_each",
                two_hosts_run_at_once_with_a_result_each,
            ),
            (
                "a_local_ctrl_c_interrupts_the_board_run",
                a_local_ctrl_c_interrupts_the_board_run,
            ),
        ],
    );
    let isolation = unavailable().or_else(|| {
        if latscope::sys::affinity::online_cpus().len() < 2 {
            return Some("needs two online CPUs".into());
        }
        latscope::isolate::check_available()
            .err()
            .map(|e| e.to_string())
    });
    cases.push(
        case(
            "a_dropped_connection_restores_the_board_and_keeps_the_result",
            a_dropped_connection_restores_the_board_and_keeps_the_result,
        )
        .unless(isolation),
    );
    cases.push(
        case(
            "an_unreachable_host_exits_6_naming_it",
            an_unreachable_host_exits_6_naming_it,
        )
        .unless(missing("ssh", "openssh-client")),
    );
    cases.push(case(
        "resume_with_host_is_refused",
        resume_with_host_is_refused,
    ));
    cases
}
