//! The connected socket pairs that the `net` and `switch` loads share: two workers a
//! pair on one CPU, each taking its end once, and clones of every end to unblock them.

use super::{Load, Worker};
use std::net::{Shutdown, TcpStream};
use std::os::unix::net::UnixStream;
use std::sync::Mutex;

/// A socket whose both directions can be shut down, waking a thread blocked on it.
pub(super) trait ShutdownBoth: Sized {
    fn try_clone_end(&self) -> std::io::Result<Self>;
    fn shutdown_both(&self);
}

impl ShutdownBoth for TcpStream {
    fn try_clone_end(&self) -> std::io::Result<Self> {
        self.try_clone()
    }
    fn shutdown_both(&self) {
        let _ = self.shutdown(Shutdown::Both);
    }
}

impl ShutdownBoth for UnixStream {
    fn try_clone_end(&self) -> std::io::Result<Self> {
        self.try_clone()
    }
    fn shutdown_both(&self) {
        let _ = self.shutdown(Shutdown::Both);
    }
}

/// Worker 2k and 2k+1 hold the two ends of pair k and run on the same CPU; 2k follows
/// the duty cycle.
pub(super) struct SocketPairs<S> {
    cpus: Vec<usize>,
    pairs: usize,
    /// Each worker's end, taken when the worker is built.
    ends: Mutex<Vec<Option<S>>>,
    /// Clones of every end, to unblock the threads when stopping.
    wakers: Vec<S>,
}

impl<S: ShutdownBoth> SocketPairs<S> {
    /// Connects `pairs` pairs with `connect`, which returns the two ends of one pair.
    pub(super) fn new(
        cpus: &[usize],
        pairs: usize,
        mut connect: impl FnMut() -> std::io::Result<(S, S)>,
    ) -> anyhow::Result<Self> {
        let mut ends = Vec::with_capacity(pairs * 2);
        let mut wakers = Vec::with_capacity(pairs * 2);
        for _ in 0..pairs {
            let (a, b) = connect()?;
            wakers.push(a.try_clone_end()?);
            wakers.push(b.try_clone_end()?);
            ends.push(Some(a));
            ends.push(Some(b));
        }
        Ok(Self {
            cpus: cpus.to_vec(),
            pairs,
            ends: Mutex::new(ends),
            wakers,
        })
    }

    pub(super) fn workers(&self) -> usize {
        self.pairs * 2
    }

    pub(super) fn cpu_of(&self, index: usize) -> usize {
        self.cpus[(index / 2) % self.cpus.len()]
    }

    /// Worker `index`'s end, once; `load` names the load in the errors.
    pub(super) fn take_end(&self, index: usize, load: &str) -> anyhow::Result<S> {
        self.ends
            .lock()
            .map_err(|_| anyhow::anyhow!("{load} load state poisoned"))?[index]
            .take()
            .ok_or_else(|| anyhow::anyhow!("{load} worker {index} built twice"))
    }

    pub(super) fn shutdown(&self) {
        for w in &self.wakers {
            w.shutdown_both();
        }
    }
}

/// A load made of socket pairs (`net`, `switch`): worker 2k holds the active end of pair
/// k and follows the duty cycle, 2k+1 the passive end.
pub(super) struct PairLoad<S> {
    pub(super) pairs: SocketPairs<S>,
    /// The load's name, in errors.
    pub(super) name: &'static str,
    /// Counted units per reported unit.
    pub(super) units_per_reported: f64,
    /// Builds a worker from its end (`true`: the active end).
    pub(super) worker: fn(S, bool) -> Box<dyn Worker>,
}

impl<S: ShutdownBoth + Send + Sync> Load for PairLoad<S> {
    fn workers(&self) -> usize {
        self.pairs.workers()
    }
    fn cpu_of(&self, index: usize) -> usize {
        self.pairs.cpu_of(index)
    }
    fn follows_duty(&self, index: usize) -> bool {
        index % 2 == 0
    }
    fn worker(&self, index: usize) -> anyhow::Result<Box<dyn Worker>> {
        let end = self.pairs.take_end(index, self.name)?;
        Ok((self.worker)(end, index % 2 == 0))
    }
    fn units_per_reported(&self) -> f64 {
        self.units_per_reported
    }
    fn shutdown(&self) {
        self.pairs.shutdown();
    }
}
