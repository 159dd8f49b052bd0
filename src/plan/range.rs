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

/// Parses a duration option typed with its unit and checks it against an inclusive range.
/// A bare number is refused with the fix, suggesting the unit of `hint_unit_ns` (1 000:
/// `write 5us`; 10⁹: `write 5s`), the one its users mean.
pub fn duration_in_range(
    option: &str,
    text: &str,
    hint_unit_ns: u64,
    min_ns: u64,
    max_ns: u64,
) -> Result<u64, UserError> {
    let hint = match hint_unit_ns {
        1 => "ns",
        1_000 => "us",
        1_000_000 => "ms",
        _ => "s",
    };
    let ns = units::parse_duration_ns(text, hint).map_err(|reason| {
        invalid(
            option,
            text,
            format!("{reason}; allowed {}", range_text(min_ns, max_ns)),
        )
    })?;
    in_range(option, text, ns, min_ns, max_ns)
}

/// As `duration_in_range`, a bare number taken in `bare_unit_ns`: only for the options
/// that keep cyclictest's conventions (`latscope cyclictest`, timer's `-i`).
pub fn duration_in_range_bare(
    option: &str,
    text: &str,
    bare_unit_ns: u64,
    min_ns: u64,
    max_ns: u64,
) -> Result<u64, UserError> {
    let ns = units::parse_duration_ns_with_default(text, bare_unit_ns)
        .map_err(|reason| invalid(option, text, reason))?;
    in_range(option, text, ns, min_ns, max_ns)
}

/// `1 µs to 60 s`: the range an option takes, as its refusals say it.
fn range_text(min_ns: u64, max_ns: u64) -> String {
    format!("{} to {}", units::human_ns(min_ns), units::human_ns(max_ns))
}

fn in_range(option: &str, text: &str, ns: u64, min_ns: u64, max_ns: u64) -> Result<u64, UserError> {
    if ns < min_ns || ns > max_ns {
        return Err(out_of_range(option, text, &range_text(min_ns, max_ns)));
    }
    Ok(ns)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_duration_needs_its_unit_and_zero_parses_with_one() {
        assert_eq!(
            duration_in_range("--warmup", "0us", 1_000_000_000, 0, 10).unwrap(),
            0
        );
        assert_eq!(
            duration_in_range("--warmup", "0", 1_000_000_000, 0, 10).unwrap(),
            0
        );
        let bare = duration_in_range("--deadline", "5", 1_000, 1, 60_000_000_000)
            .unwrap_err()
            .to_string();
        assert_eq!(
            bare,
            "invalid --deadline '5': a bare number has no unit; write 5us (units: ns, us, ms, s, m, h); allowed 1 ns to 60 s"
        );
        assert_eq!(
            duration_in_range_bare("--interval", "300", 1_000, 1, u64::MAX).unwrap(),
            300_000
        );
        let dma = |t: &str| crate::plan::common::dma_latency_us(t);
        assert_eq!(dma("0us").unwrap(), 0);
        assert_eq!(dma("0").unwrap(), 0);
        assert_eq!(dma("1ms").unwrap(), 1_000);
        assert!(dma("10").unwrap_err().to_string().contains("write 10us"));
        assert!(dma("1500ns").unwrap_err().to_string().contains("whole µs"));
    }
}
