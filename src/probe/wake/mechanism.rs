//! The wake-up mechanisms: how the waker wakes the blocked wakee. Each is a few lines
//! behind the `Channel` trait; the measuring loops are generic over it, so every
//! mechanism gets its own monomorphized loop with no dispatch inside.

use crate::sys::{
    futex, mqueue::MessageQueue, sched, signals, signals::SignalSet, wake_primitives::EventFd,
    wake_primitives::Pipe,
};
use std::os::unix::net::UnixDatagram;
use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};
use std::sync::{Condvar, Mutex};

/// The mechanisms `--mechanism` accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Mechanism {
    Eventfd,
    Pipe,
    Futex,
    Condvar,
    Unix,
    Signal,
    Mqueue,
}

impl Mechanism {
    pub const ALL: [Mechanism; 7] = [
        Mechanism::Eventfd,
        Mechanism::Pipe,
        Mechanism::Futex,
        Mechanism::Condvar,
        Mechanism::Unix,
        Mechanism::Signal,
        Mechanism::Mqueue,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Mechanism::Eventfd => "eventfd",
            Mechanism::Pipe => "pipe",
            Mechanism::Futex => "futex",
            Mechanism::Condvar => "condvar",
            Mechanism::Unix => "unix",
            Mechanism::Signal => "signal",
            Mechanism::Mqueue => "mqueue",
        }
    }

    /// What the waker calls, for help and reports.
    pub fn wake_call(self) -> &'static str {
        match self {
            Mechanism::Eventfd => "write(eventfd) wakes read()",
            Mechanism::Pipe => "write(pipe) wakes read()",
            Mechanism::Futex => "FUTEX_WAKE wakes FUTEX_WAIT",
            Mechanism::Condvar => "Condvar::notify_one wakes Condvar::wait",
            Mechanism::Unix => "send(AF_UNIX datagram) wakes recv()",
            Mechanism::Signal => "tgkill wakes sigwaitinfo()",
            Mechanism::Mqueue => "mq_send wakes mq_receive()",
        }
    }

    /// Parses `--mechanism`: a comma list, `all` meaning every mechanism, each once.
    pub fn parse_list(text: &str) -> Result<Vec<Mechanism>, String> {
        crate::choice_list::parse_list(text)
    }
}

impl crate::choice_list::Choice for Mechanism {
    const KIND: &'static str = "mechanism";
    const CHOICES: &'static [Self] = &Mechanism::ALL;
    fn choice_name(self) -> &'static str {
        self.name()
    }
}

/// One way to wake a blocked thread. `wake` runs on the waker and must never block;
/// `wait` runs on the wakee, blocks until at least one wake-up arrived, and may return
/// for a wake-up whose iteration was already served (the loop counts that as stale).
pub trait Channel: Sync {
    /// Wakee-side state, created on the wakee's own thread before the start.
    type Receiver: Send;
    fn receiver(&self) -> anyhow::Result<Self::Receiver>;
    /// Delivers one wake-up; false when the channel was full (the iteration is still
    /// counted through the shared sequence, never lost).
    fn wake(&self) -> bool;
    fn wait(&self, rx: &mut Self::Receiver);
}

/// write(2) to an eventfd wakes read(2); pending wake-ups add up in the counter.
pub struct EventfdChannel(pub EventFd);
impl Channel for EventfdChannel {
    type Receiver = ();
    fn receiver(&self) -> anyhow::Result<()> {
        Ok(())
    }
    #[inline(always)]
    fn wake(&self) -> bool {
        self.0.signal()
    }
    #[inline(always)]
    fn wait(&self, _rx: &mut ()) {
        self.0.wait();
    }
}

/// One byte through a pipe; the reader drains whatever queued up.
pub struct PipeChannel(pub Pipe);
impl Channel for PipeChannel {
    type Receiver = [u8; 64];
    fn receiver(&self) -> anyhow::Result<[u8; 64]> {
        Ok([0; 64])
    }
    #[inline(always)]
    fn wake(&self) -> bool {
        self.0.signal()
    }
    #[inline(always)]
    fn wait(&self, rx: &mut [u8; 64]) {
        self.0.wait(rx);
    }
}

/// A sequence word: the waker increments it and calls FUTEX_WAKE; the wakee sleeps in
/// FUTEX_WAIT while the word still holds the value it last saw.
#[derive(Default)]
pub struct FutexChannel(pub AtomicU32);
impl Channel for FutexChannel {
    /// The word's value the wakee last saw.
    type Receiver = u32;
    fn receiver(&self) -> anyhow::Result<u32> {
        Ok(self.0.load(Ordering::Acquire))
    }
    #[inline(always)]
    fn wake(&self) -> bool {
        self.0.fetch_add(1, Ordering::Release);
        futex::wake(&self.0, 1);
        true
    }
    #[inline(always)]
    fn wait(&self, seen: &mut u32) {
        loop {
            let now = self.0.load(Ordering::Acquire);
            if now != *seen {
                *seen = now;
                return;
            }
            futex::wait(&self.0, now);
        }
    }
}

/// std's Mutex + Condvar (futex-based pthread-like condition variable) around a
/// sequence number.
#[derive(Default)]
pub struct CondvarChannel {
    sequence: Mutex<u64>,
    ready: Condvar,
}
impl Channel for CondvarChannel {
    type Receiver = u64;
    fn receiver(&self) -> anyhow::Result<u64> {
        Ok(*self.sequence.lock().unwrap_or_else(|e| e.into_inner()))
    }
    #[inline(always)]
    fn wake(&self) -> bool {
        *self.sequence.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        self.ready.notify_one();
        true
    }
    #[inline(always)]
    fn wait(&self, seen: &mut u64) {
        let mut guard = self.sequence.lock().unwrap_or_else(|e| e.into_inner());
        while *guard == *seen {
            guard = self.ready.wait(guard).unwrap_or_else(|e| e.into_inner());
        }
        *seen = *guard;
    }
}

/// A connected pair of AF_UNIX datagram sockets; the sending end never blocks.
pub struct UnixChannel {
    send: UnixDatagram,
    receive: UnixDatagram,
}
impl UnixChannel {
    pub fn new() -> std::io::Result<Self> {
        let (send, receive) = UnixDatagram::pair()?;
        send.set_nonblocking(true)?;
        Ok(Self { send, receive })
    }
}
impl Channel for UnixChannel {
    type Receiver = [u8; 8];
    fn receiver(&self) -> anyhow::Result<[u8; 8]> {
        Ok([0; 8])
    }
    #[inline(always)]
    fn wake(&self) -> bool {
        self.send.send(&[1u8]).is_ok()
    }
    #[inline(always)]
    fn wait(&self, buf: &mut [u8; 8]) {
        let _ = self.receive.recv(buf);
    }
}

/// Signal offset from SIGRTMIN for the `signal` mechanism (the timer probe uses +1).
const WAKE_SIGNAL_OFFSET: i32 = 2;

/// tgkill of a real-time signal that the wakee blocks and takes with sigwaitinfo.
/// Real-time signals queue, so pending wake-ups are not coalesced (a full queue makes
/// tgkill fail, which is counted).
pub struct SignalChannel {
    signal: libc::c_int,
    pid: libc::pid_t,
    wakee_tid: AtomicI32,
}
impl SignalChannel {
    pub fn new() -> Self {
        Self {
            signal: signals::realtime_signal(WAKE_SIGNAL_OFFSET),
            pid: signals::process_id(),
            wakee_tid: AtomicI32::new(0),
        }
    }
}
impl Default for SignalChannel {
    fn default() -> Self {
        Self::new()
    }
}
impl Channel for SignalChannel {
    type Receiver = SignalSet;
    fn receiver(&self) -> anyhow::Result<SignalSet> {
        let set = SignalSet::of(&[self.signal]);
        set.block_in_current_thread()?;
        self.wakee_tid.store(sched::gettid(), Ordering::Release);
        Ok(set)
    }
    #[inline(always)]
    fn wake(&self) -> bool {
        let tid = self.wakee_tid.load(Ordering::Relaxed);
        signals::send_to_thread_of(self.pid, tid, self.signal).is_ok()
    }
    #[inline(always)]
    fn wait(&self, set: &mut SignalSet) {
        set.wait();
    }
}

/// A POSIX message queue of 8-byte messages.
pub struct MqueueChannel(pub MessageQueue);
impl Channel for MqueueChannel {
    type Receiver = ();
    fn receiver(&self) -> anyhow::Result<()> {
        Ok(())
    }
    #[inline(always)]
    fn wake(&self) -> bool {
        self.0.send(1)
    }
    #[inline(always)]
    fn wait(&self, _rx: &mut ()) {
        self.0.receive();
    }
}
