//! A plain series' worst-case estimate (`latscope report SERIES --worst-case`) in the
//! formats that carry it: text, JSON, Markdown and a page of its own with the plots. The
//! formats made of a result's scenarios and CPUs are refused by the command.

use crate::render::escape::esc;
use crate::stats::worst_case::WorstCase;

/// A plain series' estimate as a page of its own (`report SERIES --worst-case
/// --export-html`).
fn series_page(title: &str, wc: &WorstCase, period: Option<u64>) -> anyhow::Result<String> {
    let body = format!(
        "<h1>Worst case beyond the samples: {}</h1>\n{}",
        esc(title),
        super::worst_case_plots::thread_part(title, wc, period)?
    );
    Ok(super::html::page(
        &format!("latscope worst case: {title}"),
        &body,
    ))
}

/// Whether a plain series' estimate is written in `format` (`series_bytes`).
pub fn series_writes(format: crate::output::exports::Format) -> bool {
    use crate::output::exports::Format;
    !matches!(format, Format::Csv | Format::Junit | Format::Lava)
}

/// A plain series' estimate in `format` (`latscope report SERIES --worst-case`): text,
/// JSON (the `worst_case` object), Markdown (the text in a block) or a self-contained HTML
/// page with the plots; None for the formats made of a result's scenarios and CPUs (CSV,
/// JUnit, LAVA).
pub fn series_bytes(
    format: crate::output::exports::Format,
    title: &str,
    wc: &WorstCase,
    period_ns: Option<u64>,
    in_ns: bool,
) -> Option<anyhow::Result<Vec<u8>>> {
    use crate::output::exports::Format;
    let width = crate::render::table::terminal_width();
    let text = |width| super::worst_case::render_one(title, wc, period_ns, in_ns, width);
    match format {
        // The terminal's width; a Markdown code block keeps its long lines.
        Format::Table => Some(Ok(
            crate::render::table::wrap(&text(width), width).into_bytes()
        )),
        Format::Json => Some(serde_json::to_vec_pretty(wc).map_err(Into::into)),
        Format::Markdown => Some(Ok(format!(
            "### Worst case beyond the samples: {}\n\n```\n{}```\n",
            crate::render::markdown::md_cell(title),
            text(usize::MAX)
        )
        .into_bytes())),
        Format::Html => Some(series_page(title, wc, period_ns).map(String::into_bytes)),
        Format::Csv | Format::Junit | Format::Lava => None,
    }
}
