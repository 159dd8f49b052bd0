//! `--resume`: what a previous run's file keeps (complete scenarios, interrupted ones as
//! measured parts, a killed one's checkpoint), what is left to run of each scenario, and
//! the checks that the file belongs to this plan.

use super::naming::{params_of, plan_hash, scenario_name};
use crate::plan::Plan;
use crate::result::{Run, Scenario};

/// What earlier attempts measured of an interrupted scenario (`--resume`).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct MeasuredBefore {
    /// Samples every measuring thread had at least, over the kept parts and a checkpoint.
    pub samples: u64,
    /// Measuring time of those parts, ns.
    pub elapsed_ns: u64,
    /// The kept parts' names (`NAME (interrupted part N)`).
    pub parts: Vec<String>,
    /// A `kill -9`ed attempt's last checkpoint (its counts and maxima; its samples are
    /// not in any kept part).
    pub checkpoint: Option<crate::result::Checkpoint>,
}

impl MeasuredBefore {
    /// What the continuation records in `params.extra`.
    pub fn extra(&self) -> crate::result::ParamsExtra {
        crate::result::ParamsExtra {
            resumed_after_samples: Some(self.samples),
            resumed_after_ns: Some(self.elapsed_ns),
            resumed_parts: Some(self.parts.clone()),
            resumed_checkpoint: self.checkpoint.clone(),
            ..crate::result::ParamsExtra::default()
        }
    }
}

pub const PART_MARK: &str = " (interrupted part ";

/// `--resume`: the previous run's scenarios to keep (an interrupted one renamed
/// `NAME (interrupted part N)`, as measured), the names that are done, and per
/// interrupted scenario what was measured of it, so only the rest of its samples (or of
/// its duration) runs, as a continuation marked `resumed_after_samples`.
pub fn resume_from(
    prev: Run,
) -> (
    Vec<Scenario>,
    Vec<String>,
    std::collections::BTreeMap<String, MeasuredBefore>,
) {
    let mut kept = Vec::new();
    let mut done = Vec::new();
    let mut before: std::collections::BTreeMap<String, MeasuredBefore> = Default::default();
    for mut s in prev.scenarios {
        if !s.interrupted {
            done.push(s.name.clone());
            kept.push(s);
            continue;
        }
        let base = match s.name.find(PART_MARK) {
            Some(i) => s.name[..i].to_string(),
            None => s.name.clone(),
        };
        let entry = before.entry(base.clone()).or_default();
        if !s.name.contains(PART_MARK) {
            s.name = format!("{base}{PART_MARK}{})", entry.parts.len() + 1);
        }
        entry.samples += s
            .threads
            .iter()
            .map(|t| t.summary.samples)
            .min()
            .unwrap_or(0);
        entry.elapsed_ns += s.elapsed_ns;
        entry.parts.push(s.name.clone());
        kept.push(s);
    }
    if let Some(c) = prev.checkpoint {
        if !done.contains(&c.scenario) {
            // A journal's checkpoint is also its partial scenario, counted above as a
            // part; an older file's holds counts only.
            let counted = kept.iter().any(|s| s.partial);
            let entry = before.entry(c.scenario.clone()).or_default();
            if !counted {
                entry.samples += c.threads.iter().map(|t| t.samples).min().unwrap_or(0);
                entry.elapsed_ns += c.elapsed_ns;
            }
            entry.checkpoint = Some(c);
        }
    }
    (kept, done, before)
}

/// The settings of a scenario's continuation: its sample count and duration less what
/// earlier parts measured; None when nothing is left.
pub fn remaining_settings(
    settings: &crate::probe::CommonSettings,
    before: Option<&MeasuredBefore>,
) -> Option<crate::probe::CommonSettings> {
    let mut left = settings.clone();
    let Some(b) = before else {
        return Some(left);
    };
    if let Some(n) = settings.samples {
        left.samples = Some(n.checked_sub(b.samples).filter(|&n| n > 0)?);
    }
    if let Some(d) = settings.duration_ns {
        left.duration_ns = Some(d.checked_sub(b.elapsed_ns).filter(|&d| d > 0)?);
    }
    Some(left)
}

/// `--resume`: refuses a result file written by another plan (or by a latscope that did
/// not record its plan), and one holding a scenario this plan does not have or with other
/// parameters (the hash alone would keep a forged one, issue 22 item 7), naming the file.
pub fn check_resumable(
    plan: &Plan,
    previous: &Run,
    path: &std::path::Path,
) -> Result<(), crate::error::UserError> {
    let bad = |reason: String| crate::error::UserError::BadInputFile {
        path: path.display().to_string(),
        reason,
    };
    let want = plan_hash(plan);
    match &previous.plan_hash {
        Some(h) if *h == want => {}
        found => return Err(bad(format!(
            "written by another plan (plan hash {}, this plan's is {want}); --resume continues only the same plan: drop --resume or choose another --export-json",
            found.as_deref().unwrap_or("absent")
        ))),
    }
    let mut complete = std::collections::BTreeSet::new();
    for s in &previous.scenarios {
        if let Some(why) = foreign_scenario(plan, s, &mut complete) {
            return Err(bad(format!(
                "its scenario '{}' {why}; --resume keeps only this plan's scenarios as they were measured: drop --resume or choose another --export-json",
                crate::error::clip(&s.name)
            )));
        }
    }
    if let Some(c) = &previous.checkpoint {
        if !plan
            .scenarios
            .iter()
            .any(|sp| scenario_name(sp) == c.scenario)
        {
            return Err(bad(format!(
                "its checkpoint is of scenario '{}', which is not in this plan; drop --resume or choose another --export-json",
                crate::error::clip(&c.scenario)
            )));
        }
    }
    Ok(())
}

/// Why a scenario of a file to resume does not belong to `plan` (None: it does): its
/// name (without ` (interrupted part N)`) is no scenario of the plan, its parameters
/// differ from that scenario's, or a complete one is there twice (`complete` collects
/// the complete ones' names).
fn foreign_scenario(
    plan: &Plan,
    s: &Scenario,
    complete: &mut std::collections::BTreeSet<String>,
) -> Option<String> {
    let base = match s.name.find(PART_MARK) {
        Some(i) if s.interrupted => &s.name[..i],
        _ => s.name.as_str(),
    };
    let Some(sp) = plan.scenarios.iter().find(|sp| scenario_name(sp) == base) else {
        return Some("is not in this plan".into());
    };
    let want = params_of(sp);
    let p = &s.params;
    let same = s.probe == sp.probe.kind()
        && p.method == want.method
        && p.period_ns == want.period_ns
        && p.policy == want.policy
        && p.priority == want.priority
        && p.deadline_ns == want.deadline_ns
        && p.cpus == want.cpus
        && p.loads == want.loads
        && p.isolate == want.isolate;
    if !same {
        return Some("has parameters other than this plan's scenario of that name".into());
    }
    if !s.interrupted && !complete.insert(s.name.clone()) {
        return Some("is there twice".into());
    }
    None
}
