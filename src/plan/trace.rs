//! The `--trace` options as typed: the threshold and the buffer, neither without `--trace`.

use super::range::{duration_in_range, out_of_range};
use super::TraceSettings;
use crate::cli::TraceArgs;
use crate::error::{invalid, UserError};
use crate::units;

/// Default `--trace-buffer`: per traced CPU.
pub const DEFAULT_TRACE_BUFFER_BYTES: u64 = 8 << 20;

/// Checks the `--trace` options as typed.
pub fn check_trace(args: &TraceArgs) -> Result<Option<TraceSettings>, UserError> {
    if !args.trace {
        for (given, option) in [
            (args.trace_threshold.is_some(), "--trace-threshold"),
            (args.trace_buffer.is_some(), "--trace-buffer"),
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
            let b = units::parse_size_with_unit(t).map_err(|r| invalid("--trace-buffer", t, r))?;
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
    }))
}
