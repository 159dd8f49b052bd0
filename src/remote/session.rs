//! One run on one board: a scratch directory there, the command under a terminal (so a
//! dropped connection is a SIGHUP on the board, whose exit path restores the system and
//! saves the result marked interrupted; a local Ctrl-C is sent there as SIGINT, a second
//! one cuts the connection so the board saves at once), its output streamed back with
//! control sequences escaped, then the files fetched over a new connection (retried;
//! each within its limit, `--raw` streamed straight into its local file) and the
//! directory removed, on every way out (a failed command, a dropped connection, Ctrl-C
//! here) but one: a board that cannot be reached again keeps it, and the message says
//! where. Scratch directories of runs that ended a day ago and were never fetched (their
//! latscope was killed) are removed by the next run.

use super::args::shell_quote;
use super::fetch::{fetch, fetch_one};
use super::ssh::{said, Ssh};
use std::io::Read;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// What to run on one board.
pub struct Job {
    pub ssh: Ssh,
    /// latscope in the board's cache (checked again where it is run).
    pub binary: super::copy::Cached,
    /// The board's arguments (local-only options removed).
    pub args: Vec<String>,
    /// A local `--plan` file to copy there.
    pub plan: Option<PathBuf>,
    /// Where `--raw` goes here, when it was asked (the board's file is streamed there).
    pub raw: Option<PathBuf>,
    /// `[host] ` before every line when several boards run.
    pub prefix: Option<String>,
}

/// What came back.
#[derive(Debug, Default)]
pub struct Outcome {
    /// The board's exit code, when it was learned.
    pub exit: Option<i32>,
    /// The JSON result as the board wrote it.
    pub json: Option<Vec<u8>>,
    /// The `--raw` CSV was written to its local file.
    pub raw_written: bool,
    /// What the board printed on stdout (its table), kept in a file there.
    pub stdout: Vec<u8>,
    /// The connection ended before the board's run did (dropped, or cut by a local signal).
    pub dropped: bool,
    /// A local signal stopped the board's run (its SIGINT sent over a second connection).
    pub stopped_here: bool,
    /// A second local signal cut the connection (the board saved as on SIGHUP).
    pub aborted_here: bool,
    /// Why nothing (or not everything) was fetched.
    pub fetch_error: Option<String>,
    /// A local signal came before the board's run started (during the copy): nothing ran.
    pub not_started: bool,
    /// The board could not be reached to fetch its files, or its run had not ended: its
    /// scratch directory stays.
    pub kept_on_board: bool,
    /// The board refused to run its cached binary (`KIND PATH DETAIL`, copy::refusal).
    pub refused: Option<String>,
}

/// Creates the run's scratch directory on the board (`mktemp -d` under the board's
/// `$TMPDIR` or /tmp: a random name, mode 0700), with the `--plan` file copied into it;
/// its path. A failed copy removes the directory there and then. Removes the scratch
/// directories of this user's runs that ended over a day ago and were never fetched.
fn make_scratch(job: &Job) -> Result<String, String> {
    let plan = if job.plan.is_some() {
        "cat > \"$d/plan.toml\" || { rm -rf \"$d\"; exit 1; }"
    } else {
        ""
    };
    // An old directory is removed when its `exit` (written when its run ended) is the
    // ssh user's and a day old; `find` only judges that file's age and owner.
    let setup = format!(
        "umask 077; t=\"${{TMPDIR:-/tmp}}\"; for x in \"$t\"/latscope-remote-*; do \
         [ -d \"$x\" ] && [ ! -L \"$x\" ] && \
         [ -n \"$(find \"$x/exit\" -user \"$(id -u)\" -mmin +1440 2>/dev/null)\" ] && rm -rf \"$x\"; \
         done; d=$(mktemp -d \"$t/latscope-remote-{}-XXXXXXXXXX\") || exit 1; echo \"dir $d\"; {plan}",
        std::process::id()
    );
    let out = job
        .ssh
        .capture(&setup, job.plan.as_deref())
        .map_err(|e| format!("{}: {e}", job.ssh.program))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let dir = text
        .lines()
        .find_map(|l| l.strip_prefix("dir "))
        .unwrap_or("");
    if !out.status.success() || !dir.starts_with('/') || dir.chars().any(char::is_control) {
        return Err(format!(
            "creating a scratch directory (mktemp -d) on the board: {}",
            said(&out)
        ));
    }
    Ok(dir.to_string())
}

/// Runs the job; `stop` (the local Ctrl-C flag) sends the board's run SIGINT, and a
/// second local signal cuts its connection. The scratch directory is removed on every way
/// out, unless the board could not be reached again to fetch what it holds (the
/// outcome's `fetch_error` then says where it stays).
pub fn run(job: &Job, stop: &AtomicBool) -> Result<Outcome, String> {
    if stop.load(Ordering::SeqCst) {
        return Ok(Outcome {
            not_started: true,
            ..Outcome::default()
        });
    }
    let dir = make_scratch(job)?;
    let result = run_in(job, &dir, stop);
    let kept = matches!(&result, Ok(o) if o.kept_on_board);
    if !kept {
        if let Err(e) = fetch_one(&job.ssh, &format!("rm -rf {}", shell_quote(&dir))) {
            eprintln!(
                "latscope: {}could not remove {dir} on {}: {e}",
                job.prefix.as_deref().unwrap_or(""),
                job.ssh.host
            );
        }
    }
    result
}

/// The board's command line: the cached binary checked and run in one shell
/// (copy::run_prefix) with the run's own outputs in the scratch directory `dir`.
fn remote_command(job: &Job, dir: &str) -> String {
    let q = shell_quote(dir);
    let mut words = vec!["\"$latscope\"".to_string()];
    words.extend(job.args.iter().map(|a| shell_quote(a)));
    words.extend(["--export-json".to_string(), format!("{q}/run.json")]);
    if job.raw.is_some() {
        words.extend(["--raw".to_string(), format!("{q}/raw.csv")]);
    }
    if job.plan.is_some() {
        words.extend(["--plan".to_string(), format!("{q}/plan.toml")]);
    }
    let prefix = super::copy::run_prefix(&job.binary, &q);
    format!("{prefix}{}", board_script(&words.join(" "), &q))
}

/// Starts a thread relaying `stream` to stderr (relay.rs).
fn relay_thread(
    stream: impl Read + Send + 'static,
    prefix: Option<String>,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name("latscope-remote-stream".into())
        .stack_size(crate::sys::memlock::HELPER_STACK_BYTES)
        .spawn(move || super::relay::relay(stream, prefix.as_deref()))
}

/// The run in the scratch directory `dir`: the command under a terminal, its output
/// relayed, then its files fetched.
fn run_in(job: &Job, dir: &str, stop: &AtomicBool) -> Result<Outcome, String> {
    let mut child = job
        .ssh
        .command(true, &remote_command(job, dir))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{}: {e}", job.ssh.program))?;
    let stdout = child.stdout.take().expect("stdout is piped");
    let stderr = child.stderr.take().expect("stderr is piped");
    let relays = [
        relay_thread(stdout, job.prefix.clone()),
        relay_thread(stderr, job.prefix.clone()),
    ];
    let (status, told) = watch(job, &mut child, &shell_quote(dir), stop);
    for relay in relays {
        match relay {
            Ok(relay) => {
                let _ = relay.join();
            }
            Err(e) => return Err(format!("starting the output thread: {e}")),
        }
    }
    let brought = fetch(&job.ssh, job.raw.as_deref(), dir, told.aborted);
    Ok(Outcome {
        exit: brought.exit,
        json: brought.json,
        raw_written: brought.raw_written,
        stdout: brought.stdout,
        dropped: told.cut || status.is_none_or(|s| s.code() == Some(255) || s.code().is_none()),
        stopped_here: told.stopped,
        aborted_here: told.aborted,
        fetch_error: brought.fetch_error,
        not_started: false,
        kept_on_board: brought.kept_on_board,
        refused: brought.refused,
    })
}

/// What `watch` did to the board's run.
#[derive(Debug, Default, Clone, Copy)]
struct Told {
    /// SIGINT was sent there (the first local signal).
    stopped: bool,
    /// The connection was cut (the SIGINT could not be sent, or a second local signal).
    cut: bool,
    /// A second local signal cut it.
    aborted: bool,
}

/// Waits for the board's run to end, sending it SIGINT when `stop` is set and cutting its
/// connection at a second signal (its shell then passes SIGHUP on: the board's latscope
/// saves at once and restores, as on a second Ctrl-C there); its status (None when
/// unknown) and what was done.
fn watch(
    job: &Job,
    child: &mut std::process::Child,
    q: &str,
    stop: &AtomicBool,
) -> (Option<std::process::ExitStatus>, Told) {
    let mut told = Told::default();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) => {}
            Err(_) => break None,
        }
        if stop.load(Ordering::SeqCst) && !told.stopped {
            told.stopped = true;
            // The board's run is told as Ctrl-C would tell it; if that connection fails,
            // cutting ours hangs up its shell, which passes SIGHUP on.
            let sent = job
                .ssh
                .capture(&format!("kill -INT $(cat {q}/pid)"), None)
                .is_ok_and(|out| out.status.success());
            if !sent {
                let _ = child.kill();
                told.cut = true;
            }
        }
        if crate::interrupt::aborting() && !told.cut {
            let _ = child.kill();
            told.cut = true;
            told.aborted = true;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    (status, told)
}

/// The shell command the board runs after `run_prefix`: latscope in the background with
/// its pid kept, the shell passing SIGHUP, SIGINT and SIGTERM on to it, then its exit
/// code written down. A dropped connection hangs up the terminal, which signals only the
/// session leader (the shell): a foreground latscope would never hear of it, and a shell
/// defers its traps until a foreground command ends. POSIX sh (dash, busybox ash, bash):
/// `wait` is cut short by a trapped signal, so it is repeated while latscope lives; the
/// last `wait` gives the status of a child the shell already reaped (127: it forgot it).
fn board_script(command: &str, dir: &str) -> String {
    format!(
        "{command} > {dir}/stdout & p=$!; echo $p > {dir}/pid; \
         for s in HUP INT TERM; do trap \"kill -$s $p 2>/dev/null\" $s; done; \
         wait $p; rc=$?; while kill -0 $p 2>/dev/null; do wait $p; rc=$?; done; \
         wait $p 2>/dev/null; last=$?; [ $last -ne 127 ] && rc=$last; \
         echo $rc > {dir}/exit"
    )
}
