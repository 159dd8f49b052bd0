//! HTML escaping, shared by the HTML report's files and the SVG plots drawn for it (a file
//! of its own so they need not import html.rs, which imports them), and the pieces of a
//! chart's `<figure>`: the SVG named as an image for screen readers, its numbers in a table.

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

/// The SVG as an image named by `title` (`role="img"`, `<title>`, `<desc>`).
pub fn labelled(svg: &str, title: &str, has_data: bool) -> String {
    let desc = if has_data {
        format!("{title} The data is in the table under the chart.")
    } else {
        title.to_string()
    };
    match svg.find("<svg") {
        Some(at) => {
            let open_end = svg[at..].find('>').map_or(svg.len(), |e| at + e + 1);
            format!(
                "{}<svg role=\"img\"{}<title>{}</title><desc>{}</desc>{}",
                &svg[..at],
                &svg[at + 4..open_end],
                esc(title),
                esc(&desc),
                &svg[open_end..]
            )
        }
        None => svg.to_string(),
    }
}

/// The chart's numbers in a closed `<details>` (nothing without rows).
pub fn data_table(header: &[String], rows: &[Vec<String>]) -> String {
    let mut table = String::new();
    if rows.is_empty() {
        return table;
    }
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
    table
}
