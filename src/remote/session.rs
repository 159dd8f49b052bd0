//! One run on one board: a scratch directory there, the command under a terminal (so a
//! dropped connection is a SIGHUP on the board, whose exit path restores the system and
//! saves the result marked interrupted; a local Ctrl-C is sent there as SIGINT), its
//! stderr streamed back as it comes, then the files fetched over a new connection
//! (retried) and the directory removed, on every way out (a failed command, a dropped
//! connection, Ctrl-C here) but one: a board that cannot be reached again keeps it.

use super::args::shell_quote;
use super::ssh::{said, ssh_failed, Ssh};
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Connections tried to fetch the result after the run.
const FETCH_TRIES: u32 = 5;
/// How long the board's run may take to end after its connection dropped.
const END_WAIT_TENTHS: u32 = 1200;
/// Multi-host: a progress line of one board printed at most this often.
const PROGRESS_EVERY: Duration = Duration::from_secs(10);

/// What to run on one board.
pub struct Job {
    pub ssh: Ssh,
    /// latscope on the board.
    pub binary: String,
    /// The board's arguments (local-only options removed).
    pub args: Vec<String>,
    /// A local `--plan` file to copy there.
    pub plan: Option<PathBuf>,
    /// Whether `--raw` was asked.
    pub raw: bool,
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
    /// The `--raw` CSV.
    pub raw: Option<Vec<u8>>,
    /// What the board printed on stdout (its table), kept in a file there.
    pub stdout: Vec<u8>,
    /// The connection ended before the board's run did (dropped, or cut by a local signal).
    pub dropped: bool,
    /// A local signal stopped the board's run (its SIGINT sent over a second connection).
    pub stopped_here: bool,
    /// Why nothing (or not everything) was fetched.
    pub fetch_error: Option<String>,
    /// A local signal came before the board's run started (during the copy): nothing ran.
    pub not_started: bool,
    /// The board could not be reached to fetch its files, or its run had not ended: its
    /// scratch directory stays.
    pub kept_on_board: bool,
}

/// Creates the run's scratch directory on the board (`mktemp -d` under the board's
/// `$TMPDIR` or /tmp: a random name, mode 0700), with the `--plan` file copied into it;
/// its path. A failed copy removes the directory there and then.
fn make_scratch(job: &Job) -> Result<String, String> {
    let plan = if job.plan.is_some() {
        "cat > \"$d/plan.toml\" || { rm -rf \"$d\"; exit 1; }"
    } else {
        ""
    };
    let setup = format!(
        "umask 077; d=$(mktemp -d \"${{TMPDIR:-/tmp}}/latscope-remote-{}-XXXXXXXXXX\") || exit 1; echo \"dir $d\"; {plan}",
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
    if !out.status.success() || !dir.starts_with('/') {
        return Err(format!(
            "creating a scratch directory (mktemp -d) on the board: {}",
            said(&out)
        ));
    }
    Ok(dir.to_string())
}

/// Runs the job; `stop` (the local Ctrl-C flag) sends the board's run SIGINT. The scratch
/// directory is removed on every way out, unless the board could not be reached again to
/// fetch what it holds (the outcome's `fetch_error` then says where it stays).
pub fn run(job: &Job, stop: &AtomicBool) -> Result<Outcome, String> {
    if stop.load(Ordering::SeqCst) {
        return Ok(Outcome {
            not_started: true,
            ..Outcome::default()
        });
    }
    let dir = make_scratch(job)?;
    let result = run_in(job, &dir, stop);
    let unreachable = matches!(&result, Ok(o) if o.kept_on_board);
    if !unreachable {
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

/// The run in the scratch directory `dir`: the command under a terminal, its output
/// relayed, then its files fetched.
fn run_in(job: &Job, dir: &str, stop: &AtomicBool) -> Result<Outcome, String> {
    let q = shell_quote(dir);
    let mut words = vec![shell_quote(&job.binary)];
    words.extend(job.args.iter().map(|a| shell_quote(a)));
    words.extend(["--export-json".to_string(), format!("{q}/run.json")]);
    if job.raw {
        words.extend(["--raw".to_string(), format!("{q}/raw.csv")]);
    }
    if job.plan.is_some() {
        words.extend(["--plan".to_string(), format!("{q}/plan.toml")]);
    }
    let remote = board_script(&words.join(" "), &q);
    let mut child = job
        .ssh
        .command(true, &remote)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("{}: {e}", job.ssh.program))?;
    // A second local signal ends this process at once: the connection is then cut, so the
    // board's shell gets its SIGHUP and its run restores the board.
    let ssh_pid = child.id() as i32;
    let restorer = crate::interrupt::register_restorer(move || {
        let _ = crate::sys::process::signal_process(ssh_pid, signal_hook::consts::SIGKILL);
    });
    let stream = child.stdout.take().expect("stdout is piped");
    let prefix = job.prefix.clone();
    let streamer = std::thread::Builder::new()
        .name("latscope-remote-stream".into())
        .stack_size(crate::sys::memlock::HELPER_STACK_BYTES)
        .spawn(move || relay(stream, prefix.as_deref()));
    let (status, stopped_here, cut) = watch(job, &mut child, &q, stop);
    crate::interrupt::unregister_restorer(restorer);
    match streamer {
        Ok(streamer) => {
            let _ = streamer.join();
        }
        Err(e) => return Err(format!("starting the output thread: {e}")),
    }
    let mut outcome = Outcome {
        dropped: cut || status.is_none_or(|s| s.code() == Some(255) || s.code().is_none()),
        stopped_here,
        ..Outcome::default()
    };
    fetch(job, &q, &mut outcome);
    Ok(outcome)
}

/// Waits for the board's run to end, sending it SIGINT when `stop` is set; its status (None
/// when unknown), whether a stop was sent, and whether the connection was cut for it.
fn watch(
    job: &Job,
    child: &mut std::process::Child,
    q: &str,
    stop: &AtomicBool,
) -> (Option<std::process::ExitStatus>, bool, bool) {
    let mut stopped_here = false;
    let mut cut = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) => {}
            Err(_) => break None,
        }
        if stop.load(Ordering::SeqCst) && !stopped_here {
            stopped_here = true;
            // The board's run is told as Ctrl-C would tell it; if that connection fails,
            // cutting ours hangs up its shell, which passes SIGHUP on.
            let told = job
                .ssh
                .capture(&format!("kill -INT $(cat {q}/pid)"), None)
                .is_ok_and(|out| out.status.success());
            if !told {
                let _ = child.kill();
                cut = true;
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    (status, stopped_here, cut)
}

/// The shell command the board runs: latscope in the background with its pid kept, the
/// shell passing SIGHUP, SIGINT and SIGTERM on to it, then its exit code written down.
/// A dropped connection hangs up the terminal, which signals only the session leader (the
/// shell): a foreground latscope would never hear of it, and a shell defers its traps
/// until a foreground command ends. POSIX sh (dash, busybox ash, bash): `wait` is cut
/// short by a trapped signal, so it is repeated while latscope lives; the last `wait`
/// gives the status of a child the shell already reaped (127: it forgot it).
fn board_script(command: &str, dir: &str) -> String {
    format!(
        "{command} > {dir}/stdout & p=$!; echo $p > {dir}/pid; \
         for s in HUP INT TERM; do trap \"kill -$s $p 2>/dev/null\" $s; done; \
         wait $p; rc=$?; while kill -0 $p 2>/dev/null; do wait $p; rc=$?; done; \
         wait $p 2>/dev/null; last=$?; [ $last -ne 127 ] && rc=$last; \
         echo $rc > {dir}/exit"
    )
}

/// Copies the board's terminal output to stderr: as it comes for one board (`\r\n` made
/// `\n`, the progress line's `\r` kept), else line by line with the host before each line
/// and a progress line at most every PROGRESS_EVERY.
fn relay(mut stream: impl Read, prefix: Option<&str>) {
    let mut buf = [0u8; 4096];
    let mut line: Vec<u8> = Vec::new();
    let mut last_progress: Option<Instant> = None;
    let mut pending_cr = false;
    let stderr = std::io::stderr();
    while let Ok(n) = stream.read(&mut buf) {
        if n == 0 {
            break;
        }
        let mut out = stderr.lock();
        for &b in &buf[..n] {
            let Some(prefix) = prefix else {
                if pending_cr && b != b'\n' {
                    let _ = out.write_all(b"\r");
                }
                pending_cr = b == b'\r';
                if !pending_cr {
                    let _ = out.write_all(&[b]);
                }
                continue;
            };
            // `\r\n` (the terminal's newline) ends a line; a `\r` alone ends a progress
            // line's redraw.
            if pending_cr && b != b'\n' {
                let text = without_escapes(&String::from_utf8_lossy(&line));
                if !text.is_empty() && last_progress.is_none_or(|t| t.elapsed() >= PROGRESS_EVERY) {
                    let _ = writeln!(out, "{prefix}{text}");
                    last_progress = Some(Instant::now());
                }
                line.clear();
            }
            pending_cr = b == b'\r';
            match b {
                b'\n' => {
                    if !line.is_empty() {
                        let _ =
                            writeln!(out, "{prefix}{}", String::from_utf8_lossy(&line).trim_end());
                    }
                    line.clear();
                }
                b'\r' => {}
                _ => line.push(b),
            }
        }
        let _ = out.flush();
    }
    if pending_cr && prefix.is_none() {
        let _ = std::io::stderr().write_all(b"\r");
    }
}

/// A progress line without its terminal control sequences (`ESC [ ... letter`: the
/// cursor and erase codes the progress bar draws with), trimmed. By hand: these dozen lines
/// are all of ANSI that a progress line uses.
fn without_escapes(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.next() == Some('[') {
                for d in chars.by_ref() {
                    if ('\u{40}'..='\u{7e}').contains(&d) {
                        break;
                    }
                }
            }
            continue;
        }
        out.push(c);
    }
    out.trim().to_string()
}

/// One remote command, over a new connection each try (the board may be rebooting its
/// network, or the drop may have been ours); an error after FETCH_TRIES failed connections.
fn fetch_one(ssh: &Ssh, remote: &str) -> Result<std::process::Output, String> {
    let mut last = String::new();
    for attempt in 0..FETCH_TRIES {
        if attempt > 0 {
            std::thread::sleep(Duration::from_secs(1 << (attempt - 1)));
        }
        match ssh.capture(remote, None) {
            Ok(out) if !ssh_failed(&out) => return Ok(out),
            Ok(out) => last = said(&out),
            Err(e) => last = e.to_string(),
        }
    }
    Err(format!(
        "{FETCH_TRIES} connections failed, the last: {last}"
    ))
}

/// What a board's run leaves in its scratch directory, fetched in one connection: the
/// exit code the shell wrote, the result, the `--raw` CSV and the table it printed.
const RUN_FILES: [&str; 4] = ["exit", "run.json", "raw.csv", "stdout"];

/// Waits for the board's run to end and fetches its files over one connection (the
/// caller removes the directory, unless the board could not be reached: then it stays,
/// and `fetch_error` says where).
fn fetch(job: &Job, q: &str, outcome: &mut Outcome) {
    // Each file as a line `NAME SIZE` and then exactly SIZE bytes (`head -c`: a file
    // replaced meanwhile cannot shift the frames after it).
    let script = format!(
        "i=0; while [ ! -e {q}/exit ] && [ $i -lt {END_WAIT_TENTHS} ]; do sleep 0.1; i=$((i+1)); done; \
         cd {q} && for f in {}; do if [ -f \"$f\" ]; then s=$(wc -c < \"$f\"); echo \"$f $s\"; head -c \"$s\" \"$f\"; fi; done",
        RUN_FILES.join(" ")
    );
    let mut files = match fetch_one(&job.ssh, &script).and_then(|out| files_of(&out.stdout)) {
        Ok(files) => files,
        Err(e) => {
            outcome.fetch_error = Some(format!("the result stays on the board in {q}: {e}"));
            outcome.kept_on_board = true;
            return;
        }
    };
    if !files.contains_key("exit") {
        // Still running (or killed before it could say how it ended): what it writes
        // later goes there, so the directory stays.
        outcome.fetch_error = Some(format!(
            "the board's run had not ended {} s after its connection did; its result will be in {q} there",
            END_WAIT_TENTHS / 10
        ));
        outcome.kept_on_board = true;
    }
    outcome.exit = files
        .get("exit")
        .and_then(|b| String::from_utf8_lossy(b).trim().parse().ok());
    outcome.json = files.remove("run.json");
    if job.raw {
        outcome.raw = files.remove("raw.csv");
    }
    outcome.stdout = files.remove("stdout").unwrap_or_default();
    if outcome.kept_on_board {
        return;
    }
    if outcome.json.is_none() {
        outcome.fetch_error = Some(format!(
            "the board's run wrote no result (exit code {}; its messages above say why)",
            outcome
                .exit
                .map_or("unknown".to_string(), |c| c.to_string())
        ));
    } else if job.raw && outcome.raw.is_none() {
        outcome.fetch_error = Some("the board's run wrote no --raw file".to_string());
    }
}

/// The files of `fetch`'s output: `NAME SIZE\n` followed by SIZE bytes, again and again.
fn files_of(mut bytes: &[u8]) -> Result<std::collections::BTreeMap<String, Vec<u8>>, String> {
    let mut files = std::collections::BTreeMap::new();
    while !bytes.is_empty() {
        let end = bytes
            .iter()
            .position(|&b| b == b'\n')
            .ok_or("a file's header line is cut off")?;
        let header = String::from_utf8_lossy(&bytes[..end]).into_owned();
        let mut words = header.split_whitespace();
        let (Some(name), Some(size), None) = (words.next(), words.next(), words.next()) else {
            return Err(format!("not a file header: {header:?}"));
        };
        let size: usize = size
            .parse()
            .map_err(|_| format!("not a file size: {header:?}"))?;
        let body = &bytes[end + 1..];
        if body.len() < size {
            return Err(format!("{name}: {} of {size} bytes arrived", body.len()));
        }
        files.insert(name.to_string(), body[..size].to_vec());
        bytes = &body[size..];
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    #[test]
    fn fetched_files_are_split_by_their_headers() {
        let files = super::files_of(b"exit 4\n130\nrun.json    2\n{}stdout 0\n").unwrap();
        assert_eq!(files["exit"], b"130\n");
        assert_eq!(files["run.json"], b"{}");
        assert_eq!(files["stdout"], b"");
        assert!(super::files_of(b"run.json 10\n{}").is_err());
        assert!(super::files_of(b"run.json\n{}").is_err());
        assert!(super::files_of(b"run.json 2").is_err());
    }

    #[test]
    fn progress_lines_lose_their_control_codes() {
        assert_eq!(
            super::without_escapes("\u{1b}[2K⠁   1s timer  8% | cpu0: 248\u{1b}[0m "),
            "⠁   1s timer  8% | cpu0: 248"
        );
    }
}
