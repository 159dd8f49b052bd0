//! POSIX message queues (mq_open/mq_send/mq_receive) for the wake probe's `mqueue`
//! mechanism. The queue's name is unlinked right after both ends are open, so nothing
//! is left in /dev/mqueue even if latscope is killed.

use std::ffi::CString;
use std::io;

/// Bytes per message: a u64 sequence number.
pub const MESSAGE_BYTES: usize = 8;
/// Messages the queue holds (the default /proc/sys/fs/mqueue/msg_max is 10).
pub const QUEUE_DEPTH: i64 = 10;

/// An anonymous (already unlinked) queue with a non-blocking send end and a blocking
/// receive end.
pub struct MessageQueue {
    send: libc::mqd_t,
    receive: libc::mqd_t,
}

impl MessageQueue {
    /// Creates a queue under a unique name, opens both ends and unlinks the name.
    pub fn new() -> io::Result<Self> {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = CString::new(format!("/latscope-wake-{}-{n}", std::process::id()))
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        // SAFETY: mq_attr is plain data; all-zero is valid before the fields are set.
        let mut attr: libc::mq_attr = unsafe { std::mem::zeroed() };
        attr.mq_maxmsg = QUEUE_DEPTH as _;
        attr.mq_msgsize = MESSAGE_BYTES as _;
        let mode: libc::mode_t = 0o600;
        // SAFETY: `name` is NUL-terminated; with O_CREAT mq_open reads a mode_t and a
        // pointer to a valid mq_attr, both passed.
        let receive = unsafe {
            libc::mq_open(
                name.as_ptr(),
                libc::O_RDONLY | libc::O_CREAT | libc::O_EXCL | libc::O_CLOEXEC,
                mode,
                &attr as *const libc::mq_attr,
            )
        };
        if receive == -1 {
            return Err(super::last_os_error());
        }
        // SAFETY: `name` is NUL-terminated; no O_CREAT, so no further arguments.
        let send = unsafe {
            libc::mq_open(
                name.as_ptr(),
                libc::O_WRONLY | libc::O_NONBLOCK | libc::O_CLOEXEC,
            )
        };
        let open_error = (send == -1).then(super::last_os_error);
        // SAFETY: `name` is NUL-terminated; unlinking only removes the name.
        unsafe { libc::mq_unlink(name.as_ptr()) };
        if let Some(e) = open_error {
            // SAFETY: `receive` is an open descriptor we own.
            unsafe { libc::mq_close(receive) };
            return Err(e);
        }
        Ok(Self { send, receive })
    }

    /// Sends `value` without blocking; false when the queue is full.
    #[inline(always)]
    pub fn send(&self, value: u64) -> bool {
        let bytes = value.to_ne_bytes();
        // SAFETY: `bytes` is valid for MESSAGE_BYTES reads; `send` is open for writing.
        let rc = unsafe { libc::mq_send(self.send, bytes.as_ptr().cast(), MESSAGE_BYTES, 0) };
        rc == 0
    }

    /// Blocks until a message arrives; returns its value (0 on error).
    #[inline(always)]
    pub fn receive(&self) -> u64 {
        let mut bytes = [0u8; MESSAGE_BYTES];
        loop {
            // SAFETY: `bytes` is writable for MESSAGE_BYTES, the queue's message size;
            // a null priority pointer is allowed.
            let n = unsafe {
                libc::mq_receive(
                    self.receive,
                    bytes.as_mut_ptr().cast(),
                    MESSAGE_BYTES,
                    std::ptr::null_mut(),
                )
            };
            if n >= 0 {
                return u64::from_ne_bytes(bytes);
            }
            if io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                return 0;
            }
        }
    }
}

impl Drop for MessageQueue {
    fn drop(&mut self) {
        // SAFETY: both descriptors are open and owned by this value alone.
        unsafe {
            libc::mq_close(self.send);
            libc::mq_close(self.receive);
        }
    }
}

// SAFETY: message queue descriptors are plain kernel handles usable from any thread.
unsafe impl Send for MessageQueue {}
// SAFETY: mq_send and mq_receive are thread-safe system calls on those handles.
unsafe impl Sync for MessageQueue {}
