//! `latscope net`: UDP round-trip latency like `ping -f`, through a reflector (an
//! in-process thread or `latscope net --serve` elsewhere). Each reply is split with the
//! kernel's receive timestamp into network+kernel time and kernel-to-user wake-up time.
//! Lost, late (reordered), duplicated and malformed replies are counted, never hidden.

pub mod packet;
pub mod reflector;

use super::harness::{run_measuring_threads, ThreadPlacement};
use super::{CommonSettings, Probe, ProbeContext, ProbeOutput};
use crate::result::{Metric, ParamsExtra, ThreadExtra, ThreadResult};
use crate::stats::{LiveStats, Recorder, RecorderConfig};
use crate::sys::clock;
use crate::sys::udp_timestamps::{self, ControlBuffer};
use crate::warning::{Warning, WarningCode};
use anyhow::Context;
use std::io::ErrorKind;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Replies remembered to tell duplicates from late replies (a ring by sequence number).
const SEEN_RING: usize = 4096;
/// Where the in-process reflector listens.
pub const LOOPBACK: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

/// The net probe for one payload size.
#[derive(Debug, Clone)]
pub struct NetProbe {
    /// UDP payload bytes per datagram (header included).
    pub size: usize,
    /// Time between sends; 0 = flood (next send as soon as the reply arrives).
    pub interval_ns: u64,
    /// A reply later than this counts its packet lost.
    pub timeout_ns: u64,
    /// Round trips longer than this count as overruns.
    pub deadline_ns: u64,
    /// An external reflector; None = start one in-process on loopback.
    pub target: Option<SocketAddr>,
    /// CPU of the in-process reflector thread.
    pub reflector_cpu: usize,
}

/// What the sender counted besides latencies.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct NetCounts {
    pub sent: u64,
    pub received: u64,
    /// No reply within the timeout.
    pub lost: u64,
    /// A reply for an older packet that arrived while waiting for a newer one.
    pub reordered: u64,
    pub duplicated: u64,
    /// Replies that are not well-formed latscope datagrams or carry a sequence never sent.
    pub malformed: u64,
    /// Replies without a kernel receive timestamp (not split, round trip still counted).
    pub no_timestamp: u64,
    pub send_errors: u64,
    pub recv_errors: u64,
}

/// The sender's three series.
struct NetRecorders {
    round_trip: Recorder,
    network: Recorder,
    kernel_to_user: Recorder,
}

impl NetRecorders {
    fn new(config: &RecorderConfig, live: Arc<LiveStats>) -> Self {
        Self {
            round_trip: Recorder::new(config, live),
            network: Recorder::standalone(config),
            kernel_to_user: Recorder::standalone(config),
        }
    }

    /// Small ones for the warm-up, thrown away (see `Recorder::scratch`).
    fn scratch(config: &RecorderConfig, live: Arc<LiveStats>) -> Self {
        let own = || Recorder::scratch(config, Arc::default());
        Self {
            round_trip: Recorder::scratch(config, live),
            network: own(),
            kernel_to_user: own(),
        }
    }
}

/// Everything the sender touches while measuring, allocated before the start barrier.
pub struct Sender {
    socket: UdpSocket,
    send_buf: Vec<u8>,
    recv_buf: Vec<u8>,
    control: ControlBuffer,
    seen: Vec<u64>,
    seq: u64,
    counts: NetCounts,
    rec: NetRecorders,
    /// Where the warm-up records (swapped with `rec` for it): `rec` stays unused until
    /// the measured phase, so starting it never zeroes a histogram.
    warm_up: NetRecorders,
}

impl Sender {
    /// Binds, connects to `target` and allocates every buffer and recorder.
    pub fn new(
        probe: &NetProbe,
        target: SocketAddr,
        config: &RecorderConfig,
        live: Arc<LiveStats>,
    ) -> anyhow::Result<Self> {
        let any: IpAddr = match target {
            SocketAddr::V4(_) => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
            SocketAddr::V6(_) => IpAddr::V6(Ipv6Addr::UNSPECIFIED),
        };
        let socket = UdpSocket::bind((any, 0)).context("binding the sender's UDP socket")?;
        socket
            .connect(target)
            .with_context(|| format!("connecting the sender to {target}"))?;
        udp_timestamps::enable_rx_timestamps(&socket)
            .context("enabling kernel receive timestamps (SO_TIMESTAMPNS)")?;
        socket
            .set_read_timeout(Some(std::time::Duration::from_nanos(
                probe.timeout_ns.max(1_000),
            )))
            .context("setting the reply timeout")?;
        let mut recv_buf = vec![0u8; 65_536];
        crate::sys::memlock::prefault_slice(&mut recv_buf);
        Ok(Self {
            socket,
            send_buf: packet::new_datagram(probe.size),
            recv_buf,
            control: ControlBuffer::default(),
            seen: vec![u64::MAX; SEEN_RING],
            seq: 0,
            counts: NetCounts::default(),
            rec: NetRecorders::new(config, live.clone()),
            warm_up: NetRecorders::scratch(config, live),
        })
    }

    /// Swaps the measured and the warm-up recorders: called before the warm-up and
    /// again after it (moves a few hundred bytes, no histogram).
    fn swap_warm_up_recorders(&mut self) {
        std::mem::swap(&mut self.rec, &mut self.warm_up);
    }

    /// Starts the measured phase: the measured recorders (unused so far, so this is a few
    /// stores) count from `origin_ns`, and the counters start from zero.
    fn restart(&mut self, origin_ns: u64) {
        self.rec.round_trip.restart(origin_ns);
        self.rec.network.restart(origin_ns);
        self.rec.kernel_to_user.restart(origin_ns);
        self.counts = NetCounts::default();
    }

    /// What was counted so far.
    pub fn counts(&self) -> NetCounts {
        self.counts
    }

    /// The round trips recorded so far.
    pub fn round_trip(&self) -> &Recorder {
        &self.rec.round_trip
    }

    /// Sends one datagram and waits for its reply (or the timeout), recording the split.
    #[inline(always)]
    fn exchange(&mut self, timeout_ns: u64) {
        self.seq += 1;
        let seq = self.seq;
        let send_ns = clock::monotonic_ns();
        packet::stamp(&mut self.send_buf, seq, send_ns);
        if self.socket.send(&self.send_buf).is_err() {
            self.counts.send_errors += 1;
        }
        self.counts.sent += 1;
        let give_up_ns = send_ns + timeout_ns;
        loop {
            let got = udp_timestamps::recv_timestamped(
                &self.socket,
                &mut self.recv_buf,
                &mut self.control,
            );
            let user_ns = clock::monotonic_ns();
            let user_realtime_ns = udp_timestamps::realtime_ns();
            match got {
                Ok(r) => match packet::parse_reply(&self.recv_buf[..r.len]) {
                    Some(h) if h.seq == seq => {
                        let round_trip = user_ns.saturating_sub(h.send_ns);
                        self.rec.round_trip.record(h.send_ns, user_ns, round_trip);
                        match r.kernel_rx_realtime_ns {
                            Some(rx) => {
                                let to_user = user_realtime_ns.saturating_sub(rx);
                                self.rec.kernel_to_user.record(h.send_ns, user_ns, to_user);
                                self.rec.network.record(
                                    h.send_ns,
                                    user_ns,
                                    round_trip.saturating_sub(to_user),
                                );
                            }
                            None => self.counts.no_timestamp += 1,
                        }
                        self.seen[(seq as usize) % SEEN_RING] = seq;
                        self.counts.received += 1;
                        return;
                    }
                    Some(h) if h.seq < seq => {
                        let slot = &mut self.seen[(h.seq as usize) % SEEN_RING];
                        if *slot == h.seq {
                            self.counts.duplicated += 1;
                        } else {
                            *slot = h.seq;
                            self.counts.reordered += 1;
                        }
                    }
                    _ => self.counts.malformed += 1,
                },
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    self.counts.lost += 1;
                    return;
                }
                Err(_) => self.counts.recv_errors += 1,
            }
            if user_ns >= give_up_ns {
                self.counts.lost += 1;
                return;
            }
        }
    }
}

/// When a phase ends: whichever comes first.
#[derive(Debug, Clone, Copy)]
pub struct PhaseEnd {
    /// No send at or after this time.
    pub until_ns: u64,
    /// Datagrams to send at most.
    pub samples: u64,
}

/// The measuring loop of the rate mode: send at start + k × interval, wait for the
/// reply, record. Slots that pass while waiting are skipped and counted as missed.
#[inline(never)]
pub fn rate_phase(
    s: &mut Sender,
    first_ns: u64,
    interval_ns: u64,
    timeout_ns: u64,
    end: PhaseEnd,
    stop: &AtomicBool,
) -> u64 {
    let mut next = first_ns;
    while next < end.until_ns && s.counts.sent < end.samples && !stop.load(Ordering::Relaxed) {
        clock::sleep_until_ns(next);
        s.exchange(timeout_ns);
        next += interval_ns;
        let now = clock::monotonic_ns();
        if now >= next + interval_ns {
            let skipped = (now - next) / interval_ns;
            s.rec.round_trip.add_missed(skipped);
            next += skipped * interval_ns;
        }
    }
    next
}

/// The measuring loop of the flood mode: the next send follows the reply at once.
#[inline(never)]
pub fn flood_phase(s: &mut Sender, timeout_ns: u64, end: PhaseEnd, stop: &AtomicBool) {
    while s.counts.sent < end.samples
        && clock::monotonic_ns() < end.until_ns
        && !stop.load(Ordering::Relaxed)
    {
        s.exchange(timeout_ns);
    }
}

impl NetProbe {
    fn measure(
        &self,
        s: &mut Sender,
        start_ns: u64,
        settings: &CommonSettings,
        stop: &AtomicBool,
    ) -> (u64, u64) {
        let warm_end = start_ns + settings.warmup_ns;
        let forever = PhaseEnd {
            until_ns: warm_end,
            samples: u64::MAX,
        };
        let mut next = start_ns;
        if settings.warmup_ns > 0 {
            s.swap_warm_up_recorders();
            if self.interval_ns > 0 {
                next = rate_phase(
                    s,
                    start_ns,
                    self.interval_ns,
                    self.timeout_ns,
                    forever,
                    stop,
                );
            } else {
                clock::sleep_until_ns(start_ns);
                flood_phase(s, self.timeout_ns, forever, stop);
            }
            s.swap_warm_up_recorders();
        }
        let started = clock::monotonic_ns();
        s.restart(started);
        let begin = if self.interval_ns > 0 {
            next.max(started)
        } else {
            started
        };
        let end = PhaseEnd {
            until_ns: settings
                .duration_ns
                .map_or(u64::MAX, |d| begin.saturating_add(d)),
            samples: settings.samples.unwrap_or(u64::MAX),
        };
        if self.interval_ns > 0 {
            rate_phase(s, begin, self.interval_ns, self.timeout_ns, end, stop);
        } else {
            clock::sleep_until_ns(begin);
            flood_phase(s, self.timeout_ns, end, stop);
        }
        (started, clock::monotonic_ns())
    }

    /// The in-process reflector on `--reflector-cpu` (same policy as the sender), unless
    /// a `--target` answers.
    fn start_reflector(
        &self,
        placement: ThreadPlacement,
    ) -> anyhow::Result<Option<reflector::ReflectorThread>> {
        Ok(match self.target {
            Some(_) => None,
            None => Some(reflector::ReflectorThread::start(
                SocketAddr::new(LOOPBACK, 0),
                ThreadPlacement {
                    cpu: self.reflector_cpu,
                    ..placement
                },
            )?),
        })
    }

    /// Recorders sized for the interval (a flood is guessed at one reply per 20 µs).
    fn recorder_config(&self, settings: &CommonSettings) -> RecorderConfig {
        let period_guess = if self.interval_ns > 0 {
            self.interval_ns
        } else {
            20_000
        };
        RecorderConfig {
            deadline_ns: self.deadline_ns,
            series_seconds: settings.series_seconds(period_guess),
            raw_capacity: settings.raw_capacity(period_guess),
        }
    }

    /// The three series (round trip, network, kernel to user) as results and raw series.
    fn add_series(
        &self,
        out: &mut ProbeOutput,
        s: &mut Sender,
        cpu: usize,
        settings: &CommonSettings,
    ) {
        let method = self.method();
        let extra = self.counts_extra(&s.counts);
        for (metric, rec) in [
            (Metric::RoundTrip, &mut s.rec.round_trip),
            (Metric::Network, &mut s.rec.network),
            (Metric::KernelToUser, &mut s.rec.kernel_to_user),
        ] {
            let mut tr = ThreadResult::from_recorder(cpu, &method, metric, rec);
            tr.extra = extra.clone();
            // The send time, then the value under the name the timer uses; `metric`
            // tells the three series apart.
            super::finish_raw(
                super::RawLabel {
                    cpu,
                    method: &method,
                    metric,
                    columns: ["sent_ns", "latency_ns"],
                    subject: &format!("{method} {metric}"),
                    what: "samples",
                },
                rec,
                settings.keep_raw,
                &mut tr,
                out,
            );
            out.threads.push(tr);
        }
    }

    /// Warnings for lost, reordered, duplicated, malformed and untimestamped replies.
    fn warn_of_losses(&self, out: &mut ProbeOutput, c: &NetCounts) {
        let method = self.method();
        if c.lost + c.reordered + c.duplicated + c.malformed > 0 {
            out.warnings.push(Warning::new(WarningCode::NetLoss, format!(
                    "{method}: {} of {} packets lost (no reply within {}), {} reordered (late), {} duplicated, {} malformed replies",
                    c.lost,
                    c.sent,
                    crate::units::human_ns(self.timeout_ns),
                    c.reordered,
                    c.duplicated,
                    c.malformed
                )));
        }
        if c.no_timestamp > 0 {
            out.warnings.push(Warning::new(WarningCode::NetNoTimestamp, format!(
                    "{method}: {} replies came without a kernel receive timestamp; they are in round_trip only",
                    c.no_timestamp
                )));
        }
    }

    fn counts_extra(&self, c: &NetCounts) -> ThreadExtra {
        ThreadExtra {
            sent: Some(c.sent),
            received: Some(c.received),
            lost: Some(c.lost),
            reordered: Some(c.reordered),
            duplicated: Some(c.duplicated),
            malformed: Some(c.malformed),
            no_timestamp: Some(c.no_timestamp),
            send_errors: Some(c.send_errors),
            recv_errors: Some(c.recv_errors),
            size_bytes: Some(self.size as u64),
            ..ThreadExtra::default()
        }
    }
}

impl Probe for NetProbe {
    fn kind(&self) -> crate::result::ProbeKind {
        crate::result::ProbeKind::Net
    }
    fn method(&self) -> String {
        format!("udp-{}B", self.size)
    }
    fn period_ns(&self) -> u64 {
        self.interval_ns
    }
    fn deadline_ns(&self) -> u64 {
        self.deadline_ns
    }
    fn extra_params(&self) -> ParamsExtra {
        ParamsExtra {
            size_bytes: Some(self.size as u64),
            flood: Some(self.interval_ns == 0),
            timeout_ns: Some(self.timeout_ns),
            target: Some(
                self.target
                    .map_or_else(|| "in-process".to_string(), |t| t.to_string()),
            ),
            timestamps: Some("SO_TIMESTAMPNS (kernel RX, CLOCK_REALTIME)".into()),
            ..ParamsExtra::default()
        }
    }

    fn run(&self, settings: &CommonSettings, ctx: &ProbeContext) -> anyhow::Result<ProbeOutput> {
        let cpu = settings.cpus[0];
        let placement = ThreadPlacement {
            cpu,
            policy: settings.policy,
            priority: settings.priority,
            timer_slack_ns: settings.timer_slack_ns,
        };
        let reflector = self.start_reflector(placement)?;
        let target = self
            .target
            .unwrap_or_else(|| reflector.as_ref().map(|r| r.addr).expect("started above"));
        let config = self.recorder_config(settings);
        let live: Arc<LiveStats> = Arc::default();
        ctx.publish_live(&[cpu], std::slice::from_ref(&live));
        let progress = crate::progress::Progress::start(
            ctx.progress,
            &ctx.label,
            vec![cpu],
            vec![live.clone()],
            settings.samples,
            settings.duration_ns.map(|d| d + settings.warmup_ns),
            settings.warmup_ns,
        );
        let stop = &*ctx.stop;
        let outcome = run_measuring_threads(
            &[placement],
            |_| Sender::new(self, target, &config, live.clone()),
            |_, mut s, start_ns| {
                let (a, b) = self.measure(&mut s, start_ns, settings, stop);
                (s, a, b)
            },
        );
        progress.finish();
        let reflector_counts = reflector.map(|r| {
            let c = r.counts.clone();
            drop(r);
            c
        });
        let (mut s, started, ended) = outcome?.pop().expect("one sender");

        let mut out = ProbeOutput {
            interrupted: stop.load(Ordering::Relaxed),
            elapsed_ns: ended.saturating_sub(started),
            window_ns: [started, ended],
            ..Default::default()
        };
        self.add_series(&mut out, &mut s, cpu, settings);
        self.warn_of_losses(&mut out, &s.counts);
        if let Some(rc) = reflector_counts {
            out.extra_params.reflector_malformed = Some(rc.malformed.load(Ordering::Relaxed));
            out.extra_params.reflector_cpu = Some(self.reflector_cpu as u64);
        }
        out.extra_params.target = Some(target.to_string());
        Ok(out)
    }
}

/// `latscope net --serve`: reflects on `addr` until `stop` is set (Ctrl-C: the outcome
/// says interrupted) or `duration_ns` passes; prints the bound address on stderr first
/// (port 0 picks a free port).
pub fn serve(
    addr: SocketAddr,
    placement: Option<ThreadPlacement>,
    duration_ns: Option<u64>,
    stop: Arc<AtomicBool>,
) -> anyhow::Result<ServeOutcome> {
    if let Some(p) = placement {
        super::harness::place_current_thread(&p)?;
    }
    let socket = reflector::bind(addr)?;
    let bound = socket.local_addr().context("reading the bound address")?;
    eprintln!("latscope net: reflecting UDP on {bound} (Ctrl-C stops)");
    let counts = reflector::ReflectorCounts::default();
    let expired = Arc::new(AtomicBool::new(false));
    let timer = duration_ns
        .map(|d| {
            let (stop, expired) = (stop.clone(), expired.clone());
            std::thread::Builder::new()
                .name("latscope-serve-timer".into())
                .stack_size(crate::sys::memlock::HELPER_STACK_BYTES)
                .spawn(move || {
                    let end = clock::monotonic_ns() + d;
                    while clock::monotonic_ns() < end && !stop.load(Ordering::Relaxed) {
                        std::thread::sleep(std::time::Duration::from_millis(20));
                    }
                    if !stop.swap(true, Ordering::SeqCst) {
                        expired.store(true, Ordering::SeqCst);
                    }
                })
                .context("spawning the --serve duration timer")
        })
        .transpose()?;
    reflector::reflect(&socket, &stop, &counts, &mut reflector::datagram_buffer());
    if let Some(t) = timer {
        let _ = t.join();
    }
    Ok(ServeOutcome {
        counts,
        interrupted: !expired.load(Ordering::SeqCst),
    })
}

/// How `latscope net --serve` ended.
pub struct ServeOutcome {
    pub counts: reflector::ReflectorCounts,
    /// Stopped by a signal (Ctrl-C, SIGTERM) rather than by `--duration`.
    pub interrupted: bool,
}
