//! From a series to a `WorstCase`: a series with too few distinct values refused,
//! quantised values spread within their step, the method chosen (pot.rs, bm.rs, which
//! end in common.rs), and for samples in time order the estimate against the number of
//! samples.

use super::common::us;
use super::*;

/// The refusal of a series with too few distinct values to have a tail.
fn too_few_values(base: WorstCase, sorted: &[u64]) -> Option<WorstCase> {
    let distinct = 1 + sorted.windows(2).filter(|w| w[0] != w[1]).count();
    if sorted.is_empty() || distinct >= 3 {
        return None;
    }
    let reason = if distinct == 1 {
        format!(
            "enough data: all {} values are {}: there is no tail to fit",
            sorted.len(),
            us(sorted[0] as f64)
        )
    } else {
        format!(
            "enough data: the {} values take only {distinct} distinct values ({} and {}): there is no tail to fit",
            sorted.len(),
            us(sorted[0] as f64),
            us(sorted[sorted.len() - 1] as f64)
        )
    };
    Some(WorstCase {
        refused: Some(reason),
        ..base
    })
}

/// The worst-case estimate of `input` (see the module's documentation).
pub fn estimate(input: Input<'_>, opts: &Options) -> WorstCase {
    let (values, samples, label) = match input {
        Input::Samples(xs) => (xs, xs.len() as u64, "samples"),
        Input::BlockMaxima { maxima, samples } => (maxima, samples, "per-second maxima"),
    };
    let max = values.iter().copied().max().unwrap_or(0);
    let default = match input {
        Input::Samples(_) => Method::PeaksOverThreshold,
        Input::BlockMaxima { .. } => Method::BlockMaxima,
    };
    let method = opts.method.unwrap_or(default);
    let base = WorstCase {
        refused: None,
        ..WorstCase::refused(method, label, samples, max, String::new())
    };
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    if let Some(refused) = too_few_values(base.clone(), &sorted) {
        return refused;
    }
    let quantum = super::quantum::detect(&sorted);
    let xs = super::quantum::spread(values, quantum);
    let base = WorstCase {
        quantum_ns: quantum,
        ..base
    };
    let mut wc = match (method, input) {
        (Method::PeaksOverThreshold, Input::Samples(_)) => super::pot::pot_case(&xs, opts, base),
        (Method::BlockMaxima, Input::Samples(_)) => super::bm::from_samples(&xs, opts, base),
        (Method::BlockMaxima, Input::BlockMaxima { .. }) => {
            let m0 = samples as f64 / xs.len().max(1) as f64;
            super::bm::from_maxima(&xs, m0, opts, base)
        }
        (Method::PeaksOverThreshold, Input::BlockMaxima { .. }) => WorstCase {
            refused: Some(
                "peaks over threshold needs every sample in time order, and this result has only a histogram (no time order: independence and identical distribution cannot be checked) and per-second maxima; use the block-maxima method on those, or measure with --worst-case (or --raw and read that series)"
                    .into(),
            ),
            ..base
        },
    };
    if opts.plot && matches!(input, Input::Samples(_)) {
        let part = |xs: &[u64], o: &Options| estimate(Input::Samples(xs), o);
        wc.convergence = super::diagnostics::convergence(values, opts, &wc, part);
    }
    wc
}
