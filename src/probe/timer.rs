//! `latscope timer`: how late a periodic task wakes up. One measuring thread per CPU
//! waits for absolute deadlines start + k × period with the chosen method and records
//! latency = (clock right after waking) − deadline. Missed periods are counted, never
//! hidden: the schedule stays absolute and skipped deadlines add to `missed`.

use super::harness::run_measuring_threads_with_tids;
use super::{CommonSettings, Probe, ProbeContext, ProbeOutput};
use crate::result::extras::FixedHistogram;
use crate::result::{Metric, ThreadResult};
use crate::stats::fixed_buckets::FixedBuckets;
use crate::stats::sample_ring::{SampleRing, SAMPLE_RING_SLOTS};
use crate::stats::{LiveStats, Recorder, RecorderConfig};
use crate::sys::{clock, posix_timer::PosixTimer, sched, signals::SignalSet, timerfd::TimerFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// How the measuring thread waits for its deadline (serialized as `name` writes it).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    ClockNanosleep,
    Nanosleep,
    Timerfd,
    PosixTimer,
    Busy,
}

impl Method {
    pub const ALL: [Method; 5] = [
        Method::ClockNanosleep,
        Method::Nanosleep,
        Method::Timerfd,
        Method::PosixTimer,
        Method::Busy,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Method::ClockNanosleep => "clock-nanosleep",
            Method::Nanosleep => "nanosleep",
            Method::Timerfd => "timerfd",
            Method::PosixTimer => "posix-timer",
            Method::Busy => "busy",
        }
    }

    pub fn parse(text: &str) -> Option<Method> {
        Method::ALL.into_iter().find(|m| m.name() == text)
    }

    /// Parses `--method`: a comma list, `all` meaning every method, each method once.
    pub fn parse_list(text: &str) -> Result<Vec<Method>, String> {
        crate::choice_list::parse_list(text)
    }
}

impl crate::choice_list::Choice for Method {
    const KIND: &'static str = "method";
    const CHOICES: &'static [Self] = &Method::ALL;
    fn choice_name(self) -> &'static str {
        self.name()
    }
}

/// The timer probe for one method.
#[derive(Debug, Clone)]
pub struct TimerProbe {
    pub method: Method,
    pub period_ns: u64,
    pub deadline_ns: u64,
    /// `--break-above`: stop the run at the first measured sample above this.
    pub break_above_ns: Option<u64>,
    /// Added to the period of each further thread (cyclictest's `-d`): thread i waits
    /// `period_ns + i × distance_ns`. 0 for `latscope timer`.
    pub distance_ns: u64,
    /// Where the shared schedule starts (cyclictest's `--secaligned`, `-A`).
    pub start: StartAlignment,
    /// `latscope cyclictest`: what its output formats need beyond a timer result.
    pub cyclictest: Option<CyclictestExtras>,
}

/// Where the measuring threads' first deadline falls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StartAlignment {
    /// When the threads are released together (latscope's way).
    #[default]
    AtRelease,
    /// The next full second of CLOCK_MONOTONIC after the release, plus an offset
    /// (cyclictest's `--secaligned [USEC]`).
    NextSecond { offset_ns: u64 },
    /// The release time plus `offset_ns × thread index` (cyclictest's `-A USEC`).
    Staggered { offset_ns: u64 },
}

impl StartAlignment {
    /// The first deadline of thread `index` when the threads were released at `release_ns`.
    pub fn first_deadline_ns(self, release_ns: u64, index: usize) -> u64 {
        match self {
            StartAlignment::AtRelease => release_ns,
            StartAlignment::NextSecond { offset_ns } => {
                (release_ns / 1_000_000_000 + 1) * 1_000_000_000 + offset_ns
            }
            StartAlignment::Staggered { offset_ns } => release_ns + offset_ns * index as u64,
        }
    }
}

/// What `latscope cyclictest` records per thread beyond a timer result: the thread id,
/// the last sample (`Act`) and, with `-h N`, exact fixed-width buckets (in
/// `ThreadResult::extra`, see docs/probes.md); and cyclictest's run semantics: the run
/// ends for every thread when the first reaches its `-l` loops.
#[derive(Debug, Clone, Default)]
pub struct CyclictestExtras {
    /// `-h N`: (bucket width ns, N).
    pub buckets: Option<(u64, usize)>,
    /// `-v`/`--spike`: every sample also goes into a ring a reader streams from.
    pub stream_samples: bool,
    /// `-c 1`: sleep on and read CLOCK_REALTIME (the schedule stays the monotonic one,
    /// shifted by the offset between the clocks at the start).
    pub realtime_clock: bool,
    /// `--priospread`: thread i runs at the priority minus i (SCHED_OTHER at 0).
    pub priority_spread: bool,
    /// `--tracemark`: told about the sample that broke the run (`-b`), once.
    pub break_marker: Option<Arc<dyn BreakMarker>>,
}

/// Told, on the measuring thread that broke the run and after its loop ended, about the
/// sample above `--break-above` (cyclictest's `--tracemark` writes it to trace_marker).
pub trait BreakMarker: Send + Sync + std::fmt::Debug {
    fn mark(&self, latency_ns: u64);
}

/// When a measuring phase ends: whichever comes first.
#[derive(Debug, Clone, Copy)]
pub struct PhaseEnd<'a> {
    /// Stop once the next deadline is at or past this time.
    pub until_ns: u64,
    /// Stop once this many samples are recorded.
    pub samples: u64,
    /// `--break-above`: a sample above this sets `stop` (for every thread) and ends the
    /// phase with that sample's deadline returned; u64::MAX = never.
    pub break_above_ns: u64,
    /// Shared by every thread of the run (cyclictest's semantics): the phase also ends
    /// once it is set, and this thread sets it when it has recorded `samples`.
    pub shared_end: Option<&'a AtomicBool>,
}

/// What a waiter saw when it woke.
pub struct Woke {
    pub now_ns: u64,
    /// Expirations the kernel counted since the last wake-up (timerfd, posix-timer);
    /// None when the method has no such count and skipped periods follow from latency.
    pub expirations: Option<u64>,
}

/// One wake-up method. Each implementation is a few lines; the loop is generic, so
/// every method gets its own monomorphized loop with no method dispatch inside.
pub trait Waiter {
    fn wait(&mut self, deadline_ns: u64) -> Woke;
}

/// clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME) — the cyclictest way.
pub struct ClockNanosleepWaiter;
impl Waiter for ClockNanosleepWaiter {
    #[inline(always)]
    fn wait(&mut self, deadline_ns: u64) -> Woke {
        clock::sleep_until_ns(deadline_ns);
        Woke {
            now_ns: clock::monotonic_ns(),
            expirations: None,
        }
    }
}

/// Relative nanosleep for the time left, computed just before the call.
pub struct NanosleepWaiter;
impl Waiter for NanosleepWaiter {
    #[inline(always)]
    fn wait(&mut self, deadline_ns: u64) -> Woke {
        let before = clock::monotonic_ns();
        if deadline_ns > before {
            clock::sleep_for_ns(deadline_ns - before);
        }
        Woke {
            now_ns: clock::monotonic_ns(),
            expirations: None,
        }
    }
}

/// A periodic timerfd read with a blocking read(); the kernel keeps the schedule.
pub struct TimerfdWaiter(pub TimerFd);
impl Waiter for TimerfdWaiter {
    #[inline(always)]
    fn wait(&mut self, _deadline_ns: u64) -> Woke {
        let expirations = self.0.wait();
        Woke {
            now_ns: clock::monotonic_ns(),
            expirations: Some(expirations),
        }
    }
}

/// A POSIX timer signalling this thread (SIGEV_THREAD_ID), taken with sigwaitinfo.
pub struct PosixTimerWaiter {
    pub timer: PosixTimer,
    pub signals: SignalSet,
}
impl Waiter for PosixTimerWaiter {
    #[inline(always)]
    fn wait(&mut self, _deadline_ns: u64) -> Woke {
        let (_sig, overrun) = self.signals.wait();
        Woke {
            now_ns: clock::monotonic_ns(),
            expirations: Some(1 + overrun.max(0) as u64),
        }
    }
}

impl PosixTimerWaiter {
    /// A timer signalling the calling thread every `period_ns` from `first_ns`.
    fn on_this_thread(first_ns: u64, period_ns: u64) -> anyhow::Result<Self> {
        let signals = SignalSet::of(&[timer_signal()]);
        signals.block_in_current_thread()?;
        let timer =
            PosixTimer::periodic_to_thread(sched::gettid(), timer_signal(), first_ns, period_ns)?;
        Ok(Self { timer, signals })
    }
}

/// CLOCK_REALTIME as a time on the monotonic schedule (`latscope cyclictest -c 1`):
/// realtime minus the offset between the two clocks at the start, so a deadline and a
/// wake-up compare as cyclictest compares them on CLOCK_REALTIME, jumps of the clock
/// included.
#[derive(Debug, Clone, Copy)]
pub struct RealtimeClock {
    offset_ns: u64,
}

impl RealtimeClock {
    /// The offset as it is now.
    pub fn now() -> Self {
        Self {
            offset_ns: clock::realtime_clock_ns().wrapping_sub(clock::monotonic_ns()),
        }
    }
    #[inline(always)]
    fn read(self) -> u64 {
        clock::realtime_clock_ns().wrapping_sub(self.offset_ns)
    }
    #[inline(always)]
    fn realtime_of(self, schedule_ns: u64) -> u64 {
        schedule_ns.wrapping_add(self.offset_ns)
    }
}

/// clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME), read on CLOCK_REALTIME (cyclictest
/// `-c 1`).
pub struct RealtimeClockNanosleepWaiter(pub RealtimeClock);
impl Waiter for RealtimeClockNanosleepWaiter {
    #[inline(always)]
    fn wait(&mut self, deadline_ns: u64) -> Woke {
        clock::sleep_until_realtime_ns(self.0.realtime_of(deadline_ns));
        Woke {
            now_ns: self.0.read(),
            expirations: None,
        }
    }
}

/// A relative sleep for the time left, read on CLOCK_REALTIME (cyclictest `-r -c 1`).
pub struct RealtimeNanosleepWaiter(pub RealtimeClock);
impl Waiter for RealtimeNanosleepWaiter {
    #[inline(always)]
    fn wait(&mut self, deadline_ns: u64) -> Woke {
        let before = self.0.read();
        if deadline_ns > before {
            clock::sleep_for_ns(deadline_ns - before);
        }
        Woke {
            now_ns: self.0.read(),
            expirations: None,
        }
    }
}

/// A CLOCK_REALTIME POSIX timer signalling this thread, read on CLOCK_REALTIME
/// (cyclictest `-x -c 1`).
pub struct RealtimePosixTimerWaiter {
    pub timer: PosixTimer,
    pub signals: SignalSet,
    pub clock: RealtimeClock,
}
impl Waiter for RealtimePosixTimerWaiter {
    #[inline(always)]
    fn wait(&mut self, _deadline_ns: u64) -> Woke {
        let (_sig, overrun) = self.signals.wait();
        Woke {
            now_ns: self.clock.read(),
            expirations: Some(1 + overrun.max(0) as u64),
        }
    }
}

impl RealtimePosixTimerWaiter {
    fn on_this_thread(first_ns: u64, period_ns: u64) -> anyhow::Result<Self> {
        let signals = SignalSet::of(&[timer_signal()]);
        signals.block_in_current_thread()?;
        let clock = RealtimeClock::now();
        let timer = PosixTimer::periodic_realtime_to_thread(
            sched::gettid(),
            timer_signal(),
            clock.realtime_of(first_ns),
            period_ns,
        )?;
        Ok(Self {
            timer,
            signals,
            clock,
        })
    }
}

/// Spins on the clock until the deadline: the floor of what the machine can deliver.
pub struct BusyWaiter;
impl Waiter for BusyWaiter {
    #[inline(always)]
    fn wait(&mut self, deadline_ns: u64) -> Woke {
        loop {
            let now = clock::monotonic_ns();
            if now >= deadline_ns {
                return Woke {
                    now_ns: now,
                    expirations: None,
                };
            }
            std::hint::spin_loop();
        }
    }
}

/// The measuring loop: wait, read the clock, record. Returns the next deadline so a
/// warm-up phase and the measured phase share one absolute schedule (after a
/// `--break-above` break: the deadline of the sample that broke).
#[inline(never)]
pub fn measure_phase<W: Waiter>(
    waiter: &mut W,
    rec: &mut Recorder,
    first_deadline_ns: u64,
    period_ns: u64,
    end: PhaseEnd,
    stop: &AtomicBool,
) -> u64 {
    let mut deadline = first_deadline_ns;
    while deadline < end.until_ns
        && rec.count() < end.samples
        && !stop.load(Ordering::Relaxed)
        && !end.shared_end.is_some_and(|e| e.load(Ordering::Relaxed))
    {
        let woke = waiter.wait(deadline);
        let latency = woke.now_ns.saturating_sub(deadline);
        rec.record(deadline, woke.now_ns, latency);
        if latency > end.break_above_ns {
            stop.store(true, Ordering::Relaxed);
            return deadline;
        }
        let consumed = match woke.expirations {
            Some(n) => n.max(1),
            None => 1 + latency / period_ns,
        };
        if consumed > 1 {
            // Only deadlines before the phase's end were missed; later ones were never due
            // in this run (a wake-up late past the end skips them too).
            let due_in_phase = end.until_ns.saturating_sub(deadline + 1) / period_ns;
            rec.add_missed((consumed - 1).min(due_in_phase));
        }
        deadline += consumed * period_ns;
    }
    if let Some(shared) = end.shared_end.filter(|_| rec.count() >= end.samples) {
        shared.store(true, Ordering::Relaxed);
    }
    deadline
}

/// Signal offset from SIGRTMIN used by the posix-timer method.
const TIMER_SIGNAL_OFFSET: i32 = 1;

/// The signal the posix-timer method waits for; blocked process-wide before threads start.
pub fn timer_signal() -> libc::c_int {
    crate::sys::signals::realtime_signal(TIMER_SIGNAL_OFFSET)
}

/// What the measured phase of one thread did.
struct Measured {
    started_ns: u64,
    ended_ns: u64,
    /// `--break-above` fired on this thread: (deadline_ns, latency_ns) of the sample.
    broke: Option<[u64; 2]>,
}

/// The warm-up: the same loop on the same schedule, recorded into `scratch` (thrown
/// away) until `until_ns`. Returns the first deadline after it.
fn warm_up<W: Waiter>(
    waiter: &mut W,
    scratch: &mut Recorder,
    start_ns: u64,
    period_ns: u64,
    until_ns: u64,
    stop: &AtomicBool,
) -> u64 {
    let end = PhaseEnd {
        until_ns,
        samples: u64::MAX,
        break_above_ns: u64::MAX,
        shared_end: None,
    };
    measure_phase(waiter, scratch, start_ns, period_ns, end, stop)
}

/// Runs warm-up then measurement with one waiter, on the calling (measuring) thread.
/// `--break-above` applies to the measured phase only. Between the last warm-up wake-up
/// and the first measured deadline only `rec.restart` runs: a few stores, since `rec`
/// has recorded nothing yet.
fn warm_up_then_measure<W: Waiter>(
    waiter: &mut W,
    recorders: &mut Recorders,
    start_ns: u64,
    period_ns: u64,
    settings: &CommonSettings,
    limits: Limits,
    stop: &AtomicBool,
) -> Measured {
    let break_above_ns = limits.break_above_ns;
    let Recorders {
        measured: rec,
        scratch,
    } = recorders;
    let mut next = start_ns;
    if settings.warmup_ns > 0 {
        let warm_end = start_ns + settings.warmup_ns;
        next = warm_up(waiter, scratch, start_ns, period_ns, warm_end, stop);
    }
    // The measured phase starts at its first deadline: every recorded deadline is in
    // [start, end], and the per-second series counts from it.
    let measure_start = next;
    rec.restart(measure_start);
    let end = PhaseEnd {
        until_ns: settings
            .duration_ns
            .map_or(u64::MAX, |d| next.saturating_add(d)),
        samples: settings.samples.unwrap_or(u64::MAX),
        break_above_ns,
        shared_end: limits.shared_end,
    };
    let last_deadline = measure_phase(waiter, rec, next, period_ns, end, stop);
    // The phase breaks at its first sample above the limit, so only then is max above it.
    let broke =
        (rec.count() > 0 && rec.max_ns() > break_above_ns).then(|| [last_deadline, rec.max_ns()]);
    Measured {
        started_ns: measure_start,
        ended_ns: clock::monotonic_ns(),
        broke,
    }
}

/// What ends a thread's measured phase besides its duration and samples.
#[derive(Clone, Copy)]
struct Limits<'a> {
    /// `--break-above` (u64::MAX: never).
    break_above_ns: u64,
    /// cyclictest's semantics: the first thread done ends every thread's phase.
    shared_end: Option<&'a AtomicBool>,
}

/// A measuring thread's two recorders, both allocated before the start barrier.
struct Recorders {
    measured: Recorder,
    /// The warm-up's, thrown away.
    scratch: Recorder,
}

/// What a measuring thread hands back.
struct ThreadOutcome {
    recorder: Recorder,
    measured: Measured,
}

impl TimerProbe {
    /// Thread `index`'s period (cyclictest's `-d` spreads them).
    pub fn thread_period_ns(&self, index: usize) -> u64 {
        self.period_ns + self.distance_ns * index as u64
    }

    fn measure_on_this_thread(
        &self,
        index: usize,
        mut recorders: Recorders,
        release_ns: u64,
        settings: &CommonSettings,
        run: &RunFlags,
    ) -> anyhow::Result<ThreadOutcome> {
        let rec = &mut recorders;
        let p = self.thread_period_ns(index);
        let start_ns = self.start.first_deadline_ns(release_ns, index);
        let limits = Limits {
            break_above_ns: self.break_above_ns.unwrap_or(u64::MAX),
            shared_end: self.cyclictest.as_ref().map(|_| &run.first_done),
        };
        let stop = run.stop;
        let s = settings;
        let realtime = self.cyclictest.as_ref().is_some_and(|c| c.realtime_clock);
        let measured = match (self.method, realtime) {
            (Method::ClockNanosleep, false) => {
                let w = &mut ClockNanosleepWaiter;
                warm_up_then_measure(w, rec, start_ns, p, s, limits, stop)
            }
            (Method::ClockNanosleep, true) => {
                let w = &mut RealtimeClockNanosleepWaiter(RealtimeClock::now());
                warm_up_then_measure(w, rec, start_ns, p, s, limits, stop)
            }
            (Method::Nanosleep, false) => {
                warm_up_then_measure(&mut NanosleepWaiter, rec, start_ns, p, s, limits, stop)
            }
            (Method::Nanosleep, true) => {
                let w = &mut RealtimeNanosleepWaiter(RealtimeClock::now());
                warm_up_then_measure(w, rec, start_ns, p, s, limits, stop)
            }
            (Method::Busy, _) => {
                warm_up_then_measure(&mut BusyWaiter, rec, start_ns, p, s, limits, stop)
            }
            (Method::Timerfd, _) => {
                let mut w = TimerfdWaiter(TimerFd::periodic(start_ns, p)?);
                warm_up_then_measure(&mut w, rec, start_ns, p, s, limits, stop)
            }
            (Method::PosixTimer, false) => {
                let mut w = PosixTimerWaiter::on_this_thread(start_ns, p)?;
                warm_up_then_measure(&mut w, rec, start_ns, p, s, limits, stop)
            }
            (Method::PosixTimer, true) => {
                let mut w = RealtimePosixTimerWaiter::on_this_thread(start_ns, p)?;
                warm_up_then_measure(&mut w, rec, start_ns, p, s, limits, stop)
            }
        };
        // After the loop: this thread measures no more.
        recorders
            .measured
            .live()
            .done
            .store(true, Ordering::Release);
        if let (Some([_, latency_ns]), Some(marker)) = (
            measured.broke,
            self.cyclictest
                .as_ref()
                .and_then(|c| c.break_marker.as_ref()),
        ) {
            marker.mark(latency_ns);
        }
        Ok(ThreadOutcome {
            recorder: recorders.measured,
            measured,
        })
    }
}

/// The flags every measuring thread of one run watches.
struct RunFlags<'a> {
    /// Ctrl-C/SIGTERM, or a `--break-above` break.
    stop: &'a AtomicBool,
    /// cyclictest's semantics: set by the first thread that recorded its samples.
    first_done: AtomicBool,
}

impl TimerProbe {
    /// The `latscope cyclictest` fields of one thread's result (`tid`, `last_ns`,
    /// `period_ns`, `fixed_histogram`).
    fn add_cyclictest_extras(&self, tr: &mut ThreadResult, rec: &Recorder, index: usize, tid: i32) {
        tr.extra.tid = Some(tid);
        tr.extra.last_ns = Some(rec.last_ns());
        tr.extra.period_ns = Some(self.thread_period_ns(index));
        tr.extra.fixed_histogram = rec.fixed_buckets().map(|fixed| FixedHistogram {
            buckets: fixed.counts().len() as u64,
            counts: fixed
                .counts()
                .iter()
                .enumerate()
                .filter(|(_, &c)| c > 0)
                .map(|(i, &c)| [i as u64, c])
                .collect(),
            overflow_samples: fixed.overflow_samples().to_vec(),
            overflows: fixed.overflows(),
            unit_ns: fixed.unit_ns(),
        });
    }
}

impl Probe for TimerProbe {
    fn busy_waits(&self) -> bool {
        self.method == Method::Busy
    }
    fn kind(&self) -> crate::result::ProbeKind {
        crate::result::ProbeKind::Timer
    }
    fn timer_method(&self) -> Option<Method> {
        Some(self.method)
    }
    fn method(&self) -> String {
        self.method.name().to_string()
    }
    fn period_ns(&self) -> u64 {
        self.period_ns
    }
    fn deadline_ns(&self) -> u64 {
        self.deadline_ns
    }

    fn run(&self, settings: &CommonSettings, ctx: &ProbeContext) -> anyhow::Result<ProbeOutput> {
        let stop = &*ctx.stop;
        let (outcomes, tids) = self.measure_threads(settings, ctx)?;
        let mut out = ProbeOutput {
            // A --break-above stop is not an interruption (set below).
            interrupted: stop.load(Ordering::Relaxed),
            ..Default::default()
        };
        let mut started = u64::MAX;
        let mut ended = 0;
        for (index, ((cpu, o), tid)) in settings
            .cpus
            .iter()
            .copied()
            .zip(outcomes)
            .zip(tids)
            .enumerate()
        {
            started = started.min(o.measured.started_ns);
            ended = ended.max(o.measured.ended_ns);
            self.add_thread(&mut out, settings, index, cpu, tid, o);
        }
        if out.broke.is_some() {
            out.interrupted = false;
        }
        out.elapsed_ns = ended.saturating_sub(started);
        out.window_ns = [started, ended];
        Ok(out)
    }
}

impl TimerProbe {
    /// Runs one measuring thread per placement (recorders made on their CPUs, progress
    /// shown while they run); their outcomes and thread ids in placement order.
    fn measure_threads(
        &self,
        settings: &CommonSettings,
        ctx: &ProbeContext,
    ) -> anyhow::Result<(Vec<ThreadOutcome>, Vec<i32>)> {
        let placements = self.placements(settings);
        let config = RecorderConfig {
            deadline_ns: self.deadline_ns,
            series_seconds: settings.series_seconds(self.period_ns),
            raw_capacity: settings.raw_capacity(self.period_ns),
        };
        let lives: Vec<Arc<LiveStats>> = placements.iter().map(|_| Arc::default()).collect();
        let progress = super::start_progress(ctx, settings, &lives);
        let run = RunFlags {
            stop: &ctx.stop,
            first_done: AtomicBool::new(false),
        };
        let extras = self.cyclictest.as_ref();
        let outcomes = run_measuring_threads_with_tids(
            &placements,
            |i| {
                lives[i].tid.store(sched::gettid(), Ordering::Relaxed);
                let mut measured = Recorder::new(&config, lives[i].clone());
                if let Some((unit_ns, count)) = extras.and_then(|c| c.buckets) {
                    measured = measured.with_fixed_buckets(FixedBuckets::new(unit_ns, count));
                }
                if extras.is_some_and(|c| c.stream_samples) {
                    let ring = SampleRing::new(SAMPLE_RING_SLOTS);
                    measured = measured.with_sample_ring(Arc::new(ring));
                }
                Ok(Recorders {
                    measured,
                    scratch: Recorder::scratch(&config, lives[i].clone()),
                })
            },
            |i, rec, start_ns| self.measure_on_this_thread(i, rec, start_ns, settings, &run),
        );
        progress.finish();
        let (outcomes, tids) = outcomes?;
        let outcomes = outcomes
            .into_iter()
            .collect::<anyhow::Result<Vec<ThreadOutcome>>>()?;
        Ok((outcomes, tids))
    }

    /// Where and how each thread runs: one per CPU of `settings`; with `--priospread`
    /// thread i at the priority minus i (SCHED_OTHER once that reaches 0).
    pub fn placements(&self, settings: &CommonSettings) -> Vec<super::harness::ThreadPlacement> {
        let mut placements = super::placements(settings);
        if self.cyclictest.as_ref().is_some_and(|c| c.priority_spread) {
            for (i, p) in placements.iter_mut().enumerate() {
                p.priority = (p.priority - i as i32).max(0);
                if p.priority == 0 {
                    p.policy = crate::sys::sched::Policy::Other;
                }
            }
        }
        placements
    }

    /// One measuring thread's result, raw series and thread id into `out`; the first
    /// thread that broke (`--break-above`) is the run's break sample.
    fn add_thread(
        &self,
        out: &mut ProbeOutput,
        settings: &CommonSettings,
        index: usize,
        cpu: usize,
        tid: i32,
        mut o: ThreadOutcome,
    ) {
        let method = self.method.name();
        out.tids.push(super::MeasuringThread {
            cpu,
            tid,
            role: "timer".into(),
        });
        if let (Some([deadline_ns, latency_ns]), None) = (o.measured.broke, &out.broke) {
            out.broke = Some(super::BreakSample {
                cpu,
                deadline_ns,
                latency_ns,
                break_above_ns: self.break_above_ns.unwrap_or(u64::MAX),
            });
        }
        let mut tr = ThreadResult::from_recorder(cpu, method, Metric::Latency, &o.recorder);
        if o.recorder.series().truncated() {
            tr.extra.per_second_truncated = Some(true);
        }
        if self.cyclictest.is_some() {
            self.add_cyclictest_extras(&mut tr, &o.recorder, index, tid);
        }
        super::finish_raw(
            super::RawLabel {
                cpu,
                method,
                metric: Metric::Latency,
                columns: ["deadline_ns", "latency_ns"],
                subject: &format!("CPU {cpu}"),
                what: "samples",
            },
            &mut o.recorder,
            settings.keep_raw,
            &mut tr,
            out,
        );
        out.threads.push(tr);
    }
}

#[cfg(test)]
#[path = "timer_tests.rs"]
mod tests;
