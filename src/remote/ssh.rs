//! The system's `ssh` as latscope calls it: the user's options first (ssh keeps the first
//! value of each), then never a password prompt and a dead connection noticed in ~15 s.

use std::path::Path;
use std::process::{Command, Output, Stdio};

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

impl Ssh {
    pub fn new(host: &str, options: &[String]) -> Ssh {
        Ssh {
            program: std::env::var("LATSCOPE_SSH").unwrap_or_else(|_| "ssh".into()),
            options: options.to_vec(),
            host: host.to_string(),
        }
    }

    /// `ssh OPTIONS [-tt] HOST REMOTE`. With `tty` the board's command gets a terminal, so
    /// a dropped connection hangs it up (SIGHUP) and its progress line is drawn.
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
        c
    }

    /// Runs a short remote command to its end (stdin from `input` or nothing).
    pub fn capture(&self, remote: &str, input: Option<&Path>) -> std::io::Result<Output> {
        let mut c = self.command(false, remote);
        c.stdin(match input {
            Some(path) => Stdio::from(std::fs::File::open(path)?),
            None => Stdio::null(),
        });
        c.output()
    }
}

/// What ssh said on stderr, on one line, for an error message.
pub fn said(output: &Output) -> String {
    let text = String::from_utf8_lossy(&output.stderr);
    let text = text.trim();
    if text.is_empty() {
        format!("ssh exited with {}", output.status)
    } else {
        text.lines().collect::<Vec<_>>().join(" / ")
    }
}

/// ssh's own failure (could not connect, or lost the connection) as opposed to the remote
/// command's exit status.
pub fn ssh_failed(output: &Output) -> bool {
    output.status.code() == Some(255) || output.status.code().is_none()
}
