//! The rules that judge a run against the baseline (`--rule STATS:PERCENT[:ABSOLUTE]`,
//! default: p99.9 or max worse by more than 10 % and more than 5 µs) and the verdict
//! they give one aligned scenario × CPU: regressed, improved, within noise (the rule
//! says worse or better but the runs' bootstrap intervals overlap: compare/noise.rs) or
//! unchanged.

use crate::result::stat_unknown;
use crate::result::ThreadResult;
use crate::stats::Stat;

/// The rule used when no `--rule` is given.
pub const DEFAULT_RULE: &str = "p99.9,max:10%:5us";

/// `STATS:PERCENT[:ABSOLUTE]`: a statistic regressed when it is worse (higher) than the
/// baseline by more than `percent` % and by more than `absolute` (ns, or a count).
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    pub stats: Vec<Stat>,
    pub percent: f64,
    pub absolute: f64,
}

/// Parses a rule such as `p99.9,max:10%:5us` or `overruns:0%:10`.
pub fn parse_rule(text: &str) -> Result<Rule, String> {
    let parts: Vec<&str> = text.split(':').map(str::trim).collect();
    if parts.len() < 2 || parts.len() > 3 {
        return Err(format!(
            "'{text}' is not STATS:PERCENT[:ABSOLUTE]; write e.g. {DEFAULT_RULE}"
        ));
    }
    let stats: Vec<Stat> = parts[0]
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(Stat::parse_judged)
        .collect::<Result<_, _>>()?;
    if stats.is_empty() {
        return Err(format!(
            "'{text}' names no statistic; write e.g. {DEFAULT_RULE}"
        ));
    }
    let Some(pct_text) = parts[1].strip_suffix('%') else {
        return Err(format!(
            "'{}' in '{text}' is not a percentage like 10% (the % is required)",
            parts[1]
        ));
    };
    let percent: f64 = pct_text
        .parse()
        .ok()
        .filter(|p: &f64| p.is_finite() && *p >= 0.0)
        .ok_or_else(|| format!("'{}' in '{text}' is not a percentage like 10%", parts[1]))?;
    let absolute = match parts.get(2) {
        None => 0.0,
        Some(a) if a.chars().all(|c| c.is_ascii_digit() || c == '.') => {
            if stats.iter().all(|s| s.is_count()) {
                a.parse::<f64>()
                    .map_err(|_| format!("'{a}' is not a number"))?
            } else {
                return Err(format!(
                    "'{a}' in '{text}' has no unit; write e.g. {a}us (counts need none)"
                ));
            }
        }
        Some(a) => crate::units::parse_duration_ns(a, "us")? as f64,
    };
    Ok(Rule {
        stats,
        percent,
        absolute,
    })
}

/// The rules as typed back: `p99.9,max:10%:5µs` (several separated by spaces).
pub fn rules_text(rules: &[Rule]) -> String {
    rules
        .iter()
        .map(|r| {
            let abs = if r.stats.iter().all(|s| s.is_count()) {
                format!("{}", r.absolute)
            } else {
                Stat::Max.format_value(r.absolute).replace(' ', "")
            };
            let stats: Vec<&str> = r.stats.iter().map(|s| s.name()).collect();
            format!("{}:{}%:{abs}", stats.join(","), r.percent)
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The rules in words: `p99.9 or max is worse by more than 10 % and more than 5 µs`.
pub fn rules_sentence(rules: &[Rule]) -> String {
    rules
        .iter()
        .map(|r| {
            let names: Vec<&str> = r.stats.iter().map(|s| s.name()).collect();
            let stats = match names.split_last() {
                Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
                _ => names.join(""),
            };
            let abs = if r.stats.iter().all(|s| s.is_count()) {
                format!("{}", r.absolute)
            } else {
                Stat::Max.format_value(r.absolute)
            };
            format!(
                "{stats} is worse by more than {} % and more than {abs}",
                r.percent
            )
        })
        .collect::<Vec<_>>()
        .join("; or ")
}

/// The outcome for one aligned scenario × CPU in one run against the baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Regressed,
    Improved,
    /// The rule saw a change, but inside both runs' bootstrap intervals.
    WithinNoise,
    Unchanged,
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Verdict::Regressed => "regressed",
            Verdict::Improved => "improved",
            Verdict::WithinNoise => "within noise",
            Verdict::Unchanged => "unchanged",
        })
    }
}

/// A verdict, the reasons for it and the statistics behind it.
#[derive(Debug, Clone, PartialEq)]
pub struct Judgement {
    pub verdict: Verdict,
    pub reasons: Vec<String>,
    /// The statistics that gave the verdict (none for unchanged).
    pub behind: Vec<Stat>,
    /// The statistics the rule saw change inside the noise, when others decided.
    pub noisy: Vec<Stat>,
}

/// Where a change the rule sees stands against the noise: None when either run has no
/// interval for the statistic (judged by the rule alone), else whether it is beyond.
fn beyond_noise(
    stat: Stat,
    worse: bool,
    noise: (&super::noise::Noise, &super::noise::Noise),
) -> Option<bool> {
    let (a, b) = (noise.0.of(stat)?, noise.1.of(stat)?);
    Some(if worse { b.lo > a.hi } else { b.hi < a.lo })
}

/// Judges `new` against `base` with the rules and each run's noise (compare/noise.rs).
pub fn judge(
    base: &ThreadResult,
    new: &ThreadResult,
    rules: &[Rule],
    noise: (&super::noise::Noise, &super::noise::Noise),
) -> Judgement {
    let (mut worse, mut better, mut noisy) = (Vec::new(), Vec::new(), Vec::new());
    for rule in rules {
        for &stat in &rule.stats {
            if stat_unknown(base, stat) || stat_unknown(new, stat) {
                continue;
            }
            let (a, b) = (base.summary.stat(stat), new.summary.stat(stat));
            let reason = format!(
                "{stat} {} ({})",
                signed_change(stat, b - a),
                ratio_text(a, b)
            );
            let up = b > a * (1.0 + rule.percent / 100.0) && b - a > rule.absolute;
            let down = b < a * (1.0 - rule.percent / 100.0) && a - b > rule.absolute;
            if !up && !down {
                continue;
            }
            let list = match (beyond_noise(stat, up, noise), up) {
                (Some(false), _) => &mut noisy,
                (_, true) => &mut worse,
                (_, false) => &mut better,
            };
            if !list.iter().any(|(s, _)| *s == stat) {
                list.push((stat, reason));
            }
        }
    }
    let (verdict, chosen) = if !worse.is_empty() {
        (Verdict::Regressed, worse)
    } else if !better.is_empty() {
        (Verdict::Improved, better)
    } else {
        let verdict = if noisy.is_empty() {
            Verdict::Unchanged
        } else {
            Verdict::WithinNoise
        };
        (verdict, std::mem::take(&mut noisy))
    };
    let mut reasons: Vec<String> = chosen.iter().map(|(_, r)| r.clone()).collect();
    if !noisy.is_empty() {
        let inside: Vec<&str> = noisy.iter().map(|(_, r)| r.as_str()).collect();
        reasons.push(format!("within noise: {}", inside.join(", ")));
    }
    Judgement {
        verdict,
        behind: chosen.iter().map(|(s, _)| *s).collect(),
        noisy: noisy.iter().map(|(s, _)| *s).collect(),
        reasons,
    }
}

/// A signed change: `+12.3 µs`, `-1.2 ms`, `-3` for counts.
pub fn signed_change(stat: Stat, delta: f64) -> String {
    let sign = if delta >= 0.0 { "+" } else { "-" };
    if stat.is_count() {
        format!("{sign}{:.0}", delta.abs())
    } else {
        let abs = crate::units::human_ns(delta.abs().round() as u64);
        format!("{sign}{abs}")
    }
}

/// `new` as a multiple of `base`: `×1.25`, `–` when the baseline is 0.
pub fn ratio_text(base: f64, new: f64) -> String {
    if base > 0.0 {
        format!("×{:.2}", new / base)
    } else {
        "–".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_parse_and_explain_mistakes() {
        let r = parse_rule(DEFAULT_RULE).unwrap();
        assert_eq!(r.stats, vec![Stat::P999, Stat::Max]);
        assert_eq!(r.percent, 10.0);
        assert_eq!(r.absolute, 5000.0);
        assert_eq!(parse_rule("overruns:0%:10").unwrap().absolute, 10.0);
        assert_eq!(parse_rule("max:20%").unwrap().absolute, 0.0);
        assert!(parse_rule("max:10%:5").unwrap_err().contains("no unit"));
        assert!(parse_rule("p42:10%")
            .unwrap_err()
            .contains("unknown statistic"));
        assert!(parse_rule("max").unwrap_err().contains("STATS:PERCENT"));
        assert!(parse_rule("max:ten%").unwrap_err().contains("percentage"));
    }

    fn thread(p999: u64, max: u64) -> ThreadResult {
        ThreadResult {
            cpu: 0,
            method: "clock-nanosleep".into(),
            metric: Default::default(),
            summary: crate::stats::Summary {
                samples: 1000,
                p999_ns: p999,
                max_ns: max,
                ..Default::default()
            },
            histogram: vec![[max, 1000]],
            per_second_max_ns: Vec::new(),
            extra: Default::default(),
            worst_case: None,
        }
    }

    fn noise(max: (f64, f64)) -> super::super::noise::Noise {
        let i = crate::stats::bootstrap::Interval {
            lo: max.0,
            hi: max.1,
        };
        super::super::noise::Noise {
            intervals: vec![(Stat::Max, i)],
        }
    }

    #[test]
    fn a_change_counts_only_beyond_both_intervals() {
        let rules = [parse_rule("max:10%:5us").unwrap()];
        let (a, b) = (thread(0, 100_000), thread(0, 300_000));
        // Disjoint intervals: regressed, with max behind it.
        let j = judge(
            &a,
            &b,
            &rules,
            (&noise((90e3, 100e3)), &noise((250e3, 300e3))),
        );
        assert_eq!(
            (j.verdict, j.behind.clone()),
            (Verdict::Regressed, vec![Stat::Max])
        );
        assert_eq!(j.reasons, ["max +200 µs (×3.00)"]);
        // Overlapping: within noise, the same statistic behind it.
        let j = judge(
            &a,
            &b,
            &rules,
            (&noise((90e3, 100e3)), &noise((95e3, 300e3))),
        );
        assert_eq!(j.verdict, Verdict::WithinNoise);
        let j = judge(
            &b,
            &a,
            &rules,
            (&noise((95e3, 300e3)), &noise((90e3, 100e3))),
        );
        assert_eq!(j.verdict, Verdict::WithinNoise, "improvements too");
        // No interval (no histogram): the rule alone.
        let none = super::super::noise::Noise::default();
        assert_eq!(
            judge(&a, &b, &rules, (&none, &none)).verdict,
            Verdict::Regressed
        );
        // Below the thresholds: unchanged whatever the noise.
        let c = thread(0, 104_000);
        let j = judge(&a, &c, &rules, (&noise((0.0, 1.0)), &noise((2.0, 3.0))));
        assert_eq!((j.verdict, j.behind.len()), (Verdict::Unchanged, 0));
    }

    #[test]
    fn the_rule_in_words() {
        let rules = [parse_rule(DEFAULT_RULE).unwrap()];
        assert_eq!(
            rules_sentence(&rules),
            "p99.9 or max is worse by more than 10 % and more than 5 µs"
        );
    }
}
