//! The rules that judge a run against the baseline (`--rule STATS:PERCENT[:ABSOLUTE]`,
//! default: p99.9 or max worse by more than 10 % and more than 5 µs) and the verdict
//! they give one aligned scenario × CPU: regressed, improved, within noise (the rule
//! says worse or better but the runs' bootstrap intervals overlap: compare/noise.rs),
//! undecidable (they overlap because an interval is too wide to say anything: a maximum
//! set by one 3 s stall spans 26 ms to 3 s) or unchanged.

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
    /// The rule saw a change the intervals can neither confirm nor rule out: they overlap
    /// only because one spans more than `UNDECIDABLE_SPAN` (or the change is larger than
    /// `UNDECIDABLE_RATIO` and still inside them).
    Undecidable,
    Unchanged,
}

/// An interval whose top is more than this many times its bottom says nothing of a change
/// (a maximum's interval reaches from the next-largest samples to the max itself).
pub const UNDECIDABLE_SPAN: f64 = 10.0;
/// A change by more than this factor (either way) that the intervals still hold is not
/// "noise": the runs are too few or too spiky to tell.
pub const UNDECIDABLE_RATIO: f64 = 2.0;

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Verdict::Regressed => "regressed",
            Verdict::Improved => "improved",
            Verdict::WithinNoise => "within noise",
            Verdict::Undecidable => "undecidable",
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
    /// The statistics whose change the intervals cannot decide, when others decided.
    pub unclear: Vec<Stat>,
}

/// Whether overlapping intervals `a` and `b` of values `va`, `vb` say nothing of the
/// change: one spans more than `UNDECIDABLE_SPAN`, or the values differ by more than
/// `UNDECIDABLE_RATIO`.
fn undecidable(
    va: f64,
    vb: f64,
    a: crate::stats::bootstrap::Interval,
    b: crate::stats::bootstrap::Interval,
) -> bool {
    let span = |i: crate::stats::bootstrap::Interval| i.hi > UNDECIDABLE_SPAN * i.lo.max(1.0);
    let (lo, hi) = (va.min(vb).max(1.0), va.max(vb));
    span(a) || span(b) || hi > UNDECIDABLE_RATIO * lo
}

/// `max 26.1 ms → 3.2 s (×123; 95 % intervals 12 ms–26.1 ms and 26.1 ms–3.2 s)`: both
/// values and what the intervals were, for a change they cannot decide.
fn unclear_reason(
    stat: Stat,
    va: f64,
    vb: f64,
    noise: (&super::noise::Noise, &super::noise::Noise),
) -> String {
    let t = |v: f64| stat.format_value(v);
    let i = |n: &super::noise::Noise| {
        n.of(stat)
            .map_or("–".into(), |i| format!("{}–{}", t(i.lo), t(i.hi)))
    };
    format!(
        "{stat} {} → {} ({}; 95 % intervals {} and {})",
        t(va),
        t(vb),
        ratio_text(va, vb),
        i(noise.0),
        i(noise.1)
    )
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
    let (mut worse, mut better, mut noisy, mut unclear) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
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
            let unsure = |n: (&super::noise::Noise, &super::noise::Noise)| {
                Some(undecidable(a, b, n.0.of(stat)?, n.1.of(stat)?))
            };
            let (list, reason) = match (beyond_noise(stat, up, noise), up) {
                (Some(false), _) if unsure(noise) == Some(true) => {
                    (&mut unclear, unclear_reason(stat, a, b, noise))
                }
                (Some(false), _) => (&mut noisy, reason),
                (_, true) => (&mut worse, reason),
                (_, false) => (&mut better, reason),
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
    } else if !unclear.is_empty() {
        (Verdict::Undecidable, std::mem::take(&mut unclear))
    } else {
        let verdict = if noisy.is_empty() {
            Verdict::Unchanged
        } else {
            Verdict::WithinNoise
        };
        (verdict, std::mem::take(&mut noisy))
    };
    let mut reasons: Vec<String> = chosen.iter().map(|(_, r)| r.clone()).collect();
    if !unclear.is_empty() {
        let unsure: Vec<&str> = unclear.iter().map(|(_, r)| r.as_str()).collect();
        reasons.push(format!("undecidable: {}", unsure.join(", ")));
    }
    if !noisy.is_empty() {
        let inside: Vec<&str> = noisy.iter().map(|(_, r)| r.as_str()).collect();
        reasons.push(format!("within noise: {}", inside.join(", ")));
    }
    Judgement {
        verdict,
        behind: chosen.iter().map(|(s, _)| *s).collect(),
        noisy: noisy.iter().map(|(s, _)| *s).collect(),
        unclear: unclear.iter().map(|(s, _)| *s).collect(),
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
        // Overlapping, ×3 apart: the intervals cannot tell, both values said.
        let j = judge(
            &a,
            &b,
            &rules,
            (&noise((90e3, 100e3)), &noise((95e3, 300e3))),
        );
        assert_eq!(j.verdict, Verdict::Undecidable);
        assert_eq!(
            j.reasons,
            ["max 100 µs → 300 µs (×3.00; 95 % intervals 90 µs–100 µs and 95 µs–300 µs)"]
        );
        // Overlapping, a modest change: within noise, the same statistic behind it.
        let c = thread(0, 130_000);
        let j = judge(
            &a,
            &c,
            &rules,
            (&noise((90e3, 100e3)), &noise((95e3, 130e3))),
        );
        assert_eq!(
            (j.verdict, j.behind.clone()),
            (Verdict::WithinNoise, vec![Stat::Max])
        );
        let j = judge(
            &c,
            &a,
            &rules,
            (&noise((95e3, 130e3)), &noise((90e3, 100e3))),
        );
        assert_eq!(j.verdict, Verdict::WithinNoise, "improvements too");
        // The field's case: a 3 s stall against 26 ms, its interval 26 ms to 3 s.
        let (d, e) = (thread(0, 26_000_000), thread(0, 3_000_000_000));
        let j = judge(&d, &e, &rules, (&noise((12e6, 26e6)), &noise((26e6, 3e9))));
        assert_eq!(j.verdict, Verdict::Undecidable, "{:?}", j.reasons);
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
