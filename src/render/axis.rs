//! Axis ticks that read at a glance and never crowd: steps of 1, 2 or 5 times a power of
//! ten on linear axes, 1-2-5 (or 1-3, or whole decades) on logarithmic ones, as many as the
//! axis' length holds for its widest label; latency ticks written with their unit ("50 µs",
//! "2 ms", "3 s") so a log axis spanning µs to seconds needs no conversion.

/// A step of 1, 2 or 5 × 10^k, the smallest that divides `span` into at most `max_ticks`.
pub fn nice_step(span: f64, max_ticks: usize) -> f64 {
    let raw = span.abs().max(f64::MIN_POSITIVE) / max_ticks.max(1) as f64;
    let power = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * power)
        .find(|&s| s >= raw * (1.0 - 1e-9))
        .unwrap_or(10.0 * power)
}

/// Multiples of a nice step in `[lo, hi]`, at most `max_ticks` of them.
pub fn linear_ticks(lo: f64, hi: f64, max_ticks: usize) -> Vec<f64> {
    let step = nice_step(hi - lo, max_ticks);
    let first = (lo / step).ceil();
    (0..)
        .map(|k| (first + k as f64) * step)
        .take_while(|&v| v <= hi + step * 1e-9)
        .map(|v| if v.abs() < step * 1e-9 { 0.0 } else { v })
        .collect()
}

/// Ticks of a logarithmic axis over `[lo, hi]` (both > 0): 1-2-5 in each decade, else 1-3,
/// else whole decades, else every few decades, the densest with at most `max_ticks`; a range
/// inside one decade gets linear ticks.
pub fn log_ticks(lo: f64, hi: f64, max_ticks: usize) -> Vec<f64> {
    let (lo, hi) = (lo.max(f64::MIN_POSITIVE), hi.max(lo));
    let within = |mantissas: &[f64], every: i32| -> Vec<f64> {
        let (d0, d1) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
        // Every few decades counted from the first power of ten on the axis.
        let first = (lo * (1.0 - 1e-9)).log10().ceil() as i32;
        (d0..=d1)
            .filter(|d| (d - first).rem_euclid(every) == 0)
            .flat_map(|d| mantissas.iter().map(move |m| m * 10f64.powi(d)))
            .filter(|&v| v >= lo * (1.0 - 1e-9) && v <= hi * (1.0 + 1e-9))
            .collect()
    };
    for mantissas in [&[1.0, 2.0, 5.0][..], &[1.0, 3.0], &[1.0]] {
        let ticks = within(mantissas, 1);
        if ticks.len() <= max_ticks && ticks.len() >= 2 {
            return ticks;
        }
        if ticks.len() > max_ticks {
            continue;
        }
        // Fewer than two ticks: a narrow range reads better with linear steps.
        return linear_ticks(lo, hi, max_ticks.min(5));
    }
    (2..)
        .map(|every| within(&[1.0], every))
        .find(|t| t.len() <= max_ticks)
        .unwrap_or_default()
}

/// A latency in µs as a tick label with its unit ("500 µs", "2 ms", "3.5 s", "0.5 µs").
pub fn latency_label(us: f64) -> String {
    if us == 0.0 {
        return "0".into();
    }
    if us > 0.0 && us < 1.0 {
        return format!("{} µs", trim(us, 3));
    }
    crate::units::human_ns((us * 1e3).round() as u64)
}

/// A plain number as a tick label (a count or a second), no needless decimals.
pub fn number_label(v: f64) -> String {
    if v.abs() >= 1e6 && (v / 1e6).fract().abs() < 1e-9 {
        format!("{}M", trim(v / 1e6, 0))
    } else if v.abs() >= 1e4 && (v / 1e3).fract().abs() < 1e-9 {
        format!("{}k", trim(v / 1e3, 0))
    } else {
        trim(v, 3)
    }
}

fn trim(v: f64, digits: usize) -> String {
    let text = format!("{v:.digits$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// How many labels as wide as `label_width` fit along `length` units with a gap between.
pub fn fitting(length: f64, label_width: f64) -> usize {
    ((length / (label_width + 14.0)).floor() as usize).clamp(2, 12)
}

/// A nice round number at or below `v` (> 0) on a 1-2-5 scale.
pub fn nice_floor(v: f64) -> f64 {
    let p = 10f64.powf(v.log10().floor());
    [5.0, 2.0, 1.0]
        .into_iter()
        .map(|m| m * p)
        .find(|&s| s <= v * (1.0 + 1e-9))
        .unwrap_or(p)
}

/// A nice round number at or above `v` (> 0) on a 1-2-5 scale.
pub fn nice_ceil(v: f64) -> f64 {
    let p = 10f64.powf(v.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * p)
        .find(|&s| s >= v * (1.0 - 1e-9))
        .unwrap_or(10.0 * p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_ticks_step_by_one_two_or_five() {
        assert_eq!(
            linear_ticks(0.0, 100.0, 6),
            [0.0, 20.0, 40.0, 60.0, 80.0, 100.0]
        );
        assert_eq!(
            linear_ticks(13.0, 79.0, 8),
            [20.0, 30.0, 40.0, 50.0, 60.0, 70.0]
        );
        assert_eq!(nice_step(7.0, 3), 5.0);
    }

    #[test]
    fn log_ticks_from_microseconds_to_seconds_stay_few() {
        // 10 µs .. 3.2 s in µs: seven decades.
        let t = log_ticks(10.0, 3.2e6, 8);
        assert_eq!(t, [10.0, 100.0, 1e3, 1e4, 1e5, 1e6]);
        let t = log_ticks(10.0, 3.2e6, 4);
        assert_eq!(t, [10.0, 1e3, 1e5]);
        // The first power of ten on the axis is labelled (not 10 µs off its left end).
        assert_eq!(log_ticks(20.0, 5e6, 3), [100.0, 1e4, 1e6]);
        assert_eq!(
            log_ticks(20.0, 500.0, 10),
            [20.0, 50.0, 100.0, 200.0, 500.0]
        );
        // Inside a decade: linear steps.
        assert_eq!(
            log_ticks(300.0, 345.0, 6),
            [300.0, 310.0, 320.0, 330.0, 340.0]
        );
    }

    #[test]
    fn labels_carry_their_unit() {
        assert_eq!(latency_label(500.0), "500 µs");
        assert_eq!(latency_label(2000.0), "2 ms");
        assert_eq!(latency_label(3.2e6), "3.2 s");
        assert_eq!(latency_label(0.5), "0.5 µs");
        assert_eq!(number_label(10000.0), "10k");
        assert_eq!(number_label(0.5), "0.5");
        assert_eq!((nice_floor(15.6), nice_ceil(340.4)), (10.0, 500.0));
    }
}
