//! `latscope compare A.json B.json [...]`: aligns scenarios across runs by probe,
//! method, period, loads, CPU and metric; shows each statistic of each run with its
//! change and ratio against the first; judges every aligned scenario × CPU with a rule
//! (default: p99.9 or max worse by more than 10 % and more than 5 µs) as regressed,
//! improved or unchanged; and exports the comparison (HTML with overlaid histograms,
//! Markdown, CSV).

use super::limits::{format_stat, LimitFailure};
use super::plots::HistogramLine;
use super::Format;
use crate::cli::CompareArgs;
use crate::error::{UserError, EXIT_OK, EXIT_THRESHOLD};
use crate::result::{metric_label, Run, Scenario, ThreadResult};
use crate::stats::Stat;
use std::fmt::Write;

/// The rule used when no `--rule` is given.
pub const DEFAULT_RULE: &str = "p99.9,max:10%:5us";

/// The statistics shown in comparison tables.
pub const STATS: [Stat; 10] = [
    Stat::Min,
    Stat::Avg,
    Stat::P50,
    Stat::P99,
    Stat::P999,
    Stat::P9999,
    Stat::Max,
    Stat::Stddev,
    Stat::Overruns,
    Stat::Missed,
];

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
        Some(a) => crate::units::parse_duration_ns(a)? as f64,
    };
    Ok(Rule {
        stats,
        percent,
        absolute,
    })
}

/// The outcome for one aligned scenario × CPU in one run against the baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Regressed,
    Improved,
    Unchanged,
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Verdict::Regressed => "regressed",
            Verdict::Improved => "improved",
            Verdict::Unchanged => "unchanged",
        })
    }
}

/// Judges `new` against `base`; returns the verdict and the statistics behind it.
pub fn judge(base: &ThreadResult, new: &ThreadResult, rules: &[Rule]) -> Judgement {
    let mut worse = Vec::new();
    let mut better = Vec::new();
    for rule in rules {
        for &stat in &rule.stats {
            if super::stat_unknown(base, stat) || super::stat_unknown(new, stat) {
                continue;
            }
            let (a, b) = (base.summary.stat(stat), new.summary.stat(stat));
            let reason = format!("{stat} {} ({})", signed(stat, b - a), ratio(a, b));
            if b > a * (1.0 + rule.percent / 100.0) && b - a > rule.absolute {
                worse.push(reason);
            } else if b < a * (1.0 - rule.percent / 100.0) && a - b > rule.absolute {
                better.push(reason);
            }
        }
    }
    if !worse.is_empty() {
        (Verdict::Regressed, worse)
    } else if !better.is_empty() {
        (Verdict::Improved, better)
    } else {
        (Verdict::Unchanged, Vec::new())
    }
}

/// A signed change: `+12.30 µs`, `-3` for counts.
fn signed(stat: Stat, delta: f64) -> String {
    let sign = if delta >= 0.0 { "+" } else { "-" };
    if stat.is_count() {
        format!("{sign}{:.0}", delta.abs())
    } else {
        format!("{sign}{:.2} µs", delta.abs() / 1e3)
    }
}

fn ratio(a: f64, b: f64) -> String {
    if a > 0.0 {
        format!("×{:.2}", b / a)
    } else {
        "–".into()
    }
}

/// What aligns scenarios across runs.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct AlignKey {
    pub probe: String,
    /// The method without a parenthesized suffix (`clock-nanosleep (cyclictest)` aligns
    /// with `clock-nanosleep`).
    pub method: String,
    pub period_ns: u64,
    pub loads: Vec<String>,
    /// Probe-specific parameters (`competitors=4`), without `method`.
    pub extra: String,
    /// The how-many-th scenario with these values in its run (0 for the first).
    pub ordinal: usize,
    pub cpu: usize,
    pub metric: String,
}

impl AlignKey {
    pub fn label(&self) -> String {
        let mut s = format!("{} {}", self.probe, self.method);
        if self.period_ns > 0 {
            s.push(' ');
            s.push_str(&crate::units::human_ns(self.period_ns).replace(' ', ""));
        }
        if !self.loads.is_empty() {
            s.push_str(&format!(" load={}", self.loads.join("+")));
        }
        if !self.extra.is_empty() {
            s.push(' ');
            s.push_str(&self.extra);
        }
        if self.ordinal > 0 {
            s.push_str(&format!(" #{}", self.ordinal + 1));
        }
        s.push_str(&format!(" cpu{}", self.cpu));
        metric_label(&s, &self.metric)
    }
}

fn base_method(method: &str) -> String {
    match method.find(" (") {
        Some(i) if method.ends_with(')') => method[..i].to_string(),
        _ => method.to_string(),
    }
}

/// A scenario's probe-specific parameters as `k=v` words (without `method`, which
/// timer probes repeat there).
fn extra_text(sc: &Scenario) -> String {
    sc.params
        .extra
        .iter()
        .filter(|(k, _)| k.as_str() != "method")
        .map(|(k, v)| match v {
            serde_json::Value::String(s) => format!("{k}={s}"),
            other => format!("{k}={other}"),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// One aligned scenario × CPU: its entry in each run (None where a run lacks it).
pub struct Aligned<'a> {
    pub key: AlignKey,
    pub entries: Vec<Option<(&'a Scenario, &'a ThreadResult)>>,
}

/// Aligns every thread of every run; keys in order of first appearance.
pub fn align(runs: &[Run]) -> Vec<Aligned<'_>> {
    let mut out: Vec<Aligned> = Vec::new();
    for (r, run) in runs.iter().enumerate() {
        let mut seen: Vec<(String, String, u64, Vec<String>, String)> = Vec::new();
        for sc in &run.scenarios {
            let base = (
                sc.probe.clone(),
                base_method(&sc.params.method),
                sc.params.period_ns,
                sc.params.loads.clone(),
                extra_text(sc),
            );
            let ordinal = seen.iter().filter(|s| **s == base).count();
            seen.push(base.clone());
            for th in &sc.threads {
                let key = AlignKey {
                    probe: base.0.clone(),
                    method: base.1.clone(),
                    period_ns: base.2,
                    loads: base.3.clone(),
                    extra: base.4.clone(),
                    ordinal,
                    cpu: th.cpu,
                    metric: th.metric.clone(),
                };
                let idx = match out.iter().position(|a| a.key == key) {
                    Some(i) => i,
                    None => {
                        out.push(Aligned {
                            key,
                            entries: vec![None; runs.len()],
                        });
                        out.len() - 1
                    }
                };
                if out[idx].entries[r].is_none() {
                    out[idx].entries[r] = Some((sc, th));
                }
            }
        }
    }
    out
}

/// A verdict and the statistics behind it.
pub type Judgement = (Verdict, Vec<String>);

/// A judged comparison of several runs.
pub struct Comparison<'a> {
    /// A short label per run (its file name).
    pub labels: Vec<String>,
    pub aligned: Vec<Aligned<'a>>,
    /// Per aligned row, per later run: its verdict and reasons (None: missing in one).
    pub verdicts: Vec<Vec<Option<Judgement>>>,
}

/// Aligns and judges `runs` (the first is the baseline).
pub fn compare<'a>(labels: Vec<String>, runs: &'a [Run], rules: &[Rule]) -> Comparison<'a> {
    let aligned = align(runs);
    let verdicts = aligned
        .iter()
        .map(|a| {
            (1..runs.len())
                .map(|r| match (&a.entries[0], &a.entries[r]) {
                    (Some((_, base)), Some((_, new))) => Some(judge(base, new, rules)),
                    _ => None,
                })
                .collect()
        })
        .collect();
    Comparison {
        labels,
        aligned,
        verdicts,
    }
}

fn cell(th: &ThreadResult, stat: Stat) -> Option<f64> {
    if super::stat_unknown(th, stat) {
        return None;
    }
    Some(th.summary.stat(stat))
}

fn value_text(stat: Stat, v: Option<f64>, in_ns: bool) -> String {
    match v {
        None => "–".into(),
        Some(v) if stat.is_count() => format!("{v:.0}"),
        Some(v) => crate::units::latency_cell(v.round() as u64, in_ns),
    }
}

impl Comparison<'_> {
    /// Per aligned row: the header and one row per statistic (value per run, then
    /// change and ratio for each later run).
    pub fn table(&self, a: &Aligned, in_ns: bool) -> (Vec<String>, Vec<Vec<String>>) {
        let unit = if in_ns { "ns" } else { "µs" };
        let mut header = vec![format!("statistic ({unit})")];
        for (r, l) in self.labels.iter().enumerate() {
            header.push(l.clone());
            if r > 0 {
                header.push("change".into());
                header.push("ratio".into());
            }
        }
        let mut rows = Vec::new();
        let mut samples = vec!["samples".to_string()];
        for (r, e) in a.entries.iter().enumerate() {
            samples.push(e.map_or("–".into(), |(_, t)| t.summary.samples.to_string()));
            if r > 0 {
                samples.extend(["".into(), "".into()]);
            }
        }
        rows.push(samples);
        for stat in STATS {
            let base = a.entries[0].and_then(|(_, t)| cell(t, stat));
            let mut row = vec![stat.to_string()];
            for (r, e) in a.entries.iter().enumerate() {
                let v = e.and_then(|(_, t)| cell(t, stat));
                row.push(value_text(stat, v, in_ns));
                if r > 0 {
                    match (base, v) {
                        (Some(b), Some(v)) => {
                            row.push(if in_ns && !stat.is_count() {
                                format!("{:+.0}", v - b)
                            } else {
                                signed(stat, v - b).replace(" µs", "")
                            });
                            row.push(ratio(b, v));
                        }
                        _ => row.extend(["–".into(), "–".into()]),
                    }
                }
            }
            rows.push(row);
        }
        (header, rows)
    }

    /// One line per aligned row and later run: `REGRESSED: ...`, `improved: ...`.
    pub fn verdict_lines(&self) -> Vec<(Option<Verdict>, String)> {
        let mut lines = Vec::new();
        for (a, vs) in self.aligned.iter().zip(&self.verdicts) {
            for (i, v) in vs.iter().enumerate() {
                let label = &self.labels[i + 1];
                match v {
                    Some((verdict, reasons)) => {
                        let head = match verdict {
                            Verdict::Regressed => "REGRESSED",
                            Verdict::Improved => "improved",
                            Verdict::Unchanged => "unchanged",
                        };
                        let why = if reasons.is_empty() {
                            String::new()
                        } else {
                            format!(" ({})", reasons.join(", "))
                        };
                        lines.push((
                            Some(*verdict),
                            format!("{head}: {} in {label}{why}", a.key.label()),
                        ));
                    }
                    None => {
                        let missing = if a.entries[0].is_none() {
                            format!(
                                "{} only in {label}, not in {}",
                                a.key.label(),
                                self.labels[0]
                            )
                        } else {
                            format!("{} not in {label}", a.key.label())
                        };
                        if !lines
                            .iter()
                            .any(|(_, l): &(Option<Verdict>, String)| l.ends_with(&missing))
                        {
                            lines.push((None, format!("missing: {missing}")));
                        }
                    }
                }
            }
        }
        lines
    }

    pub fn any_regressed(&self) -> bool {
        self.verdicts
            .iter()
            .flatten()
            .any(|v| matches!(v, Some((Verdict::Regressed, _))))
    }

    /// The terminal rendering: a table per aligned scenario × CPU, then the verdicts.
    pub fn render_text(&self, in_ns: bool) -> String {
        use comfy_table::{presets::UTF8_FULL_CONDENSED, CellAlignment, Table};
        let mut out = String::new();
        for (i, l) in self.labels.iter().enumerate() {
            let role = if i == 0 { "baseline" } else { "compared" };
            let _ = writeln!(out, "{} {role}: {l}", (b'A' + (i % 26) as u8) as char);
        }
        for a in &self.aligned {
            let (header, rows) = self.table(a, in_ns);
            let mut t = Table::new();
            t.load_preset(UTF8_FULL_CONDENSED);
            t.set_header(header);
            for r in rows {
                t.add_row(r);
            }
            for i in 1..t.column_count() {
                if let Some(c) = t.column_mut(i) {
                    c.set_cell_alignment(CellAlignment::Right);
                }
            }
            let _ = writeln!(out, "\n{}\n{t}", a.key.label());
        }
        out.push('\n');
        for (_, line) in self.verdict_lines() {
            out.push_str(&line);
            out.push('\n');
        }
        out
    }

    /// Markdown: the same tables and verdicts.
    pub fn render_markdown(&self, in_ns: bool) -> String {
        use super::markdown::{md_cell, md_table};
        let mut out = String::from("## latscope comparison\n\n");
        for (i, l) in self.labels.iter().enumerate() {
            let role = if i == 0 { "baseline" } else { "compared" };
            let _ = writeln!(out, "- {role}: `{}`", l.replace('`', "'"));
        }
        for a in &self.aligned {
            let (header, rows) = self.table(a, in_ns);
            let _ = writeln!(out, "\n### {}\n", md_cell(&a.key.label()));
            out.push_str(&md_table(&header, &rows, 1));
        }
        out.push_str("\n### Verdicts\n\n");
        for (_, line) in self.verdict_lines() {
            let _ = writeln!(out, "- {}", md_cell(&line));
        }
        out
    }

    /// CSV: one row per aligned scenario × CPU × statistic × run.
    pub fn render_csv(&self) -> anyhow::Result<Vec<u8>> {
        let mut w = ::csv::Writer::from_writer(Vec::new());
        w.write_record([
            "scenario",
            "cpu",
            "metric",
            "statistic",
            "run",
            "value",
            "change",
            "ratio",
            "verdict",
        ])?;
        for (a, vs) in self.aligned.iter().zip(&self.verdicts) {
            for stat in STATS {
                let base = a.entries[0].and_then(|(_, t)| cell(t, stat));
                for (r, e) in a.entries.iter().enumerate() {
                    let v = e.and_then(|(_, t)| cell(t, stat));
                    let (change, ratio) = match (r, base, v) {
                        (r, Some(b), Some(v)) if r > 0 => (
                            format!("{:.1}", v - b),
                            if b > 0.0 {
                                format!("{:.4}", v / b)
                            } else {
                                String::new()
                            },
                        ),
                        _ => (String::new(), String::new()),
                    };
                    let verdict = if r == 0 {
                        "baseline".to_string()
                    } else {
                        vs[r - 1]
                            .as_ref()
                            .map_or("missing".into(), |v| v.0.to_string())
                    };
                    w.write_record([
                        a.key.label(),
                        a.key.cpu.to_string(),
                        a.key.metric.clone(),
                        stat.to_string(),
                        self.labels[r].clone(),
                        v.map_or(String::new(), |v| format!("{v:.1}")),
                        change,
                        ratio,
                        verdict,
                    ])?;
                }
            }
        }
        Ok(w.into_inner()?)
    }

    /// HTML: overlaid histograms (one line per run) per aligned scenario × CPU, the
    /// tables and the verdicts.
    pub fn render_html(&self, in_ns: bool) -> anyhow::Result<String> {
        use super::html::{esc, page};
        let mut body = String::from("<h1>latscope comparison</h1>\n<ul>\n");
        for (i, l) in self.labels.iter().enumerate() {
            let role = if i == 0 { "baseline" } else { "compared" };
            let _ = writeln!(body, "<li>{role}: <code>{}</code></li>", esc(l));
        }
        body.push_str("</ul>\n<h2>Verdicts</h2>\n");
        for (v, line) in self.verdict_lines() {
            let class = match v {
                Some(Verdict::Regressed) => "failtext",
                Some(Verdict::Improved) => "pass",
                _ => "note",
            };
            let _ = writeln!(body, "<p class=\"{class}\">{}</p>", esc(&line));
        }
        for a in &self.aligned {
            let _ = writeln!(body, "<section>\n<h2>{}</h2>", esc(&a.key.label()));
            let lines: Vec<HistogramLine> = a
                .entries
                .iter()
                .enumerate()
                .filter_map(|(r, e)| {
                    e.filter(|(_, t)| !t.histogram.is_empty())
                        .map(|(_, t)| HistogramLine {
                            label: self.labels[r].clone(),
                            buckets: &t.histogram,
                        })
                })
                .collect();
            if !lines.is_empty() {
                let deadline = a
                    .entries
                    .iter()
                    .flatten()
                    .next()
                    .map(|(s, _)| s.params.deadline_ns);
                let (svg, note) = super::plots::histogram_svg(
                    &format!("{} — histograms overlaid", a.key.label()),
                    &lines,
                    deadline,
                )?;
                let _ = writeln!(
                    body,
                    "<figure>\n{svg}\n<figcaption class=\"note\">One line per run, logarithmic count axis.{}</figcaption>\n</figure>",
                    note.map(|n| format!(" {}.", esc(&n))).unwrap_or_default()
                );
            }
            let (header, rows) = self.table(a, in_ns);
            body.push_str("<table>\n<tr>");
            for h in header {
                let _ = write!(body, "<th>{}</th>", esc(&h));
            }
            body.push_str("</tr>\n");
            for r in rows {
                body.push_str("<tr>");
                for (i, c) in r.iter().enumerate() {
                    let class = if i > 0 { " class=\"num\"" } else { "" };
                    let _ = write!(body, "<td{class}>{}</td>", esc(c));
                }
                body.push_str("</tr>\n");
            }
            body.push_str("</table>\n</section>\n");
        }
        Ok(page("latscope comparison", &body))
    }
}

/// Short labels for the runs: file names, or full paths where names repeat.
pub fn run_labels(paths: &[std::path::PathBuf]) -> Vec<String> {
    let names: Vec<String> = paths
        .iter()
        .map(|p| {
            p.file_name().map_or_else(
                || p.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            )
        })
        .collect();
    names
        .iter()
        .zip(paths)
        .map(|(n, p)| {
            if names.iter().filter(|m| *m == n).count() > 1 {
                p.display().to_string()
            } else {
                n.clone()
            }
        })
        .collect()
}

/// `latscope compare`.
pub fn command(args: &CompareArgs) -> anyhow::Result<i32> {
    let rules: Vec<Rule> = if args.rule.is_empty() {
        vec![parse_rule(DEFAULT_RULE).map_err(UserError::Other)?]
    } else {
        args.rule
            .iter()
            .map(|r| {
                parse_rule(r).map_err(|reason| UserError::InvalidValue {
                    option: "--rule".into(),
                    value: r.clone(),
                    reason,
                })
            })
            .collect::<Result<_, _>>()?
    };
    let limits = super::exports::limits_from_args(&args.output)?;
    let exports = super::exports::from_args(&args.output);
    for e in &exports {
        if !matches!(e.format, Format::Html | Format::Markdown | Format::Csv) {
            return Err(UserError::InvalidValue {
                option: e.format.flag().into(),
                value: e.path.display().to_string(),
                reason: "compare exports HTML, Markdown and CSV; render a single run's other formats with `latscope report`".into(),
            }
            .into());
        }
    }
    super::exports::check(&exports)?;
    let runs: Vec<Run> = args
        .inputs
        .iter()
        .map(|p| super::cyclictest_import::load_any(p))
        .collect::<Result<_, _>>()?;
    let labels = run_labels(&args.inputs);
    let cmp = compare(labels.clone(), &runs, &rules);
    let to_stdout = exports.iter().any(|e| e.to_stdout());
    if !args.output.quiet {
        let text = cmp.render_text(args.output.ns);
        if to_stdout {
            eprint!("{text}");
        } else {
            print!("{text}");
        }
    }
    for e in &exports {
        let bytes = match e.format {
            Format::Html => cmp.render_html(args.output.ns)?.into_bytes(),
            Format::Markdown => cmp.render_markdown(args.output.ns).into_bytes(),
            _ => cmp.render_csv()?,
        };
        super::exports::write_bytes(&e.path, &bytes)?;
    }
    let mut failures: Vec<LimitFailure> = Vec::new();
    for (run, label) in runs.iter().zip(&labels).skip(1) {
        failures.extend(
            super::limits::check_run(run, &limits)
                .into_iter()
                .map(|mut f| {
                    f.source = Some(label.clone());
                    f
                }),
        );
    }
    let limit_failed =
        super::limits::print_verdict(&failures, !limits.is_empty() && !args.output.quiet);
    let regressed = cmp.any_regressed();
    if regressed && args.fail_on_regression {
        eprintln!(
            "FAIL: at least one scenario regressed (rule {})",
            rule_text(&rules)
        );
    }
    Ok(if limit_failed || (regressed && args.fail_on_regression) {
        EXIT_THRESHOLD
    } else {
        EXIT_OK
    })
}

fn rule_text(rules: &[Rule]) -> String {
    rules
        .iter()
        .map(|r| {
            let abs = if r.stats.iter().all(|s| s.is_count()) {
                format!("{}", r.absolute)
            } else {
                format_stat(Stat::Max, r.absolute).replace(' ', "")
            };
            let stats: Vec<&str> = r.stats.iter().map(|s| s.name()).collect();
            format!("{}:{}%:{abs}", stats.join(","), r.percent)
        })
        .collect::<Vec<_>>()
        .join(" ")
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

    #[test]
    fn methods_align_without_suffix() {
        assert_eq!(
            base_method("clock-nanosleep (cyclictest)"),
            "clock-nanosleep"
        );
        assert_eq!(base_method("timerfd"), "timerfd");
    }
}
