//! Tests only: the sign test against plain counting, the level of the looks against
//! every sequence enumerated, and the adaptive A/B on scripted measurements of known
//! effect and known noise (better, worse, within noise, and where it stops).

use super::*;

/// n choose k, exactly (n <= 60).
fn choose(n: u32, k: u32) -> f64 {
    (0..k).fold(1u128, |acc, i| acc * u128::from(n - i) / u128::from(i + 1)) as f64
}

/// The two-sided sign test by counting: twice the smaller tail, at most 1.
fn plain_p(n: u32, lower: u32) -> f64 {
    let tail = lower.min(n - lower);
    let sum: f64 = (0..=tail).map(|k| choose(n, k)).sum();
    (2.0 * sum / 2f64.powi(n as i32)).min(1.0)
}

#[test]
fn p_values_match_plain_counting() {
    for n in 1..=40 {
        for k in 0..=n {
            let (got, want) = (p_value(n, k), plain_p(n, k));
            assert!((got - want).abs() < 1e-9, "n {n} k {k}: {got} vs {want}");
        }
    }
    // The figures: 6 of 6 is p = 1/32; 4 of 6 is p = 0.69.
    assert!((p_value(6, 6) - 0.03125).abs() < 1e-12);
    assert!((p_value(6, 4) - 0.6875).abs() < 1e-12);
}

/// Every sequence of `cap` pairs under "no effect", walked through `look` as the A/B
/// does: the share that ends better or worse (the false finding rate) stays within
/// ALPHA, and equals the walk the plan computed.
#[test]
fn the_looks_keep_false_findings_within_alpha() {
    for cap in [1, 6, 8, 12, 14] {
        let seq = Sequential::new(cap);
        let mut false_findings = 0u64;
        for bits in 0u32..(1 << cap) {
            let pairs: Vec<[u64; 2]> = (0..cap)
                .map(|i| if bits >> i & 1 == 1 { [1, 2] } else { [2, 1] })
                .collect();
            let t = (1..=cap as usize)
                .find_map(|n| seq.look(&pairs[..n]))
                .expect("the cap ends it");
            if t.verdict != AbVerdict::WithinNoise {
                false_findings += 1;
            }
        }
        let rate = false_findings as f64 / f64::from(1u32 << cap);
        assert!(rate <= ALPHA, "cap {cap}: {rate}");
        assert!(
            (rate - false_finding_rate(&seq.looks, seq.level)).abs() < 1e-9,
            "cap {cap}: {rate} vs {}",
            false_finding_rate(&seq.looks, seq.level)
        );
    }
    // Fixed six pairs decide at 6 of 6 (p = 1/32), as the issue says; one pair never.
    assert!((Sequential::new(6).level - 0.03125).abs() < 1e-12);
    assert_eq!(Sequential::new(1).level, 0.0);
    // The default cap: looks at 6, 8, ..., 20, each judged at p <= 0.0309.
    let seq = Sequential::new(20);
    assert_eq!(seq.looks, [6, 8, 10, 12, 14, 16, 18, 20]);
    assert!((seq.level - 0.030_86).abs() < 1e-4, "{}", seq.level);
}

#[test]
fn the_median_difference_and_its_interval() {
    // Six differences: the interval is the smallest and the largest (1 - 2/64 = 97 %).
    let (m, iv, c) = median_interval(vec![5, -3, 8, 1, 2, 10]);
    assert_eq!((m, iv), (3, [-3, 10]));
    assert!((c - (1.0 - 2.0 / 64.0)).abs() < 1e-12);
    // Twenty: the 6th smallest to the 6th largest (P(X <= 5) = 0.0207 a side: 95.9 %).
    let d: Vec<i64> = (1..=20).collect();
    let (m, iv, c) = median_interval(d);
    assert_eq!((m, iv), (10, [6, 15]));
    let tail: f64 = (0..=5).map(|k| choose(20, k)).sum::<f64>() / 2f64.powi(20);
    assert!((c - (1.0 - 2.0 * tail)).abs() < 1e-9, "{c}");
    assert_eq!(median_interval(vec![]), (0, [0, 0], 0.0));
}

/// A scripted measurement: p99s around `base_ns` with uniform noise of ±`noise_ns`, A
/// shifted by `effect_ns`, from a fixed seed.
fn scripted(effect_ns: i64, noise_ns: i64, seed: u64, cap: u32) -> (Vec<[u64; 2]>, SignTest) {
    let mut rng = fastrand::Rng::with_seed(seed);
    let base_ns = 60_000i64;
    let stop = AtomicBool::new(false);
    measure_pairs(&Sequential::new(cap), &stop, None, |a_turn| {
        let noise = rng.i64(-noise_ns..=noise_ns);
        Ok((base_ns + noise + if a_turn { effect_ns } else { 0 }) as u64)
    })
    .unwrap()
}

#[test]
fn a_clear_gain_is_better_and_stops_at_the_first_look_that_can_decide() {
    for seed in 0..50 {
        let (pairs, t) = scripted(-30_000, 10_000, seed, 20);
        assert_eq!(t.verdict, AbVerdict::Better, "seed {seed}: {t:?}");
        assert_eq!(
            (t.stopped, pairs.len()),
            (Stopped::Decided, 8),
            "seed {seed}"
        );
        // The interval holds the effect.
        assert!(t.interval_ns[0] <= -30_000 + 20_000 && t.interval_ns[1] >= -30_000 - 20_000);
    }
}

#[test]
fn a_clear_loss_is_worse() {
    for seed in 0..50 {
        let (_, t) = scripted(70_000, 20_000, seed, 20);
        assert_eq!(t.verdict, AbVerdict::Worse, "seed {seed}: {t:?}");
        assert!(t.median_diff_ns > 0);
    }
}

/// No effect under noise: within noise nearly always (the false findings within ALPHA
/// over many seeds), and mostly stopped before the cap once no look can decide.
#[test]
fn no_effect_is_within_noise_and_stops_when_nothing_can_decide() {
    let runs: Vec<SignTest> = (0..400)
        .map(|seed| scripted(0, 30_000, seed, 20).1)
        .collect();
    let false_findings = runs
        .iter()
        .filter(|t| t.verdict != AbVerdict::WithinNoise)
        .count();
    assert!(
        false_findings as f64 / 400.0 <= 0.08,
        "{false_findings} of 400"
    );
    let early = runs
        .iter()
        .filter(|t| t.stopped == Stopped::CannotDecide && t.pairs < 20)
        .count();
    assert!(early > 300, "{early} of 400 stopped early");
    let mean = runs.iter().map(|t| t.pairs).sum::<u32>() as f64 / 400.0;
    assert!(mean < 14.0, "{mean} pairs on average");
}

/// An effect the size of the noise needs more pairs than a clear one: the adaptive stop
/// spends them, and a small cap ends it within noise.
#[test]
fn a_small_effect_takes_more_pairs_and_a_small_cap_stops_it() {
    let (pairs, t) = scripted(-12_000, 15_000, 7, 20);
    assert!(pairs.len() > 8, "{t:?}");
    let (pairs, t) = scripted(-30_000, 10_000, 1, 1);
    assert_eq!(pairs.len(), 1);
    assert_eq!(
        (t.verdict, t.stopped),
        (AbVerdict::WithinNoise, Stopped::Cap)
    );
}

#[test]
fn ctrl_c_and_the_time_budget_stop_the_pairs() {
    let stop = AtomicBool::new(false);
    let mut runs = 0;
    let (pairs, t) = measure_pairs(&Sequential::new(20), &stop, None, |_| {
        runs += 1;
        if runs == 5 {
            stop.store(true, Ordering::Relaxed);
        }
        Ok(1)
    })
    .unwrap();
    assert_eq!((pairs.len(), t.stopped), (2, Stopped::Interrupted));
    let stop = AtomicBool::new(false);
    let (pairs, t) =
        measure_pairs(&Sequential::new(20), &stop, Some(Duration::ZERO), |_| Ok(1)).unwrap();
    assert_eq!((pairs.len(), t.stopped), (1, Stopped::Cap));
    assert_eq!(t.ties, 1);
}
