//! The UDP reflector: echoes every well-formed latscope datagram back to its sender and
//! ignores (counts) anything else. Runs as a thread inside `latscope net` or as the
//! whole of `latscope net --serve`.

use super::packet;
use crate::probe::harness::{place_current_thread, ThreadPlacement};
use anyhow::Context;
use std::io::ErrorKind;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// How often a blocked reflector looks at its stop flag.
const STOP_POLL: Duration = Duration::from_millis(50);

/// What a reflector did, readable while it runs.
#[derive(Debug, Default)]
pub struct ReflectorCounts {
    pub reflected: AtomicU64,
    pub malformed: AtomicU64,
    pub send_errors: AtomicU64,
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

/// Echoes valid datagrams until `stop` is set (checked at least every 50 ms); `buf`
/// comes from `datagram_buffer`, allocated before, so the loop never allocates.
pub fn reflect(socket: &UdpSocket, stop: &AtomicBool, counts: &ReflectorCounts, buf: &mut [u8]) {
    while !stop.load(Ordering::Relaxed) {
        match socket.recv_from(buf) {
            Ok((n, from)) => {
                if packet::parse(&buf[..n]).is_none() {
                    counts.malformed.fetch_add(1, Ordering::Relaxed);
                    continue;
                }
                match socket.send_to(&buf[..n], from) {
                    Ok(_) => counts.reflected.fetch_add(1, Ordering::Relaxed),
                    Err(_) => counts.send_errors.fetch_add(1, Ordering::Relaxed),
                };
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
