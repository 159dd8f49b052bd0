//! The UDP reflector: answers every well-formed latscope request with a reply to its
//! sender and ignores (counts) anything else. Runs as a thread inside `latscope net` or as
//! the whole of `latscope net --serve`. Reachable by anyone who can send it a datagram,
//! with any source address, so it never answers itself (a datagram forged with its own
//! address as the source), never answers a reply, and limits how much it sends to each
//! source address (issue 12, item 2).

use super::packet;
use crate::probe::harness::{place_current_thread, ThreadPlacement};
use anyhow::Context;
use std::hash::BuildHasher;
use std::io::ErrorKind;
use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// How often a blocked reflector looks at its stop flag.
const STOP_POLL: Duration = Duration::from_millis(50);
/// Replies per second one source address (other than loopback) may get, sustained.
pub const REPLIES_PER_SOURCE_PER_S: u64 = 50_000;
/// Replies one source may get in a burst (a tenth of a second at the sustained rate).
pub const BURST_PER_SOURCE: u64 = 5_000;
/// Slots of the per-source table; sources that hash alike share one budget, so its memory
/// is fixed whatever the number of (forged) sources.
const SOURCE_SLOTS: usize = 1024;
/// One datagram's cost in the token buckets' unit (so refill is an integer per ns).
const TOKEN: u64 = 1_000_000_000;

/// What a reflector did, readable while it runs.
#[derive(Debug, Default)]
pub struct ReflectorCounts {
    pub reflected: AtomicU64,
    pub malformed: AtomicU64,
    pub send_errors: AtomicU64,
    /// Requests whose source is the reflector itself (forged) or port 0.
    pub to_itself: AtomicU64,
    /// Requests beyond a source's budget.
    pub rate_limited: AtomicU64,
}

/// What the reflector does with one datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Reflect,
    /// Not a well-formed latscope request (a reply, stray traffic, a truncated datagram).
    Malformed,
    /// Its source is the reflector's own address and port (or port 0): answering would
    /// send the reply to the reflector itself.
    ToItself,
    /// The source has used up its budget.
    RateLimited,
}

/// Token buckets per source address in a fixed-size table keyed by a random-seeded hash.
pub struct SourceLimiter {
    hasher: std::collections::hash_map::RandomState,
    /// (tokens, last refill CLOCK_MONOTONIC ns) per slot.
    slots: Box<[(u64, u64)]>,
    rate_per_s: u64,
    burst: u64,
}

impl SourceLimiter {
    pub fn new(rate_per_s: u64, burst: u64) -> Self {
        let burst = burst.max(1);
        Self {
            hasher: Default::default(),
            // Every source starts with a full bucket.
            slots: vec![(burst.saturating_mul(TOKEN), 0); SOURCE_SLOTS].into_boxed_slice(),
            rate_per_s: rate_per_s.max(1),
            burst,
        }
    }

    /// Takes one datagram from `source`'s budget at `now_ns`; false when it is used up.
    pub fn allow(&mut self, source: IpAddr, now_ns: u64) -> bool {
        let slot = (self.hasher.hash_one(source) as usize) % self.slots.len();
        let (tokens, last_ns) = &mut self.slots[slot];
        let capacity = self.burst.saturating_mul(TOKEN);
        // Elapsed time beyond what refills a bucket from empty adds nothing (and cannot
        // overflow the product).
        let elapsed_ns = now_ns
            .saturating_sub(*last_ns)
            .min(capacity / self.rate_per_s + 1);
        *tokens = tokens
            .saturating_add(elapsed_ns.saturating_mul(self.rate_per_s))
            .min(capacity);
        *last_ns = now_ns;
        if *tokens >= TOKEN {
            *tokens -= TOKEN;
            true
        } else {
            false
        }
    }
}

/// Decides, per datagram, whether the reflector answers it.
pub struct ReflectPolicy {
    own: SocketAddr,
    limiter: SourceLimiter,
}

impl ReflectPolicy {
    /// The policy of a reflector bound to `own` (as `local_addr` reports it).
    pub fn new(own: SocketAddr) -> Self {
        Self::with_limits(own, REPLIES_PER_SOURCE_PER_S, BURST_PER_SOURCE)
    }

    pub fn with_limits(own: SocketAddr, rate_per_s: u64, burst: u64) -> Self {
        Self {
            own,
            limiter: SourceLimiter::new(rate_per_s, burst),
        }
    }

    /// The verdict on `datagram` from `from` at `now_ns`. Loopback sources are not rate
    /// limited (nobody outside this machine can send from them, and the in-process
    /// reflector of a `--flood` measurement answers at full speed).
    pub fn judge(&mut self, datagram: &[u8], from: SocketAddr, now_ns: u64) -> Verdict {
        if packet::parse(datagram).is_none() {
            return Verdict::Malformed;
        }
        let source = from.ip().to_canonical();
        // Rate-limited before the own-address check: that check may probe with a bind
        // (three syscalls), which a flood from one source must not buy for every datagram.
        if !source.is_loopback() && !self.limiter.allow(source, now_ns) {
            return Verdict::RateLimited;
        }
        if from.port() == 0 || is_own_address(self.own, from) {
            return Verdict::ToItself;
        }
        Verdict::Reflect
    }
}

/// Whether `from` is the reflector's own socket: the same port and an address of this
/// machine (the bound one, loopback, or any other local address when bound to 0.0.0.0).
pub fn is_own_address(own: SocketAddr, from: SocketAddr) -> bool {
    if from.port() != own.port() {
        return false;
    }
    let ip = from.ip().to_canonical();
    if ip == own.ip().to_canonical() || ip.is_loopback() || ip.is_unspecified() {
        return true;
    }
    // A socket bound to one address hears only that one; bound to 0.0.0.0 (or ::) it hears
    // them all, and binding succeeds only for an address of this machine (port 0: nothing
    // is taken).
    own.ip().is_unspecified() && UdpSocket::bind(SocketAddr::new(ip, 0)).is_ok()
}

/// Binds a reflector socket; port 0 lets the kernel choose.
pub fn bind(addr: SocketAddr) -> anyhow::Result<UdpSocket> {
    let socket =
        UdpSocket::bind(addr).with_context(|| format!("binding the UDP reflector to {addr}"))?;
    socket
        .set_read_timeout(Some(STOP_POLL))
        .context("setting the reflector's read timeout")?;
    Ok(socket)
}

/// The reflector's receive buffer (the largest UDP datagram), every page present.
pub fn datagram_buffer() -> Vec<u8> {
    let mut buf = vec![0u8; 65_536];
    crate::sys::memlock::prefault_slice(&mut buf);
    buf
}

/// Answers well-formed requests until `stop` is set (checked at least every 50 ms);
/// `buf` comes from `datagram_buffer`, allocated before, so the loop never allocates.
pub fn reflect(socket: &UdpSocket, stop: &AtomicBool, counts: &ReflectorCounts, buf: &mut [u8]) {
    let Ok(own) = socket.local_addr() else {
        return;
    };
    let mut policy = ReflectPolicy::new(own);
    while !stop.load(Ordering::Relaxed) {
        match socket.recv_from(buf) {
            Ok((n, from)) => {
                let now_ns = crate::sys::clock::monotonic_ns();
                let counter = match policy.judge(&buf[..n], from, now_ns) {
                    Verdict::Reflect => {
                        packet::mark_reply(&mut buf[..n]);
                        match socket.send_to(&buf[..n], from) {
                            Ok(_) => &counts.reflected,
                            Err(_) => &counts.send_errors,
                        }
                    }
                    Verdict::Malformed => &counts.malformed,
                    Verdict::ToItself => &counts.to_itself,
                    Verdict::RateLimited => &counts.rate_limited,
                };
                counter.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            // ICMP errors of earlier sends (port unreachable) surface here: keep going.
            Err(_) => {}
        }
    }
}

/// An in-process reflector thread; stopped and joined on drop.
pub struct ReflectorThread {
    pub addr: SocketAddr,
    pub counts: Arc<ReflectorCounts>,
    stop: Arc<AtomicBool>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl ReflectorThread {
    /// Binds `addr` and starts reflecting on a thread placed at `placement`.
    pub fn start(addr: SocketAddr, placement: ThreadPlacement) -> anyhow::Result<Self> {
        let socket = bind(addr)?;
        let addr = socket
            .local_addr()
            .context("reading the reflector address")?;
        let stop = Arc::new(AtomicBool::new(false));
        let counts = Arc::new(ReflectorCounts::default());
        let (stop2, counts2) = (stop.clone(), counts.clone());
        let (tx, rx) = std::sync::mpsc::channel();
        let handle = std::thread::Builder::new()
            .name("latscope-reflector".into())
            .stack_size(crate::sys::memlock::HELPER_STACK_BYTES)
            .spawn(move || {
                let placed = place_current_thread(&placement);
                let ok = placed.is_ok();
                let mut buf = datagram_buffer();
                let _ = tx.send(placed);
                if ok {
                    reflect(&socket, &stop2, &counts2, &mut buf);
                }
            })
            .context("spawning the reflector thread")?;
        let mut me = Self {
            addr,
            counts,
            stop,
            handle: Some(handle),
        };
        match rx.recv() {
            Ok(Ok(())) => Ok(me),
            Ok(Err(e)) => {
                me.stop_and_join();
                Err(e.context("placing the reflector thread"))
            }
            Err(_) => {
                me.stop_and_join();
                Err(anyhow::anyhow!(
                    "the reflector thread ended before it started"
                ))
            }
        }
    }

    fn stop_and_join(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

impl Drop for ReflectorThread {
    fn drop(&mut self) {
        self.stop_and_join();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> Vec<u8> {
        let mut d = packet::new_datagram(64);
        packet::stamp(&mut d, 1, 2);
        d
    }

    #[test]
    fn item_02_forged_own_source_is_not_reflected() {
        let own: SocketAddr = "0.0.0.0:9750".parse().unwrap();
        let mut p = ReflectPolicy::new(own);
        for from in ["127.0.0.1:9750", "0.0.0.0:9750", "[::ffff:127.0.0.1]:9750"] {
            assert_eq!(
                p.judge(&request(), from.parse().unwrap(), 0),
                Verdict::ToItself,
                "{from}"
            );
        }
        assert_eq!(
            p.judge(&request(), "127.0.0.1:0".parse().unwrap(), 0),
            Verdict::ToItself
        );
        assert_eq!(
            p.judge(&request(), "127.0.0.1:9751".parse().unwrap(), 0),
            Verdict::Reflect
        );
        // A remote address with the same port is another machine's reflector: answered.
        assert_eq!(
            p.judge(&request(), "192.0.2.7:9750".parse().unwrap(), 0),
            Verdict::Reflect
        );
    }

    #[test]
    fn item_02_replies_and_malformed_datagrams_are_not_reflected() {
        let mut p = ReflectPolicy::new("127.0.0.1:9750".parse().unwrap());
        let from = "127.0.0.1:40000".parse().unwrap();
        let mut reply = request();
        packet::mark_reply(&mut reply);
        assert_eq!(p.judge(&reply, from, 0), Verdict::Malformed);
        assert_eq!(p.judge(b"hello", from, 0), Verdict::Malformed);
        assert_eq!(p.judge(&request()[..40], from, 0), Verdict::Malformed);
    }

    #[test]
    fn item_02_a_flood_from_one_source_is_limited() {
        let mut p = ReflectPolicy::with_limits("0.0.0.0:9750".parse().unwrap(), 1_000, 100);
        let flooder: SocketAddr = "192.0.2.1:5000".parse().unwrap();
        let start = 5_000_000_000;
        // 10 000 datagrams within 10 ms: the burst (100) plus 10 ms of refill (10).
        let answered = (0..10_000u64)
            .filter(|i| p.judge(&request(), flooder, start + i * 1_000) == Verdict::Reflect)
            .count();
        assert!((100..=111).contains(&answered), "answered {answered}");
        // After a second the budget is back; a loopback source is never limited.
        assert_eq!(
            p.judge(&request(), flooder, start + 2_000_000_000),
            Verdict::Reflect
        );
        let local: SocketAddr = "127.0.0.1:5000".parse().unwrap();
        assert!((0..10_000u64).all(|i| p.judge(&request(), local, start + i) == Verdict::Reflect));
    }

    #[test]
    fn limiter_memory_is_fixed_and_elapsed_time_cannot_overflow() {
        let mut l = SourceLimiter::new(u64::MAX / TOKEN, 3);
        for i in 0..100_000u32 {
            l.allow(IpAddr::from(i.to_be_bytes()), u64::MAX);
        }
        assert_eq!(l.slots.len(), SOURCE_SLOTS);
        let mut l = SourceLimiter::new(REPLIES_PER_SOURCE_PER_S, BURST_PER_SOURCE);
        assert!(l.allow("192.0.2.9".parse().unwrap(), u64::MAX));
    }
}
