//! The JSON result file: the Run, pretty-printed, as documented in docs/result-schema.md.

use super::Reporter;
use crate::result::Run;

pub struct JsonReporter;

impl Reporter<Run> for JsonReporter {
    fn render(&self, run: &Run) -> anyhow::Result<Vec<u8>> {
        let mut bytes = serde_json::to_vec_pretty(run)?;
        bytes.push(b'\n');
        Ok(bytes)
    }
}
