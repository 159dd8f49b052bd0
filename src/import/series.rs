//! A plain series as input of `--worst-case`: one latency per line in time order (`--unit
//! ns|us`), as other tools and the statistical tests write them; blank lines and `#`
//! comments are skipped, anything else that is not a non-negative number is an error
//! naming its line.

use crate::error::UserError;
use std::path::Path;

/// Whether a text holds a plain series rather than a result (JSON or a LAVA log): its
/// first non-blank line is a number.
pub fn is_plain_series(text: &str) -> bool {
    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'));
    first.is_some_and(|l| l.parse::<f64>().is_ok())
}

/// The series in ns of a text read from `path` (named in errors); `ns_per_unit` is the
/// `--unit` given (1 for ns, 1000 for us).
pub fn from_text(path: &Path, text: &str, ns_per_unit: Option<u32>) -> Result<Vec<u64>, UserError> {
    let name = crate::result::input_name(path);
    let Some(ns_per_unit) = ns_per_unit else {
        return Err(UserError::BadInputFile {
            path: name,
            reason:
                "a plain series (one latency per line) needs its unit: add --unit ns or --unit us"
                    .into(),
        });
    };
    let scale = f64::from(ns_per_unit);
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        match line.parse::<f64>() {
            Ok(v) if v.is_finite() && v >= 0.0 && v * scale < 1.8e19 => {
                out.push((v * scale).round() as u64)
            }
            _ => {
                return Err(UserError::BadInputFile {
                    path: name,
                    reason: format!(
                        "line {}: `{line}` is not a latency (a number ≥ 0 in the --unit given, one per line)",
                        i + 1
                    ),
                })
            }
        }
    }
    Ok(out)
}
