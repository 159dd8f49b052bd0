//! The statistics latscope reports, named once: the name every report prints and users
//! type (`--fail-above`, compare rules, suite columns), its unit, whether it counts events
//! rather than measuring time, and where it sits in a Summary.

use super::Summary;

/// One statistic of a series.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stat {
    Samples,
    Min,
    Avg,
    Stddev,
    P50,
    P90,
    P99,
    P999,
    P9999,
    P99999,
    Max,
    Overruns,
    Missed,
}

impl Stat {
    /// A value of this statistic for people: `63.20 µs` for latencies, a number for counts.
    pub fn format_value(self, value: f64) -> String {
        if self.is_count() {
            format!("{value:.0}")
        } else {
            crate::units::human_ns(value.round() as u64)
        }
    }

    /// Every statistic, in the order of the Summary's fields (the CSV's columns).
    pub const ALL: [Stat; 13] = [
        Stat::Samples,
        Stat::Min,
        Stat::Avg,
        Stat::Stddev,
        Stat::P50,
        Stat::P90,
        Stat::P99,
        Stat::P999,
        Stat::P9999,
        Stat::P99999,
        Stat::Max,
        Stat::Overruns,
        Stat::Missed,
    ];

    /// What a `--fail-above` limit or a compare rule may judge: all but the sample count.
    pub const JUDGED: &'static [Stat] = Stat::ALL.split_first().unwrap().1;

    /// The name as reports print it and users type it.
    pub const fn name(self) -> &'static str {
        match self {
            Stat::Samples => "samples",
            Stat::Min => "min",
            Stat::Avg => "avg",
            Stat::Stddev => "stddev",
            Stat::P50 => "p50",
            Stat::P90 => "p90",
            Stat::P99 => "p99",
            Stat::P999 => "p99.9",
            Stat::P9999 => "p99.99",
            Stat::P99999 => "p99.999",
            Stat::Max => "max",
            Stat::Overruns => "overruns",
            Stat::Missed => "missed",
        }
    }

    /// A statistic by its name or an alias (`mean` for `avg`, `p999` for `p99.9`, ...).
    pub fn parse(text: &str) -> Option<Stat> {
        let alias = match text {
            "mean" => Some(Stat::Avg),
            "p999" => Some(Stat::P999),
            "p9999" => Some(Stat::P9999),
            "p99999" => Some(Stat::P99999),
            _ => None,
        };
        alias.or_else(|| Stat::ALL.into_iter().find(|s| s.name() == text))
    }

    /// A statistic a limit or rule may judge, or the error naming the ones it may.
    pub fn parse_judged(text: &str) -> Result<Stat, String> {
        Stat::parse(text)
            .filter(|s| Stat::JUDGED.contains(s))
            .ok_or_else(|| {
                format!(
                    "unknown statistic '{text}'; use one of {}",
                    Stat::JUDGED
                        .iter()
                        .map(|s| s.name())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })
    }

    /// Whether it counts events (samples, overruns, missed periods) rather than time.
    pub const fn is_count(self) -> bool {
        matches!(self, Stat::Samples | Stat::Overruns | Stat::Missed)
    }

    /// The unit of its value in a Summary: `ns` for times, none for counts.
    pub const fn unit(self) -> Option<&'static str> {
        if self.is_count() {
            None
        } else {
            Some("ns")
        }
    }

    /// A column header: `p99 (µs)` with the unit the column shows times in, `overruns`.
    pub fn header(self, time_unit: &str) -> String {
        if self.is_count() {
            self.name().to_string()
        } else {
            format!("{} ({time_unit})", self.name())
        }
    }

    /// The Summary field holding it (its JSON key and CSV column): `p999_ns`, `missed`.
    pub const fn field(self) -> &'static str {
        match self {
            Stat::Samples => "samples",
            Stat::Min => "min_ns",
            Stat::Avg => "mean_ns",
            Stat::Stddev => "stddev_ns",
            Stat::P50 => "p50_ns",
            Stat::P90 => "p90_ns",
            Stat::P99 => "p99_ns",
            Stat::P999 => "p999_ns",
            Stat::P9999 => "p9999_ns",
            Stat::P99999 => "p99999_ns",
            Stat::Max => "max_ns",
            Stat::Overruns => "overruns",
            Stat::Missed => "missed",
        }
    }

    /// The percentile (0-100) it is, if it is one.
    pub const fn percentile(self) -> Option<f64> {
        match self {
            Stat::P50 => Some(50.0),
            Stat::P90 => Some(90.0),
            Stat::P99 => Some(99.0),
            Stat::P999 => Some(99.9),
            Stat::P9999 => Some(99.99),
            Stat::P99999 => Some(99.999),
            _ => None,
        }
    }

    /// Its value in a summary (ns, or a count).
    pub fn of(self, s: &Summary) -> f64 {
        match self {
            Stat::Samples => s.samples as f64,
            Stat::Min => s.min_ns as f64,
            Stat::Avg => s.mean_ns,
            Stat::Stddev => s.stddev_ns,
            Stat::P50 => s.p50_ns as f64,
            Stat::P90 => s.p90_ns as f64,
            Stat::P99 => s.p99_ns as f64,
            Stat::P999 => s.p999_ns as f64,
            Stat::P9999 => s.p9999_ns as f64,
            Stat::P99999 => s.p99999_ns as f64,
            Stat::Max => s.max_ns as f64,
            Stat::Overruns => s.overruns as f64,
            Stat::Missed => s.missed as f64,
        }
    }
}

impl std::fmt::Display for Stat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back_and_aliases_are_canonical() {
        for s in Stat::ALL {
            assert_eq!(Stat::parse(s.name()), Some(s));
        }
        assert_eq!(Stat::parse("mean"), Some(Stat::Avg));
        assert_eq!(Stat::parse("p999"), Some(Stat::P999));
        assert_eq!(Stat::parse("p42"), None);
        assert_eq!(Stat::parse_judged("p99.99"), Ok(Stat::P9999));
        let err = Stat::parse_judged("samples").unwrap_err();
        assert!(err.starts_with("unknown statistic 'samples'; use one of min, avg"));
    }

    #[test]
    fn fields_match_the_summary_json() {
        let summary = Summary {
            samples: 1,
            min_ns: 2,
            mean_ns: 3.0,
            stddev_ns: 4.0,
            p50_ns: 5,
            p90_ns: 6,
            p99_ns: 7,
            p999_ns: 8,
            p9999_ns: 9,
            p99999_ns: 10,
            max_ns: 11,
            overruns: 12,
            missed: 13,
        };
        let json = serde_json::to_value(&summary).unwrap();
        for s in Stat::ALL {
            assert_eq!(json[s.field()].as_f64(), Some(s.of(&summary)), "{s}");
        }
        assert_eq!(json.as_object().unwrap().len(), Stat::ALL.len());
    }
}
