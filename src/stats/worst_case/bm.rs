//! Block maxima: of samples in time order (√n blocks of √n samples, or as given) or of a
//! saved result's per-second maxima (one block per second, or whole seconds as given).
//! Maxima of neighbouring blocks that depend on each other (a stall spanning a block's
//! end) are merged into longer blocks until they do not — the blocks' declustering —
//! and refused only when they stay dependent while 50 blocks are left. A bounded fit
//! stands alone only where ξ < 0 is significant, else its intervals also hold the Gumbel
//! tail's.

use super::checks::{ks_halves, ljung_box};
use super::common::{block_maxima, finish, refuse_early, Found};
use super::tails::{one_sided_limit, Bm, Tail};
use super::*;

const NEIGHBOUR: f64 = 0.7;

/// The blocks at merge factor f: their maxima, samples per block, and the rule in words.
type Blocks<'a> = dyn Fn(usize) -> (Vec<f64>, f64, String) + 'a;

/// Block maxima of samples in time order (`m` samples per block).
pub fn from_samples(xs: &[f64], opts: &Options, base: WorstCase) -> WorstCase {
    let n = xs.len();
    let (m, given) = match opts.block_size {
        Some(b) => (b as usize, true),
        None => (((n as f64).sqrt().round() as usize).max(1), false),
    };
    let blocks = move |f: usize| {
        let mm = m * f;
        let rule = match (given, f) {
            (true, _) => format!("blocks of {m} samples as given"),
            (false, 1) => "√n blocks of √n samples".to_string(),
            (false, _) => format!("blocks of {mm} samples (√n merged {f} at a time)"),
        };
        (block_maxima(xs, mm), mm as f64, rule)
    };
    let near = move |mm: f64, factor: f64| {
        let size = ((mm * factor).round() as usize).max(1);
        let bm = Bm::new(&block_maxima(xs, size), size as f64, String::new());
        (bm.level(PROBABILITIES[0]), format!("blocks of {size}"))
    };
    let minimum = format!(
        "at least {MIN_BLOCKS} needed (the rule's √n blocks: at least {} samples)",
        MIN_BLOCKS * MIN_BLOCKS
    );
    bm_case(&blocks, given, &minimum, opts, base, &|mm| {
        [near(mm, NEIGHBOUR), near(mm, 1.0 / NEIGHBOUR)]
    })
}

/// Block maxima from maxima of `m0`-sample blocks (per-second maxima): merged `factor` at
/// a time.
pub fn from_maxima(maxima: &[f64], m0: f64, opts: &Options, base: WorstCase) -> WorstCase {
    let given = opts.block_size.is_some();
    let factor = opts
        .block_size
        .map_or(1, |b| ((b as f64 / m0).round() as usize).max(1));
    let blocks = move |f: usize| {
        let secs = factor * f;
        let rule = match (given, secs) {
            (false, 1) => "one block per second (the per-second maxima)".to_string(),
            (false, _) => format!("blocks of {secs} seconds (the per-second maxima merged)"),
            (true, _) => format!("blocks of {secs} seconds"),
        };
        (block_maxima(maxima, secs), m0 * secs as f64, rule)
    };
    let near = move |mm: f64, extra: usize| {
        let secs = (mm / m0).round() as usize + extra;
        let bm = Bm::new(&block_maxima(maxima, secs), m0 * secs as f64, String::new());
        (bm.level(PROBABILITIES[0]), format!("blocks of {secs} s"))
    };
    let minimum = format!("at least {MIN_BLOCKS} needed (a run of {MIN_BLOCKS} seconds at least)");
    bm_case(&blocks, given, &minimum, opts, base, &|mm| {
        [near(mm, 1), near(mm, 2)]
    })
}

/// The light-tail check of a GEV fit: a bounded fit (ξ < 0) stands alone only where
/// ξ = 0 is rejected (one-sided likelihood ratio at 1 %); otherwise its intervals are
/// widened to hold the Gumbel tail's too.
fn light_tail(mut bm: Bm) -> (Bm, Check) {
    let shape = bm.fit().shape;
    if shape >= 0.0 {
        let words = format!("the fit's shape ξ = {shape:.3} is used");
        return (bm, Check::new("light tail", true, words));
    }
    let lr = bm.shape_lr();
    let base = format!(
        "likelihood ratio of ξ = 0 against the fitted ξ = {shape:.3}: {lr:.2} (above {:.2}: lighter than Gumbel at 1 %)",
        one_sided_limit()
    );
    let words = if lr > one_sided_limit() {
        format!("{base}: the bounded fit stands")
    } else {
        bm.widen();
        format!("{base}: not shown lighter, so its intervals also hold the Gumbel tail's")
    };
    (bm, Check::new("light tail", true, words))
}

/// Merged blocks until their maxima are independent (Ljung-Box), at most down to
/// `MIN_BLOCKS` blocks: the factor and the independence check in words.
fn independent_blocks(blocks: &Blocks, given: bool) -> (usize, Check) {
    let first = ljung_box("independence", &blocks(1).0);
    if first.passed || given {
        return (1, first);
    }
    let mut f = 2;
    loop {
        let (maxima, m, _) = blocks(f);
        if maxima.len() < MIN_BLOCKS {
            let detail = format!(
                "{}; merged into longer blocks they stay dependent down to {MIN_BLOCKS} blocks: the clusters do not separate",
                first.detail
            );
            return (1, Check::new("independence", false, detail));
        }
        let lb = ljung_box("independence", &maxima);
        if lb.passed {
            let detail = format!(
                "{}: neighbouring maxima depend on each other; merged {f} at a time (blocks of {m:.0} samples) they do not: {}",
                first.detail, lb.detail
            );
            return (f, Check::new("independence", true, detail));
        }
        f *= 2;
    }
}

fn bm_case(
    blocks: &Blocks,
    given: bool,
    minimum: &str,
    opts: &Options,
    base: WorstCase,
    neighbours: &dyn Fn(f64) -> [(f64, String); 2],
) -> WorstCase {
    let (maxima, m, _) = blocks(1);
    let b = maxima.len();
    let enough = Check::new(
        "enough data",
        b >= MIN_BLOCKS,
        format!("{b} blocks of {m:.0} samples; {minimum}"),
    );
    if !enough.passed {
        return refuse_early(base, enough);
    }
    let (f, independence) = independent_blocks(blocks, given);
    let (maxima, m, rule) = blocks(f);
    let checks = vec![
        enough,
        independence,
        ks_halves("identical distribution", &maxima),
    ];
    let (tail, light) = light_tail(Bm::new(&maxima, m, rule));
    let found = Found {
        checks,
        light,
        heavy_cv: false,
        neighbours: neighbours(m),
    };
    finish(base, found, &tail, opts)
}
