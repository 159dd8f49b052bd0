//! The probe-specific fields of a scenario (`params.extra`) and of a thread
//! (`threads[].extra`) as typed, documented fields (docs/result-schema.md, docs/probes.md):
//! every key a probe, importer or `--trace` writes is a field here, absent when unset, so
//! writers and readers share one spelling and one type. The JSON keeps its keys (fields in
//! alphabetical order, as the string-keyed maps of schema 1 wrote them).

use super::Checkpoint;
use serde::{Deserialize, Deserializer, Serialize};
use std::collections::BTreeMap;

/// Declares a struct whose fields are all optional, left out of the JSON when unset.
macro_rules! optional_fields {
    ($(#[$meta:meta])* pub struct $name:ident {
        $($(#[doc = $doc:expr])* $(#[serde($($attr:tt)*)])? $field:ident: $ty:ty,)*
    }) => {
        $(#[$meta])*
        pub struct $name {
            $(
                $(#[doc = $doc])*
                #[serde(default, skip_serializing_if = "Option::is_none" $(, $($attr)*)?)]
                pub $field: Option<$ty>,
            )*
        }
    };
}

optional_fields! {
    /// `params.extra`: what tells a probe's scenarios apart beyond the shared params.
    #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
    pub struct ParamsExtra {
        /// wake: competitor threads on the wakee's CPU.
        competitors: u64,
        /// gpio: the edges measured (`rising`, `falling`, `both`).
        edge: String,
        /// gpio: the kernel's event buffer asked for (0: its default).
        event_buffer: u64,
        /// net: `--flood` (stop-and-wait as fast as replies come).
        flood: bool,
        /// gpio: the input line (`gpiochip0:17 (GPIO17)`).
        gpio_in: String,
        /// gpio: the output line (loopback's drive, respond's answer).
        gpio_out: String,
        /// wake: the interval between wake-ups, ns (= `period_ns`).
        interval_ns: u64,
        /// wake: the mechanism (= `method`).
        mechanism: String,
        /// gpio: `loopback` or `respond`.
        mode: String,
        /// net: the in-process reflector's CPU.
        reflector_cpu: u64,
        /// net: datagrams the in-process reflector ignored.
        reflector_malformed: u64,
        /// `--resume`: measuring time of the kept parts, ns.
        resumed_after_ns: u64,
        /// `--resume`: samples every thread had in the kept parts and checkpoint.
        resumed_after_samples: u64,
        /// `--resume`: a killed attempt's last checkpoint.
        resumed_checkpoint: Checkpoint,
        /// `--resume`: the kept parts' names.
        resumed_parts: Vec<String>,
        /// gpio: the input was driven through gpio-sim (`--drive sim`), not a wire.
        simulated: bool,
        /// net: UDP payload size.
        size_bytes: u64,
        /// net: the reflector's address (`in-process` before the run).
        target: String,
        /// noise: `--threshold`, ns.
        threshold_ns: u64,
        /// net: no reply within this is lost, ns.
        timeout_ns: u64,
        /// net: the timestamp source.
        timestamps: String,
        /// wake: what the waker calls.
        wake_call: String,
        /// wake: the wakee's CPU.
        wakee_cpu: u64,
        /// wake: the waker's CPU.
        waker_cpu: u64,
        /// watch: spans of the interval not measured (a restart), `[from, to]` RFC 3339.
        watch_gaps: Vec<[String; 2]>,
        /// watch: for each of `watch_gaps`, the per-second maxima stored before it (where
        /// the gap falls in `per_second_max_ns`).
        watch_gap_seconds: Vec<u64>,
    }
}

impl ParamsExtra {
    /// Fields set in `later` replace these.
    pub fn merge(&mut self, later: ParamsExtra) {
        let ParamsExtra {
            competitors,
            edge,
            event_buffer,
            flood,
            gpio_in,
            gpio_out,
            interval_ns,
            mechanism,
            mode,
            reflector_cpu,
            reflector_malformed,
            resumed_after_ns,
            resumed_after_samples,
            resumed_checkpoint,
            resumed_parts,
            simulated,
            size_bytes,
            target,
            threshold_ns,
            timeout_ns,
            timestamps,
            wake_call,
            watch_gaps,
            watch_gap_seconds,
            wakee_cpu,
            waker_cpu,
        } = later;
        macro_rules! take {
            ($($f:ident),*) => { $(if $f.is_some() { self.$f = $f; })* };
        }
        take!(
            competitors,
            edge,
            event_buffer,
            flood,
            gpio_in,
            gpio_out,
            interval_ns,
            mechanism,
            mode,
            reflector_cpu,
            reflector_malformed,
            resumed_after_ns,
            resumed_after_samples,
            resumed_checkpoint,
            resumed_parts,
            simulated,
            size_bytes,
            target,
            threshold_ns,
            timeout_ns,
            timestamps,
            wake_call,
            watch_gaps,
            watch_gap_seconds,
            wakee_cpu,
            waker_cpu
        );
    }

    /// The set fields as (key, value) in key order, as the JSON has them.
    pub fn fields(&self) -> Vec<(String, serde_json::Value)> {
        match serde_json::to_value(self) {
            Ok(serde_json::Value::Object(map)) => map.into_iter().collect(),
            _ => Vec::new(),
        }
    }

    /// The set fields as `key=value` words in key order (strings unquoted).
    pub fn words(&self) -> Vec<String> {
        self.fields()
            .into_iter()
            .map(|(k, v)| match v {
                serde_json::Value::String(s) => format!("{k}={s}"),
                other => format!("{k}={other}"),
            })
            .collect()
    }
}

/// Which side of the true value a `--trace` part's bounded samples lie on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Bound {
    Lower,
    Upper,
}

/// `-h N` under `latscope cyclictest`: the histogram counted exactly in the loop.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FixedHistogram {
    /// N.
    pub buckets: u64,
    /// `[bucket, count]`, non-zero buckets only.
    pub counts: Vec<[u64; 2]>,
    /// 0-based sample numbers of the first N overflows.
    pub overflow_samples: Vec<u64>,
    pub overflows: u64,
    /// 1000, or 1 with `-N`.
    pub unit_ns: u64,
}

/// The wake probe's first iterations, warm-up included (docs/probes.md).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FirstIterations {
    /// `iteration`, `t0_ns`, `t1_ns`, `response_ns`, `merged`.
    pub columns: Vec<String>,
    /// The first iteration after warm-up (1-based).
    pub first_measured: u64,
    /// Iterations kept.
    pub kept: u64,
    /// One row per wake-up, in `columns` order.
    pub rows: Vec<Vec<u64>>,
    /// `--trace`: why rows could not be split, with counts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub switch_not_joined: Option<BTreeMap<String, u64>>,
    /// `--trace`: each row's `switch` part, None where it could not be split.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub switch_ns: Option<Vec<Option<i64>>>,
}

/// gpio: the kernel thread that handles the measured line's interrupt (`irq/N-NAME`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GpioIrqThread {
    /// The CPU it last ran on.
    pub cpu: u64,
    /// Its `Cpus_allowed_list`.
    pub cpus_allowed: String,
    pub irq: u64,
    /// Its name (`irq/45-latscope-812`).
    pub name: String,
    /// `fifo`, `rr` or `other` (empty: a policy latscope does not set).
    pub policy: String,
    pub priority: i64,
    /// `--irq-priority`: its policy and priority before the run (`fifo 50`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority_original: Option<String>,
    /// `--irq-priority`: read back after the restore (equal to `priority_original`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority_restored: Option<String>,
}

/// A present `null` as `Some(None)` (absent stays `None` through `default`).
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<u64>>, D::Error> {
    Option::<u64>::deserialize(d).map(Some)
}

optional_fields! {
    /// `threads[].extra`: a thread's probe-specific counters.
    #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
    pub struct ThreadExtra {
        /// `--trace` part: its bounded samples are a `lower` or `upper` bound.
        bound: Bound,
        /// `--trace` part: how many samples are bounds.
        bounded_samples: u64,
        /// wake `response`: competitor loops per second.
        competitor_loops_per_s: f64,
        /// wake `response`: competitor threads.
        competitors: u64,
        /// gpio: drives or answers whose set-values ioctl (or pull write) failed.
        drive_errors: u64,
        /// net: a second reply for a datagram already answered.
        duplicated: u64,
        /// gpio: edge events read from the line.
        edge_events: u64,
        /// gpio loopback: edges driven.
        edges_driven: u64,
        /// wake `response`: its first iterations.
        first_iterations: FirstIterations,
        /// wake `response`: the cold first wake-up's response, ns (null: none).
        #[serde(deserialize_with = "present")]
        first_response_ns: Option<u64>,
        /// `latscope cyclictest -h`: the fixed histogram.
        fixed_histogram: FixedHistogram,
        /// noise: gaps per second of measured time.
        gaps_per_second: f64,
        /// imported cyclictest: samples beyond its histogram.
        histogram_overflows: u64,
        /// `--trace` `remainder` part: samples whose `to_user` it holds (no rseq_update).
        includes_to_user_samples: u64,
        /// gpio: the kernel thread of the line's interrupt, as found while measuring.
        irq_thread: GpioIrqThread,
        /// wake `response`: measured iterations.
        iterations: u64,
        /// wake `response`: iterations, warm-up included.
        iterations_total: u64,
        /// `latscope cyclictest`: the last sample, ns (`Act`).
        last_ns: u64,
        /// noise: the loop's own cost, ns.
        loop_cost_ns: u64,
        /// net: no matching reply within the timeout.
        lost: u64,
        /// net: replies that failed the header check.
        malformed: u64,
        /// noise: measured time after warm-up, ns.
        measured_ns: u64,
        /// wake `response`: wake-ups served together with the previous one.
        merged: u64,
        /// gpio: edges the kernel's event buffer dropped (gaps in the events' seqno).
        missed_edges: u64,
        /// `--trace` part: negative values counted as 0.
        negative_counted_as_zero: u64,
        /// net `round_trip`: replies without a kernel receive timestamp.
        no_timestamp: u64,
        /// noise: gap time per second of measured time, ns/s.
        noise_ns_per_second: f64,
        /// noise: the sum of all gaps, ns.
        noise_ns_total: u64,
        /// noise: share of the measured time lost to gaps, %.
        noise_percent: f64,
        /// `--trace` `to_user` part: samples without the thread's rseq_update.
        not_measured_samples: u64,
        /// The run outlived the preallocated per-second series.
        per_second_truncated: bool,
        /// `latscope cyclictest`: this thread's interval, ns (`I:`).
        period_ns: u64,
        /// `--raw` could not keep this many samples.
        raw_dropped: u64,
        /// net: replies matched to the datagram waited for.
        received: u64,
        /// net: failed receive calls.
        recv_errors: u64,
        /// net: late replies of older datagrams.
        reordered: u64,
        /// wake `response`: wake-ups the ring could not hold.
        ring_overflow: u64,
        /// net: failed send calls.
        send_errors: u64,
        /// net: datagrams sent.
        sent: u64,
        /// wake `response`: iterations served, warm-up included.
        served_total: u64,
        /// gpio: the input was driven through gpio-sim (`--drive sim`), not a wire.
        simulated: bool,
        /// net: UDP payload size.
        size_bytes: u64,
        /// gpio loopback: events stamped before the drive they were read after (an earlier
        /// edge's, skipped).
        stale_events: u64,
        /// wake `response`: wake-ups found no iteration to serve.
        stale_wakeups: u64,
        /// wake `call`: wake-ups sent to stop the wakee.
        stop_wakeups: u64,
        /// noise: the threshold, ns.
        threshold_ns: u64,
        /// `latscope cyclictest`: the thread's kernel id.
        tid: i32,
        /// gpio loopback: driven edges with no event within the timeout.
        timeouts: u64,
        /// Imported files: statistics the source did not provide (`Stat` names).
        unknown_stats: Vec<String>,
        /// wake `call`: wake calls that found the channel full.
        wake_failed: u64,
        /// gpio: edge events read during the warm-up (answered, not measured).
        warmup_edge_events: u64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unset_fields_are_left_out_and_keys_keep_their_order() {
        let e = ThreadExtra {
            sent: Some(3),
            lost: Some(1),
            first_response_ns: Some(None),
            ..ThreadExtra::default()
        };
        let text = serde_json::to_string(&e).unwrap();
        assert_eq!(text, r#"{"first_response_ns":null,"lost":1,"sent":3}"#);
        let back: ThreadExtra = serde_json::from_str(&text).unwrap();
        assert_eq!(back, e);
        let absent: ThreadExtra = serde_json::from_str("{}").unwrap();
        assert_eq!(absent.first_response_ns, None);
    }

    /// tests/fixtures/run.json is a schema-1 file (extras as string-keyed maps, timer
    /// scenarios with `params.extra.method`): it reads as version 2, typed.
    #[test]
    fn a_version_1_file_reads_as_version_2() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/run.json");
        let text = std::fs::read_to_string(&path).unwrap();
        let raw: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(raw["schema_version"], 1);
        assert_eq!(
            raw["scenarios"][0]["params"]["extra"]["method"],
            "clock-nanosleep"
        );
        let run = crate::result::Run::load(&path).unwrap();
        assert_eq!(run.schema_version, crate::result::SCHEMA_VERSION);
        let timer = &run.scenarios[0];
        assert_eq!(timer.probe, crate::result::ProbeKind::Timer);
        assert_eq!(timer.params.extra, ParamsExtra::default(), "method dropped");
        let wake: Vec<Option<u64>> = run
            .scenarios
            .iter()
            .filter(|s| s.probe == crate::result::ProbeKind::Wake)
            .map(|s| s.params.extra.competitors)
            .collect();
        assert_eq!(wake, [Some(0), Some(4), Some(8)]);
        let written = serde_json::to_value(&run).unwrap();
        assert_eq!(written["schema_version"], 2);
        assert!(written["scenarios"][0]["params"]["extra"]
            .as_object()
            .unwrap()
            .is_empty());
        assert_eq!(written["scenarios"][5]["params"]["extra"]["competitors"], 4);
    }

    #[test]
    fn merge_takes_what_later_sets() {
        let mut a = ParamsExtra {
            target: Some("in-process".into()),
            size_bytes: Some(64),
            ..ParamsExtra::default()
        };
        a.merge(ParamsExtra {
            target: Some("127.0.0.1:9".into()),
            ..ParamsExtra::default()
        });
        assert_eq!(a.target.as_deref(), Some("127.0.0.1:9"));
        assert_eq!(a.size_bytes, Some(64));
        assert_eq!(a.words(), ["size_bytes=64", "target=127.0.0.1:9"]);
    }
}
