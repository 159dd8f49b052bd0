//! The `net` load: a TCP stream over loopback from a sender to a receiver thread on the
//! same CPU — the network stack and its softirqs, reported as MB/s received.

use super::socket_pairs::{PairLoad, SocketPairs};
use super::{Counters, Step, Worker};
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};

/// Bytes per write and per read buffer.
const CHUNK_BYTES: usize = 64 * 1024;

/// The `net` load: pair k's active end sends, its passive end receives.
pub(super) fn net_load(cpus: &[usize], pairs: usize) -> anyhow::Result<PairLoad<TcpStream>> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let addr = listener.local_addr()?;
    let pairs = SocketPairs::new(cpus, pairs, || {
        let sender = TcpStream::connect(addr)?;
        let (receiver, _) = listener.accept()?;
        Ok((sender, receiver))
    })?;
    Ok(PairLoad {
        pairs,
        name: "net",
        units_per_reported: 1e6,
        worker: |stream, sending| {
            Box::new(NetWorker {
                stream,
                sending,
                buffer: vec![0x5a; CHUNK_BYTES],
                bytes: 0,
            })
        },
    })
}

struct NetWorker {
    stream: TcpStream,
    sending: bool,
    buffer: Vec<u8>,
    bytes: u64,
}

/// A finished worker shuts its socket down (not just closes its descriptor: the load
/// keeps a clone to unblock threads on stop), so its partner sees the end at once.
impl Drop for NetWorker {
    fn drop(&mut self) {
        let _ = self.stream.shutdown(Shutdown::Both);
    }
}

impl Worker for NetWorker {
    fn step(&mut self) -> anyhow::Result<Step> {
        if self.sending {
            // One write, counted for what it took: `write_all` would lose the count of a
            // chunk cut by the stop's shutdown after part of it was sent, and the receiver
            // would then count more bytes than were sent (CI saw it).
            match self.stream.write(&self.buffer) {
                Ok(0) => Ok(Step::Finished),
                Ok(n) => {
                    self.bytes += n as u64;
                    // The receiver counts the throughput.
                    Ok(Step::Did(0))
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => Ok(Step::Did(0)),
                // Stopping shuts the sockets down under a blocked write.
                Err(_) => Ok(Step::Finished),
            }
        } else {
            match self.stream.read(&mut self.buffer) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => Ok(Step::Did(0)),
                Ok(0) | Err(_) => Ok(Step::Finished),
                Ok(n) => {
                    self.bytes += n as u64;
                    Ok(Step::Did(n as u64))
                }
            }
        }
    }

    fn counters(&self) -> Counters {
        let key = if self.sending {
            "bytes_sent"
        } else {
            "bytes_received"
        };
        Counters::from([(key, self.bytes)])
    }
}
