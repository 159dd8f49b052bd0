//! A chart's `<figure>` on the page: each chart drawn at both sizes (the page shows the wide
//! drawing on screens and the narrow one on phones), named for screen readers, under one
//! caption, notes after it, its numbers in a closed table; and the latency distribution's
//! figure (the log-axis chart, the body with its tail strip, the tail listed).

use crate::render::canvas::{Canvas, NARROW, WIDE};
use crate::render::escape::{data_table, esc, labelled};
use crate::render::histogram::body::body_svg;
use crate::render::histogram::whole::whole_svg;
use crate::render::histogram::{body_end_ns, deadline_on_axis, tail_listing, Distribution};

/// A chart drawn at both sizes: the page shows `wide` on screens and `narrow` on phones
/// (the CSS breakpoint in render/html.rs), so neither is scaled below readable text.
pub struct Chart {
    pub wide: String,
    pub narrow: String,
    /// What the chart shows, for screen readers (its `<title>`).
    pub title: String,
}

impl Chart {
    /// The chart `draw` draws, at both sizes.
    pub fn drawn(
        title: &str,
        draw: impl Fn(Canvas) -> anyhow::Result<String>,
    ) -> anyhow::Result<Chart> {
        Ok(Chart {
            wide: draw(WIDE)?,
            narrow: draw(NARROW)?,
            title: title.to_string(),
        })
    }
}

/// Charts (each at both sizes) under one caption, notes as paragraphs after it (a tail's
/// listing), and the numbers in a closed `<details>` table.
pub fn charts_figure(
    charts: &[Chart],
    caption: &str,
    notes: &[String],
    header: &[String],
    rows: &[Vec<String>],
) -> String {
    let mut out = String::from("<figure>\n");
    for c in charts {
        let (wide, narrow) = (
            labelled(&c.wide, &c.title, !rows.is_empty()),
            labelled(&c.narrow, &c.title, !rows.is_empty()),
        );
        out.push_str(&format!(
            "<div class=\"chart-wide\">{wide}</div>\n<div class=\"chart-narrow\">{narrow}</div>\n"
        ));
    }
    out.push_str(&format!(
        "<figcaption class=\"note\">{}</figcaption>\n",
        esc(caption)
    ));
    for n in notes {
        out.push_str(&format!("<p class=\"tail\">{}</p>\n", esc(n)));
    }
    out.push_str(&data_table(header, rows));
    out.push_str("</figure>\n");
    out
}

/// The distribution as the page shows it: the log-axis chart and the body chart with its
/// tail strip (each at both sizes), `caption` with the deadline's note, every sample beyond
/// the body listed under it, and the buckets in the data table.
pub fn distribution(d: &Distribution, caption: &str) -> anyhow::Result<String> {
    let charts = [
        Chart {
            wide: whole_svg(d, WIDE)?,
            narrow: whole_svg(d, NARROW)?,
            title: format!("{}: every sample on a log latency axis", d.name),
        },
        Chart {
            wide: body_svg(d, WIDE)?,
            narrow: body_svg(d, NARROW)?,
            title: format!(
                "{}: the body on a linear axis, every sample beyond it in the strip under it",
                d.name
            ),
        },
    ];
    let mut caption = caption.to_string();
    if let (_, Some(note)) = deadline_on_axis(d) {
        caption.push_str(&format!(" The {note}."));
    }
    let end = body_end_ns(d.lines);
    let notes = tail_listing(d.lines, end);
    let (header, rows) = crate::render::chart_data::histogram(d.lines);
    Ok(charts_figure(&charts, &caption, &notes, &header, &rows))
}
