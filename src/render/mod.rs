//! The render kit: what every renderer draws with, whatever it renders (a run, a comparison,
//! a doctor result, the cyclictest drop-in's lines): the `Reporter` trait, terminal tables
//! that fit the width, Markdown and HTML pieces with their escaping, and SVG charts that hold
//! real data. It knows no result type: callers hand it strings, numbers and buckets.

pub mod axis;
pub mod canvas;
pub mod category;
pub mod chart_data;
pub mod escape;
pub mod figure;
pub mod frame;
pub mod histogram;
pub mod html;
pub mod labels;
pub mod legend;
pub mod long_term;
pub mod markdown;
pub mod plot_marks;
pub mod plots;
#[cfg(test)]
pub mod svg_check;
pub mod table;
pub mod time_axis;
pub mod timeline;

/// Renders a Run (or what else a format shows, such as a `compare::Comparison` or a doctor
/// report) in one format: bytes out, no files touched.
pub trait Reporter<Input: ?Sized> {
    fn render(&self, input: &Input) -> anyhow::Result<Vec<u8>>;
}
