//! The study tables of a suite: by default one row per scenario × CPU, labelled by what
//! varies (method, period, load, isolation, policy), with the statistics the study
//! printed; for the presets with a `study` shape, the study's own tables
//! (wake-competitors: response per competitor count, RR and OTHER side by side;
//! rt-cost: latency and throughput per item; irq-response: min/avg/max per load). The
//! terminal, Markdown and HTML reports all draw these.

use crate::result::{
    metric_label, LoadResult, Metric, ProbeKind, Run, Scenario, Study, SuiteInfo, ThreadResult,
};
use crate::stats::{Stat, Summary};
use crate::units::{human_ns, latency_cell};
use comfy_table::Table;

pub struct StudyTableReporter {
    pub title: String,
    /// Statistic names as `Stat::parse` knows them.
    pub columns: Vec<String>,
    /// The study's table shape; None: one row per scenario × CPU.
    pub study: Option<Study>,
    pub in_ns: bool,
}

fn load_label(sc: &Scenario) -> String {
    if sc.params.loads.is_empty() {
        "none".into()
    } else {
        sc.params.loads.join(" + ")
    }
}

/// What tells a wake, net or noise scenario apart beyond its method (`competitors=8
/// cpu0->1`, `56 B flood`, `threshold 5us`); None for the timer.
fn probe_detail(sc: &Scenario) -> Option<String> {
    let extra = &sc.params.extra;
    match sc.probe {
        ProbeKind::Wake => {
            let (waker, wakee) = (extra.waker_cpu?, extra.wakee_cpu?);
            let cpus = if waker == wakee {
                format!("cpu{wakee}")
            } else {
                format!("cpu{waker}->{wakee}")
            };
            Some(format!("competitors={} {cpus}", extra.competitors?))
        }
        ProbeKind::Net => {
            let flood = extra.flood == Some(true);
            Some(format!(
                "{} B{}",
                extra.size_bytes?,
                if flood { " flood" } else { "" }
            ))
        }
        ProbeKind::Noise => Some(format!("threshold {}", human_ns(extra.threshold_ns?))),
        _ => None,
    }
}

fn cell(summary: &Summary, column: &str, in_ns: bool) -> String {
    match Stat::parse(column) {
        Some(Stat::Samples) => summary.samples.to_string(),
        Some(stat) if stat.is_count() => format!("{:.0}", summary.stat(stat)),
        Some(stat) => latency_cell(summary.stat(stat).round() as u64, in_ns),
        None => "?".into(),
    }
}

/// The study table's header, rows and first numeric column (shared by the terminal
/// table and the HTML report).
pub fn header_and_rows(
    run: &Run,
    columns: &[String],
    in_ns: bool,
) -> (Vec<String>, Vec<Vec<String>>, usize) {
    let unit = if in_ns { "ns" } else { "µs" };
    let mut header: Vec<String> = ["method", "period", "load", "isolated", "policy", "cpu"]
        .map(String::from)
        .to_vec();
    for c in columns {
        header.push(match Stat::parse(c) {
            Some(stat) if stat.is_count() => c.clone(),
            _ => format!("{c} ({unit})"),
        });
    }
    let mut rows = Vec::new();
    for sc in &run.scenarios {
        for th in &sc.threads {
            let mut method = metric_label(&th.method, th.metric);
            if let Some(detail) = probe_detail(sc) {
                method.push(' ');
                method.push_str(&detail);
            }
            if sc.interrupted {
                method.push_str(" (interrupted)");
            }
            let mut row = vec![
                method,
                human_ns(sc.params.period_ns),
                load_label(sc),
                if sc.params.isolate.is_empty() {
                    "no"
                } else {
                    "yes"
                }
                .to_string(),
                format!("{} {}", sc.params.policy, sc.params.priority),
                th.cpu.to_string(),
            ];
            row.extend(columns.iter().map(|c| cell(&th.summary, c, in_ns)));
            rows.push(row);
        }
    }
    (header, rows, 6)
}

/// One table of a study: a title line (may be empty), its header and rows.
#[derive(Debug, Clone, PartialEq)]
pub struct StudyTable {
    pub title: String,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// Columns from this one on are numbers (right-aligned).
    pub first_numeric: usize,
}

/// A chart of a study, in the study's shape: lines over an ordered axis (competitors) or
/// grouped bars over categories (items, loads). Values in µs (or the load's unit).
#[derive(Debug, Clone, PartialEq)]
pub struct StudyChart {
    pub lines: bool,
    pub title: String,
    pub x_desc: String,
    pub y_desc: String,
    pub categories: Vec<String>,
    pub series: Vec<(String, Vec<Option<f64>>)>,
}

/// Everything a report shows of a suite: its tables, its charts, and notes (such as "no
/// trace: timer latency shown").
#[derive(Debug, Clone, Default)]
pub struct StudyView {
    pub tables: Vec<StudyTable>,
    pub charts: Vec<StudyChart>,
    pub notes: Vec<String>,
}

/// The study view of a suite run laid out as `info` says.
pub fn study_view(run: &Run, info: &SuiteInfo, in_ns: bool) -> StudyView {
    match info.study {
        Some(Study::WakeCompetitors) => wake_competitors(run, &info.columns, in_ns),
        Some(Study::RtCost) => rt_cost(run, &info.columns, in_ns),
        Some(Study::IrqResponse) => irq_response(run, &info.columns, in_ns),
        None => {
            let (header, rows, first_numeric) = header_and_rows(run, &info.columns, in_ns);
            StudyView {
                tables: vec![StudyTable {
                    title: String::new(),
                    header,
                    rows,
                    first_numeric,
                }],
                ..StudyView::default()
            }
        }
    }
}

fn unit(in_ns: bool) -> &'static str {
    if in_ns {
        "ns"
    } else {
        "µs"
    }
}

/// A statistic's column header (`avg (µs)`, `overruns`).
fn stat_header(column: &str, in_ns: bool) -> String {
    match Stat::parse(column) {
        Some(stat) if stat.is_count() => column.to_string(),
        _ => format!("{column} ({})", unit(in_ns)),
    }
}

/// A statistic as a chart value: µs for times, the count for counts.
fn chart_value(summary: &Summary, column: &str) -> Option<f64> {
    let stat = Stat::parse(column)?;
    let v = summary.stat(stat);
    Some(if stat.is_count() { v } else { v / 1e3 })
}

/// `rr 1`, `fifo 95`, `other` (SCHED_OTHER has no priority to show).
fn policy_label(sc: &Scenario) -> String {
    if sc.params.policy == "other" {
        "other".into()
    } else {
        format!("{} {}", sc.params.policy, sc.params.priority)
    }
}

fn first_thread(sc: &Scenario, metric: Metric) -> Option<&ThreadResult> {
    sc.threads.iter().find(|t| t.metric == metric)
}

/// wake-competitors: one table per mechanism × waker placement (× load, isolation,
/// interval when they vary): a row per competitor count, the policies side by side.
fn wake_competitors(run: &Run, columns: &[String], in_ns: bool) -> StudyView {
    let mut view = StudyView::default();
    for (title, scenarios) in wake_groups(run) {
        competitor_group(&mut view, &title, &scenarios, columns, in_ns);
    }
    view.notes.push(
        "response: write/wake call in the waker -> the wakee's read returns (the study's response time); competitors: SCHED_OTHER threads looping nanosleep(1 µs) on the wakee's CPU".into(),
    );
    view
}

/// The wake scenarios by table title (mechanism, placement, interval, load, isolation).
fn wake_groups(run: &Run) -> Vec<(String, Vec<&Scenario>)> {
    // Groups in the order first seen, each with its policies and competitor counts.
    let mut groups: Vec<(String, Vec<&Scenario>)> = Vec::new();
    for sc in run.scenarios.iter().filter(|s| s.probe == ProbeKind::Wake) {
        let (Some(waker), Some(wakee)) = (sc.params.extra.waker_cpu, sc.params.extra.wakee_cpu)
        else {
            continue;
        };
        let placement = if waker == wakee {
            format!("waker on the wakee's CPU (cpu{wakee})")
        } else {
            format!("waker on another CPU (cpu{waker} -> cpu{wakee})")
        };
        let mut title = format!(
            "{}, {placement}, every {}",
            sc.params.method,
            human_ns(sc.params.period_ns)
        );
        if !sc.params.loads.is_empty() {
            title.push_str(&format!(", load {}", load_label(sc)));
        }
        if !sc.params.isolate.is_empty() {
            title.push_str(", isolated");
        }
        match groups.iter_mut().find(|g| g.0 == title) {
            Some(g) => g.1.push(sc),
            None => groups.push((title, vec![sc])),
        }
    }
    groups
}

/// A group's policies in the order first seen and its competitor counts, ascending.
fn policies_and_counts(scenarios: &[&Scenario]) -> (Vec<String>, Vec<u64>) {
    let mut policies: Vec<String> = Vec::new();
    let mut counts: Vec<u64> = Vec::new();
    for sc in scenarios {
        let p = policy_label(sc);
        if !policies.contains(&p) {
            policies.push(p);
        }
        if let Some(n) = sc.params.extra.competitors {
            if !counts.contains(&n) {
                counts.push(n);
            }
        }
    }
    counts.sort_unstable();
    (policies, counts)
}

/// One group's table and chart: a row per competitor count, the policies side by side.
fn competitor_group(
    view: &mut StudyView,
    title: &str,
    scenarios: &[&Scenario],
    columns: &[String],
    in_ns: bool,
) {
    let (policies, counts) = policies_and_counts(scenarios);
    let find = |policy: &str, n: u64| {
        scenarios
            .iter()
            .find(|sc| policy_label(sc) == policy && sc.params.extra.competitors == Some(n))
    };
    let mut header = vec!["competitors".to_string()];
    for p in &policies {
        for c in columns {
            header.push(format!("{p} {}", stat_header(c, in_ns)));
        }
    }
    let mut rows = Vec::new();
    for &n in &counts {
        let mut row = vec![n.to_string()];
        for p in &policies {
            let response = find(p, n).and_then(|sc| first_thread(sc, Metric::Response));
            for c in columns {
                row.push(match response {
                    Some(th) => cell(&th.summary, c, in_ns),
                    None => "–".into(),
                });
            }
        }
        rows.push(row);
    }
    let chart_stats: Vec<&String> = columns
        .iter()
        .filter(|c| matches!(Stat::parse(c), Some(s) if !s.is_count()))
        .take(2)
        .collect();
    let mut series = Vec::new();
    for p in &policies {
        for c in &chart_stats {
            series.push((
                format!("{p} {c}"),
                counts
                    .iter()
                    .map(|&n| {
                        find(p, n)
                            .and_then(|sc| first_thread(sc, Metric::Response))
                            .and_then(|th| chart_value(&th.summary, c))
                    })
                    .collect(),
            ));
        }
    }
    view.charts.push(StudyChart {
        lines: true,
        title: format!("response: {title}"),
        x_desc: "competitors".into(),
        y_desc: "response (µs)".into(),
        categories: counts.iter().map(u64::to_string).collect(),
        series,
    });
    view.tables.push(StudyTable {
        title: format!("response time: {title}"),
        header,
        rows,
        first_numeric: 1,
    });
}

/// The interrupt part of a timer thread's latency when the run was traced: the
/// `irq_latency` part of the --trace split (deadline -> the hrtimer fired).
fn irq_part<'a>(sc: &'a Scenario, th: &ThreadResult) -> Option<&'a ThreadResult> {
    sc.trace
        .as_ref()?
        .threads
        .iter()
        .filter(|t| t.cpu == th.cpu)
        .flat_map(|t| t.parts.iter())
        .find(|p| p.metric == Metric::IrqLatency && p.summary.samples > 0)
}

/// A timer thread's row source: the irq part when traced, else the latency itself;
/// the bool says which.
fn timer_source<'a>(sc: &'a Scenario, th: &'a ThreadResult) -> (&'a ThreadResult, bool) {
    match irq_part(sc, th) {
        Some(part) => (part, true),
        None => (th, false),
    }
}

fn throughput_text(loads: &[LoadResult]) -> String {
    if loads.is_empty() {
        return "–".into();
    }
    loads
        .iter()
        .map(|l| format!("{} {:.1} {}", l.kind, l.throughput, l.unit))
        .collect::<Vec<_>>()
        .join(" + ")
}

fn no_trace_note(any_untraced: bool, any_traced: bool) -> Option<String> {
    match (any_untraced, any_traced) {
        (true, false) => Some("no --trace here (not root, or no tracefs): timer rows show the timer probe's wake-up latency (interrupt + scheduling + return to user space), not the interrupt response alone".into()),
        (true, true) => Some("some timer rows were not traced: those show the whole wake-up latency, not its interrupt part".into()),
        _ => None,
    }
}

/// rt-cost: one row per item (round trips per size, the timer interrupt latency idle and
/// under each load) with its latency statistics and the loads' throughput.
fn rt_cost(run: &Run, columns: &[String], in_ns: bool) -> StudyView {
    let mut view = StudyView::default();
    let mut header = vec!["item".to_string()];
    header.extend(columns.iter().map(|c| stat_header(c, in_ns)));
    header.push("load throughput".into());
    let mut rows = Vec::new();
    let mut categories = Vec::new();
    let mut values: Vec<Vec<Option<f64>>> = vec![Vec::new(); columns.len()];
    let mut throughput_categories = Vec::new();
    let mut throughput_values = Vec::new();
    let (mut traced, mut untraced) = (false, false);
    for sc in &run.scenarios {
        let several = sc.threads.len() > 1;
        for th in &sc.threads {
            let Some((item, source)) = rt_cost_item(sc, th, &mut traced, &mut untraced) else {
                continue;
            };
            let item = if several && sc.probe == ProbeKind::Timer {
                format!("{item} (cpu {})", th.cpu)
            } else {
                item
            };
            let mut row = vec![item.clone()];
            row.extend(columns.iter().map(|c| cell(&source.summary, c, in_ns)));
            row.push(throughput_text(&sc.loads));
            rows.push(row);
            categories.push(item);
            for (i, c) in columns.iter().enumerate() {
                values[i].push(chart_value(&source.summary, c));
            }
        }
        for l in &sc.loads {
            throughput_categories.push(format!("{} ({})", l.kind, l.unit));
            throughput_values.push(Some(l.throughput));
        }
    }
    view.tables.push(StudyTable {
        title: "latency per item, throughput of the loads beside it".into(),
        header,
        rows,
        first_numeric: 1,
    });
    view.charts.push(StudyChart {
        lines: false,
        title: "latency per item".into(),
        x_desc: "item".into(),
        y_desc: format!("latency ({})", unit(false)),
        categories,
        series: columns.iter().cloned().zip(values).collect(),
    });
    if !throughput_categories.is_empty() {
        view.charts.push(StudyChart {
            lines: false,
            title: "load throughput".into(),
            x_desc: "load".into(),
            y_desc: "throughput".into(),
            categories: throughput_categories,
            series: vec![("throughput".into(), throughput_values)],
        });
    }
    view.notes.extend(no_trace_note(untraced, traced));
    view.notes.push(
        "run once per kernel, then `latscope compare a.json b.json` for the change in % per item"
            .into(),
    );
    view
}

/// A row of rt-cost: what the thread measured and the thread its statistics come from
/// (a traced timer's `irq_latency` part); None for series rt-cost leaves out.
fn rt_cost_item<'a>(
    sc: &'a Scenario,
    th: &'a ThreadResult,
    traced: &mut bool,
    untraced: &mut bool,
) -> Option<(String, &'a ThreadResult)> {
    Some(match sc.probe {
        ProbeKind::Net if th.metric == Metric::RoundTrip => {
            let flood = sc.params.extra.flood == Some(true);
            let size = sc.params.extra.size_bytes;
            (
                format!(
                    "UDP round trip {} B{}",
                    size.unwrap_or_default(),
                    if flood { " (flood)" } else { "" }
                ),
                th,
            )
        }
        ProbeKind::Timer => {
            let (source, is_irq) = timer_source(sc, th);
            if is_irq {
                *traced = true;
            } else {
                *untraced = true;
            }
            let what = if is_irq {
                "timer IRQ latency"
            } else {
                "timer latency"
            };
            let load = if sc.params.loads.is_empty() {
                "idle".to_string()
            } else {
                format!("under {}", load_label(sc))
            };
            (format!("{what}, {load}"), source)
        }
        ProbeKind::Net | ProbeKind::Wake | ProbeKind::Noise | ProbeKind::Gpio => return None,
        ProbeKind::Lava => (sc.name.clone(), th),
    })
}

/// irq-response: min/avg/max (the suite's columns) of the timer interrupt per load.
fn irq_response(run: &Run, columns: &[String], in_ns: bool) -> StudyView {
    let mut view = StudyView::default();
    let mut header = vec!["load".to_string(), "measured".to_string()];
    header.extend(columns.iter().map(|c| stat_header(c, in_ns)));
    let mut rows = Vec::new();
    let mut categories = Vec::new();
    let mut values: Vec<Vec<Option<f64>>> = vec![Vec::new(); columns.len()];
    let (mut traced, mut untraced) = (false, false);
    let mut gpio = false;
    for sc in run
        .scenarios
        .iter()
        .filter(|s| matches!(s.probe, ProbeKind::Timer | ProbeKind::Gpio))
    {
        let several = sc.probe == ProbeKind::Timer && sc.threads.len() > 1;
        for th in sc.threads.iter().filter(|t| gpio_row(sc, t)) {
            let (source, is_irq) = timer_source(sc, th);
            if sc.probe == ProbeKind::Gpio {
                gpio = true;
            } else if is_irq {
                traced = true;
            } else {
                untraced = true;
            }
            let mut load = if sc.params.loads.is_empty() {
                "none (idle)".to_string()
            } else {
                load_label(sc)
            };
            if several {
                load.push_str(&format!(" (cpu {})", th.cpu));
            }
            let measured = match (sc.probe, is_irq) {
                (ProbeKind::Gpio, _) => format!("GPIO {} {}", sc.params.method, th.metric),
                (_, true) => "timer IRQ (trace)".to_string(),
                _ => "timer latency (no trace)".to_string(),
            };
            let mut row = vec![load.clone(), measured];
            row.extend(columns.iter().map(|c| cell(&source.summary, c, in_ns)));
            rows.push(row);
            categories.push(load);
            for (i, c) in columns.iter().enumerate() {
                values[i].push(chart_value(&source.summary, c));
            }
        }
    }
    view.tables.push(StudyTable {
        title: "interrupt response per load".into(),
        header,
        rows,
        first_numeric: 2,
    });
    view.charts.push(StudyChart {
        lines: false,
        title: "interrupt response per load".into(),
        x_desc: "load".into(),
        y_desc: format!("latency ({})", unit(false)),
        categories,
        series: columns.iter().cloned().zip(values).collect(),
    });
    view.notes.extend(no_trace_note(untraced, traced));
    if !gpio && (traced || untraced) {
        view.notes.push("the interrupt is the timer's: with a board's GPIO lines (suite --gpio-in LINE [--gpio-out LINE]) the rows are an external edge's answer (latscope gpio)".into());
    }
    view
}

/// The thread of a scenario the irq-response table shows: every timer thread; a gpio
/// scenario's edge-to-user figure (loopback `total`, respond `irq_to_user`).
fn gpio_row(sc: &Scenario, th: &ThreadResult) -> bool {
    sc.probe != ProbeKind::Gpio
        || th.metric == crate::result::Metric::Total
        || (th.metric == crate::result::Metric::IrqToUser && sc.params.method == "respond")
}

impl StudyTableReporter {
    pub fn table(&self, run: &Run) -> Table {
        let (header, rows, first_numeric) = header_and_rows(run, &self.columns, self.in_ns);
        crate::render::table::condensed_table(header, rows, first_numeric)
    }
}

/// The `,cpus=LIST` every load of the `load` column ends with (the presets put each load
/// on the measured CPU: `cpu:50%,cpus=1`), taken out of the cells and said once
/// (`loads on cpus=1`), so the column is as narrow as the loads themselves.
fn lift_load_cpus(header: &[String], rows: &mut [Vec<String>]) -> Option<String> {
    let i = header.iter().position(|h| h == "load")?;
    let loaded: Vec<&String> = rows
        .iter()
        .map(|r| &r[i])
        .filter(|l| *l != "none")
        .collect();
    let tail = loaded.first()?.rsplit_once(",cpus=")?.1.to_string();
    let suffix = format!(",cpus={tail}");
    let shared = loaded
        .iter()
        .all(|l| l.ends_with(&suffix) && l.split(" + ").all(|part| part.ends_with(&suffix)));
    let cpu_list = tail
        .chars()
        .all(|c| c.is_ascii_digit() || c == ',' || c == '-');
    if !shared || !cpu_list {
        return None;
    }
    for r in rows.iter_mut() {
        r[i] = r[i].replace(&suffix, "");
    }
    Some(format!("loads on cpus={tail}"))
}

impl StudyTableReporter {
    /// The columns of the terminal's table: the study's, then p99 and missed when it has
    /// none (the headline quotes them, so the table shows where they come from).
    fn terminal_columns(&self) -> Vec<String> {
        let mut columns = self.columns.clone();
        for stat in [Stat::P99, Stat::Missed] {
            if !columns.iter().any(|c| Stat::parse(c) == Some(stat)) {
                columns.push(stat.name().to_string());
            }
        }
        columns
    }

    /// The title and the study's tables and notes fitted to `width`, without the
    /// interruption note: what every row shares said once above each table, units there
    /// too, a table too wide split (render::table::fit_table).
    pub fn table_text(&self, run: &Run, width: usize) -> Vec<u8> {
        use crate::render::table::{fit_table, wrap, Fit};
        let mut out = String::new();
        if !self.title.is_empty() {
            out.push_str(&wrap(&self.title, width));
            out.push('\n');
        }
        let info = SuiteInfo {
            title: self.title.clone(),
            columns: self.terminal_columns(),
            study: self.study,
        };
        let view = study_view(run, &info, self.in_ns);
        let u = unit(self.in_ns);
        let suffix = format!(" ({u})");
        for (i, t) in view.tables.iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            if !t.title.is_empty() {
                out.push_str(&wrap(&t.title, width));
                out.push('\n');
            }
            let mut above: Vec<String> = Vec::new();
            if t.header.iter().any(|h| h.contains(&suffix)) {
                above.push(format!("latencies in {u}"));
            }
            let header: Vec<String> = t.header.iter().map(|h| h.replace(&suffix, "")).collect();
            let mut rows = t.rows.clone();
            above.extend(lift_load_cpus(&header, &mut rows));
            let fit = Fit {
                above: (!above.is_empty()).then(|| above.join(" · ")),
                // As the run's table: the spread goes first, p99, max and missed stay.
                optional: &["stddev", "min", "avg", "p50"],
                left_out_hint: "--export-csv has all",
                ..Fit::new(header, rows, t.first_numeric)
            };
            out.push_str(&fit_table(fit, width));
        }
        for note in &view.notes {
            out.push_str(&wrap(&format!("note: {note}"), width));
            out.push('\n');
        }
        out.into_bytes()
    }
}
