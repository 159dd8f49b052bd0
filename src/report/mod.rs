//! Renderers: each turns a Run into bytes and never touches files itself; the caller
//! decides where the bytes go (`write_exports` hands them to output/). `Format`
//! (output/exports.rs) names them for `--format` and the export flags.

pub mod chart_data;
pub mod csv;
pub mod escape;
pub mod extras;
pub mod headline;
pub mod histogram;
pub mod html;
pub mod html_contents;
pub mod html_trace;
pub mod iterations;
pub mod json;
pub mod junit;
pub mod lava;
pub mod loads;
pub mod markdown;
pub mod plot_marks;
pub mod plots;
pub mod raw;
pub mod spike_timeline;
pub mod study;
pub mod table;
pub mod terminal_table;
pub mod trace;
pub mod worst_case;
pub mod worst_case_diagnostics;
pub mod worst_case_plots;
pub mod worst_case_series;

use crate::output::exports::{Export, Format};
use crate::result::Run;
use anyhow::Context;

/// Renders a Run (or what else a format shows, such as a `compare::Comparison`) in one
/// format.
pub trait Reporter<Input: ?Sized = Run> {
    fn render(&self, input: &Input) -> anyhow::Result<Vec<u8>>;
}

/// What renderers may need besides the run.
#[derive(Debug, Clone, Default)]
pub struct RenderOptions {
    /// Latencies in ns instead of µs (table, markdown).
    pub in_ns: bool,
    /// `--fail-above` limits (junit and lava mark failures, html shows them).
    pub limits: Vec<crate::result::limits::Limit>,
}

/// The renderer of a format.
pub fn reporter(format: Format, opts: &RenderOptions) -> Box<dyn Reporter> {
    match format {
        Format::Table => Box::new(table::TableReporter { in_ns: opts.in_ns }),
        Format::Json => Box::new(json::JsonReporter),
        Format::Csv => Box::new(csv::CsvReporter),
        Format::Markdown => Box::new(markdown::MarkdownReporter { in_ns: opts.in_ns }),
        Format::Html => Box::new(html::HtmlReporter {
            limits: opts.limits.clone(),
        }),
        Format::Junit => Box::new(junit::JunitReporter {
            limits: opts.limits.clone(),
        }),
        Format::Lava => Box::new(lava::LavaReporter {
            limits: opts.limits.clone(),
        }),
    }
}

/// Renders and writes every export; stdout ones only when `include_stdout`.
pub fn write_exports(
    exports: &[Export],
    run: &Run,
    opts: &RenderOptions,
    include_stdout: bool,
) -> anyhow::Result<()> {
    for e in exports {
        if e.to_stdout() && !include_stdout {
            continue;
        }
        let bytes = reporter(e.format, opts)
            .render(run)
            .with_context(|| format!("rendering {}", e.format.flag()))?;
        crate::output::exports::write_bytes(&e.path, &bytes)?;
    }
    Ok(())
}

pub use crate::result::stat_unknown;
