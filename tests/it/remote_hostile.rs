//! Issue 34's reproducers on `--host`, against a real sshd on 127.0.0.1 (tests/it/remote.rs)
//! with `nobody` as the second, unprivileged user: the board's cache swapped between the
//! check and the run by a user who can write its parent (item 1), a board that prints
//! 500 MB during the probe or sends a 300 MB result (item 5), a SIGKILL and a double
//! Ctrl-C here (item 8), a board's escape sequences (item 9).

use crate::common::*;
use crate::exit_paths::{diff, system_state};
use crate::remote::{remote_leftovers, text, unavailable, LocalRun, Sshd};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const NOBODY: u32 = 65534;

/// The SHA-256 of a file, by the system's sha256sum.
fn sha256(path: &Path) -> String {
    let out = Command::new("sha256sum").arg(path).output().unwrap();
    text(&out.stdout).split_whitespace().next().unwrap().into()
}

/// The cache entry's name this build runs as.
fn entry_name() -> String {
    let version = latscope::remote::args::file_safe(latscope::build_info::VERSION);
    format!("latscope-{version}-{}", sha256(&latscope_path()))
}

/// An executable file at `path`, mode 0755.
fn script(path: &Path, body: &str) {
    std::fs::write(path, body).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A short run on the board, with `env` (LATSCOPE_SSH) and the latency lock held.
fn a_short_run(sshd: &Sshd, env: &[(&str, &Path)]) -> std::process::Output {
    let cpu = test_cpu().to_string();
    let _lock = latency_lock();
    let mut c = latscope_command();
    c.args([
        "timer",
        "-l",
        "100",
        "-q",
        "-a",
        &cpu,
        "--host",
        "root@127.0.0.1",
    ]);
    c.args(sshd.options());
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

/// Item 1: `nobody` can write the cache's parent (`$XDG_CACHE_HOME`). Between latscope's
/// check of its cached binary and the run, `nobody` swaps the cache directory for one of
/// theirs holding a program of the same name (an `ssh` wrapper does it exactly there: the
/// audit's gap, which ran their program as root 2 of 2 times). The run refuses it, naming
/// the owner; the program never runs. Then `nobody` swaps the two back and forth as fast
/// as it can during two runs: each runs latscope or refuses, never the program.
fn item34_01_a_cache_swapped_between_the_check_and_the_run_is_never_run() {
    let sshd = Sshd::start();
    let cache = sshd.cache();
    std::fs::create_dir(&cache).unwrap();
    let first = a_short_run(&sshd, &[]);
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    std::os::unix::fs::chown(&cache, Some(NOBODY), Some(NOBODY)).unwrap();
    let marker = sshd.dir().join("impostor-ran");
    let evil = cache.join("evil");
    std::fs::create_dir(&evil).unwrap();
    script(
        &evil.join(entry_name()),
        &format!("#!/bin/sh\ntouch {}\nexit 0\n", marker.display()),
    );
    for p in [&evil, &evil.join(entry_name())] {
        std::os::unix::fs::chown(p, Some(NOBODY), Some(NOBODY)).unwrap();
    }
    std::fs::set_permissions(sshd.dir(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let swap = format!(
        "setpriv --reuid={NOBODY} --regid={NOBODY} --clear-groups sh -c 'cd {} && mv latscope stash && mv evil latscope'",
        cache.display()
    );
    let wrapper = sshd.dir().join("ssh-swapping");
    script(
        &wrapper,
        &format!("#!/bin/sh\ncase \" $* \" in *\" -tt \"*) {swap} ;; esac\nexec ssh \"$@\"\n"),
    );
    let out = a_short_run(&sshd, &[("LATSCOPE_SSH", &wrapper)]);
    let stderr = text(&out.stderr);
    assert!(!marker.exists(), "the program swapped in ran: {stderr}");
    assert_eq!(out.status.code(), Some(6), "{stderr}");
    assert!(
        stderr.contains(&format!("belongs to uid {NOBODY}")) && stderr.contains("rm -r"),
        "{stderr}"
    );
    // Back as it was, then swapped to and fro while two runs go.
    let back = format!(
        "cd {} && mv latscope evil && mv stash latscope",
        cache.display()
    );
    assert!(Command::new("sh")
        .args(["-c", &back])
        .status()
        .unwrap()
        .success());
    let flip = format!(
        "cd {} && while :; do mv latscope stash; mv evil latscope; mv latscope evil; mv stash latscope; done",
        cache.display()
    );
    let mut attacker = Command::new("setpriv")
        .args([
            &format!("--reuid={NOBODY}"),
            &format!("--regid={NOBODY}"),
            "--clear-groups",
        ])
        .args(["sh", "-c", &flip])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let outcomes: Vec<_> = (0..2).map(|_| a_short_run(&sshd, &[])).collect();
    let _ = attacker.kill();
    let _ = attacker.wait();
    for out in outcomes {
        let stderr = text(&out.stderr);
        assert!(!marker.exists(), "the program swapped in ran: {stderr}");
        assert!(
            matches!(out.status.code(), Some(0) | Some(6)),
            "{:?}: {stderr}",
            out.status
        );
    }
}

/// A board whose login prints on every connection: an sshd whose `ForceCommand` runs
/// `before` (shell) and then the command asked for, unless `fetch` (shell) replaces the
/// fetch of the results. The directory holds the script while the sshd lives.
fn noisy_board(before: &str, fetch: &str) -> (Sshd, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("login.sh");
    script(
        &path,
        &format!(
            "#!/bin/sh\n{before}\ncase \"$SSH_ORIGINAL_COMMAND\" in *'wc -c'*) {fetch} ;; esac\n\
             exec /bin/sh -c \"$SSH_ORIGINAL_COMMAND\"\n"
        ),
    );
    let sshd = Sshd::start_with(&format!("ForceCommand {}", path.display()));
    (sshd, dir)
}

/// Item 5: a board that prints 500 MB during the probe (983 MB resident before) is cut off
/// after 64 KiB: exit 6 within seconds, a short error, little memory.
fn item34_05_a_board_printing_500_mb_during_the_probe_is_cut_off() {
    let (sshd, _login) = noisy_board("head -c 500000000 /dev/zero | tr '\\0' x", ":");
    let start = Instant::now();
    let mut c = latscope_command();
    c.args(["timer", "-l", "100", "-q", "--host", "root@127.0.0.1"]);
    c.args(sshd.options());
    let (out, peak_kib) = output_and_peak_rss_kib(&mut c);
    let stderr = text(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(6),
        "{}",
        &stderr[..stderr.len().min(2000)]
    );
    assert!(stderr.len() < 2000, "{} bytes of error", stderr.len());
    assert!(
        stderr.contains("bytes in all") || stderr.contains("64 KiB"),
        "{stderr}"
    );
    assert!(peak_kib < 100 << 10, "peak RSS {peak_kib} KiB");
    assert!(
        start.elapsed() < Duration::from_secs(30),
        "{:?}",
        start.elapsed()
    );
}

/// Item 5: a board that answers the fetch with a 300 MB run.json (accepted before, 593 MB
/// resident) is refused from the frame's header: its size and the limit named, where the
/// result stays said, little memory.
fn item34_05_a_result_past_the_input_limit_is_refused_unread() {
    let (sshd, _login) = noisy_board(
        ":",
        "printf 'run.json 314572800\\n'; head -c 314572800 /dev/zero; exit 0",
    );
    let mut c = latscope_command();
    let cpu = test_cpu().to_string();
    c.args([
        "timer",
        "-l",
        "100",
        "-q",
        "-a",
        &cpu,
        "--host",
        "root@127.0.0.1",
    ]);
    c.args(sshd.options());
    let (out, peak_kib) = {
        let _lock = latency_lock();
        output_and_peak_rss_kib(&mut c)
    };
    let stderr = text(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("run.json is 314572800 bytes, more than latscope reads")
            && stderr.contains("stays on root@127.0.0.1 in "),
        "{stderr}"
    );
    assert!(peak_kib < 100 << 10, "peak RSS {peak_kib} KiB");
}

/// The board's latscope processes of runs through `sshd` (their command lines name its
/// scratch directories).
fn board_runs(sshd: &Sshd) -> Vec<String> {
    remote_leftovers(sshd)
        .into_iter()
        .filter(|l| l.starts_with("process ") && !l.contains("sshd"))
        .collect()
}

/// Item 8: latscope here killed with SIGKILL during a run with `--isolate`: its ssh dies
/// with it, so the board's run ends as on SIGHUP within seconds (it went on to its end
/// before, holding the isolation), the board is as before, and the result it saved is in
/// its scratch directory, marked interrupted by SIGHUP.
fn item34_08_a_sigkilled_local_run_ends_the_board_run() {
    let sshd = Sshd::start();
    let cpu = test_cpu().to_string();
    let _lock = latency_lock();
    let before = system_state();
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
        ],
    );
    run.wait_for_the_board_run(&sshd);
    std::thread::sleep(Duration::from_secs(3));
    Command::new("kill")
        .args(["-9", &run.pid().to_string()])
        .status()
        .unwrap();
    let started = Instant::now();
    while !board_runs(&sshd).is_empty() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the board's run goes on: {:?}",
            board_runs(&sshd)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let changed = diff(&before, &system_state());
    assert!(
        changed.is_empty(),
        "the board is not as before: {changed:#?}"
    );
    let saved: Vec<PathBuf> = std::fs::read_dir(sshd.tmp())
        .unwrap()
        .flatten()
        .map(|e| e.path().join("run.json"))
        .filter(|p| p.exists())
        .collect();
    assert_eq!(saved.len(), 1, "{saved:?}");
    let result: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&saved[0]).unwrap()).unwrap();
    assert_eq!(
        result["interrupted_by"], "SIGHUP",
        "{}",
        result["interrupted_by"]
    );
}

/// Item 8: Ctrl-C twice here (the second right after the first): the board's run is sent
/// SIGINT, then its connection is cut, so it saves at once; its result is fetched and
/// written here (the local side said "saving" and saved nothing before) and the board
/// keeps nothing.
fn item34_08_a_double_ctrl_c_fetches_the_result_and_says_so() {
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
    std::thread::sleep(Duration::from_secs(3));
    for _ in 0..2 {
        Command::new("kill")
            .args(["-INT", &run.pid().to_string()])
            .status()
            .unwrap();
        std::thread::sleep(Duration::from_millis(20));
    }
    let (code, stderr) = run.finish(Duration::from_secs(40));
    assert_eq!(code, Some(130), "{stderr}");
    assert!(
        stderr.contains("cut off at the second signal")
            && stderr.contains("its result was fetched"),
        "{stderr}"
    );
    let result: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("the result, here")).unwrap();
    assert_eq!(result["interrupted"], true);
    assert!(
        remote_leftovers(&sshd).is_empty(),
        "{:?}",
        remote_leftovers(&sshd)
    );
}

/// Item 8: the scratch directory of a run whose latscope was killed (never fetched) is
/// removed by the next run once its run ended a day ago; one still running, or ended
/// lately, stays.
fn item34_08_scratch_directories_of_killed_runs_go_a_day_later() {
    let sshd = Sshd::start();
    let tmp = sshd.tmp();
    for (name, exit) in [
        ("old", Some("2 days ago")),
        ("running", None),
        ("recent", Some("1 hour ago")),
    ] {
        let d = tmp.join(format!("latscope-remote-1-{name}"));
        std::fs::create_dir(&d).unwrap();
        std::fs::write(d.join("run.json"), b"{}").unwrap();
        if let Some(when) = exit {
            std::fs::write(d.join("exit"), b"130\n").unwrap();
            let touched = Command::new("touch")
                .args(["-d", when])
                .arg(d.join("exit"))
                .status();
            assert!(touched.unwrap().success());
        }
    }
    let out = a_short_run(&sshd, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let mut left = remote_leftovers(&sshd);
    left.sort();
    assert_eq!(
        left,
        ["latscope-remote-1-recent", "latscope-remote-1-running"]
    );
}

/// Item 9: a board whose login prints a window title, an OSC 52 clipboard write and clear
/// screen on stderr: a single-board run shows them escaped, never passes them on.
fn item34_09_a_boards_escape_sequences_are_shown_escaped() {
    let (sshd, _login) = noisy_board(
        "printf '\\033]0;owned\\007\\033]52;c;ZWNobyBoaQ==\\007\\033[2Jboard says hi\\n' >&2",
        ":",
    );
    let out = a_short_run(&sshd, &[]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains(r"\u{1b}]0;owned"), "{stderr:?}");
    for sequence in ["\u{1b}]", "\u{1b}[2J", "\u{7}"] {
        assert!(
            !stderr.contains(sequence),
            "{sequence:?} passed on: {stderr:?}"
        );
    }
}

pub fn cases() -> Vec<Case> {
    let needs = unavailable()
        .or_else(|| missing("sha256sum", "coreutils"))
        .or_else(|| missing("setpriv", "util-linux"));
    let mut cases = cases_unless(
        needs.clone(),
        &[
            (
                "item34_01_a_cache_swapped_between_the_check_and_the_run_is_never_run",
                item34_01_a_cache_swapped_between_the_check_and_the_run_is_never_run,
            ),
            (
                "item34_05_a_board_printing_500_mb_during_the_probe_is_cut_off",
                item34_05_a_board_printing_500_mb_during_the_probe_is_cut_off,
            ),
            (
                "item34_05_a_result_past_the_input_limit_is_refused_unread",
                item34_05_a_result_past_the_input_limit_is_refused_unread,
            ),
            (
                "item34_08_a_double_ctrl_c_fetches_the_result_and_says_so",
                item34_08_a_double_ctrl_c_fetches_the_result_and_says_so,
            ),
            (
                "item34_08_scratch_directories_of_killed_runs_go_a_day_later",
                item34_08_scratch_directories_of_killed_runs_go_a_day_later,
            ),
            (
                "item34_09_a_boards_escape_sequences_are_shown_escaped",
                item34_09_a_boards_escape_sequences_are_shown_escaped,
            ),
        ],
    );
    let isolation = needs.or_else(|| {
        if latscope::sys::affinity::online_cpus().len() < 2 {
            return Some("needs two online CPUs".into());
        }
        latscope::isolate::check_available()
            .err()
            .map(|e| e.to_string())
    });
    cases.push(
        case(
            "item34_08_a_sigkilled_local_run_ends_the_board_run",
            item34_08_a_sigkilled_local_run_ends_the_board_run,
        )
        .unless(isolation),
    );
    cases
}
