//! The two sizes every chart is drawn at (wide for screens, narrow for phones: the page
//! shows one of them by a CSS breakpoint, so neither is scaled below readable text) and
//! the text, lines and boxes a chart writes into its SVG itself, at the size it is shown.
//! Written by hand beside plotters because plotters lays text out with a crude estimate and
//! writes it at its size ÷ 1.24, so labels it places can overlap in the browser; here every
//! text's box is known (`text_width`) before it is placed.

use crate::render::escape::esc;
use std::fmt::Write;

/// The size a chart is drawn at and the size of its text, in SVG units.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Canvas {
    pub width: u32,
    pub height: u32,
    /// Tick labels, legends, axis titles.
    pub font: f64,
    /// The chart's title.
    pub title_font: f64,
    /// Whether this is the phone's layout.
    pub narrow: bool,
}

/// For screens 700 px wide and more: shown 670 to 1000 px wide, text 12 to 18 px.
pub const WIDE: Canvas = Canvas {
    width: 960,
    height: 400,
    font: 17.0,
    title_font: 20.0,
    narrow: false,
};

/// For phones (the page's breakpoint: under 700 px): shown 330 to 480 px wide, so its
/// 14-unit text is 11 px or more from 360 px on (12.3 px in the 388 px box of a 420 px screen).
pub const NARROW: Canvas = Canvas {
    width: 440,
    height: 380,
    font: 14.0,
    title_font: 15.0,
    narrow: true,
};

impl Canvas {
    /// The same canvas, `height` units high.
    pub fn with_height(self, height: u32) -> Self {
        Canvas { height, ..self }
    }

    /// A generous width of `text` at `size` (0.62 em a character: wider than the digits and
    /// most letters of the browser's sans-serif), so boxes placed apart by it never touch.
    pub fn text_width(&self, text: &str, size: f64) -> f64 {
        text_width(text, size)
    }

    /// The height of a line of text at the canvas' font, with its spacing.
    pub fn line_height(&self) -> f64 {
        self.font * 1.25
    }
}

/// A generous width of `text` at `size` (see `Canvas::text_width`).
pub fn text_width(text: &str, size: f64) -> f64 {
    0.62 * size * text.chars().count() as f64
}

/// `text` broken at spaces into lines no wider than `width` at `size` (a word longer than
/// the width stays whole on its own line).
pub fn wrap(text: &str, size: f64, width: f64) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split(' ') {
        match lines.last_mut() {
            Some(line) if text_width(&format!("{line} {word}"), size) <= width => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines
}

/// Where a text's point is: its start, middle or end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Anchor {
    Start,
    Middle,
    End,
}

impl Anchor {
    fn svg(self) -> &'static str {
        match self {
            Anchor::Start => "start",
            Anchor::Middle => "middle",
            Anchor::End => "end",
        }
    }
}

/// What a chart draws itself over plotters' SVG: texts at the size shown, lines, boxes.
/// `finish` puts them before the SVG's end.
#[derive(Debug, Default)]
pub struct Layer {
    out: String,
    /// Drawn first, under plotters' series (grid lines, shaded zones).
    back: String,
}

impl Layer {
    /// `text` with its middle (vertically) at `y`.
    pub fn text(&mut self, (x, y): (f64, f64), size: f64, anchor: Anchor, text: &str) {
        self.styled_text((x, y), size, anchor, text, "#222", "");
    }

    /// `text` of a class (`tick-x`: tests and style sheets find it by it).
    pub fn classed_text(
        &mut self,
        at: (f64, f64),
        size: f64,
        anchor: Anchor,
        text: &str,
        class: &str,
    ) {
        self.styled_text(
            at,
            size,
            anchor,
            text,
            "#222",
            &format!("class=\"{class}\""),
        );
    }

    /// `text` in `color`, with extra attributes (`class="..."`, `font-weight="bold"`).
    pub fn styled_text(
        &mut self,
        (x, y): (f64, f64),
        size: f64,
        anchor: Anchor,
        text: &str,
        color: &str,
        attrs: &str,
    ) {
        let _ = writeln!(
            self.out,
            "<text x=\"{x:.1}\" y=\"{y:.1}\" dy=\"0.35em\" text-anchor=\"{}\" \
font-family=\"sans-serif\" font-size=\"{size:.1}\" fill=\"{color}\"{}{attrs}>{}</text>",
            anchor.svg(),
            if attrs.is_empty() { "" } else { " " },
            esc(text)
        );
    }

    /// `text` turned a quarter left (an axis title up the y axis), its middle at `(x, y)`.
    pub fn vertical_text(&mut self, (x, y): (f64, f64), size: f64, text: &str) {
        let _ = writeln!(
            self.out,
            "<text x=\"{x:.1}\" y=\"{y:.1}\" dy=\"0.35em\" text-anchor=\"middle\" \
font-family=\"sans-serif\" font-size=\"{size:.1}\" fill=\"#222\" \
transform=\"rotate(-90, {x:.1}, {y:.1})\">{}</text>",
            esc(text)
        );
    }

    /// A straight line.
    pub fn line(&mut self, from: (f64, f64), to: (f64, f64), stroke: &str, width: f64) {
        let _ = writeln!(
            self.out,
            "<line x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"{stroke}\" \
stroke-width=\"{width}\"/>",
            from.0, from.1, to.0, to.1
        );
    }

    /// A grid line, drawn under the series.
    pub fn grid_line(&mut self, from: (f64, f64), to: (f64, f64)) {
        let _ = writeln!(
            self.back,
            "<line x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#e4e4e4\" \
stroke-width=\"1\"/>",
            from.0, from.1, to.0, to.1
        );
    }

    /// A shaded box drawn under the series (a zone of the plot).
    pub fn back_rect(&mut self, (x, y): (f64, f64), (w, h): (f64, f64), fill: &str) {
        let _ = writeln!(
            self.back,
            "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"{h:.1}\" fill=\"{fill}\" \
stroke=\"none\"/>"
        );
    }

    /// A box filled with `fill` (`none` for an outline), outlined in `stroke`.
    pub fn rect(&mut self, (x, y): (f64, f64), (w, h): (f64, f64), fill: &str, stroke: &str) {
        let _ = writeln!(
            self.out,
            "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"{h:.1}\" fill=\"{fill}\" \
stroke=\"{stroke}\"/>"
        );
    }

    /// An element written as is (a marker from `plot_marks::marker_svg`).
    pub fn raw(&mut self, element: &str) {
        self.out.push_str(element);
        self.out.push('\n');
    }

    /// `svg` with this layer drawn: its back after plotters' background (the SVG's first
    /// element), the rest last, over everything plotters drew.
    pub fn finish(&self, svg: &str) -> String {
        let Some(end) = svg.rfind("</svg>") else {
            return svg.to_string();
        };
        // The end of the background: the line after the `<svg ...>` line's first element.
        let back_at = svg
            .find("<svg")
            .and_then(|s| svg[s..].find('\n').map(|e| s + e + 1))
            .and_then(|first| svg[first..].find('\n').map(|e| first + e + 1))
            .filter(|&at| at <= end)
            .unwrap_or(end);
        format!(
            "{}{}{}{}{}",
            &svg[..back_at],
            self.back,
            &svg[back_at..end],
            self.out,
            &svg[end..]
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layer_texts_are_escaped_and_go_before_the_end() {
        let mut l = Layer::default();
        l.text((1.0, 2.0), 14.0, Anchor::End, "a < b");
        let svg = l.finish("<svg>\n<rect/>\n</svg>\n");
        assert!(svg.contains(">a &lt; b</text>\n</svg>"), "{svg}");
        assert!(svg.contains("font-size=\"14.0\"") && svg.contains("text-anchor=\"end\""));
    }

    #[test]
    fn wrap_breaks_at_spaces_within_the_width() {
        let lines = wrap("one two three four", 10.0, text_width("one two", 10.0));
        assert_eq!(lines, ["one two", "three", "four"]);
        assert_eq!(wrap("x", 10.0, 1.0), ["x"]);
    }

    #[test]
    fn narrow_text_reads_at_11_px_in_a_phones_box() {
        let shown = 388.0 / f64::from(NARROW.width);
        assert!(NARROW.font * shown >= 11.0, "{}", NARROW.font * shown);
        let shown = 670.0 / f64::from(WIDE.width);
        assert!(WIDE.font * shown >= 11.0, "{}", WIDE.font * shown);
    }
}
