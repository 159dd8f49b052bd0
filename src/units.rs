//! Parsing what users type: durations with units (`300us`, `1ms`, `10s`, `5m`), sizes
//! (`64M`) and CPU lists (`0-3,6`, `all`). Formatting of nanoseconds for humans.

/// Parses a duration with a unit into nanoseconds. A bare number is taken in
/// `bare_unit_ns` (µs for cyclictest's `-i`, seconds for `-D`).
pub fn parse_duration_ns_with_default(text: &str, bare_unit_ns: u64) -> Result<u64, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err("empty duration".into());
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
    let scale: f64 = match unit.trim() {
        "" => bare_unit_ns as f64,
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
    };
    let ns = value * scale;
    if !ns.is_finite() || ns > u64::MAX as f64 / 2.0 {
        return Err(format!("'{t}' is too large"));
    }
    Ok(ns.round() as u64)
}

/// Parses a duration whose bare numbers are seconds.
pub fn parse_duration_ns(text: &str) -> Result<u64, String> {
    parse_duration_ns_with_default(text, 1_000_000_000)
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

/// Formats nanoseconds compactly for labels, in the unit syntax users type (`1ms`,
/// `300us`, `1.5ms`, `10s`).
pub fn compact_ns(ns: u64) -> String {
    let (value, unit) = scaled_ns(ns, "us");
    format!("{}{unit}", trimmed(value, 3))
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
    let digits: String = e
        .to_string()
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
            _ => '⁹',
        })
        .collect();
    format!("10⁻{digits}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration_ns("300us").unwrap(), 300_000);
        assert_eq!(parse_duration_ns("1ms").unwrap(), 1_000_000);
        assert_eq!(parse_duration_ns("10s").unwrap(), 10_000_000_000);
        assert_eq!(parse_duration_ns("5m").unwrap(), 300_000_000_000);
        assert_eq!(parse_duration_ns("2").unwrap(), 2_000_000_000);
        assert_eq!(parse_duration_ns("1.5ms").unwrap(), 1_500_000);
        assert_eq!(
            parse_duration_ns_with_default("1000", 1000).unwrap(),
            1_000_000
        );
        assert!(parse_duration_ns("-1ms").is_err());
        assert!(parse_duration_ns("1 parsec").is_err());
        assert!(parse_duration_ns("").is_err());
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list_plain("0-3,6").unwrap(), vec![0, 1, 2, 3, 6]);
        assert_eq!(parse_cpu_list("all", &[0, 1]).unwrap(), vec![0, 1]);
        assert!(parse_cpu_list_plain("3-1").is_err());
        assert!(parse_cpu_list_plain("x").is_err());
        assert_eq!(format_cpu_list(&[0, 1, 2, 3, 6]), "0-3,6");
        assert_eq!(compact_ns(1_000_000), "1ms");
        assert_eq!(compact_ns(300_000), "300us");
        assert_eq!(compact_ns(1_500_000), "1.5ms");
        assert_eq!(compact_ns(750), "750ns");
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
    fn sizes() {
        assert_eq!(parse_size_bytes("64M").unwrap(), 64 << 20);
        assert_eq!(parse_size_bytes("4096").unwrap(), 4096);
        assert!(parse_size_bytes("64Q").is_err());
    }
}
