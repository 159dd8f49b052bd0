//! The probe a scenario ran (`timer`, `wake`, `net`, `noise`, `gpio`) as one type from plan to
//! report: parsed once where the user names it, written as the same lowercase word.

use serde::{Deserialize, Serialize};

/// What a scenario measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProbeKind {
    Timer,
    Wake,
    Net,
    Noise,
    /// An external edge on a GPIO line and its answer (`latscope gpio`).
    Gpio,
    /// An imported LAVA test set whose name starts with no probe's name (never measured
    /// by latscope, never typed by a user).
    Lava,
}

impl ProbeKind {
    /// Every probe latscope measures with, in the order documented (not `Lava`).
    pub const ALL: [ProbeKind; 5] = [
        ProbeKind::Timer,
        ProbeKind::Wake,
        ProbeKind::Net,
        ProbeKind::Noise,
        ProbeKind::Gpio,
    ];

    /// The word users type and the result file holds.
    pub fn name(self) -> &'static str {
        match self {
            ProbeKind::Timer => "timer",
            ProbeKind::Wake => "wake",
            ProbeKind::Net => "net",
            ProbeKind::Noise => "noise",
            ProbeKind::Gpio => "gpio",
            ProbeKind::Lava => "lava",
        }
    }

    /// The measuring probe named `text` (exactly as `name` writes it).
    pub fn parse(text: &str) -> Option<ProbeKind> {
        ProbeKind::ALL.into_iter().find(|k| k.name() == text)
    }

    /// Every name, comma-separated, for messages.
    pub fn names() -> String {
        ProbeKind::ALL.map(ProbeKind::name).join(", ")
    }
}

impl std::fmt::Display for ProbeKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_json_and_parse() {
        for k in ProbeKind::ALL {
            assert_eq!(ProbeKind::parse(k.name()), Some(k));
            let json = serde_json::to_string(&k).unwrap();
            assert_eq!(json, format!("\"{}\"", k.name()));
            assert_eq!(serde_json::from_str::<ProbeKind>(&json).unwrap(), k);
        }
        assert_eq!(ProbeKind::parse("gpio"), Some(ProbeKind::Gpio));
        assert_eq!(ProbeKind::parse("irq"), None);
        assert_eq!(ProbeKind::parse("lava"), None);
        assert_eq!(serde_json::to_string(&ProbeKind::Lava).unwrap(), "\"lava\"");
        assert_eq!(ProbeKind::names(), "timer, wake, net, noise, gpio");
    }
}
