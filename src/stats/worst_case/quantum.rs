//! Quantised data: latencies written on a coarse grid (cyclictest's whole microseconds)
//! tie, and a tail fitted to ties sees steps instead of a tail (the excesses over a
//! threshold on the grid are shifted by part of a step, the goodness of fit fails or, worse,
//! passes with a wrong shape). The grid is found, and each value is spread uniformly
//! within its step with a fixed seed, so the same input always gives the same estimate.

/// The seed of the spreading (any fixed value: the estimate must not change between runs).
const SEED: u64 = 0x5eed_0037;

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The grid `sorted` sits on, in ns, when it is coarser than 1 ns and values tie: the
/// greatest common divisor of the gaps between consecutive distinct values.
pub fn detect(sorted: &[u64]) -> Option<u64> {
    let mut step = 0u64;
    let mut distinct = sorted.len().min(1);
    for w in sorted.windows(2) {
        if w[1] != w[0] {
            distinct += 1;
            step = gcd(step, w[1] - w[0]);
            if step == 1 {
                return None;
            }
        }
    }
    (step >= 2 && distinct < sorted.len()).then_some(step)
}

/// `values` (ns) as f64, each spread uniformly over [v − step/2, v + step/2) when a grid
/// `step` was found (a value rounded to the grid came from there).
pub fn spread(values: &[u64], step: Option<u64>) -> Vec<f64> {
    let Some(step) = step else {
        return values.iter().map(|&v| v as f64).collect();
    };
    let mut rng = fastrand::Rng::with_seed(SEED);
    let q = step as f64;
    values
        .iter()
        .map(|&v| (v as f64 + q * (rng.f64() - 0.5)).max(0.0))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_microseconds_are_found_and_ns_data_is_left_alone() {
        assert_eq!(detect(&[20_000, 21_000, 21_000, 23_000]), Some(1000));
        assert_eq!(detect(&[20_000, 20_001, 20_001]), None);
        // A grid without ties is no quantisation worth spreading.
        assert_eq!(detect(&[20_000, 21_000, 23_000]), None);
        assert_eq!(detect(&[5, 5, 5]), None);
        assert_eq!(detect(&[]), None);
    }

    #[test]
    fn spreading_stays_within_the_step_and_is_repeatable() {
        let v = [20_000u64, 21_000, 21_000];
        let a = spread(&v, Some(1000));
        assert_eq!(a, spread(&v, Some(1000)));
        for (x, &orig) in a.iter().zip(&v) {
            assert!((x - orig as f64).abs() <= 500.0, "{x} from {orig}");
        }
        assert_ne!(a[1], a[2], "ties broken");
        assert_eq!(spread(&v, None), vec![20_000.0, 21_000.0, 21_000.0]);
    }
}
