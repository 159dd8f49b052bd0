//! Errors a user can fix, each naming the bad value, the allowed range and the fix, and
//! the documented exit codes.

use thiserror::Error;

/// Success.
pub const EXIT_OK: i32 = 0;
/// A runtime failure (I/O, the kernel refused something unexpected).
pub const EXIT_FAILURE: i32 = 1;
/// Bad input: an option value, a file, a combination of options.
pub const EXIT_USAGE: i32 = 2;
/// A `--fail-above` limit or a compare verdict failed.
pub const EXIT_THRESHOLD: i32 = 3;
/// Missing permission (capability, root) for what was asked.
pub const EXIT_PERMISSION: i32 = 4;
/// Another latscope run holds what this one needs (the isolation lock, the lock of an
/// output file: any `--export-*`, `--raw`) or left its isolation in place: nothing was measured; retry when it is done.
pub const EXIT_BUSY: i32 = 5;
/// `--host`: a board could not be reached over ssh (nothing was measured there).
pub const EXIT_UNREACHABLE: i32 = 6;
/// `latscope doctor`: ready, but with warnings (shares 1 with a runtime failure, which
/// doctor reports as an error message on stderr).
pub const EXIT_WARNINGS: i32 = 1;
/// `latscope doctor`: not ready for real-time work (a check failed).
pub const EXIT_NOT_READY: i32 = 7;
/// This machine lacks what the command needs (`latscope gpio`: no /dev/gpiochip*).
pub const EXIT_UNSUPPORTED: i32 = 8;
/// `latscope compare`: no scenario of a later run lined up with one of the first, so
/// nothing was compared (with or without `--fail-on-regression`).
pub const EXIT_NOTHING_COMPARED: i32 = 9;
/// Interrupted by Ctrl-C/SIGTERM; results up to then were reported and saved.
pub const EXIT_INTERRUPTED: i32 = 130;
/// A second Ctrl-C: aborted at once after restoring the system.
pub const EXIT_ABORTED: i32 = 130;

/// Every exit code with its meaning in a few words, for `--help` (which prints this
/// list, so it cannot miss a code: issue 22, item 8).
pub const EXIT_CODES: [(i32, &str); 11] = [
    (EXIT_OK, "ok"),
    (EXIT_FAILURE, "runtime failure (doctor: warnings)"),
    (EXIT_USAGE, "bad input"),
    (
        EXIT_THRESHOLD,
        "a --fail-above limit or compare verdict failed",
    ),
    (EXIT_PERMISSION, "missing permission"),
    (
        EXIT_BUSY,
        "another latscope run holds an output file or the isolation (nothing measured)",
    ),
    (EXIT_UNREACHABLE, "--host: a board could not be reached"),
    (EXIT_NOT_READY, "doctor: not ready (a check failed)"),
    (
        EXIT_UNSUPPORTED,
        "this machine lacks what the probe needs (gpio: no /dev/gpiochip*)",
    ),
    (
        EXIT_NOTHING_COMPARED,
        "compare: nothing lined up, nothing compared",
    ),
    (
        EXIT_INTERRUPTED,
        "interrupted (results up to then saved; a second signal aborts)",
    ),
];

/// The exit codes as `--help` lists them: `Exit codes: 0 ok, 1 runtime failure, ...`.
pub fn exit_codes_help() -> String {
    let codes: Vec<String> = EXIT_CODES
        .iter()
        .map(|(code, meaning)| format!("{code} {meaning}"))
        .collect();
    format!("Exit codes: {}.", codes.join(", "))
}

#[derive(Debug, Error)]
pub enum UserError {
    #[error("invalid {option} '{}': {}", clip(.value), reason_quoting(.reason, .value))]
    InvalidValue {
        option: String,
        value: String,
        reason: String,
    },
    #[error("{option} '{}' is out of range: allowed {range}", clip(.value))]
    OutOfRange {
        option: String,
        value: String,
        range: String,
    },
    #[error("CPU {cpu} is not online (online CPUs: {online}); choose from those with --cpus")]
    CpuNotOnline { cpu: usize, online: String },
    /// `fix` names what really grants it (setcap only where a capability is enough).
    #[error("{what} needs {capability}; {fix}")]
    Permission {
        what: String,
        capability: String,
        fix: String,
    },
    #[error("cannot write {path}: {reason}; choose a writable path (checked before measuring)")]
    Unwritable { path: String, reason: String },
    #[error("refusing {what}: {why}; {fix}")]
    Unsafe {
        what: String,
        why: String,
        fix: String,
    },
    #[error("{path}: {}", bounded(.reason))]
    BadInputFile { path: String, reason: String },
    /// An error in one part of a suite plan: `place` names the plan, the block and the key.
    #[error("{place}: {source}")]
    InPlan {
        place: String,
        source: Box<UserError>,
    },
    /// A conflict with another latscope run, living or killed (exit code 5).
    #[error("{0}")]
    Busy(String),
    /// A permission problem whose message already names the fix (exit code 4).
    #[error("{0}")]
    NeedsPermission(String),
    /// `--host`: ssh could not connect, or the board cannot run latscope (exit code 6).
    #[error("cannot run on {host} over ssh: {reason}; {fix}")]
    Unreachable {
        host: String,
        reason: String,
        fix: String,
    },
    /// The machine lacks what the command needs (exit code 8).
    #[error("{0}")]
    Unsupported(String),
    /// `compare`: nothing lined up (exit code 9); the message names the differing axes.
    #[error("{0}")]
    NothingCompared(String),
    #[error("{0}")]
    Other(String),
}

impl UserError {
    pub fn exit_code(&self) -> i32 {
        match self {
            UserError::Permission { .. } | UserError::NeedsPermission(_) => EXIT_PERMISSION,
            UserError::InPlan { source, .. } => source.exit_code(),
            UserError::Busy(_) => EXIT_BUSY,
            UserError::Unreachable { .. } => EXIT_UNREACHABLE,
            UserError::Unsupported(_) => EXIT_UNSUPPORTED,
            UserError::NothingCompared(_) => EXIT_NOTHING_COMPARED,
            _ => EXIT_USAGE,
        }
    }
}

/// The most characters of a user's input an error message quotes (issue 22, item 4: a
/// 50 MB value once became 157 MB on stderr).
pub const QUOTE_MAX_CHARS: usize = 200;

/// `text` as an error message quotes it: control characters escaped (the message stays
/// one line), cut after about `QUOTE_MAX_CHARS` characters, saying how long it was.
pub fn clip(text: &str) -> std::borrow::Cow<'_, str> {
    if text.len() <= QUOTE_MAX_CHARS && !text.chars().any(char::is_control) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::new();
    let mut shown = 0;
    for c in text.chars() {
        if shown >= QUOTE_MAX_CHARS {
            out.push_str(&format!("… ({} bytes in all)", text.len()));
            break;
        }
        if c.is_control() {
            let escaped: String = c.escape_default().collect();
            shown += escaped.chars().count();
            out.push_str(&escaped);
        } else {
            shown += 1;
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// The longest reason a message prints (a net under `clip`: a reason that quotes the
/// input itself stays bounded, however long that input was).
pub const REASON_MAX_CHARS: usize = 1000;

/// A reason cut after `REASON_MAX_CHARS` characters (not escaped: it is latscope's text).
pub fn bounded(reason: &str) -> std::borrow::Cow<'_, str> {
    match reason.char_indices().nth(REASON_MAX_CHARS) {
        None => std::borrow::Cow::Borrowed(reason),
        Some((at, _)) => std::borrow::Cow::Owned(format!(
            "{}… ({} bytes in all)",
            &reason[..at],
            reason.len()
        )),
    }
}

/// A reason that may quote the (long) value again: each whole quote of it clipped, then
/// the reason bounded.
fn reason_quoting(reason: &str, value: &str) -> String {
    if value.len() > QUOTE_MAX_CHARS && reason.contains(value) {
        bounded(&reason.replace(value, &clip(value))).into_owned()
    } else {
        bounded(reason).into_owned()
    }
}

/// The usual "this value does not parse" error, shared by the plan and the suite file.
pub(crate) fn invalid(option: &str, value: &str, reason: impl Into<String>) -> UserError {
    UserError::InvalidValue {
        option: option.into(),
        value: value.into(),
        reason: reason.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_help_lists_every_exit_code() {
        let help = exit_codes_help();
        for code in [
            EXIT_OK,
            EXIT_FAILURE,
            EXIT_USAGE,
            EXIT_THRESHOLD,
            EXIT_PERMISSION,
            EXIT_BUSY,
            EXIT_UNREACHABLE,
            EXIT_WARNINGS,
            EXIT_NOT_READY,
            EXIT_INTERRUPTED,
            EXIT_ABORTED,
        ] {
            assert!(help.contains(&format!(" {code} ")), "{code}: {help}");
        }
    }

    #[test]
    fn long_or_control_values_are_quoted_short_and_on_one_line() {
        assert_eq!(clip("50us"), "50us");
        let long = "x".repeat(50 << 20);
        let shown = clip(&long);
        assert!(shown.len() < 300, "{}", shown.len());
        assert!(shown.ends_with("… (52428800 bytes in all)"), "{shown}");
        let nul = "\0".repeat(1000);
        let shown = clip(&nul);
        assert!(
            shown.starts_with("\\u{0}\\u{0}") && shown.len() < 300,
            "{shown}"
        );
        assert_eq!(clip("a\nb"), "a\\nb");
        let e = invalid("--period", &long, "not a duration").to_string();
        assert!(e.len() < 400, "{}", e.len());
        let e = invalid("--period", &long, format!("'{long}' is no duration")).to_string();
        assert!(e.len() < 700, "{}", e.len());
        let e = invalid("--load", &long, format!("kind '{}' unknown", &long[1..])).to_string();
        assert!(e.len() < 1600, "{}", e.len());
    }
}
