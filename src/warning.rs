//! Warnings: what makes a run's results less trustworthy, each with a stable code for
//! scripts (`code` in the result file) and a message for people. Every code and its
//! meaning is written once, in the table below; docs/result-schema.md's warning table is
//! checked against it by a unit test.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Declares `WarningCode` from one table: variant, code as written in JSON, meaning.
macro_rules! warning_codes {
    ($($variant:ident = $code:literal: $meaning:literal,)+) => {
        /// The stable code of a warning. Files from other versions may carry codes this
        /// one does not know: they are kept as `Other`.
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        pub enum WarningCode {
            $(#[doc = $meaning] $variant,)+
            /// A code this version does not know (read from another version's file).
            Other(String),
        }

        impl WarningCode {
            /// Every code this version writes, in the documentation's order.
            pub const ALL: &'static [WarningCode] = &[$(WarningCode::$variant,)+];

            /// The code as the result file has it (`sched_other`).
            pub fn as_str(&self) -> &str {
                match self {
                    $(WarningCode::$variant => $code,)+
                    WarningCode::Other(code) => code,
                }
            }

            /// What the warning means, one line (the documentation's table).
            pub fn meaning(&self) -> &'static str {
                match self {
                    $(WarningCode::$variant => $meaning,)+
                    WarningCode::Other(_) => "a code from another latscope version",
                }
            }

            /// The code of `text`, `Other` when this version does not know it.
            pub fn parse(text: &str) -> WarningCode {
                match text {
                    $($code => WarningCode::$variant,)+
                    other => WarningCode::Other(other.to_string()),
                }
            }
        }
    };
}

warning_codes! {
    Virtualized = "virtualized": "a hypervisor was detected: maxima include the host's scheduling",
    Governor = "governor": "a CPU frequency governor other than `performance`",
    RtThrottling = "rt_throttling": "sched_rt_runtime_us < period: busy RT threads are stopped each period",
    ThpAlways = "thp_always": "transparent huge pages `always`",
    SchedOther = "sched_other": "measuring threads ran at SCHED_OTHER",
    BusyRtThrottled = "busy_rt_throttled": "busy-waiting at RT priority: throttling shows up as latency",
    DmaLatencyUntouched = "dma_latency_untouched": "/dev/cpu_dma_latency was left as the system had it",
    Mlockall = "mlockall": "memory could not be locked",
    RawDropped = "raw_dropped": "samples did not fit the `--raw` buffer (they are in every statistic)",
    TraceMissingEvents = "trace_missing_events": "`--trace`: the kernel lacks some requested events (named); the analysis that needs them is partial",
    TraceLostEvents = "trace_lost_events": "`--trace`: a CPU's ring buffer lost events (counts per CPU in `trace.losses`); raise `--trace-buffer`",
    TraceNote = "trace_note": "`--trace`: something the recorder noted (e.g. the drain thread shares a measured CPU)",
    LoadOnMeasuredCpus = "load_on_measured_cpus": "every online CPU is measured, so loads without `cpus=` share the measured CPUs",
    IsolateOverlapsIsolcpus = "isolate_overlaps_isolcpus": "an `--isolate` CPU is already isolated at boot (`isolcpus=`); the shield adds cpusets and IRQ moves on top",
    IsolationIrqsStay = "isolation_irqs_stay": "`--isolate`: the kernel would not move some IRQs (named) off the isolated CPUs",
    IsolationKthreadsStay = "isolation_kthreads_stay": "`--isolate`: per-CPU kernel threads (named) stay on the isolated CPUs",
    IsolationNotRestored = "isolation_not_restored": "`--isolate`: a setting could not be restored after the scenario; run `latscope restore`",
    IsolationRemovedDuringRun = "isolation_removed_during_run": "`--isolate`: `latscope restore --force` undid the isolation while the scenario ran; later samples were not shielded",
    NoiseRtThrottling = "noise_rt_throttling": "noise: gaps as long as RT throttling's stop are the kernel's throttling, not hardware",
    WakeMerged = "wake_merged": "wake: wake-ups arrived while the previous one was pending and were served together (`merged`)",
    WakeChannelFull = "wake_channel_full": "wake: wake calls found the channel full (the wakee had not run); counted as merged, not lost",
    NetLoss = "net_loss": "net: packets were lost, reordered, duplicated or malformed (counts in the message and the threads' `extra`)",
    NetNoTimestamp = "net_no_timestamp": "net: replies came without a kernel receive timestamp; they are in `round_trip` only",
    GpioSimulated = "gpio_simulated": "gpio: the input was driven through the kernel's GPIO simulator (`--drive sim`), not a wire: the figures are the simulator's path",
    GpioMissedEdges = "gpio_missed_edges": "gpio: edges were lost: the kernel's event buffer dropped them (seqno gaps, `missed`) or no event came in time (`timeouts`)",
    GpioIrqThread = "gpio_irq_thread": "gpio: the line's IRQ thread runs below the measuring thread's priority, on another CPU, or was not found",
    ImportedCyclictest = "imported_cyclictest": "the run was imported from `cyclictest --json` (its command line in the message)",
    WatchGap = "watch_gap": "watch: the interval was not measured for a while (latscope stopped and started again); the span is in `params.extra.watch_gaps`, its seconds have no per-second maxima",
    CyclictestHistogramOverflow = "cyclictest_histogram_overflow": "imported: samples beyond cyclictest's histogram (`-h`); percentiles there and the standard deviation are unknown",
}

impl WarningCode {
    /// Context rather than a doubt about the numbers: printed as `note:`, after the
    /// warnings. The rest are `warning:`, and the one that changes what the numbers mean
    /// (`sched_other`) comes first and is said in the headline too.
    pub fn is_note(&self) -> bool {
        matches!(
            self,
            WarningCode::Governor
                | WarningCode::ThpAlways
                | WarningCode::DmaLatencyUntouched
                | WarningCode::RtThrottling
                | WarningCode::TraceNote
                | WarningCode::IsolateOverlapsIsolcpus
                | WarningCode::ImportedCyclictest
        )
    }
}

impl std::fmt::Display for WarningCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for WarningCode {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for WarningCode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(WarningCode::parse(&String::deserialize(d)?))
    }
}

/// A warning with a stable code for scripts and a message for people.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Warning {
    pub code: WarningCode,
    pub message: String,
}

impl Warning {
    pub fn new(code: WarningCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}

/// The documentation's table of warning codes, as docs/result-schema.md must have it.
#[cfg(test)]
pub fn doc_table() -> String {
    let mut out = String::from("| code | meaning |\n|---|---|\n");
    for code in WarningCode::ALL {
        out.push_str(&format!("| `{code}` | {} |\n", code.meaning()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_as_plain_strings() {
        for code in WarningCode::ALL {
            let json = serde_json::to_string(&Warning::new(code.clone(), "m")).unwrap();
            assert_eq!(json, format!("{{\"code\":\"{code}\",\"message\":\"m\"}}"));
            let back: Warning = serde_json::from_str(&json).unwrap();
            assert_eq!(&back.code, code);
        }
        let other: Warning = serde_json::from_str(r#"{"code":"smt","message":"m"}"#).unwrap();
        assert_eq!(other.code, WarningCode::Other("smt".into()));
        assert_eq!(serde_json::to_string(&other.code).unwrap(), "\"smt\"");
    }

    #[test]
    fn result_schema_documents_every_code() {
        let doc = include_str!("../docs/result-schema.md");
        let section = doc
            .split("## Warning codes\n\n")
            .nth(1)
            .expect("docs/result-schema.md has a '## Warning codes' section");
        let table: String = section
            .lines()
            .take_while(|l| l.starts_with('|'))
            .map(|l| format!("{l}\n"))
            .collect();
        assert_eq!(
            table,
            doc_table(),
            "docs/result-schema.md's warning table differs from src/warning.rs; paste this table there:\n{}",
            doc_table()
        );
    }
}
