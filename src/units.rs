//! Parsing what users type: durations with units (`300us`, `1ms`, `10s`, `5m`), sizes
//! (`64M`) and CPU lists (`0-3,6`, `all`). Formatting of nanoseconds for humans.

/// Parses a duration into nanoseconds, a bare number taken in `bare_unit_ns`: only for
/// `latscope cyclictest` (µs for `-i`, seconds for `-D`) and timer's cyclictest-style
/// `-i`, which keep cyclictest's conventions. Everything else uses `parse_duration_ns`.
pub fn parse_duration_ns_with_default(text: &str, bare_unit_ns: u64) -> Result<u64, String> {
    let (value, unit, t) = split_duration(text)?;
    let scale = if unit.is_empty() {
        bare_unit_ns as f64
    } else {
        unit_scale(unit, t)?
    };
    scaled(value, scale, t)
}

/// Parses a duration typed with its unit (`300us`, `1ms`, `10s`, `5m`, `0us`) into
/// nanoseconds. A bare number is refused with the fix, `hint` naming the unit the option
/// is usually given in (`--deadline 5` wrote 5 µs by surprise, `-D 5` meant 5 s): only a
/// bare `0` passes, as zero in any unit.
pub fn parse_duration_ns(text: &str, hint: &str) -> Result<u64, String> {
    let (value, unit, t) = split_duration(text)?;
    if unit.is_empty() {
        if value == 0.0 {
            return Ok(0);
        }
        return Err(format!(
            "a bare number has no unit; write {t}{hint} (units: ns, us, ms, s, m, h)"
        ));
    }
    let scale = unit_scale(unit, t)?;
    scaled(value, scale, t)
}

/// A duration's number and unit as typed (the unit trimmed; empty when bare), and the
/// trimmed text.
fn split_duration(text: &str) -> Result<(f64, &str, &str), String> {
    let t = text.trim();
    if t.is_empty() {
        return Err("empty duration; write e.g. 300us, 1ms, 10s or 5m".into());
    }
    if t.starts_with('-') {
        return Err(format!(
            "'{t}' is negative; give a positive duration like 1ms"
        ));
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: f64 = num
        .parse()
        .map_err(|_| format!("'{t}' is not a duration; write e.g. 300us, 1ms, 10s or 5m"))?;
    Ok((value, unit.trim(), t))
}

/// Nanoseconds per `unit` (never empty), or the refusal naming the units.
fn unit_scale(unit: &str, t: &str) -> Result<f64, String> {
    Ok(match unit {
        "ns" => 1.0,
        "us" | "µs" | "usec" => 1e3,
        "ms" | "msec" => 1e6,
        "s" | "sec" => 1e9,
        "m" | "min" => 60e9,
        "h" => 3600e9,
        other => {
            return Err(format!(
                "unknown unit '{other}' in '{t}'; use ns, us, ms, s, m or h"
            ))
        }
    })
}

/// `value` × `scale` as whole nanoseconds, refused when it cannot be held.
fn scaled(value: f64, scale: f64, t: &str) -> Result<u64, String> {
    let ns = value * scale;
    if !ns.is_finite() || ns > u64::MAX as f64 / 2.0 {
        return Err(format!("'{t}' is too large"));
    }
    Ok(ns.round() as u64)
}

/// Parses a size that must carry its unit (`64K`, `8M`, `1G`, `4096B`): for sizes whose
/// bare number would be read in two ways (`--trace-buffer 4096`: bytes to latscope, KiB
/// to the kernel's buffer_size_kb), so a bare one is refused with the fix.
pub fn parse_size_with_unit(text: &str) -> Result<u64, String> {
    let t = text.trim();
    if !t.is_empty() && t.chars().all(|c| c.is_ascii_digit()) {
        return Err(format!(
            "a bare number has no unit; write {t}K (KiB, as the kernel's buffer_size_kb) or {t}B for bytes (units: B, K, M, G)"
        ));
    }
    parse_size_bytes(t)
}

/// Parses a byte size like `4096`, `64K`, `64M`, `1G` (binary multiples).
pub fn parse_size_bytes(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: u64 = num
        .parse()
        .map_err(|_| format!("'{t}' is not a size; write e.g. 4096, 64K, 64M or 1G"))?;
    let mult = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 1,
        "K" | "KB" | "KIB" => 1 << 10,
        "M" | "MB" | "MIB" => 1 << 20,
        "G" | "GB" | "GIB" => 1 << 30,
        other => {
            return Err(format!(
                "unknown size unit '{other}' in '{t}'; use K, M or G"
            ))
        }
    };
    value
        .checked_mul(mult)
        .ok_or_else(|| format!("'{t}' is too large"))
}

/// CPU lists without `all` are the kernel's format, parsed and formatted in sys.
pub use crate::sys::cpu_list::{format_cpu_list, parse_cpu_list_plain};

/// Parses a CPU list, where `all` means every CPU in `online`.
pub fn parse_cpu_list(text: &str, online: &[usize]) -> Result<Vec<usize>, String> {
    if text.trim() == "all" {
        return Ok(online.to_vec());
    }
    parse_cpu_list_plain(text).map_err(|e| {
        if e.contains("cannot exist") && !online.is_empty() {
            format!("{e}; this machine's CPUs are {}", format_cpu_list(online))
        } else {
            e
        }
    })
}

/// Formats nanoseconds as a human duration, spaced from its unit, to two decimals at most
/// (`1.5 ms`, `250 µs`, `12.34 µs`, `800 ns`): the one style of every printed duration.
pub fn human_ns(ns: u64) -> String {
    let (value, unit) = scaled_ns(ns, "µs");
    format!("{} {unit}", trimmed(value, 2))
}

/// `ns` in its largest whole unit: (value, unit), the microsecond written `micro`.
fn scaled_ns(ns: u64, micro: &'static str) -> (f64, &'static str) {
    if ns >= 1_000_000_000 {
        (ns as f64 / 1e9, "s")
    } else if ns >= 1_000_000 {
        (ns as f64 / 1e6, "ms")
    } else if ns >= 1_000 {
        (ns as f64 / 1e3, micro)
    } else {
        (ns as f64, "ns")
    }
}

/// `value` with `digits` decimals, trailing zeros (and a bare point) dropped.
fn trimmed(value: f64, digits: usize) -> String {
    let text = format!("{value:.digits$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// A duration in a name (a scenario's period, a noise threshold, a timer slack) in the
/// printed style, to three decimals so that names of close periods stay apart: `300 µs`,
/// `1.5 ms`, `1.234 ms`, `10 s`.
pub fn name_ns(ns: u64) -> String {
    let (value, unit) = scaled_ns(ns, "µs");
    format!("{} {unit}", trimmed(value, 3))
}

/// The units a duration in a name may carry, as typed (`us`) or printed (`µs`).
const NAME_UNITS: [&str; 5] = ["ns", "us", "µs", "ms", "s"];

/// Rewrites every duration of `text` (a number, then a unit of `NAME_UNITS` ending a word,
/// with or without a space between) by `respell(number, unit)`. A scan by hand: the two
/// callers need only this, and the regex crate is a test-only dependency here (it would
/// add ~1 MB to a binary kept lean, bench/README.md "Resident text").
fn respell_durations(text: &str, respell: impl Fn(&str, &str) -> String) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut rest = text;
    let mut after_word = false;
    while let Some(c) = rest.chars().next() {
        if c.is_ascii_digit() && !after_word {
            let num_len = rest
                .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                .unwrap_or(rest.len());
            let (num, tail) = rest.split_at(num_len);
            let spaced = tail.strip_prefix(' ').unwrap_or(tail);
            let unit = NAME_UNITS.iter().find(|u| {
                spaced.starts_with(**u)
                    && !spaced[u.len()..]
                        .chars()
                        .next()
                        .is_some_and(|n| n.is_alphanumeric())
            });
            match unit {
                Some(u) if !num.ends_with('.') && num.matches('.').count() <= 1 => {
                    out.push_str(&respell(num, u));
                    rest = &spaced[u.len()..];
                }
                _ => {
                    out.push_str(num);
                    rest = tail;
                }
            }
            after_word = true;
            continue;
        }
        after_word = c.is_alphanumeric() || c == '.' || c == '_';
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// Names written by latscope before durations were spaced (`timer clock-nanosleep 300us`)
/// in today's style (`timer clock-nanosleep 300 µs`), so old files read alike.
pub fn spaced_durations(text: &str) -> String {
    respell_durations(text, |num, unit| {
        format!("{num} {}", if unit == "us" { "µs" } else { unit })
    })
}

/// Durations glued to ASCII units (`300 µs` -> `300us`), for names that allow no space
/// or `µ` (LAVA's test set and case names).
pub fn glued_durations(text: &str) -> String {
    respell_durations(text, |num, unit| {
        format!("{num}{}", if unit == "µs" { "us" } else { unit })
    })
}

/// A duration to three significant digits at most, spaced from its unit: `300 µs`,
/// `1.4 ms`, `3 s` (the report's headline).
pub fn spaced_ns(ns: u64) -> String {
    let (value, unit) = scaled_ns(ns, "µs");
    let digits = if value >= 100.0 {
        0
    } else if value >= 10.0 {
        1
    } else {
        2
    };
    format!("{} {unit}", trimmed(value, digits))
}

/// Formats nanoseconds as µs with two decimals, or as ns when `in_ns`.
pub fn latency_cell(ns: u64, in_ns: bool) -> String {
    if in_ns {
        ns.to_string()
    } else {
        format!("{:.2}", ns as f64 / 1e3)
    }
}

/// `p` as a power of ten in superscript (`10⁻⁶`).
pub fn power_of_ten(p: f64) -> String {
    let e = -p.log10().round() as i32;
    format!("10⁻{}", superscript(e))
}

/// `x` as `3.6·10⁶` (plain below 10⁴): counts too large to read digit by digit.
pub fn scientific(x: f64) -> String {
    if x < 1e4 {
        return format!("{x:.0}");
    }
    let e = x.log10().floor() as i32;
    let m = x / 10f64.powi(e);
    let m = if (m - m.round()).abs() < 0.05 {
        format!("{m:.0}")
    } else {
        format!("{m:.1}")
    };
    format!("{m}·10{}", superscript(e))
}

/// An exponent in superscript digits (`-6` → `⁻⁶`).
fn superscript(e: i32) -> String {
    e.to_string()
        .chars()
        .map(|c| match c {
            '0' => '⁰',
            '1' => '¹',
            '2' => '²',
            '3' => '³',
            '4' => '⁴',
            '5' => '⁵',
            '6' => '⁶',
            '7' => '⁷',
            '8' => '⁸',
            '-' => '⁻',
            _ => '⁹',
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        let d = |t: &str| parse_duration_ns(t, "us");
        assert_eq!(d("300us").unwrap(), 300_000);
        assert_eq!(d("300µs").unwrap(), 300_000);
        assert_eq!(d("1ms").unwrap(), 1_000_000);
        assert_eq!(d("10s").unwrap(), 10_000_000_000);
        assert_eq!(d("5m").unwrap(), 300_000_000_000);
        assert_eq!(d("1.5ms").unwrap(), 1_500_000);
        assert_eq!(d("0us").unwrap(), 0);
        assert_eq!(d("0").unwrap(), 0);
        assert_eq!(
            d("5").unwrap_err(),
            "a bare number has no unit; write 5us (units: ns, us, ms, s, m, h)"
        );
        assert!(parse_duration_ns("2", "s")
            .unwrap_err()
            .contains("write 2s"));
        assert_eq!(
            parse_duration_ns_with_default("1000", 1000).unwrap(),
            1_000_000
        );
        assert_eq!(
            parse_duration_ns_with_default("2ms", 1000).unwrap(),
            2_000_000
        );
        assert!(d("-1ms").is_err());
        assert!(d("1 parsec").is_err());
        assert!(d("").is_err());
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list_plain("0-3,6").unwrap(), vec![0, 1, 2, 3, 6]);
        assert_eq!(parse_cpu_list("all", &[0, 1]).unwrap(), vec![0, 1]);
        assert!(parse_cpu_list_plain("3-1").is_err());
        assert!(parse_cpu_list_plain("x").is_err());
        assert_eq!(format_cpu_list(&[0, 1, 2, 3, 6]), "0-3,6");
        assert_eq!(name_ns(1_000_000), "1 ms");
        assert_eq!(name_ns(300_000), "300 µs");
        assert_eq!(name_ns(1_234_000), "1.234 ms");
        assert_eq!(name_ns(750), "750 ns");
    }

    #[test]
    fn printed_durations_are_a_number_a_space_and_the_unit() {
        let glued = regex::Regex::new(r"\d(us|ms|µs|ns|s)\b").unwrap();
        let cases = [
            (300_000, "300 µs"),
            (1_000_000, "1 ms"),
            (1_500_000, "1.5 ms"),
            (8_973_000, "8.97 ms"),
            (12_345, "12.35 µs"),
            (999, "999 ns"),
            (0, "0 ns"),
            (10_000_000_000, "10 s"),
        ];
        for (ns, text) in cases {
            assert_eq!(human_ns(ns), text);
            assert!(!glued.is_match(&human_ns(ns)), "{ns}");
        }
        for ns in [
            1,
            999,
            1_000,
            1_234,
            100_000,
            999_999,
            1_000_000,
            61_000_000_000,
        ] {
            for text in [human_ns(ns), spaced_ns(ns)] {
                assert!(!glued.is_match(&text), "{text}");
                assert!(!text.contains("us"), "{text}: µs, not us");
            }
        }
    }

    #[test]
    fn names_respelled_both_ways() {
        let old = "timer clock-nanosleep 300us load=cpu:50%,cpus=1 slack=50us threshold=1.5ms";
        let new = "timer clock-nanosleep 300 µs load=cpu:50%,cpus=1 slack=50 µs threshold=1.5 ms";
        assert_eq!(spaced_durations(old), new);
        assert_eq!(spaced_durations(new), new);
        assert_eq!(glued_durations(new), old);
        assert_eq!(glued_durations(old), old);
        for kept in [
            "cpu1 p99",
            "mem-churn:100%,size=64M",
            "net 64B",
            "wake eventfd cpu1->0",
            "x86s",
            "1.5.2s",
        ] {
            assert_eq!(spaced_durations(kept), kept);
            assert_eq!(glued_durations(kept), kept);
        }
        assert_eq!(spaced_durations("noise 10s"), "noise 10 s");
        assert_eq!(glued_durations("noise 10 s end"), "noise 10s end");
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size_bytes("64M").unwrap(), 64 << 20);
        assert_eq!(parse_size_bytes("4096").unwrap(), 4096);
        assert!(parse_size_bytes("64Q").is_err());
        assert_eq!(parse_size_with_unit("8M").unwrap(), 8 << 20);
        assert_eq!(parse_size_with_unit("4096B").unwrap(), 4096);
        assert!(parse_size_with_unit("4096")
            .unwrap_err()
            .contains("write 4096K"));
    }
}
