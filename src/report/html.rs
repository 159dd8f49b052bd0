//! `--export-html`: one self-contained page (inline CSS and SVG, no script, no network)
//! that shows a run the way latency engineers read it: per scenario the summary table,
//! the histogram with a log count axis (one line per CPU), the per-second maximum and
//! the deadline; for suites a chart per statistic across the varying parameters; for
//! wake sweeps the response percentiles against the number of competitors; and the
//! system context with every warning. Every string from the system or user is escaped.

use super::html_trace::trace_section;
use super::Reporter;
use crate::render::category::{self, Categories, Style};
use crate::render::figure::charts_figure;
use crate::render::histogram::HistogramLine;
use crate::result::limits::{thread_failures, Limit};
use crate::result::{metric_label, Metric, ProbeKind, Run, Scenario};
use crate::stats::Stat;
use crate::units::human_ns;
use std::collections::BTreeMap;
use std::fmt::Write;

pub struct HtmlReporter {
    pub limits: Vec<Limit>,
}

pub use crate::render::escape::esc;
pub use crate::render::html::{html_table, page, page_start, PAGE_END};

/// The statistics of the summary tables.
const TABLE_STATS: [Stat; 11] = [
    Stat::Min,
    Stat::Avg,
    Stat::P50,
    Stat::P90,
    Stat::P99,
    Stat::P999,
    Stat::P9999,
    Stat::Max,
    Stat::Stddev,
    Stat::Overruns,
    Stat::Missed,
];

fn stat_cell(th: &crate::result::ThreadResult, stat: Stat, failed: bool) -> String {
    let class = if failed { "num fail" } else { "num" };
    let label = esc(&stat.header("µs"));
    if super::stat_unknown(th, stat) {
        return format!("<td class=\"{class}\" data-label=\"{label}\">–</td>");
    }
    let v = th.summary.stat(stat);
    let text = if stat.is_count() {
        format!("{v:.0}")
    } else {
        format!("{:.2}", v / 1e3)
    };
    format!("<td class=\"{class}\" data-label=\"{label}\">{text}</td>")
}

/// The summary table of one scenario (a card per CPU on a phone); cells failing a limit
/// are marked.
pub fn summary_table(sc: &Scenario, limits: &[Limit]) -> String {
    let mut out =
        String::from("<table class=\"cards\">\n<tr><th>CPU</th><th>method</th><th>samples</th>");
    for s in TABLE_STATS {
        let _ = write!(out, "<th>{}</th>", s.header("µs"));
    }
    out.push_str("</tr>\n");
    for th in &sc.threads {
        let failures = thread_failures(sc, th, limits);
        let partial = if sc.partial { " (partial)" } else { "" };
        let method = metric_label(&th.method, th.metric) + partial;
        let _ = write!(
            out,
            "<tr><td class=\"num\" data-label=\"CPU\">{}</td><td data-label=\"method\">{}</td>\
<td class=\"num\" data-label=\"samples\">{}</td>",
            th.cpu,
            esc(&method),
            th.summary.samples
        );
        for s in TABLE_STATS {
            let failed = failures.iter().any(|f| f.stat == s);
            out.push_str(&stat_cell(th, s, failed));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
    out
}

fn params_list(sc: &Scenario) -> String {
    let p = &sc.params;
    let mut items: Vec<(String, String)> = vec![
        ("probe".into(), sc.probe.name().to_string()),
        ("method".into(), p.method.clone()),
    ];
    if p.period_ns > 0 {
        items.push(("period".into(), human_ns(p.period_ns)));
    }
    if p.deadline_ns > 0 {
        items.push(("deadline".into(), human_ns(p.deadline_ns)));
    }
    items.push(("policy".into(), format!("{} {}", p.policy, p.priority)));
    items.push(("CPUs".into(), crate::units::format_cpu_list(&p.cpus)));
    items.push(("measured".into(), human_ns(sc.elapsed_ns)));
    items.push(("warm-up".into(), human_ns(p.warmup_ns)));
    if let Some(d) = p.dma_latency_us {
        items.push(("cpu_dma_latency".into(), format!("{d} µs")));
    }
    if let Some(ns) = p.timer_slack_ns {
        let how = if p.timer_slack_inherited {
            " (inherited, as cyclictest)"
        } else {
            ""
        };
        items.push(("timer slack".into(), format!("{}{how}", human_ns(ns))));
    }
    items.push((
        "loads".into(),
        if p.loads.is_empty() {
            "none".into()
        } else {
            p.loads.join(", ")
        },
    ));
    if !p.isolate.is_empty() {
        items.push(("isolated".into(), crate::units::format_cpu_list(&p.isolate)));
    }
    for (k, v) in p.extra.fields() {
        if !items.iter().any(|(name, _)| *name == k) {
            items.push((k, json_text(&v)));
        }
    }
    if sc.interrupted {
        items.push((
            "interrupted".into(),
            "yes: statistics cover what was measured".into(),
        ));
    }
    if sc.partial {
        items.push((
            "partial".into(),
            format!(
                "yes: still measuring when the file was last written (a checkpoint after {}): statistics cover that part",
                crate::units::human_ns(sc.elapsed_ns)
            ),
        ));
    }
    let mut out = String::from("<dl>\n");
    for (k, v) in items {
        let _ = writeln!(out, "<dt>{}</dt><dd>{}</dd>", esc(&k), esc(&v));
    }
    out.push_str("</dl>\n");
    out
}

/// A JSON value as plain text (strings without quotes).
fn json_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(a) => a.iter().map(json_text).collect::<Vec<_>>().join(", "),
        other => other.to_string(),
    }
}

fn thread_label(th: &crate::result::ThreadResult) -> String {
    metric_label(&format!("CPU {}", th.cpu), th.metric)
}

/// A scenario's histogram (or why there is none) and its largest latency per second.
fn scenario_figures(out: &mut String, sc: &Scenario) -> anyhow::Result<()> {
    let lines: Vec<HistogramLine> = sc
        .threads
        .iter()
        .filter(|t| !t.histogram.is_empty())
        .map(|t| HistogramLine {
            label: thread_label(t),
            buckets: &t.histogram,
            max_ns: t.summary.max_ns,
        })
        .collect();
    let deadline = Some(sc.params.deadline_ns).filter(|&d| d > 0);
    if lines.is_empty() {
        out.push_str("<p class=\"note\">No histogram was recorded for this scenario.</p>\n");
    } else {
        let d = crate::render::histogram::Distribution {
            name: sc.name.clone(),
            lines: &lines,
            deadline_ns: deadline,
        };
        let caption = "The latency histogram, one line per CPU: every sample on a log latency \
axis (bins 12 % wide), then the body on a linear axis in whole-µs bins, as OSADL draws it, \
cut where the samples thin out; the samples beyond it are marked in the strip under it and \
listed here.";
        out.push_str(&crate::render::figure::distribution(&d, caption)?);
    }
    let series: Vec<(String, &[u64])> = sc
        .threads
        .iter()
        .filter(|t| !t.per_second_max_ns.is_empty())
        .map(|t| (thread_label(t), t.per_second_max_ns.as_slice()))
        .collect();
    if !series.is_empty() {
        let title = format!("{} — largest latency per second", sc.name);
        let chart = crate::render::figure::Chart::drawn(&title, |c| {
            crate::render::timeline::timeline_svg(&title, &series, deadline, c)
        })?;
        let (header, rows) = crate::render::chart_data::per_second(&series);
        let seconds = series.iter().map(|(_, s)| s.len()).max().unwrap_or(0);
        let caption = match crate::render::timeline::timeline_step(seconds) {
            1 => "The largest latency of each second of the run (log axis).".to_string(),
            step => format!("The largest latency of each {step} seconds of the run (log axis; one mark per {step} seconds: the chart shows at most {} per CPU).", crate::render::timeline::TIMELINE_MARKS),
        };
        out.push_str(&charts_figure(&[chart], &caption, &[], &header, &rows));
    }
    Ok(())
}

fn scenario_section(sc: &Scenario, index: usize, limits: &[Limit]) -> anyhow::Result<String> {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "<section id=\"scenario-{index}\">\n<h2>{}</h2>",
        esc(&sc.name)
    );
    out.push_str(&params_list(sc));
    out.push_str(&summary_table(sc, limits));
    scenario_figures(&mut out, sc)?;
    if !sc.loads.is_empty() {
        out.push_str("<h3>Loads</h3>\n<table>\n<tr><th>load</th><th>CPUs</th><th>throughput</th><th>CPU use</th></tr>\n");
        for l in &sc.loads {
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td>{}</td><td class=\"num\">{:.1} {}</td><td class=\"num\">{:.0} %</td></tr>",
                esc(&l.spec),
                esc(&crate::units::format_cpu_list(&l.cpus)),
                l.throughput,
                esc(&l.unit),
                l.cpu_percent
            );
        }
        out.push_str("</table>\n");
    }
    if let Some(t) = &sc.trace {
        out.push_str(&trace_section(sc, t)?);
    }
    out.push_str(&super::worst_case_plots::section(sc)?);
    if let Some(iso) = &sc.isolation {
        let _ = writeln!(
            out,
            "<details><summary>Isolation</summary><pre>{}</pre></details>",
            esc(&serde_json::to_string_pretty(iso).unwrap_or_default())
        );
    }
    for w in &sc.warnings {
        let _ = writeln!(out, "<p class=\"warn\">{}</p>", esc(&w.message));
    }
    out.push_str("</section>\n");
    Ok(out)
}

/// The dimensions a scenario can differ in, for suite charts: name -> value.
fn dimensions(sc: &Scenario) -> BTreeMap<&'static str, String> {
    let p = &sc.params;
    let mut d = BTreeMap::new();
    d.insert(
        "load",
        if p.loads.is_empty() {
            "none".into()
        } else {
            p.loads.join("+")
        },
    );
    d.insert("method", p.method.clone());
    d.insert(
        "isolation",
        if p.isolate.is_empty() {
            "none".into()
        } else {
            crate::units::format_cpu_list(&p.isolate)
        },
    );
    d.insert("policy", format!("{} {}", p.policy, p.priority));
    d.insert("period", human_ns(p.period_ns));
    d
}

/// The order in which varying dimensions are put on the x axis.
const X_PREFERENCE: [&str; 5] = ["load", "method", "isolation", "policy", "period"];

/// The worst value of a statistic over a scenario's threads of its first metric.
fn worst(sc: &Scenario, stat: Stat) -> Option<f64> {
    let metric = &sc.threads.first()?.metric;
    sc.threads
        .iter()
        .filter(|t| &t.metric == metric && !super::stat_unknown(t, stat))
        .map(|t| t.summary.stat(stat))
        .reduce(f64::max)
}

/// A suite's study: its tables and, for the study shapes, its charts (per-competitor
/// lines for wake-competitors, grouped bars for rt-cost and irq-response) and notes.
fn study_section(run: &Run, info: &crate::result::SuiteInfo) -> anyhow::Result<String> {
    let view = super::study::study_view(run, info, false);
    let mut out = String::from("<section class=\"study\" id=\"study\">\n");
    let _ = writeln!(out, "<h2>{}</h2>", esc(&info.title));
    for t in &view.tables {
        if !t.title.is_empty() {
            let _ = writeln!(out, "<h3>{}</h3>", esc(&t.title));
        }
        out.push_str(&html_table(&t.header, &t.rows, t.first_numeric));
    }
    for note in &view.notes {
        let _ = writeln!(out, "<p class=\"note\">{}</p>", esc(note));
    }
    for chart in &view.charts {
        let style = if chart.lines {
            Style::Lines
        } else {
            Style::Bars
        };
        let drawn = category::chart(&Categories {
            style,
            title: &chart.title,
            x_desc: &chart.x_desc,
            y_desc: &chart.y_desc,
            categories: &chart.categories,
            series: &chart.series,
            latency: chart.y_desc.contains("µs"),
        })?;
        let (header, rows) =
            crate::render::chart_data::categories(&chart.x_desc, &chart.categories, &chart.series);
        out.push_str(&charts_figure(&[drawn], &chart.title, &[], &header, &rows));
    }
    out.push_str("</section>\n");
    Ok(out)
}

/// For runs of several scenarios: the study table's statistics as charts over the
/// parameters that vary (x: the first of load, method, ...; one line per combination
/// of the others).
fn suite_section(run: &Run) -> anyhow::Result<String> {
    let mut probes: Vec<ProbeKind> = Vec::new();
    for sc in &run.scenarios {
        if !probes.contains(&sc.probe) {
            probes.push(sc.probe);
        }
    }
    let mut out = String::new();
    for probe in probes {
        let group: Vec<&Scenario> = run
            .scenarios
            .iter()
            .filter(|s| s.probe == probe && !is_wake_sweep(s))
            .collect();
        if group.len() >= 2 {
            out.push_str(&suite_charts(probe, &group)?);
        }
    }
    Ok(out)
}

/// A `wake` scenario of a competitor sweep (charted by `wake_section` instead).
fn is_wake_sweep(sc: &Scenario) -> bool {
    sc.probe == ProbeKind::Wake && sc.params.extra.competitors.is_some()
}

fn suite_charts(probe: ProbeKind, scenarios: &[&Scenario]) -> anyhow::Result<String> {
    let dims: Vec<BTreeMap<&str, String>> = scenarios.iter().map(|s| dimensions(s)).collect();
    let varying: Vec<&str> = X_PREFERENCE
        .iter()
        .copied()
        .filter(|k| dims.iter().any(|d| d[k] != dims[0][k]))
        .collect();
    let (x_dim, categories, keys) = chart_axes(scenarios, &dims, &varying);
    let mut out = format!(
        "<section class=\"suite\" id=\"across-{0}\">\n<h2>Across {0} scenarios</h2>\n",
        esc(probe.name())
    );
    let _ = writeln!(
        out,
        "<p class=\"note\">Worst CPU of each scenario; x axis: {}; one line per {}.</p>",
        esc(x_dim),
        esc(&if varying.len() > 1 {
            varying[1..].join(" and ")
        } else {
            "run".into()
        })
    );
    for stat in [Stat::Max, Stat::P99, Stat::Avg] {
        let mut series: Vec<(String, Vec<Option<f64>>)> = Vec::new();
        for (sc, (cat, line)) in scenarios.iter().zip(&keys) {
            let idx = match series.iter().position(|s| &s.0 == line) {
                Some(i) => i,
                None => {
                    series.push((line.clone(), vec![None; categories.len()]));
                    series.len() - 1
                }
            };
            let c = categories.iter().position(|c| c == cat).unwrap_or(0);
            if let Some(v) = worst(sc, stat) {
                let slot = &mut series[idx].1[c];
                *slot = Some(slot.map_or(v / 1e3, |o: f64| o.max(v / 1e3)));
            }
        }
        let title = format!("{probe}: {stat} latency per {x_dim}");
        let drawn = category::chart(&Categories {
            style: Style::Bars,
            title: &title,
            x_desc: x_dim,
            y_desc: &stat.to_string(),
            categories: &categories,
            series: &series,
            latency: true,
        })?;
        let (header, rows) = crate::render::chart_data::categories(x_dim, &categories, &series);
        let caption = format!("{stat} of the worst CPU per scenario (µs).");
        out.push_str(&charts_figure(&[drawn], &caption, &[], &header, &rows));
    }
    out.push_str("</section>\n");
    Ok(out)
}

/// Suite charts' x axis (the first varying dimension, else the scenarios), its categories,
/// and per scenario (its category, its line: the other varying dimensions).
fn chart_axes(
    scenarios: &[&Scenario],
    dims: &[BTreeMap<&str, String>],
    varying: &[&'static str],
) -> (&'static str, Vec<String>, Vec<(String, String)>) {
    match varying.first() {
        Some(&x) => {
            let mut cats: Vec<String> = Vec::new();
            let mut keys = Vec::new();
            for d in dims {
                if !cats.contains(&d[x]) {
                    cats.push(d[x].clone());
                }
                let rest: Vec<String> = varying[1..]
                    .iter()
                    .map(|k| format!("{k} {}", d[k]))
                    .collect();
                keys.push((
                    d[x].clone(),
                    if rest.is_empty() {
                        "worst CPU".into()
                    } else {
                        rest.join(", ")
                    },
                ));
            }
            (x, cats, keys)
        }
        None => {
            let names: Vec<String> = scenarios.iter().map(|s| s.name.clone()).collect();
            let keys = names
                .iter()
                .map(|n| (n.clone(), "worst CPU".to_string()))
                .collect();
            ("scenario", names, keys)
        }
    }
}

/// For `wake` runs whose scenarios carry `competitors`: response percentiles against
/// the number of competitors, one chart per method.
fn wake_section(run: &Run) -> anyhow::Result<String> {
    let mut by_method: BTreeMap<String, Vec<(u64, &Scenario)>> = BTreeMap::new();
    for sc in run.scenarios.iter().filter(|s| s.probe == ProbeKind::Wake) {
        if let Some(n) = sc.params.extra.competitors {
            by_method
                .entry(sc.params.method.clone())
                .or_default()
                .push((n, sc));
        }
    }
    let mut out = String::new();
    for (method, mut points) in by_method {
        if points.len() < 2 {
            continue;
        }
        points.sort_by_key(|p| p.0);
        let categories: Vec<String> = points.iter().map(|p| p.0.to_string()).collect();
        let series: Vec<(String, Vec<Option<f64>>)> = [Stat::P50, Stat::P99, Stat::P999, Stat::Max]
            .into_iter()
            .map(|stat| {
                let values = points
                    .iter()
                    .map(|(_, sc)| {
                        let metric = if sc.threads.iter().any(|t| t.metric == Metric::Response) {
                            Some(Metric::Response)
                        } else {
                            sc.threads.first().map(|t| t.metric)
                        };
                        sc.threads
                            .iter()
                            .filter(|t| Some(t.metric) == metric && !super::stat_unknown(t, stat))
                            .map(|t| t.summary.stat(stat))
                            .reduce(f64::max)
                            .map(|v| v / 1e3)
                    })
                    .collect();
                (stat.to_string(), values)
            })
            .collect();
        let title = format!("wake {method}: response against competitors");
        let drawn = category::chart(&Categories {
            style: Style::Lines,
            title: &title,
            x_desc: "competing tasks",
            y_desc: "response",
            categories: &categories,
            series: &series,
            latency: true,
        })?;
        if out.is_empty() {
            out.push_str("<section id=\"wake\">\n<h2>Response against competitors</h2>\n");
        }
        let (header, rows) =
            crate::render::chart_data::categories("competing tasks", &categories, &series);
        let caption = "Response-time percentiles (worst CPU, µs) per number of competing tasks.";
        out.push_str(&charts_figure(&[drawn], caption, &[], &header, &rows));
    }
    if !out.is_empty() {
        out.push_str("</section>\n");
    }
    Ok(out)
}

fn system_section(run: &Run) -> String {
    let mut out = String::from("<section id=\"system\">\n<h2>System context</h2>\n");
    let _ = writeln!(
        out,
        "<p><code>{}</code><br>{} {} · started {} · finished {}</p>",
        esc(&run.command_line.join(" ")),
        esc(&run.tool),
        esc(&run.tool_version),
        esc(&run.started_at),
        esc(&run.finished_at)
    );
    out.push_str("<dl>\n");
    if let Ok(serde_json::Value::Object(map)) = serde_json::to_value(&run.system) {
        for (k, v) in map {
            let text = match &v {
                serde_json::Value::Null => "unknown".to_string(),
                serde_json::Value::Array(a) if a.is_empty() => "none".into(),
                other => json_text(other),
            };
            let _ = writeln!(out, "<dt>{}</dt><dd>{}</dd>", esc(&k), esc(&text));
        }
    }
    out.push_str("</dl>\n<h3>Warnings</h3>\n");
    let mut any = false;
    for w in &run.warnings {
        any = true;
        let _ = writeln!(
            out,
            "<p class=\"warn\"><code>{}</code> {}</p>",
            esc(w.code.as_str()),
            esc(&w.message)
        );
    }
    for sc in &run.scenarios {
        for w in &sc.warnings {
            any = true;
            let _ = writeln!(
                out,
                "<p class=\"warn\"><code>{}</code> {}: {}</p>",
                esc(w.code.as_str()),
                esc(&sc.name),
                esc(&w.message)
            );
        }
    }
    if !any {
        out.push_str("<p class=\"pass\">None.</p>\n");
    }
    out.push_str("</section>\n");
    out
}

fn verdict_section(run: &Run, limits: &[Limit]) -> String {
    if limits.is_empty() {
        return String::new();
    }
    let asked: Vec<String> = limits
        .iter()
        .map(|l| format!("{}={}", l.stat, l.stat.format_value(l.limit)))
        .collect();
    let failures = crate::result::limits::check_run(run, limits);
    let mut out = format!(
        "<section id=\"verdict\">\n<h2>Verdict</h2>\n<p>Limits: {}</p>\n",
        esc(&asked.join(", "))
    );
    if failures.is_empty() {
        out.push_str("<p class=\"pass\">PASS: every scenario and CPU is within the limits.</p>\n");
    } else {
        for f in failures {
            let _ = writeln!(
                out,
                "<p class=\"failtext\">FAIL: {}</p>",
                esc(&f.to_string())
            );
        }
    }
    out.push_str("</section>\n");
    out
}

impl HtmlReporter {
    /// Writes the page as it goes: `run` gives header, tables and charts (summaries),
    /// `each_scenario` each scenario's section, one at a time (a suite's page never whole).
    pub fn write_page(
        &self,
        run: &Run,
        each_scenario: &mut crate::result::EachScenario<'_>,
        out: &mut dyn std::io::Write,
    ) -> anyhow::Result<()> {
        let mut body = String::new();
        let _ = writeln!(
            body,
            "<h1>{}</h1>\n<p class=\"worst\">{}</p>\n<p class=\"note\">latscope on {} · Linux {} ({}) · {} · {} scenario(s){}</p>",
            esc(&super::headline::run_what_ran(run)),
            esc(&super::headline::worst(run)),
            esc(&run.system.hostname),
            esc(&run.system.kernel_release),
            esc(&run.system.preemption_model),
            esc(&run.started_at),
            run.scenarios.len(),
            if run.interrupted { " · interrupted" } else { "" }
        );
        body.push_str(&verdict_section(run, &self.limits));
        body.push_str(&super::html_contents::contents(run));
        match &run.suite {
            Some(info) => body.push_str(&study_section(run, info)?),
            None if run.scenarios.len() > 1 => {
                body.push_str("<h2>Summary</h2>\n");
                let (header, rows, first_numeric) = super::table::header_and_rows(run, false);
                body.push_str(&html_table(&header, &rows, first_numeric));
            }
            None => {}
        }
        // A study shape draws its own charts; other runs get the generic ones.
        if run.suite.as_ref().and_then(|s| s.study.as_ref()).is_none() {
            body.push_str(&suite_section(run)?);
            body.push_str(&wake_section(run)?);
        }
        let title = format!(
            "latscope — {} on {}",
            super::headline::run_what_ran(run),
            run.system.hostname
        );
        // Two writes: `start + &body` would copy the body (a suite's tables and charts).
        out.write_all(page_start(&title).as_bytes())?;
        out.write_all(body.as_bytes())?;
        let mut index = 0;
        each_scenario(&mut |sc| {
            index += 1;
            Ok(out.write_all(scenario_section(sc, index - 1, &self.limits)?.as_bytes())?)
        })?;
        Ok(out.write_all((system_section(run) + PAGE_END).as_bytes())?)
    }
}

impl Reporter<Run> for HtmlReporter {
    fn render(&self, run: &Run) -> anyhow::Result<Vec<u8>> {
        let (mut bytes, scenarios) = (Vec::new(), &run.scenarios);
        let mut each = |f: &mut dyn FnMut(&Scenario) -> _| scenarios.iter().try_for_each(f);
        self.write_page(run, &mut each, &mut bytes).map(|()| bytes)
    }
}
