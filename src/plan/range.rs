//! Range checks of typed values shared by every probe's plan and by timer_slack.rs, below
//! common.rs so that neither imports the other.

use crate::error::{invalid, UserError};
use crate::units;

pub(crate) fn out_of_range(option: &str, value: &str, range: &str) -> UserError {
    UserError::OutOfRange {
        option: option.into(),
        value: value.into(),
        range: range.into(),
    }
}

/// Parses a duration option and checks it against an inclusive range.
pub fn duration_in_range(
    option: &str,
    text: &str,
    bare_unit_ns: u64,
    min_ns: u64,
    max_ns: u64,
) -> Result<u64, UserError> {
    let ns = units::parse_duration_ns_with_default(text, bare_unit_ns)
        .map_err(|reason| invalid(option, text, reason))?;
    if ns < min_ns || ns > max_ns {
        return Err(out_of_range(
            option,
            text,
            &format!("{} to {}", units::human_ns(min_ns), units::human_ns(max_ns)),
        ));
    }
    Ok(ns)
}
