//! The worst-case estimate in the HTML report: per thread its words (as in the terminal),
//! the return-level plot (latency against −log₁₀ of the probability per period, the fitted
//! curve with its 95 % band and the observed tail) and the QQ plot of the fit, then the
//! diagnostics (worst_case_diagnostics.rs).

use crate::render::canvas::Canvas;
use crate::render::escape::esc;
use crate::render::figure::{charts_figure, Chart};
use crate::render::plots::{axis_number, chart_builder, color, draw_legend, with_svg};
use crate::result::Scenario;
use crate::stats::worst_case::{Plot, WorstCase};
use plotters::prelude::*;
use std::fmt::Write;

fn range(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values.fold((f64::MAX, f64::MIN), |(a, b), v| (a.min(v), b.max(v)));
    if lo > hi {
        return (0.0, 1.0);
    }
    let pad = ((hi - lo) * 0.05).max(1e-3);
    (lo - pad, hi + pad)
}

/// Return levels: x = −log₁₀ p, y = µs; the curve, its band (dashed) and observed points.
pub fn return_level_svg(title: &str, plot: &Plot, c: Canvas) -> anyhow::Result<String> {
    let x = |p: f64| -p.log10();
    let (x0, x1) = range(
        plot.curve
            .iter()
            .map(|c| x(c[0]))
            .chain(plot.observed.iter().map(|o| x(o[0]))),
    );
    let (y0, y1) = range(
        plot.curve
            .iter()
            .flat_map(|c| [c[2], c[3]])
            .chain(plot.observed.iter().map(|o| o[1]))
            .map(|v| v / 1e3),
    );
    with_svg(c, |root| {
        let mut chart = chart_builder(root, title).build_cartesian_2d(x0..x1, y0..y1)?;
        chart
            .configure_mesh()
            .x_desc("−log₁₀ probability per period")
            .y_desc("latency (µs)")
            .x_label_formatter(&axis_number)
            .y_label_formatter(&axis_number)
            .draw()?;
        let rows: Vec<[f64; 4]> = plot
            .curve
            .iter()
            .map(|c| [x(c[0]), c[1] / 1e3, c[2] / 1e3, c[3] / 1e3])
            .collect();
        super::worst_case_diagnostics::draw_line_and_band(
            &mut chart,
            &rows,
            "fitted return level",
        )?;
        let seen = color(1);
        chart
            .draw_series(
                plot.observed
                    .iter()
                    .map(|o| Circle::new((x(o[0]), o[1] / 1e3), 2, seen.filled())),
            )?
            .label("observed")
            .legend(move |(a, b)| Circle::new((a + 9, b), 3, seen.filled()));
        draw_legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
        Ok(())
    })
}

/// QQ: the fit's quantile against the observed value (µs), with the diagonal.
pub fn qq_svg(title: &str, plot: &Plot, c: Canvas) -> anyhow::Result<String> {
    let (lo, hi) = range(plot.qq.iter().flat_map(|q| [q[0], q[1]]).map(|v| v / 1e3));
    with_svg(c, |root| {
        let mut chart = chart_builder(root, title).build_cartesian_2d(lo..hi, lo..hi)?;
        chart
            .configure_mesh()
            .x_desc("fitted quantile (µs)")
            .y_desc("observed (µs)")
            .x_label_formatter(&axis_number)
            .y_label_formatter(&axis_number)
            .draw()?;
        chart.draw_series(LineSeries::new([(lo, lo), (hi, hi)], BLACK.mix(0.4)))?;
        let c = color(0);
        chart.draw_series(
            plot.qq
                .iter()
                .map(|q| Circle::new((q[0] / 1e3, q[1] / 1e3), 2, c.filled())),
        )?;
        Ok(())
    })
}

pub fn thread_part(title: &str, wc: &WorstCase, period: Option<u64>) -> anyhow::Result<String> {
    let mut out = String::new();
    let text = super::worst_case::render_one(title, wc, period, false, usize::MAX);
    let _ = writeln!(out, "<pre>{}</pre>", esc(&text));
    if let Some(plot) = wc.plot.as_ref().filter(|p| !p.curve.is_empty()) {
        let name = format!("Return levels: {title}");
        let chart = Chart::drawn(&name, |c| return_level_svg(&name, plot, c))?;
        out.push_str(&charts_figure(&[chart], &name, &[], &[], &[]));
    }
    match wc.plot.as_ref().filter(|p| !p.qq.is_empty()) {
        Some(plot) => {
            let name = format!("QQ plot of the fit: {title}");
            let chart = Chart::drawn(&name, |c| qq_svg(&name, plot, c))?;
            out.push_str(&charts_figure(&[chart], &qq_caption(wc), &[], &[], &[]));
        }
        None if wc.refused.is_some() && wc.fit.is_none() => {
            let _ = writeln!(
                out,
                "<p class=\"note\">No QQ plot: the estimate was refused before any fit.</p>"
            );
        }
        None => {}
    }
    out.push_str(&super::worst_case_diagnostics::part(title, wc)?);
    Ok(out)
}

/// What the QQ plot shows: the accepted fit, or which checks refused it.
fn qq_caption(wc: &WorstCase) -> String {
    let failed: Vec<&str> = wc
        .checks
        .iter()
        .filter(|c| !c.passed)
        .map(|c| c.name.as_str())
        .collect();
    if wc.refused.is_some() {
        format!(
            "The fit was refused by its checks (failed: {}); no estimate is shown. Points off the diagonal are where the fitted tail misses the data.",
            failed.join(", ")
        )
    } else if wc.unbounded {
        "The fitted tail is heavy (ξ > 0): no finite worst case, no estimate.".into()
    } else {
        "Points on the diagonal: the fitted tail matches the data.".into()
    }
}

/// The scenario's worst-case part (empty when no thread has an estimate).
pub fn section(sc: &Scenario) -> anyhow::Result<String> {
    let mut out = String::new();
    let period = (sc.params.period_ns > 0).then_some(sc.params.period_ns);
    for th in &sc.threads {
        let Some(wc) = &th.worst_case else { continue };
        if out.is_empty() {
            out.push_str("<h3>Worst case beyond the samples</h3>\n");
        }
        let label = crate::result::metric_label(&format!("CPU {}", th.cpu), th.metric);
        out.push_str(&thread_part(&label, wc, period)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use crate::stats::worst_case::{estimate, Input, Options};

    #[test]
    fn a_passing_estimate_draws_its_plots_diagnostics_and_table() {
        let mut rng = fastrand::Rng::with_seed(11);
        let xs: Vec<u64> = (0..20_000)
            .map(|_| (50_000.0 - 2000.0 * (1.0 - rng.f64()).ln()).round() as u64)
            .collect();
        let opts = Options {
            plot: true,
            period_ns: Some(1_000_000),
            ..Options::default()
        };
        let wc = estimate(Input::Samples(&xs), &opts);
        assert!(wc.usable(), "{:?}", wc.refused);
        let html = super::thread_part("CPU 1", &wc, Some(1_000_000)).unwrap();
        // Return levels, QQ, mean residual life, ξ and σ* against the threshold, and the
        // estimate against the samples, each at both sizes (screen and phone).
        assert_eq!(html.matches("<svg").count(), 12, "{html}");
        for title in [
            "Return levels: CPU 1",
            "QQ plot of the fit",
            "Mean residual life: CPU 1",
            "Shape ξ against the threshold",
            "Modified scale σ* against the threshold",
            "The 10⁻⁶ estimate against the samples",
            "chosen threshold",
        ] {
            assert!(html.contains(title), "{title}");
        }
        // From 2 tenths on (the first 2000 samples are below the rule's 2500), to all.
        assert_eq!(wc.convergence.len(), 9, "{:?}", wc.convergence);
        assert_eq!(wc.convergence[0].samples, 4000);
        let text =
            super::super::worst_case::render_one("CPU 1", &wc, Some(1_000_000), false, usize::MAX);
        assert!(
            text.contains("10⁻⁶") && text.contains("per hour at 1 ms (3.6·10⁶ periods)"),
            "{text}"
        );
        // 10⁻¹² per period reaches 5·10⁷ times the 20 000 samples: marked, and said.
        assert!(
            text.contains("]‡") && text.contains("‡ beyond 10⁶ times the data"),
            "{text}"
        );
        assert!(text.contains("(has it settled?)"), "{text}");
    }

    #[test]
    fn a_refused_estimate_draws_its_qq_plot_naming_the_failed_check() {
        // An exponential tail whose second half is 3 µs higher: refused for identical
        // distribution; the QQ plot and the threshold diagnostics are drawn, no curve.
        let mut rng = fastrand::Rng::with_seed(5);
        let xs: Vec<u64> = (0..20_000)
            .map(|i| {
                let shift = if i >= 10_000 { 3000.0 } else { 0.0 };
                (50_000.0 + shift - 2000.0 * (1.0 - rng.f64()).ln()).round() as u64
            })
            .collect();
        let opts = Options {
            plot: true,
            ..Options::default()
        };
        let wc = estimate(Input::Samples(&xs), &opts);
        let reason = wc.refused.clone().expect("refused");
        assert!(reason.contains("identical distribution"), "{reason}");
        let html = super::thread_part("CPU 1", &wc, None).unwrap();
        assert!(!html.contains("Return levels"), "no curve: {html}");
        assert!(html.contains("QQ plot of the fit"), "{html}");
        assert!(html.contains("Mean residual life"), "{html}");
        assert!(
            html.contains("refused by its checks (failed: identical distribution"),
            "{html}"
        );
    }

    #[test]
    fn a_refusal_before_any_fit_says_why_there_is_no_qq_plot() {
        let xs: Vec<u64> = (0..50).map(|i| 1000 + i).collect();
        let opts = Options {
            plot: true,
            ..Options::default()
        };
        let wc = estimate(Input::Samples(&xs), &opts);
        assert!(wc.refused.is_some() && wc.fit.is_none(), "{wc:?}");
        let html = super::thread_part("CPU 1", &wc, None).unwrap();
        assert!(!html.contains("<svg"), "{html}");
        assert!(html.contains("refused before any fit"), "{html}");
    }
}
