//! The study a suite reproduces (`study = "rt-cost"` in its plan): the shape of its tables
//! and charts. A type, so the suite's check, every renderer and compare match on the same
//! three values instead of strings.

use serde::{Deserialize, Serialize};

/// A study shape: which tables and charts a suite run is shown with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Study {
    /// Thread wake-up response against 0-32 competing tasks, per policy.
    WakeCompetitors,
    /// The RT patch's cost: round trips, timer interrupt latency, load throughput.
    RtCost,
    /// Interrupt response idle and under network, disk and serial load.
    IrqResponse,
}

impl Study {
    /// Every study, in the order help texts list them.
    pub const ALL: [Study; 3] = [Study::WakeCompetitors, Study::RtCost, Study::IrqResponse];

    /// The name a suite plan and the result file use.
    pub fn name(self) -> &'static str {
        match self {
            Study::WakeCompetitors => "wake-competitors",
            Study::RtCost => "rt-cost",
            Study::IrqResponse => "irq-response",
        }
    }

    /// The study of a plan's `study` value, if it names one.
    pub fn parse(text: &str) -> Option<Study> {
        Study::ALL.into_iter().find(|s| s.name() == text)
    }

    /// The names, comma-separated, for error messages.
    pub fn names() -> String {
        Study::ALL.map(Study::name).join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::Study;

    #[test]
    fn names_parse_back_and_match_serde() {
        for s in Study::ALL {
            assert_eq!(Study::parse(s.name()), Some(s));
            assert_eq!(
                serde_json::to_string(&s).unwrap(),
                format!("\"{}\"", s.name())
            );
        }
        assert_eq!(Study::parse("memory-load"), None);
    }
}
