//! The output options as typed (`OutputArgs`) turned into report values: the `--export-*`
//! destinations and the `--fail-above` limits. Here, not in report, so reports never read
//! the command line.

use crate::cli::{CompareOutputArgs, OutputArgs};
use crate::error::UserError;
use crate::output::exports::Export;
use crate::output::exports::Format;
use crate::result::limits::Limit;

/// The exports asked for on the command line, in a fixed order.
pub fn exports_from_args(out: &OutputArgs) -> Vec<Export> {
    [
        (Format::Json, &out.export_json),
        (Format::Csv, &out.exports.csv),
        (Format::Markdown, &out.exports.markdown),
        (Format::Html, &out.exports.html),
        (Format::Junit, &out.exports.junit),
        (Format::Lava, &out.exports.lava),
    ]
    .into_iter()
    .filter_map(|(format, path)| path.clone().map(|path| Export { format, path }))
    .collect()
}

/// Parses `--fail-above`.
pub fn limits_from_args(out: &OutputArgs) -> Result<Vec<Limit>, UserError> {
    match &out.exports.fail_above {
        Some(text) => {
            crate::result::limits::parse_limits(text).map_err(|reason| UserError::InvalidValue {
                option: "--fail-above".into(),
                value: text.clone(),
                reason,
            })
        }
        None => Ok(Vec::new()),
    }
}

/// `latscope report`'s output options as the shared ones (no checkpoint or resume:
/// report measures nothing).
pub fn report_output(out: &crate::cli::ReportOutputArgs) -> OutputArgs {
    OutputArgs {
        quiet: out.quiet,
        ns: out.ns,
        export_json: out.export_json.clone(),
        exports: out.exports.clone(),
        ..OutputArgs::default()
    }
}

/// `latscope compare`'s output options as the shared ones (no JSON, JUnit, LAVA or
/// checkpoint: compare has none of those).
pub fn compare_output(out: &CompareOutputArgs) -> OutputArgs {
    OutputArgs {
        quiet: out.quiet,
        ns: out.ns,
        exports: crate::cli::ExportArgs {
            csv: out.export_csv.clone(),
            markdown: out.export_markdown.clone(),
            html: out.export_html.clone(),
            fail_above: out.fail_above.clone(),
            ..Default::default()
        },
        ..OutputArgs::default()
    }
}
