//! Kernel receive timestamps on UDP sockets (SO_TIMESTAMPNS): enabling them and reading
//! a datagram together with the time the kernel stamped it on arrival, so `latscope net`
//! can split a round trip into network+kernel time and kernel-to-user wake-up time.

use std::io;
use std::net::UdpSocket;
use std::os::fd::AsRawFd;

/// Room for the control messages of one datagram (SCM_TIMESTAMPNS needs 32 bytes on
/// 64-bit Linux); u64 elements keep it aligned for `cmsghdr`.
#[derive(Debug, Clone, Default)]
pub struct ControlBuffer([u64; 16]);

/// Asks the kernel to stamp every datagram this socket receives (CLOCK_REALTIME, ns).
pub fn enable_rx_timestamps(socket: &UdpSocket) -> io::Result<()> {
    let on: libc::c_int = 1;
    // SAFETY: the fd is a live socket owned by `socket`; the option value points to a
    // c_int that lives for the call, and its size is passed exactly.
    let rc = unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_TIMESTAMPNS,
            (&on as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc != 0 {
        return Err(super::last_os_error());
    }
    Ok(())
}

/// One received datagram: its length, and the kernel's receive time in CLOCK_REALTIME
/// ns when the kernel attached one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Received {
    pub len: usize,
    pub kernel_rx_realtime_ns: Option<u64>,
}

/// Receives one datagram into `buf` on a connected socket, blocking up to the socket's
/// read timeout (then `WouldBlock`/`TimedOut`). Allocation-free: the hot path calls it.
#[inline]
pub fn recv_timestamped(
    socket: &UdpSocket,
    buf: &mut [u8],
    control: &mut ControlBuffer,
) -> io::Result<Received> {
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    // SAFETY: msghdr is plain old data; all-zero is a valid empty header.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.0.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&control.0) as _;
    let n = loop {
        // SAFETY: `msg` points to one iovec over `buf` and to `control`, both valid and
        // writable for their stated lengths for the duration of the call.
        let n = unsafe { libc::recvmsg(socket.as_raw_fd(), &mut msg, 0) };
        if n >= 0 {
            break n as usize;
        }
        let err = super::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    };
    Ok(Received {
        len: n,
        kernel_rx_realtime_ns: timestamp_of(&msg),
    })
}

/// The SCM_TIMESTAMPNS value among the control messages of `msg`, if any.
fn timestamp_of(msg: &libc::msghdr) -> Option<u64> {
    // SAFETY: `msg` was filled by a successful recvmsg: msg_control/msg_controllen
    // describe the control bytes the kernel wrote, which the CMSG_* macros walk
    // within those bounds.
    unsafe {
        let mut cmsg = libc::CMSG_FIRSTHDR(msg);
        while !cmsg.is_null() {
            if (*cmsg).cmsg_level == libc::SOL_SOCKET
                && (*cmsg).cmsg_type == libc::SCM_TIMESTAMPNS
                && (*cmsg).cmsg_len as usize
                    >= libc::CMSG_LEN(std::mem::size_of::<libc::timespec>() as u32) as usize
            {
                // The data may not be aligned for timespec: read it unaligned.
                let ts: libc::timespec =
                    std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast::<libc::timespec>());
                return Some(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64);
            }
            cmsg = libc::CMSG_NXTHDR(msg, cmsg);
        }
    }
    None
}

/// CLOCK_REALTIME in ns, read with clock_gettime (vDSO): the clock of kernel receive
/// timestamps.
#[inline(always)]
pub fn realtime_ns() -> u64 {
    super::clock::clock_now_ns(libc::CLOCK_REALTIME)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_datagram_carries_a_kernel_timestamp() {
        let a = UdpSocket::bind("127.0.0.1:0").unwrap();
        let b = UdpSocket::bind("127.0.0.1:0").unwrap();
        b.connect(a.local_addr().unwrap()).unwrap();
        a.connect(b.local_addr().unwrap()).unwrap();
        enable_rx_timestamps(&b).unwrap();
        b.set_read_timeout(Some(std::time::Duration::from_secs(2)))
            .unwrap();
        let before = realtime_ns();
        a.send(b"hello").unwrap();
        let mut buf = [0u8; 64];
        let mut control = ControlBuffer::default();
        let got = recv_timestamped(&b, &mut buf, &mut control).unwrap();
        let after = realtime_ns();
        assert_eq!(got.len, 5);
        let ts = got.kernel_rx_realtime_ns.expect("a timestamp");
        assert!(
            ts >= before.saturating_sub(1_000_000) && ts <= after,
            "{before} {ts} {after}"
        );
    }
}
