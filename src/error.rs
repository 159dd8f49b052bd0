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
/// Another latscope run holds what this one needs (the isolation lock, the `--export-json`
/// file) or left its isolation in place: nothing was measured; retry when it is done.
pub const EXIT_BUSY: i32 = 5;
/// `--host`: a board could not be reached over ssh (nothing was measured there).
pub const EXIT_UNREACHABLE: i32 = 6;
/// Interrupted by Ctrl-C/SIGTERM; results up to then were reported and saved.
pub const EXIT_INTERRUPTED: i32 = 130;
/// A second Ctrl-C: aborted at once after restoring the system.
pub const EXIT_ABORTED: i32 = 130;

#[derive(Debug, Error)]
pub enum UserError {
    #[error("invalid {option} '{value}': {reason}")]
    InvalidValue {
        option: String,
        value: String,
        reason: String,
    },
    #[error("{option} '{value}' is out of range: allowed {range}")]
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
    #[error("{path}: {reason}")]
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
            _ => EXIT_USAGE,
        }
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
