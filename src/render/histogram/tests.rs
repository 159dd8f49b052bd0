//! tests only: the picture for 0, 1, 10, 1 % and 10 % spikes and for a max 1000× the
//! median: the body's end stays where the body ends, its p50 to p99 spans a third of the
//! body chart, every spike is in the strip and the listing, the max is written, and no two
//! texts of a chart overlap (at the widths the layout assumes; the browser tests measure).

use super::body::{bin_ns, body_svg};
use super::whole::whole_svg;
use super::*;
use crate::render::canvas::{NARROW, WIDE};
use crate::render::svg_check::{assert_no_overlap, field};

/// A body of 100 000 samples skewed right as this VM's timer runs are (log-normal: median
/// 30 µs, p99 54 µs; nothing under 12 µs), in 1 µs buckets.
fn body() -> Vec<[u64; 2]> {
    let sigma = 0.25f64;
    (12..=200u64)
        .map(|us| {
            let z = (us as f64 / 30.0).ln() / sigma;
            let density =
                (-z * z / 2.0).exp() / (us as f64 * sigma * (2.0 * std::f64::consts::PI).sqrt());
            [us * 1000, (density * 100_000.0).round() as u64]
        })
        .filter(|b| b[1] > 0)
        .collect()
}

/// `body()` with `n` spikes spread over 1 to 20 ms (the host's stops), in HDR's buckets.
fn with_spikes(n: u64) -> Vec<[u64; 2]> {
    let mut b = body();
    let mut spikes: BTreeMap<u64, u64> = BTreeMap::new();
    for k in 0..n {
        let us = 1000 + (k * 7919) % 19_000;
        *spikes.entry(us * 1000).or_default() += 1;
    }
    b.extend(spikes.into_iter().map(|(v, c)| [v, c]));
    b
}

fn total(b: &[[u64; 2]]) -> u64 {
    b.iter().map(|x| x[1]).sum()
}

/// Every case: the body ends where the body ends, p50..p99 of the body spans a third of
/// its axis, the spikes are all beyond it, listed and marked, the max written, and no text
/// overlaps another in either drawing.
fn check(case: &str, buckets: &[[u64; 2]], spikes: u64) {
    let lines = [HistogramLine {
        label: "CPU 0".into(),
        buckets,
        max_ns: buckets.iter().map(|b| b[0]).max().unwrap(),
    }];
    let d = Distribution {
        name: "timer clock-nanosleep 1ms".into(),
        lines: &lines,
        deadline_ns: Some(1_000_000),
    };
    let end = body_end_ns(&lines);
    let plain = body();
    let (p99, max) = (quantile(&plain, 0.99), plain.last().unwrap()[0]);
    assert!(
        end > p99 && end < max,
        "{case}: the body ends at {end}, p99 {p99}, max {max}"
    );
    let inside: Vec<[u64; 2]> = buckets.iter().copied().filter(|b| b[0] <= end).collect();
    let (p50, p99) = (quantile(&inside, 0.5), quantile(&inside, 0.99));
    let (lo, hi) = body_range(body()[0][0], end);
    assert!(
        (p99 - p50) as f64 / 1e3 >= (hi - lo) / 3.0,
        "{case}: p50 {p50} to p99 {p99} on {lo}..{hi} µs"
    );
    assert_eq!(bin_ns(hi - lo, 200), 1000, "{case}: 1 µs bins");
    let listing = tail_listing(&lines, end);
    let max = human_ns(lines[0].max());
    // The spikes and the body's last few stragglers past its end.
    let beyond: u64 = buckets.iter().filter(|b| b[0] > end).map(|b| b[1]).sum();
    assert!(
        beyond >= spikes && beyond <= spikes + total(&plain) / 500,
        "{case}: {beyond}"
    );
    assert!(
        listing[0].starts_with(&format!("CPU 0: {beyond} of {} beyond", total(buckets))),
        "{case}: {listing:?}"
    );
    assert!(
        listing[0].contains(&format!("{max} (max)")),
        "{case}: {listing:?}"
    );
    for c in [WIDE, NARROW] {
        let what = format!("{case} at {} units", c.width);
        let whole = whole_svg(&d, c).unwrap();
        assert!(
            whole.contains(&format!("CPU 0 — max {max}<")),
            "{what}: max in the legend"
        );
        assert_no_overlap(&whole, &format!("{what}, whole"));
        let b = body_svg(&d, c).unwrap();
        assert_no_overlap(&b, &format!("{what}, body"));
        assert!(b.contains("class=\"strip-title\""), "{what}: the strip");
        assert!(
            b.contains(&format!("class=\"tail-max\">{max}<")),
            "{what}: max in the strip"
        );
    }
}

#[test]
fn no_spike_only_the_bodys_last_stragglers_beyond_it() {
    check("0 spikes", &body(), 0);
}

#[test]
fn one_spike() {
    check("1 spike", &with_spikes(1), 1);
}

#[test]
fn ten_spikes_each_listed() {
    let b = with_spikes(10);
    check("10 spikes", &b, 10);
    let lines = [HistogramLine {
        label: "CPU 0".into(),
        buckets: &b,
        max_ns: 0,
    }];
    let listing = tail_listing(&lines, body_end_ns(&lines));
    for &[v, _] in b.iter().filter(|x| x[0] > 1_000_000) {
        assert!(
            listing[0].contains(&human_ns(v)),
            "{} not listed: {listing:?}",
            human_ns(v)
        );
    }
}

#[test]
fn one_percent_spikes() {
    let n = total(&body()) / 100;
    check("1 % spikes", &with_spikes(n), n);
}

#[test]
fn ten_percent_spikes() {
    let n = total(&body()) / 10;
    check("10 % spikes", &with_spikes(n), n);
}

#[test]
fn a_max_a_thousand_times_the_median() {
    let mut b = body();
    let p50 = quantile(&b, 0.5);
    b.push([p50 * 1000, 1]);
    check("max 1000× p50", &b, 1);
}

#[test]
fn a_smooth_tail_ends_where_it_thins_out() {
    // Exponential tail from 30 µs (100 000 samples, mean excess 10 µs): no gap, the body
    // ends where a bin holds under 1/2000 of the samples, past p99.
    let b: Vec<[u64; 2]> = (30..400u64)
        .map(|us| {
            [
                us * 1000,
                (10_000.0 * (-((us - 30) as f64) / 10.0).exp()).round() as u64,
            ]
        })
        .filter(|x| x[1] > 0)
        .collect();
    let end = line_body_end_ns(&b).unwrap();
    assert!(end >= quantile(&b, 0.99), "{end}");
    assert!(
        end <= quantile(&b, 0.9999) * 13 / 10,
        "{end}: within the bin of p99.99"
    );
}

#[test]
fn a_straggler_under_the_median_leaves_p99_in_the_body() {
    // A narrow body (p50 35 µs, p99 40 µs) and one sample at 13 µs: the axis starts at 10,
    // and 2.8 times p50..p99 from there would end it before the median.
    let mut b: Vec<[u64; 2]> = (28..=42u64)
        .map(|us| {
            [
                us * 1000,
                (1000.0 * (-((us as f64 - 35.0) / 2.0).powi(2) / 2.0).exp()) as u64,
            ]
        })
        .filter(|x| x[1] > 0)
        .collect();
    b.insert(0, [13_000, 1]);
    let lines = [HistogramLine {
        label: "CPU 0".into(),
        buckets: &b,
        max_ns: 0,
    }];
    let end = body_end_ns(&lines);
    assert!(
        end >= quantile(&b, 0.999),
        "{end} < p99.9 {}",
        quantile(&b, 0.999)
    );
}

#[test]
fn empty_bins_split_the_line() {
    let runs = rebin_runs(&[[1000, 1], [2000, 3], [9000, 2]], 1000, u64::MAX);
    assert_eq!(runs, vec![vec![(1.5, 1.0), (2.5, 3.0)], vec![(9.5, 2.0)]]);
}

#[test]
fn many_lines_share_one_strip_row_and_the_deadline_off_the_axis_is_said() {
    let bodies: Vec<Vec<[u64; 2]>> = (0..6).map(with_spikes).collect();
    let lines: Vec<HistogramLine> = bodies
        .iter()
        .enumerate()
        .map(|(k, b)| HistogramLine {
            label: format!("CPU {k}"),
            buckets: b,
            max_ns: 0,
        })
        .collect();
    let d = Distribution {
        name: "t".into(),
        lines: &lines,
        deadline_ns: Some(500_000_000),
    };
    let svg = body_svg(&d, WIDE).unwrap();
    assert!(svg.contains(">all</text>"), "one row for six lines");
    assert_no_overlap(&svg, "six lines");
    let html = crate::render::figure::distribution(&d, "c").unwrap();
    assert!(html.contains("deadline 500 ms is off the axis"), "{html}");
    assert_eq!(
        html.matches("<p class=\"tail\">").count(),
        6,
        "a listing per CPU"
    );
}

/// Per thread: its buckets, its max, its (p50, p99).
type FieldLines = (Vec<Vec<[u64; 2]>>, Vec<u64>, Vec<(u64, u64)>);

/// Each scenario's threads as the report draws them (their recorded histograms).
fn field_lines(scenario: &serde_json::Value) -> FieldLines {
    let threads = scenario["threads"].as_array().unwrap();
    let buckets = threads
        .iter()
        .map(|t| serde_json::from_value(t["histogram"].clone()).unwrap())
        .collect();
    let u = |t: &serde_json::Value, k: &str| t[k].as_u64().unwrap();
    let maxes = threads.iter().map(|t| u(t, "max_ns")).collect();
    let p50_p99 = threads
        .iter()
        .map(|t| (u(t, "p50_ns"), u(t, "p99_ns")))
        .collect();
    (buckets, maxes, p50_p99)
}

/// The histogram per configuration on the field's data: the 13-spike timer run and each of
/// the recorded suite's 27 scenarios (one with a 3 s stall). The worst CPU's p50..p99 lies
/// in the body and spans a third of its axis, every sample beyond is listed, each max is
/// written in the strip, and no text overlaps at either size.
#[test]
fn every_recorded_configuration_reads() {
    let mut scenarios = field("spikes.json")["scenarios"]
        .as_array()
        .unwrap()
        .clone();
    scenarios.extend(field("suite.json")["scenarios"].as_array().unwrap().clone());
    assert_eq!(scenarios.len(), 28);
    for sc in &scenarios {
        let name = sc["name"].as_str().unwrap().to_string();
        let (buckets, maxes, p50_p99) = field_lines(sc);
        let lines: Vec<HistogramLine> = buckets
            .iter()
            .zip(&maxes)
            .enumerate()
            .map(|(i, (b, &max_ns))| HistogramLine {
                label: format!("CPU {i}"),
                buckets: b,
                max_ns,
            })
            .collect();
        let end = body_end_ns(&lines);
        let &(p50, p99) = p50_p99.iter().max_by_key(|p| p.1).unwrap();
        let lo = buckets.iter().map(|b| b[0][0]).min().unwrap();
        let (x_lo, x_hi) = body_range(lo, end);
        let share = (p99 - p50) as f64 / 1e3 / (x_hi - x_lo);
        assert!(
            p99 <= end && share >= 1.0 / 3.0,
            "{name}: p50 {p50} p99 {p99} on {x_lo}..{x_hi} µs: {share:.2}"
        );
        let listing = tail_listing(&lines, end);
        for (l, line) in listing.iter().zip(&lines) {
            let beyond: u64 = line
                .buckets
                .iter()
                .filter(|b| b[0] > end)
                .map(|b| b[1])
                .sum();
            assert!(
                beyond == 0 || l.contains(&format!(" {beyond} of ")),
                "{name}: {l}"
            );
        }
        let d = Distribution {
            name: name.clone(),
            lines: &lines,
            deadline_ns: sc["params"]["deadline_ns"].as_u64(),
        };
        for c in [WIDE, NARROW] {
            let what = format!("{name} at {} units", c.width);
            let b = body_svg(&d, c).unwrap();
            assert_no_overlap(&b, &format!("{what}, body"));
            assert_no_overlap(&whole_svg(&d, c).unwrap(), &format!("{what}, whole"));
            for &max in maxes.iter().filter(|&&m| m > end) {
                let written = format!(">{}<", human_ns(max));
                assert!(b.contains(&written), "{what}: {written} not in the strip");
            }
        }
    }
}
