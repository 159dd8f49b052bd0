//! `latscope wake`: how fast one thread wakes another, the user-space device-driver
//! case (a writer wakes a reader blocked on a file). A waker thread triggers every
//! interval on an absolute schedule and records t0 just before its wake call; the
//! wakee records t1 as soon as its blocking call returns; response = t1 − t0. The
//! waker's call cost is a second series. Optional competitors load the wakee's CPU.

pub mod competitors;
pub mod loops;
pub mod mechanism;

use super::harness::{run_measuring_threads_with_tids, ThreadPlacement};
use super::{CommonSettings, Probe, ProbeContext, ProbeOutput};
use crate::result::extras::FirstIterations;
use crate::result::{Metric, ParamsExtra, RawSeries, ThreadExtra, ThreadResult};
use crate::stats::{LiveStats, Recorder, RecorderConfig};
use crate::sys::{mqueue::MessageQueue, wake_primitives};
use crate::warning::{Warning, WarningCode};
use anyhow::anyhow;
use competitors::Competitors;
use loops::{RawRows, Schedule, Shared, WakeeCounts, WakerCounts};
use mechanism::{
    Channel, CondvarChannel, EventfdChannel, FutexChannel, Mechanism, MqueueChannel, PipeChannel,
    SignalChannel, UnixChannel,
};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The wake probe for one mechanism and one number of competitors.
#[derive(Debug, Clone)]
pub struct WakeProbe {
    pub mechanism: Mechanism,
    pub interval_ns: u64,
    pub deadline_ns: u64,
    pub waker_cpu: usize,
    pub wakee_cpu: usize,
    /// SCHED_OTHER threads looping nanosleep(1 µs) on the wakee's CPU.
    pub competitors: usize,
}

/// What each of the two measuring threads holds before the start: its recorder, the
/// scratch one its warm-up records into, and the wakee's receiver and raw rows.
enum Side<R> {
    Waker(Recorder, Recorder),
    Wakee(R, Recorder, Recorder, RawRows),
}

/// What each of the two measuring threads hands back.
enum Finished {
    Waker(Recorder, WakerCounts),
    Wakee(Recorder, WakeeCounts, RawRows),
}

impl WakeProbe {
    fn placements(&self, settings: &CommonSettings) -> [ThreadPlacement; 2] {
        let place = |cpu| ThreadPlacement {
            cpu,
            policy: settings.policy,
            priority: settings.priority,
            timer_slack_ns: settings.timer_slack_ns,
        };
        [place(self.waker_cpu), place(self.wakee_cpu)]
    }

    /// Runs the two threads with one mechanism; generic so each loop is monomorphized.
    fn run_with<C: Channel>(
        &self,
        channel: C,
        settings: &CommonSettings,
        ctx: &ProbeContext,
    ) -> anyhow::Result<Measured> {
        let config = RecorderConfig {
            deadline_ns: self.deadline_ns,
            series_seconds: settings.series_seconds(self.interval_ns),
            raw_capacity: 0,
        };
        let raw_capacity = settings.raw_capacity(self.interval_ns);
        let live_wakee: Arc<LiveStats> = Arc::default();
        let shared = Shared::new();
        let stop = &*ctx.stop;
        ctx.publish_live(&[self.wakee_cpu], std::slice::from_ref(&live_wakee));
        let progress = crate::progress::Progress::start(
            ctx.progress,
            &ctx.label,
            vec![self.wakee_cpu],
            vec![live_wakee.clone()],
            settings.samples,
            settings.duration_ns.map(|d| d + settings.warmup_ns),
            settings.warmup_ns,
        );
        let channel = &channel;
        let shared = &shared;
        let results = run_measuring_threads_with_tids(
            &self.placements(settings),
            |index| -> anyhow::Result<Side<C::Receiver>> {
                let scratch = Recorder::scratch(&config, Arc::default());
                let side = if index == 0 {
                    Side::Waker(Recorder::new(&config, Arc::default()), scratch)
                } else {
                    Side::Wakee(
                        channel.receiver()?,
                        Recorder::new(&config, live_wakee.clone()),
                        scratch,
                        RawRows::with_capacity(raw_capacity),
                    )
                };
                shared.prepared.fetch_add(1, Ordering::AcqRel);
                Ok(side)
            },
            |_, side, start_ns| self.measure_side(channel, shared, side, start_ns, settings, stop),
        );
        progress.finish();
        let (results, tids) = results?;
        measured_of(results, [tids[0], tids[1]])
    }

    /// One measuring thread, once both are prepared: the waker's or the wakee's loop.
    fn measure_side<C: Channel>(
        &self,
        channel: &C,
        shared: &Shared,
        side: Side<C::Receiver>,
        start_ns: u64,
        settings: &CommonSettings,
        stop: &AtomicBool,
    ) -> anyhow::Result<Finished> {
        if shared.prepared.load(Ordering::Acquire) < 2 {
            shared.mark_wakee_exited();
            return Err(anyhow!("the other wake thread could not be prepared"));
        }
        let measure_from_ns = start_ns + settings.warmup_ns;
        Ok(match side {
            Side::Waker(mut calls, mut scratch) => {
                let schedule = Schedule {
                    start_ns,
                    interval_ns: self.interval_ns,
                    measure_from_ns,
                    until_ns: settings
                        .duration_ns
                        .map_or(u64::MAX, |d| measure_from_ns.saturating_add(d)),
                    samples: settings.samples.unwrap_or(u64::MAX),
                };
                let counts =
                    loops::waker_loop(channel, shared, &mut calls, &mut scratch, schedule, stop);
                Finished::Waker(calls, counts)
            }
            Side::Wakee(mut rx, mut responses, mut scratch, mut raw) => {
                let counts = loops::wakee_loop(
                    channel,
                    &mut rx,
                    shared,
                    &mut responses,
                    &mut scratch,
                    &mut raw,
                );
                Finished::Wakee(responses, counts, raw)
            }
        })
    }

    /// The output's frame once both threads have been joined: interrupted or not, the
    /// measured window, the two threads.
    fn output_of_joined(
        &self,
        ctx: &ProbeContext,
        wc: &WakerCounts,
        [waker_tid, wakee_tid]: [i32; 2],
    ) -> ProbeOutput {
        ProbeOutput {
            interrupted: ctx.stop.load(Ordering::Relaxed),
            elapsed_ns: wc.ended_ns.saturating_sub(wc.measure_started_ns),
            // Both threads have been joined: now is after the wakee's last t1 too.
            window_ns: [wc.measure_started_ns, crate::sys::clock::monotonic_ns()],
            tids: vec![
                super::MeasuringThread {
                    cpu: self.waker_cpu,
                    tid: waker_tid,
                    role: "waker".into(),
                },
                super::MeasuringThread {
                    cpu: self.wakee_cpu,
                    tid: wakee_tid,
                    role: "wakee".into(),
                },
            ],
            ..Default::default()
        }
    }

    fn run_mechanism(
        &self,
        settings: &CommonSettings,
        ctx: &ProbeContext,
    ) -> anyhow::Result<Measured> {
        match self.mechanism {
            Mechanism::Eventfd => self.run_with(
                EventfdChannel(wake_primitives::EventFd::new()?),
                settings,
                ctx,
            ),
            Mechanism::Pipe => {
                self.run_with(PipeChannel(wake_primitives::Pipe::new()?), settings, ctx)
            }
            Mechanism::Futex => self.run_with(FutexChannel::default(), settings, ctx),
            Mechanism::Condvar => self.run_with(CondvarChannel::default(), settings, ctx),
            Mechanism::Unix => self.run_with(UnixChannel::new()?, settings, ctx),
            Mechanism::Signal => self.run_with(SignalChannel::new(), settings, ctx),
            Mechanism::Mqueue => self.run_with(MqueueChannel(MessageQueue::new()?), settings, ctx),
        }
    }
}

/// The waker's and the wakee's results, whichever order the threads handed them back in.
fn measured_of(results: Vec<anyhow::Result<Finished>>, tids: [i32; 2]) -> anyhow::Result<Measured> {
    let mut waker = None;
    let mut wakee = None;
    for finished in results {
        match finished? {
            Finished::Waker(r, c) => waker = Some((r, c)),
            Finished::Wakee(r, c, raw) => wakee = Some((r, c, raw)),
        }
    }
    let ((calls, wc), (responses, ec, raw)) = waker
        .zip(wakee)
        .ok_or_else(|| anyhow!("a wake thread returned no result"))?;
    Ok((calls, wc, responses, ec, raw, tids))
}

/// What both wake threads measured: the waker's call costs and counts, the wakee's
/// responses, counts and raw rows, and the two threads' tids (waker, wakee).
type Measured = (
    Recorder,
    WakerCounts,
    Recorder,
    WakeeCounts,
    RawRows,
    [i32; 2],
);

impl Probe for WakeProbe {
    fn kind(&self) -> crate::result::ProbeKind {
        crate::result::ProbeKind::Wake
    }
    fn method(&self) -> String {
        self.mechanism.name().to_string()
    }
    fn period_ns(&self) -> u64 {
        self.interval_ns
    }
    fn deadline_ns(&self) -> u64 {
        self.deadline_ns
    }
    fn name_suffix(&self) -> Option<String> {
        let cpus = if self.waker_cpu == self.wakee_cpu {
            format!("cpu{}", self.wakee_cpu)
        } else {
            format!("cpu{}->{}", self.waker_cpu, self.wakee_cpu)
        };
        Some(format!("{cpus} competitors={}", self.competitors))
    }
    fn extra_params(&self) -> ParamsExtra {
        ParamsExtra {
            mechanism: Some(self.mechanism.name().into()),
            wake_call: Some(self.mechanism.wake_call().into()),
            interval_ns: Some(self.interval_ns),
            waker_cpu: Some(self.waker_cpu as u64),
            wakee_cpu: Some(self.wakee_cpu as u64),
            competitors: Some(self.competitors as u64),
            ..ParamsExtra::default()
        }
    }

    fn run(&self, settings: &CommonSettings, ctx: &ProbeContext) -> anyhow::Result<ProbeOutput> {
        let competitors =
            Competitors::start(self.wakee_cpu, self.competitors, settings.timer_slack_ns)?;
        let measured = self.run_mechanism(settings, ctx);
        let competitor_loops = competitors.stop();
        let (calls, wc, responses, ec, raw, [waker_tid, wakee_tid]) = measured?;

        let method = self.mechanism.name();
        let mut out = self.output_of_joined(ctx, &wc, [waker_tid, wakee_tid]);
        let mut response =
            ThreadResult::from_recorder(self.wakee_cpu, method, Metric::Response, &responses);
        response.extra = ThreadExtra {
            merged: Some(ec.merged),
            stale_wakeups: Some(ec.stale_wakeups),
            first_response_ns: Some(ec.first_response_ns),
            iterations: Some(wc.measured),
            iterations_total: Some(wc.iterations),
            served_total: Some(ec.served),
            competitors: Some(self.competitors as u64),
            first_iterations: Some(first_iterations(&raw.first_iterations, wc.first_measured)),
            ring_overflow: (ec.ring_overflow > 0).then_some(ec.ring_overflow),
            ..ThreadExtra::default()
        };
        let e = &mut response.extra;
        if raw.dropped > 0 {
            e.raw_dropped = Some(raw.dropped);
            out.warnings.push(Warning::new(WarningCode::RawDropped, format!(
                    "{} responses did not fit the --raw buffer and are missing from the raw file (they are in every statistic)",
                    raw.dropped
                )));
        }
        if self.competitors > 0 && out.elapsed_ns > 0 {
            let seconds = (out.elapsed_ns + settings.warmup_ns) as f64 / 1e9;
            e.competitor_loops_per_s = Some((competitor_loops as f64 / seconds).round());
        }
        if ec.merged > 0 {
            out.warnings.push(Warning::new(WarningCode::WakeMerged, format!(
                    "{method}: {} of {} wake-ups arrived while the previous one was still pending and were served together (counted in `merged`, the oldest one's response recorded)",
                    ec.merged, wc.measured
                )));
        }
        let mut call = ThreadResult::from_recorder(self.waker_cpu, method, Metric::Call, &calls);
        call.extra.wake_failed = Some(wc.wake_failed);
        call.extra.stop_wakeups = Some(wc.stop_wakeups);
        if wc.wake_failed > 0 {
            out.warnings.push(Warning::new(WarningCode::WakeChannelFull, format!(
                    "{method}: {} wake calls found the channel full (the wakee had not run); those iterations are counted as merged, not lost",
                    wc.wake_failed
                )));
        }
        if settings.keep_raw {
            out.raw.push(RawSeries {
                cpu: self.wakee_cpu,
                method: method.to_string(),
                metric: Metric::Response,
                columns: vec!["t0_ns".into(), "t1_ns".into(), "response_ns".into()],
                values: raw.rows.iter().flatten().map(|&v| v as i64).collect(),
            });
        }
        out.threads.push(response);
        out.threads.push(call);
        out.extra_params = self.extra_params();
        Ok(out)
    }
}

/// The columns of `first_iterations.rows` in the result.
pub const FIRST_ITERATION_COLUMNS: [&str; 5] =
    ["iteration", "t0_ns", "t1_ns", "response_ns", "merged"];

/// The wakee's first iterations as the result keeps them (docs/probes.md): iterations
/// numbered from 1, the cold first one; `first_measured` the first one after warm-up.
fn first_iterations(rows: &[[u64; 4]], first_measured_index: u64) -> FirstIterations {
    FirstIterations {
        columns: FIRST_ITERATION_COLUMNS.map(String::from).to_vec(),
        first_measured: first_measured_index.saturating_add(1),
        kept: loops::FIRST_ITERATIONS_KEPT as u64,
        rows: rows
            .iter()
            .map(|&[index, t0, t1, merged]| vec![index + 1, t0, t1, t1.saturating_sub(t0), merged])
            .collect(),
        switch_not_joined: None,
        switch_ns: None,
    }
}
