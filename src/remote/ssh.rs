//! The system's `ssh` as latscope calls it: the user's options first (ssh keeps the first
//! value of each), then never a password prompt and a dead connection noticed in ~15 s.
//! Every ssh dies with latscope (PR_SET_PDEATHSIG: a SIGKILLed latscope hangs up the
//! board's run, which restores and saves as on SIGHUP), and what a board sends is read
//! up to a limit (issue 34, items 5 and 8: 500 MB printed during the probe were all held
//! and quoted in the error).

use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};

/// The most a short board command (the probe, the copy, a `kill`) may print on stdout or
/// stderr: its few lines, with room to spare. Past it, ssh is ended and the command fails.
pub const SHORT_OUTPUT_MAX: u64 = 64 << 10;

/// How one board is reached.
#[derive(Debug, Clone)]
pub struct Ssh {
    /// `ssh`, or `LATSCOPE_SSH`.
    pub program: String,
    /// `--ssh-option` values, in order.
    pub options: Vec<String>,
    /// `user@board` as typed.
    pub host: String,
}

/// Why a streamed command gave nothing usable.
#[derive(Debug)]
pub enum Failed {
    /// ssh could not connect or lost the connection (worth another try).
    Connection(String),
    /// What the board sent was refused (another try would get the same).
    Content(String),
}

/// What a short board command printed (each stream cut at SHORT_OUTPUT_MAX) and how
/// ssh ended.
#[derive(Debug)]
pub struct Output {
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// A stream went past its limit: ssh was ended there ("stdout" or "stderr").
    pub overflowed: Option<&'static str>,
}

impl Ssh {
    pub fn new(host: &str, options: &[String]) -> Ssh {
        Ssh {
            program: std::env::var("LATSCOPE_SSH").unwrap_or_else(|_| "ssh".into()),
            options: options.to_vec(),
            host: host.to_string(),
        }
    }

    /// `ssh OPTIONS [-tt] HOST REMOTE`, killed when the thread that starts it ends (so
    /// with latscope). With `tty` the board's command gets a terminal, so a dropped
    /// connection hangs it up (SIGHUP) and its progress line is drawn.
    pub fn command(&self, tty: bool, remote: &str) -> Command {
        let mut c = Command::new(&self.program);
        c.args(&self.options).args([
            "-o",
            "BatchMode=yes",
            "-o",
            "ServerAliveInterval=5",
            "-o",
            "ServerAliveCountMax=3",
        ]);
        if tty {
            c.arg("-tt");
        }
        c.arg("--").arg(&self.host).arg(remote);
        crate::sys::process::die_with_parent(&mut c);
        c
    }

    /// Runs a short remote command to its end (stdin from `input` or nothing), keeping at
    /// most SHORT_OUTPUT_MAX bytes of each stream: a board that prints more is cut off.
    pub fn capture(&self, remote: &str, input: Option<&Path>) -> std::io::Result<Output> {
        let mut c = self.command(false, remote);
        c.stdin(match input {
            Some(path) => Stdio::from(std::fs::File::open(path)?),
            None => Stdio::null(),
        });
        let mut child = c.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn()?;
        let mut stdout = child.stdout.take().expect("stdout is piped");
        let ((stdout, out_over), (stderr, err_over)) = with_stderr(&mut child, |pid| {
            let out = read_at_most(&mut stdout, SHORT_OUTPUT_MAX);
            if out.1 {
                end(pid);
            }
            out
        });
        let status = child.wait()?;
        let overflowed = match (out_over, err_over) {
            (true, _) => Some("stdout"),
            (_, true) => Some("stderr"),
            _ => None,
        };
        Ok(Output {
            status,
            stdout,
            stderr,
            overflowed,
        })
    }

    /// Runs a remote command whose stdout `consume` reads as it streams (the fetched
    /// files), its stderr kept up to SHORT_OUTPUT_MAX; ssh is ended when `consume`
    /// fails. A refused content is that; a cut stream, or ssh's own failure after all
    /// was read, is a connection's failure.
    pub fn stream<T>(
        &self,
        remote: &str,
        consume: impl FnOnce(&mut dyn Read) -> Result<T, Failed>,
    ) -> Result<T, Failed> {
        let mut child: Child = self
            .command(false, remote)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| Failed::Connection(format!("{}: {e}", self.program)))?;
        let mut stdout = child.stdout.take().expect("stdout is piped");
        let (consumed, (stderr, err_over)) = with_stderr(&mut child, |pid| {
            let consumed = consume(&mut stdout);
            if consumed.is_err() {
                end(pid);
            }
            consumed
        });
        // Whatever was not read is not wanted: ssh ends (never waits on a full pipe).
        drop(stdout);
        let status = child
            .wait()
            .map_err(|e| Failed::Connection(format!("{}: {e}", self.program)))?;
        let out = Output {
            status,
            stdout: Vec::new(),
            stderr,
            overflowed: err_over.then_some("stderr"),
        };
        match consumed {
            Err(Failed::Content(e)) => Err(Failed::Content(e)),
            _ if ssh_failed(&out) => Err(Failed::Connection(said(&out))),
            other => other,
        }
    }
}

/// Runs `f` (given ssh's pid) while another thread reads ssh's stderr (at most
/// SHORT_OUTPUT_MAX bytes: past it, ssh is ended, so it never waits on a full pipe).
fn with_stderr<T>(child: &mut Child, f: impl FnOnce(i32) -> T) -> (T, (Vec<u8>, bool)) {
    let pid = child.id() as i32;
    let stderr = child.stderr.take();
    std::thread::scope(|s| {
        let reader = s.spawn(move || match stderr {
            Some(stderr) => {
                let read = read_at_most(stderr, SHORT_OUTPUT_MAX);
                if read.1 {
                    end(pid);
                }
                read
            }
            None => (Vec::new(), false),
        });
        let value = f(pid);
        (value, reader.join().unwrap_or_default())
    })
}

/// Ends ssh (SIGKILL): the board sent more than latscope reads.
fn end(pid: i32) {
    let _ = crate::sys::process::signal_process(pid, libc_sigkill());
}

/// SIGKILL's number (signal_hook names it; no libc outside sys).
fn libc_sigkill() -> i32 {
    signal_hook::consts::SIGKILL
}

/// Reads `stream` to its end keeping at most `limit` bytes; whether it sent more (then
/// it is no longer read).
fn read_at_most(stream: impl Read, limit: u64) -> (Vec<u8>, bool) {
    let mut kept = Vec::new();
    let _ = stream.take(limit + 1).read_to_end(&mut kept);
    let over = kept.len() as u64 > limit;
    kept.truncate(limit as usize);
    (kept, over)
}

/// What ssh said on stderr, on one line, for an error message: control characters
/// escaped and cut short (a board's text, quoted), and said when the board printed more
/// than latscope reads.
pub fn said(output: &Output) -> String {
    let text = String::from_utf8_lossy(&output.stderr);
    let text = text.trim();
    let mut said = if text.is_empty() {
        format!("ssh exited with {}", output.status)
    } else {
        let one_line = text.lines().collect::<Vec<_>>().join(" / ");
        crate::error::clip(&one_line).into_owned()
    };
    if let Some(stream) = output.overflowed {
        said.push_str(&format!(
            " (the board printed more than {} KiB on {stream}; latscope stopped reading and ended the connection)",
            SHORT_OUTPUT_MAX >> 10
        ));
    }
    said
}

/// ssh's own failure (could not connect, or lost the connection) as opposed to the remote
/// command's exit status.
pub fn ssh_failed(output: &Output) -> bool {
    output.status.code() == Some(255) || output.status.code().is_none()
}
