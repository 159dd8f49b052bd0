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

/// An SVG chart with its caption as a `<figure>`.
pub fn figure(svg: &str, caption: &str) -> String {
    format!(
        "<figure>\n{svg}\n<figcaption class=\"note\">{}</figcaption>\n</figure>\n",
        esc(caption)
    )
}
