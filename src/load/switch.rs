//! The `switch` load: thread pairs on one CPU ping-ponging a byte over a Unix socket
//! pair, so every message is a sleep, a wake-up and a context switch.

use super::socket_pairs::{PairLoad, SocketPairs};
use super::{Step, Worker};
use std::io::{Read, Write};
use std::net::Shutdown;
use std::os::unix::net::UnixStream;

/// Round trips per step of the active thread (two switches each).
const ROUND_TRIPS_PER_STEP: u64 = 8;

/// The `switch` load: pair k's active end pings, its passive end answers.
pub(super) fn switch_load(cpus: &[usize], pairs: usize) -> anyhow::Result<PairLoad<UnixStream>> {
    Ok(PairLoad {
        pairs: SocketPairs::new(cpus, pairs, UnixStream::pair)?,
        name: "switch",
        units_per_reported: 1.0,
        worker: |stream, active| Box::new(SwitchWorker { stream, active }),
    })
}

/// Index 2k pings (and follows the duty cycle), 2k+1 answers.
struct SwitchWorker {
    stream: UnixStream,
    active: bool,
}

/// A finished worker shuts its socket down (not just closes its descriptor: the load
/// keeps a clone to unblock threads on stop), so its partner sees the end at once.
impl Drop for SwitchWorker {
    fn drop(&mut self) {
        let _ = self.stream.shutdown(Shutdown::Both);
    }
}

impl Worker for SwitchWorker {
    fn step(&mut self) -> anyhow::Result<Step> {
        let mut byte = [0u8; 1];
        if self.active {
            for _ in 0..ROUND_TRIPS_PER_STEP {
                self.stream.write_all(&byte)?;
                if self.stream.read(&mut byte)? == 0 {
                    return Ok(Step::Finished);
                }
            }
            Ok(Step::Did(2 * ROUND_TRIPS_PER_STEP))
        } else {
            if self.stream.read(&mut byte)? == 0 {
                return Ok(Step::Finished);
            }
            // The partner may have gone while we read: a broken pipe just ends us.
            if self.stream.write_all(&byte).is_err() {
                return Ok(Step::Finished);
            }
            Ok(Step::Did(0))
        }
    }
}
