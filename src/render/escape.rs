//! HTML escaping and the `<figure>` wrapper, shared by the HTML report's files and the SVG
//! plots drawn for it (a file of its own so they need not import html.rs, which imports them).

/// Escapes text for HTML element content and attribute values.
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// An SVG chart with its caption as a `<figure>`; the chart is an image named by the
/// caption (`role="img"`, `<title>`, `<desc>`) for screen readers.
pub fn figure(svg: &str, caption: &str) -> String {
    figure_with_data(svg, caption, &[], &[])
}

/// `figure`, and the chart's numbers as a table in a closed `<details>` below it (what a
/// screen reader, a colour-blind reader or a script reads instead of the picture).
pub fn figure_with_data(
    svg: &str,
    caption: &str,
    header: &[String],
    rows: &[Vec<String>],
) -> String {
    let desc = if rows.is_empty() {
        caption.to_string()
    } else {
        format!("{caption} The data is in the table under the chart.")
    };
    let labelled = match svg.find("<svg") {
        Some(at) => {
            let open_end = svg[at..].find('>').map_or(svg.len(), |e| at + e + 1);
            format!(
                "{}<svg role=\"img\"{}<title>{}</title><desc>{}</desc>{}",
                &svg[..at],
                &svg[at + 4..open_end],
                esc(caption),
                esc(&desc),
                &svg[open_end..]
            )
        }
        None => svg.to_string(),
    };
    let mut table = String::new();
    if !rows.is_empty() {
        table.push_str("<details><summary>The chart's data</summary>\n<table>\n<tr>");
        for h in header {
            table.push_str(&format!("<th>{}</th>", esc(h)));
        }
        table.push_str("</tr>\n");
        for row in rows {
            table.push_str("<tr>");
            for cell in row {
                table.push_str(&format!("<td>{}</td>", esc(cell)));
            }
            table.push_str("</tr>\n");
        }
        table.push_str("</table>\n</details>\n");
    }
    format!(
        "<figure>\n{labelled}\n<figcaption class=\"note\">{}</figcaption>\n{table}</figure>\n",
        esc(caption)
    )
}
