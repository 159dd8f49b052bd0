//! Renderers: each turns a Run into bytes and never touches files itself; the caller
//! decides where the bytes go.

pub mod extras;
pub mod json;
pub mod loads;
pub mod raw;
pub mod study;
pub mod table;

use crate::result::Run;

/// Renders a Run in one format.
pub trait Reporter {
    fn render(&self, run: &Run) -> anyhow::Result<Vec<u8>>;
}
