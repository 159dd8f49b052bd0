//! Renderers: each turns a Run into bytes and never touches files itself; the caller
//! decides where the bytes go (`write_exports` hands them to output/). `Format`
//! (output/exports.rs) names them for `--format` and the export flags.

pub mod csv;
pub mod extras;
pub mod headline;
pub mod html;
pub mod html_contents;
pub mod html_trace;
pub mod iterations;
pub mod json;
pub mod junit;
pub mod lava;
pub mod loads;
pub mod long_term;
pub mod long_term_formats;
pub mod markdown;
pub mod raw;
pub mod spike_timeline;
pub mod study;
pub mod table;
pub mod trace;
pub mod worst_case;
pub mod worst_case_diagnostics;
pub mod worst_case_plots;
pub mod worst_case_series;

use crate::output::exports::{Export, Format};
use crate::result::Run;
use anyhow::Context;

/// The render kit's trait (a Run, a comparison, a doctor result into bytes), used here
/// as `Reporter<Run>`.
pub use crate::render::Reporter;

/// What renderers may need besides the run.
#[derive(Debug, Clone, Default)]
pub struct RenderOptions {
    /// Latencies in ns instead of µs (table, markdown).
    pub in_ns: bool,
    /// `--fail-above` limits (junit and lava mark failures, html shows them).
    pub limits: Vec<crate::result::limits::Limit>,
}

/// The renderer of a format.
pub fn reporter(format: Format, opts: &RenderOptions) -> Box<dyn Reporter<Run>> {
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

/// Renders and writes every export, control characters of the text formats escaped;
/// stdout ones only when `include_stdout`.
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
        // A read-back run's text may hold control sequences (issue 34, item 9).
        let bytes = crate::output::terminal::escape_export(e.format, bytes);
        crate::output::exports::write_bytes(&e.path, &bytes)?;
    }
    Ok(())
}

pub use crate::result::stat_unknown;
