//! The `--trace` options as typed: the threshold, the buffer, `--trace-no-split` (timer only),
//! none of them without `--trace`.

use super::range::{duration_in_range, out_of_range};
use super::TraceSettings;
use crate::cli::TraceArgs;
use crate::error::{invalid, UserError};
use crate::units;

/// Default `--trace-buffer`: per traced CPU.
pub const DEFAULT_TRACE_BUFFER_BYTES: u64 = 8 << 20;

/// `--trace-no-split` on a probe other than the timer, whose split needs its events.
pub fn refuse_no_split(args: &TraceArgs, probe: &str) -> Result<(), UserError> {
    if args.trace_no_split {
        return Err(UserError::Other(format!(
            "--trace-no-split applies to `latscope timer` only: the {probe} probe's split \
             needs its own events; leave --trace-no-split out"
        )));
    }
    Ok(())
}

/// Checks the `--trace` options as typed.
pub fn check_trace(args: &TraceArgs) -> Result<Option<TraceSettings>, UserError> {
    if !args.trace {
        for (given, option) in [
            (args.trace_threshold.is_some(), "--trace-threshold"),
            (args.trace_buffer.is_some(), "--trace-buffer"),
            (args.trace_no_split, "--trace-no-split"),
        ] {
            if given {
                return Err(UserError::Other(format!(
                    "{option} only applies with --trace; add --trace or leave {option} out"
                )));
            }
        }
        return Ok(None);
    }
    let threshold_ns = match &args.trace_threshold {
        Some(t) => Some(duration_in_range(
            "--trace-threshold",
            t,
            1_000,
            1,
            60_000_000_000,
        )?),
        None => None,
    };
    let buffer_bytes = match &args.trace_buffer {
        Some(t) => {
            let b = units::parse_size_bytes(t).map_err(|r| invalid("--trace-buffer", t, r))?;
            if !(64 << 10..=1 << 30).contains(&b) {
                return Err(out_of_range("--trace-buffer", t, "64K to 1G per CPU"));
            }
            b
        }
        None => DEFAULT_TRACE_BUFFER_BYTES,
    };
    Ok(Some(TraceSettings {
        threshold_ns,
        buffer_kb_per_cpu: buffer_bytes >> 10,
        no_split: args.trace_no_split,
    }))
}
