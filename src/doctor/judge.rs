//! What was measured decides what doctor says: a finding whose fix measured better here,
//! or whose problem was seen here, stands (a PASS on its reading becomes a WARN with the
//! fix); a fix measured worse or within noise is not recommended as a gain (a WARN on
//! its reading becomes a PASS that says so, the usual fix kept in the evidence). Each
//! finding records whether its status rests on a measurement or only on the reading.

use super::finding::{Basis, Bearing, CheckId, Finding, Status};

/// Applies every finding's measurements to its status and fix; `tried`: the fix each
/// A/B tried, per finding.
pub fn apply(findings: &mut [Finding], tried: &[(CheckId, String)]) {
    for f in findings.iter_mut() {
        let bearings: Vec<Bearing> = f.measured.iter().filter_map(|m| m.bearing).collect();
        if bearings.is_empty() {
            continue;
        }
        f.basis = Basis::Measured;
        if bearings.contains(&Bearing::Confirms) {
            confirm(f, tried);
        } else {
            refute(f);
        }
    }
}

/// The problem was seen, or its fix helped: a PASS (or SKIP) on the reading becomes a
/// WARN with the fix that measured better.
fn confirm(f: &mut Finding, tried: &[(CheckId, String)]) {
    if f.status >= Status::Warn {
        return;
    }
    let fix = tried
        .iter()
        .find(|(id, fix)| *id == f.id && !fix.is_empty())
        .map(|(_, fix)| fix.clone());
    f.status = Status::Warn;
    f.summary = format!(
        "{}; but measured here, the change below is a gain",
        f.summary
    );
    f.fix = fix.or_else(|| f.fix.clone()).or_else(|| {
        Some("see the measured line: what it changed is the fix on this machine".into())
    });
}

/// Every fix tried measured worse or within noise: a WARN on the reading is no longer
/// one (a FAIL stays: it is about what fails, not what a fix buys).
fn refute(f: &mut Finding) {
    if f.status != Status::Warn {
        return;
    }
    f.status = Status::Pass;
    f.summary = format!(
        "{}; but its fix measured no gain here (below), so it is not recommended on this machine",
        f.summary
    );
    if let Some(fix) = f.fix.take() {
        f.evidence
            .push(format!("the usual fix, not a gain as measured here: {fix}"));
    }
}

/// The findings whose status rests on a measurement, and the WARN/FAIL ones that rest
/// on the reading only (the verdict's second line).
pub fn bases(findings: &[Finding]) -> (Vec<CheckId>, Vec<CheckId>) {
    let measured = findings
        .iter()
        .filter(|f| f.basis == Basis::Measured)
        .map(|f| f.id)
        .collect();
    let read = findings
        .iter()
        .filter(|f| f.basis == Basis::Read && f.status >= Status::Warn)
        .map(|f| f.id)
        .collect();
    (measured, read)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doctor::finding::Measured;

    fn warn(id: CheckId) -> Finding {
        Finding::warn(
            id,
            "timer migration is on",
            "sysctl kernel.timer_migration=0",
        )
    }

    fn with(mut f: Finding, bearing: Option<Bearing>) -> Finding {
        f.measured
            .push(Measured::observed("a line").bearing(bearing));
        f
    }

    /// The issue: `--try isolate` measured worse, yet the WARN still recommended isolating.
    #[test]
    fn a_fix_measured_worse_or_within_noise_is_not_recommended() {
        let mut f = [with(warn(CheckId::CpusIsolation), Some(Bearing::Refutes))];
        apply(&mut f, &[]);
        assert_eq!(f[0].status, Status::Pass);
        assert_eq!(f[0].fix, None);
        assert_eq!(f[0].basis, Basis::Measured);
        assert!(f[0].summary.contains("not recommended on this machine"));
        assert!(f[0]
            .evidence
            .iter()
            .any(|e| e.ends_with("not a gain as measured here: sysctl kernel.timer_migration=0")));
    }

    /// RT throttling: the timer A/B saw no gain, the FIFO spin saw the throttle's stop.
    #[test]
    fn a_problem_seen_outweighs_a_fix_without_gain() {
        let f = with(warn(CheckId::SchedRtThrottling), Some(Bearing::Refutes));
        let mut f = [with(f, Some(Bearing::Confirms))];
        apply(&mut f, &[]);
        assert_eq!(f[0].status, Status::Warn);
        assert!(f[0].fix.is_some());
    }

    /// cpu_dma_latency 0 measured better where the reading saw no deep C-state.
    #[test]
    fn a_pass_becomes_a_warn_when_its_fix_measured_better() {
        let pass = Finding::pass(CheckId::CpusCstates, "no idle state above 10 µs");
        let mut f = [with(pass, Some(Bearing::Confirms))];
        apply(&mut f, &[(CheckId::CpusCstates, "hold it at 0".into())]);
        assert_eq!(f[0].status, Status::Warn);
        assert_eq!(f[0].fix.as_deref(), Some("hold it at 0"));
        assert_eq!(bases(&f), (vec![CheckId::CpusCstates], vec![]));
    }

    #[test]
    fn observations_without_a_bearing_change_nothing() {
        let fail = Finding::fail(CheckId::KernelPreemptMode, "mode none", "preempt=full");
        let mut f = [with(warn(CheckId::CpusIsolation), None), fail];
        let before = f.clone();
        apply(&mut f, &[]);
        assert_eq!(f, before);
        assert_eq!(
            bases(&f),
            (
                vec![],
                vec![CheckId::CpusIsolation, CheckId::KernelPreemptMode]
            )
        );
    }
}
