//! `--timer-slack`: its default and range, checked as typed (plan::common calls it for
//! every probe; `latscope cyclictest` sets none and leaves the inherited slack).

use super::range::duration_in_range;
use crate::error::UserError;

/// The timer slack latscope's threads run with unless `--timer-slack` says otherwise:
/// the smallest, so a SCHED_OTHER scenario measures the scheduler and the timer, not the
/// kernel's deliberate batching of wake-ups (README, "Timer slack").
pub const DEFAULT_TIMER_SLACK_NS: u64 = 1;
/// The largest `--timer-slack`: 1 s (the kernel takes any value; beyond a period it only
/// measures the slack itself).
pub const MAX_TIMER_SLACK_NS: u64 = 1_000_000_000;

/// `--timer-slack` as typed (with its unit), or the default.
pub fn check(text: Option<&str>) -> Result<u64, UserError> {
    match text {
        Some(text) => duration_in_range("--timer-slack", text, 1, 1, MAX_TIMER_SLACK_NS),
        None => Ok(DEFAULT_TIMER_SLACK_NS),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::CommonArgs;
    use crate::plan::common::check_common;

    #[test]
    fn timer_slack_defaults_to_1ns_and_names_its_range() {
        assert_eq!(check(None).unwrap(), DEFAULT_TIMER_SLACK_NS);
        let args = CommonArgs {
            warmup: "1s".into(),
            ..CommonArgs::default()
        };
        assert_eq!(check_common(&args).unwrap().timer_slack_ns, Some(1));
        let with = |text: &str| {
            check_common(&CommonArgs {
                timer_slack: Some(text.into()),
                ..args.clone()
            })
        };
        assert_eq!(with("50us").unwrap().timer_slack_ns, Some(50_000));
        assert_eq!(with("200ns").unwrap().timer_slack_ns, Some(200));
        let bare = with("200")
            .expect_err("a bare number has no unit")
            .to_string();
        assert!(bare.contains("write 200ns"), "{bare}");
        for bad in ["0", "0us", "2s", "soon", "200"] {
            let error = with(bad).expect_err(bad).to_string();
            assert!(
                error.contains("--timer-slack") && error.contains(bad),
                "{error}"
            );
        }
    }
}
