//! Renderers: each turns a Run into bytes and never touches files itself; the caller
//! decides where the bytes go. `Format` names them for `--format` and the export flags.

pub mod change_table;
pub mod comparison;
pub mod csv;
pub mod cyclictest_format;
pub mod cyclictest_import;
pub mod exports;
pub mod extras;
pub mod html;
pub mod iterations;
pub mod json;
pub mod junit;
pub mod lava;
pub mod lava_import;
pub mod lava_log;
pub mod limits;
pub mod loads;
pub mod markdown;
pub mod multi_view;
pub mod plots;
pub mod raw;
pub mod study;
pub mod table;
pub mod terminal_table;
pub mod trace;

use crate::result::Run;

/// Renders a Run (or what else a format shows, such as a `compare::Comparison`) in one
/// format.
pub trait Reporter<Input: ?Sized = Run> {
    fn render(&self, input: &Input) -> anyhow::Result<Vec<u8>>;
}

/// The output formats of `latscope report --format` and the `--export-*` flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Table,
    Json,
    Csv,
    Markdown,
    Html,
    Junit,
    Lava,
}

impl Format {
    /// The flag that exports this format.
    pub fn flag(self) -> &'static str {
        match self {
            Format::Table => "--format table",
            Format::Json => "--export-json",
            Format::Csv => "--export-csv",
            Format::Markdown => "--export-markdown",
            Format::Html => "--export-html",
            Format::Junit => "--export-junit",
            Format::Lava => "--export-lava",
        }
    }
}

/// What renderers may need besides the run.
#[derive(Debug, Clone, Default)]
pub struct RenderOptions {
    /// Latencies in ns instead of µs (table, markdown).
    pub in_ns: bool,
    /// `--fail-above` limits (junit and lava mark failures, html shows them).
    pub limits: Vec<limits::Limit>,
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

pub use crate::result::stat_unknown;
