//! The HTML page every HTML export shares (run report, comparison, doctor): its head and
//! CSS, and plain tables with numeric columns right-aligned; text escaped on the way in.
//! Under 700 px (a phone) the CSS shows each chart's narrow drawing and turns tables of
//! class `cards` into a card per row, each cell under its column's name, so what ran, p99,
//! max and missed are read without sideways scrolling.

use crate::render::escape::esc;
use std::fmt::Write;

pub const CSS: &str =
    "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:2em auto;\
max-width:1000px;color:#222;padding:0 1em}h1{font-size:1.6em}h2{border-bottom:2px solid #ddd;\
padding-bottom:.2em;margin-top:2em}table{border-collapse:collapse;margin:.8em 0;font-size:.9em}\
th,td{border:1px solid #ccc;padding:.25em .55em}th{background:#f3f3f3}td.num{text-align:right;\
font-variant-numeric:tabular-nums}td.fail{background:#fdd;font-weight:bold}.pass{color:#176317}\
.failtext{color:#b00020;font-weight:bold}.warn{background:#fff6d6;border-left:4px solid #e0a800;\
padding:.4em .8em;margin:.3em 0}.note{color:#666;font-size:.9em}figure{margin:1em 0}\
svg{width:100%;height:auto;display:block}table{display:block;\
overflow-x:auto;max-width:100%}.chart-narrow,.card,.card-note{display:none}p.tail{font-size:.85em;margin:.2em 0;\
overflow-wrap:anywhere}@media (max-width:699px){.chart-wide{display:none}.chart-narrow{display:block}\
.chart-narrow svg{max-width:520px}table.cards,table.cards tbody,table.cards td{display:block}\
table.cards tr:first-child{display:none}table.cards tr{display:grid;grid-template-columns:repeat(auto-fill,minmax(7.5em,1fr));\
gap:0 1em;border:1px solid #ccc;border-radius:4px;margin:.5em 0;padding:.3em .6em}\
table.cards td{border:none;padding:.1em 0;text-align:left;overflow-wrap:anywhere}\
table.cards td:first-child{grid-column:1/-1;font-weight:bold}table.cards td.card{display:block}\
table.cards td.card+td.id,table.cards td.card~td.id{display:none}.card-note{display:block;\
font-size:.9em}table.cards td:not(.card)::before{content:attr(data-label);display:block;\
font-size:.75em;font-weight:normal;color:#666}}h1{font-size:1.3em;overflow-wrap:anywhere}h2,h3{overflow-wrap:anywhere}.worst{font-size:1.2em;\
font-weight:bold}dl{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:.2em 1em}\
dt{font-weight:bold}dd{margin:0;overflow-wrap:anywhere}code{background:#f3f3f3;padding:0 .2em;\
overflow-wrap:anywhere}:root{color-scheme:light dark}details{margin:.3em 0}\
@media (prefers-color-scheme:dark){body{background:#121212;color:#e4e4e4}th{background:#2a2a2a}\
th,td{border-color:#555}code{background:#2a2a2a}.note{color:#aaa}.warn{background:#3a3000}\
td.fail{background:#5a1e1e}.pass{color:#7fd67f}.failtext{color:#ff7b7b}a{color:#8ab4f8}\
h2{border-color:#444}svg{background:#fff;border-radius:4px}}";

/// Wraps a body into the page with its CSS.
pub fn page(title: &str, body: &str) -> String {
    format!("{}{body}{PAGE_END}", page_start(title))
}

/// The page up to its body (a page written piece by piece: `HtmlReporter::write_page`).
pub fn page_start(title: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
<title>{}</title>\n<style>{CSS}</style>\n</head>\n<body>\n",
        esc(title)
    )
}
/// The page after its body.
pub const PAGE_END: &str = "</body>\n</html>\n";

/// A table with the columns from `first_numeric` on marked numeric; on a phone a card per
/// row: titled by the words that tell its row apart (the columns before `first_numeric`
/// that vary), the words every row shares said once above the cards, each number under
/// its column's name (`data-label`).
pub fn html_table(header: &[String], rows: &[Vec<String>], first_numeric: usize) -> String {
    let ids = first_numeric.min(header.len());
    let varies = |i: usize| rows.iter().any(|r| r.get(i) != rows[0].get(i));
    let (varying, constant): (Vec<usize>, Vec<usize>) = (0..ids).partition(|&i| varies(i));
    let mut out = String::new();
    if !constant.is_empty() && !rows.is_empty() && rows.len() > 1 {
        let shared: Vec<String> = constant
            .iter()
            .map(|&i| {
                format!(
                    "{} {}",
                    header[i],
                    rows[0].get(i).map_or("", |c| c.as_str())
                )
            })
            .collect();
        let _ = writeln!(
            out,
            "<p class=\"card-note\">Every row: {}</p>",
            esc(&shared.join(" · "))
        );
    }
    out.push_str("<table class=\"cards\">\n<tr><th class=\"card\"></th>");
    for h in header {
        let _ = write!(out, "<th>{}</th>", esc(h));
    }
    out.push_str("</tr>\n");
    for r in rows {
        let title: Vec<&str> = match (varying.is_empty(), rows.len() > 1) {
            (false, true) => varying
                .iter()
                .filter_map(|&i| r.get(i))
                .map(String::as_str)
                .collect(),
            _ => (0..ids)
                .filter_map(|i| r.get(i))
                .map(String::as_str)
                .collect(),
        };
        let _ = write!(
            out,
            "<tr><td class=\"card\">{}</td>",
            esc(&title.join(" · "))
        );
        for (i, c) in r.iter().enumerate() {
            let class = if i >= first_numeric { "num" } else { "id" };
            let label = header.get(i).map_or(String::new(), |h| esc(h));
            let _ = write!(
                out,
                "<td class=\"{class}\" data-label=\"{label}\">{}</td>",
                esc(c)
            );
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
    out
}
