//! What a thread's series measures (`latency`, `response`, `gap`, ...): one variant per kind
//! of series, named the same in the JSON result, the CSV, `--raw` and the labels.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The metric of a `ThreadResult` or a `RawSeries` (the probes' series and the `--trace`
/// split parts). Serialized as its name; ordered by its name, as the strings were.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// The timer's wake-up latency, and imported cyclictest files: labels leave it out.
    #[default]
    Latency,
    /// wake: from the wake call to the wakee running.
    Response,
    /// wake: the cost of the wake call itself.
    Call,
    /// noise: one gap in the busy loop.
    Gap,
    /// net: the UDP round trip.
    RoundTrip,
    /// net: send to the kernel's receive timestamp.
    Network,
    /// net: the kernel's receive timestamp to the sender reading it.
    KernelToUser,
    /// `--trace` split of a timer sample: the hrtimer IRQ's lateness.
    IrqLatency,
    /// `--trace` split of a timer sample: wake-up to running.
    WakeToRun,
    /// `--trace` split of a wake-up: the wake call to the sched_wakeup.
    ToWakeup,
    /// `--trace` split of a GPIO edge: its IRQ stamp to its IRQ thread running.
    IrqThread,
    /// `--trace` split of a wake-up: the sched_wakeup to the switch in.
    Switch,
    /// `--trace` split: the switch in to user space.
    ToUser,
    /// `--trace` split: what the other parts leave.
    Remainder,
    /// gpio loopback: the driven edge to its IRQ.
    DriveToIrq,
    /// gpio: the IRQ to the user thread.
    IrqToUser,
    /// gpio loopback: the driven edge to the user thread.
    Total,
    /// gpio respond: the user thread to its output written.
    UserToOutput,
}

impl Metric {
    pub const ALL: [Metric; 18] = [
        Metric::Latency,
        Metric::Response,
        Metric::Call,
        Metric::Gap,
        Metric::RoundTrip,
        Metric::Network,
        Metric::KernelToUser,
        Metric::IrqLatency,
        Metric::WakeToRun,
        Metric::ToWakeup,
        Metric::IrqThread,
        Metric::Switch,
        Metric::ToUser,
        Metric::Remainder,
        Metric::DriveToIrq,
        Metric::IrqToUser,
        Metric::Total,
        Metric::UserToOutput,
    ];

    /// The name in files and labels (the serde name).
    pub fn name(self) -> &'static str {
        match self {
            Metric::Latency => "latency",
            Metric::Response => "response",
            Metric::Call => "call",
            Metric::Gap => "gap",
            Metric::RoundTrip => "round_trip",
            Metric::Network => "network",
            Metric::KernelToUser => "kernel_to_user",
            Metric::IrqLatency => "irq_latency",
            Metric::WakeToRun => "wake_to_run",
            Metric::ToWakeup => "to_wakeup",
            Metric::IrqThread => "irq_thread",
            Metric::Switch => "switch",
            Metric::ToUser => "to_user",
            Metric::Remainder => "remainder",
            Metric::DriveToIrq => "drive_to_irq",
            Metric::IrqToUser => "irq_to_user",
            Metric::Total => "total",
            Metric::UserToOutput => "user_to_output",
        }
    }

    /// The metric of that name (LAVA case names carry it as text).
    pub fn from_name(name: &str) -> Option<Metric> {
        Metric::ALL.into_iter().find(|m| m.name() == name)
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl PartialOrd for Metric {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Metric {
    /// By name, so sorted rows come in the order they had as strings.
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.name().cmp(other.name())
    }
}

#[cfg(test)]
mod tests {
    use super::Metric;

    #[test]
    fn serde_names_are_the_names() {
        for m in Metric::ALL {
            let json = serde_json::to_string(&m).unwrap();
            assert_eq!(json, format!("\"{}\"", m.name()));
            assert_eq!(serde_json::from_str::<Metric>(&json).unwrap(), m);
            assert_eq!(Metric::from_name(m.name()), Some(m));
        }
        assert_eq!(Metric::from_name("latency_ns"), None);
        assert_eq!(Metric::default(), Metric::Latency);
    }

    #[test]
    fn an_unknown_name_is_refused_naming_the_allowed_ones() {
        let err = serde_json::from_str::<Metric>("\"latencyy\"")
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown variant `latencyy`"), "{err}");
        assert!(
            err.contains("`response`") && err.contains("`round_trip`"),
            "{err}"
        );
    }

    #[test]
    fn ordered_by_name_as_the_strings_were() {
        let mut all = Metric::ALL.to_vec();
        all.sort();
        let names: Vec<&str> = all.iter().map(|m| m.name()).collect();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(names, sorted);
    }
}
