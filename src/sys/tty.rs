//! Terminals for the `serial` load: a pseudo-terminal pair (posix_openpt), a real tty
//! opened without becoming our controlling terminal, its termios saved, set to raw 8N1
//! at a standard baud rate, and put back; non-blocking writes and a bounded wait for
//! input on the pty's other side.

use std::ffi::CStr;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// The baud rates termios can set (Linux `B50` … `B4000000`), with their constants.
const SPEEDS: &[(u32, libc::speed_t)] = &[
    (50, libc::B50),
    (75, libc::B75),
    (110, libc::B110),
    (134, libc::B134),
    (150, libc::B150),
    (200, libc::B200),
    (300, libc::B300),
    (600, libc::B600),
    (1200, libc::B1200),
    (1800, libc::B1800),
    (2400, libc::B2400),
    (4800, libc::B4800),
    (9600, libc::B9600),
    (19200, libc::B19200),
    (38400, libc::B38400),
    (57600, libc::B57600),
    (115200, libc::B115200),
    (230400, libc::B230400),
    (460800, libc::B460800),
    (500000, libc::B500000),
    (576000, libc::B576000),
    (921600, libc::B921600),
    (1000000, libc::B1000000),
    (1152000, libc::B1152000),
    (1500000, libc::B1500000),
    (2000000, libc::B2000000),
    (2500000, libc::B2500000),
    (3000000, libc::B3000000),
    (3500000, libc::B3500000),
    (4000000, libc::B4000000),
];

/// Every baud rate termios can set, ascending.
pub fn standard_bauds() -> impl Iterator<Item = u32> {
    SPEEDS.iter().map(|&(b, _)| b)
}

fn speed_constant(baud: u32) -> Option<libc::speed_t> {
    SPEEDS.iter().find(|&&(b, _)| b == baud).map(|&(_, s)| s)
}

fn baud_of(speed: libc::speed_t) -> Option<u32> {
    SPEEDS.iter().find(|&&(_, s)| s == speed).map(|&(b, _)| b)
}

/// Takes ownership of a descriptor a libc call just returned, or its error.
fn own(raw: libc::c_int) -> io::Result<OwnedFd> {
    if raw < 0 {
        return Err(super::last_os_error());
    }
    // SAFETY: `raw` is a fresh descriptor nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(raw) })
}

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc < 0 {
        Err(super::last_os_error())
    } else {
        Ok(())
    }
}

/// Whether `fd` is a terminal.
pub fn is_tty(fd: &OwnedFd) -> bool {
    // SAFETY: isatty only inspects the descriptor, which `fd` keeps open.
    unsafe { libc::isatty(fd.as_raw_fd()) == 1 }
}

/// A pseudo-terminal: the master side and the terminal side (`/dev/pts/N`).
pub struct Pty {
    pub master: OwnedFd,
    pub terminal: OwnedFd,
    pub terminal_path: PathBuf,
}

/// Opens a new pseudo-terminal pair, neither end becoming our controlling terminal.
pub fn open_pty() -> io::Result<Pty> {
    // SAFETY: posix_openpt takes flags and returns a new descriptor or -1.
    let master =
        own(unsafe { libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC) })?;
    // SAFETY: grantpt/unlockpt act on the master descriptor `master` keeps open.
    check(unsafe { libc::grantpt(master.as_raw_fd()) })?;
    // SAFETY: as above.
    check(unsafe { libc::unlockpt(master.as_raw_fd()) })?;
    let mut name = [0 as libc::c_char; 128];
    // SAFETY: `name` is writable for its whole length, which is passed; ptsname_r
    // NUL-terminates what it writes or fails.
    let rc = unsafe { libc::ptsname_r(master.as_raw_fd(), name.as_mut_ptr(), name.len()) };
    if rc != 0 {
        return Err(io::Error::from_raw_os_error(rc));
    }
    // SAFETY: ptsname_r succeeded, so `name` holds a NUL-terminated string.
    let terminal_path = PathBuf::from(std::ffi::OsStr::from_bytes(
        unsafe { CStr::from_ptr(name.as_ptr()) }.to_bytes(),
    ));
    let terminal = open_terminal(&terminal_path)?;
    Ok(Pty {
        master,
        terminal,
        terminal_path,
    })
}

/// Why a tty could not be opened.
#[derive(Debug)]
pub enum TtyOpenError {
    /// open(2) failed (missing, permission, busy).
    Open(io::Error),
    /// It opened but is not a terminal.
    NotATty,
    /// A pseudo-terminal's master side (`/dev/ptmx` makes a new one): what is written
    /// there goes to a terminal side nobody reads.
    PtyMaster,
}

impl std::fmt::Display for TtyOpenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TtyOpenError::Open(e) => write!(f, "{e}"),
            TtyOpenError::NotATty => write!(f, "not a terminal"),
            TtyOpenError::PtyMaster => write!(f, "a pseudo-terminal master"),
        }
    }
}

/// The major number of a device number (glibc's `gnu_dev_major`).
fn major(rdev: u64) -> u64 {
    ((rdev >> 8) & 0xfff) | ((rdev >> 32) & !0xfff)
}

/// The minor number of a device number (glibc's `gnu_dev_minor`).
fn minor(rdev: u64) -> u64 {
    (rdev & 0xff) | ((rdev >> 12) & !0xff)
}

/// `/dev/ptmx` (5:2, also `/dev/pts/ptmx`) and the BSD pty masters (major 2): opening
/// one gives a pty master.
fn is_pty_master_device(rdev: u64) -> bool {
    (major(rdev) == 5 && minor(rdev) == 2) || major(rdev) == 2
}

/// Whether a character device number is a terminal's, judged without opening it
/// (opening some devices acts: a watchdog starts counting): the tty class in sysfs, or a
/// UNIX 98 pty's terminal side (majors 136-143, which sysfs does not list).
fn is_terminal_device(rdev: u64) -> bool {
    if (136..=143).contains(&major(rdev)) {
        return true;
    }
    let class = std::fs::canonicalize(format!(
        "/sys/dev/char/{}:{}/subsystem",
        major(rdev),
        minor(rdev)
    ));
    class.is_ok_and(|c| c.ends_with("class/tty"))
}

/// A device path resolved once (an O_PATH descriptor: the driver is not opened) and
/// judged on that descriptor, so what is opened afterwards is what was judged even if
/// the path is swapped meanwhile.
pub struct LocatedTty {
    located: OwnedFd,
    /// The device number (st_rdev).
    pub rdev: u64,
}

/// Resolves `path` once and refuses, before opening it, anything but a terminal's
/// character device, and a pty master.
pub fn locate_tty(path: &Path) -> Result<LocatedTty, TtyOpenError> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let c_path = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| TtyOpenError::Open(io::Error::from(io::ErrorKind::InvalidInput)))?;
    // SAFETY: `c_path` is a NUL-terminated path valid for the call; O_PATH opens no device.
    let located = own(unsafe { libc::open(c_path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) })
        .map_err(TtyOpenError::Open)?;
    let file = std::fs::File::from(located);
    let meta = file.metadata().map_err(TtyOpenError::Open)?;
    if !meta.file_type().is_char_device() {
        return Err(TtyOpenError::NotATty);
    }
    let rdev = meta.rdev();
    if is_pty_master_device(rdev) {
        return Err(TtyOpenError::PtyMaster);
    }
    if !is_terminal_device(rdev) {
        return Err(TtyOpenError::NotATty);
    }
    Ok(LocatedTty {
        located: file.into(),
        rdev,
    })
}

impl LocatedTty {
    /// Opens the located device itself (through `/proc/self/fd`, not the path again)
    /// read-write, non-blocking (no wait for a carrier, writes that would block return at
    /// once), not as our controlling terminal; checks the opened descriptor.
    pub fn open(&self) -> Result<OwnedFd, TtyOpenError> {
        let fd = open_terminal(Path::new(&format!(
            "/proc/self/fd/{}",
            self.located.as_raw_fd()
        )))
        .map_err(TtyOpenError::Open)?;
        if !is_tty(&fd) {
            return Err(TtyOpenError::NotATty);
        }
        if is_pty_master(&fd) {
            return Err(TtyOpenError::PtyMaster);
        }
        Ok(fd)
    }
}

/// Whether `fd` is a pseudo-terminal's master side (TIOCGPTN answers only there).
pub fn is_pty_master(fd: &OwnedFd) -> bool {
    let mut number: libc::c_uint = 0;
    // SAFETY: TIOCGPTN writes one unsigned int into `number`, which outlives the call.
    unsafe { libc::ioctl(fd.as_raw_fd(), libc::TIOCGPTN, &mut number) == 0 }
}

/// The device number of an open descriptor (st_rdev).
pub fn device_of(fd: &OwnedFd) -> io::Result<u64> {
    use std::os::unix::fs::MetadataExt;
    let file = std::fs::File::from(fd.try_clone()?);
    Ok(file.metadata()?.rdev())
}

/// Opens a terminal device: resolved once, judged before opening (anything but a tty's
/// character device, and a pty master, is refused unopened), then the opened descriptor
/// checked again (`LocatedTty::open`).
pub fn open_tty(path: &Path) -> Result<OwnedFd, TtyOpenError> {
    locate_tty(path)?.open()
}

fn open_terminal(path: &Path) -> io::Result<OwnedFd> {
    let c_path = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: `c_path` is a NUL-terminated path valid for the call.
    own(unsafe {
        libc::open(
            c_path.as_ptr(),
            libc::O_RDWR | libc::O_NOCTTY | libc::O_NONBLOCK | libc::O_CLOEXEC,
        )
    })
}

/// A terminal's settings, as read before changing them.
#[derive(Clone, Copy)]
pub struct Termios(libc::termios);

impl Termios {
    /// The output baud rate, if it is a standard one.
    pub fn output_baud(&self) -> Option<u32> {
        // The CBAUD bits, as glibc's cfgetospeed reads them on Linux (see set_raw_8n1 for
        // why not through the libc crate).
        baud_of(self.0.c_cflag & libc::CBAUD)
    }

    /// Whether the settings that matter here (speeds, modes) equal `other`'s.
    pub fn same_as(&self, other: &Termios) -> bool {
        let (a, b) = (&self.0, &other.0);
        a.c_iflag == b.c_iflag
            && a.c_oflag == b.c_oflag
            && a.c_cflag == b.c_cflag
            && a.c_lflag == b.c_lflag
            && self.output_baud() == other.output_baud()
    }
}

/// A terminal's settings as plain fields, for a file (`latscope restore` puts them back
/// after a killed run).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TermiosFields {
    pub iflag: u32,
    pub oflag: u32,
    pub cflag: u32,
    pub lflag: u32,
    pub line: u8,
    pub cc: Vec<u8>,
    pub ispeed: u32,
    pub ospeed: u32,
}

impl Termios {
    /// The settings as plain fields.
    pub fn fields(&self) -> TermiosFields {
        let t = &self.0;
        TermiosFields {
            iflag: t.c_iflag,
            oflag: t.c_oflag,
            cflag: t.c_cflag,
            lflag: t.c_lflag,
            line: t.c_line,
            cc: t.c_cc.to_vec(),
            ispeed: t.c_ispeed,
            ospeed: t.c_ospeed,
        }
    }

    /// Settings from fields read back from a file (None when `cc` has the wrong length).
    pub fn from_fields(f: &TermiosFields) -> Option<Termios> {
        // SAFETY: termios is plain data; every field is set below.
        let mut t: libc::termios = unsafe { std::mem::zeroed() };
        if f.cc.len() != t.c_cc.len() {
            return None;
        }
        t.c_iflag = f.iflag;
        t.c_oflag = f.oflag;
        t.c_cflag = f.cflag;
        t.c_lflag = f.lflag;
        t.c_line = f.line;
        t.c_cc.copy_from_slice(&f.cc);
        t.c_ispeed = f.ispeed;
        t.c_ospeed = f.ospeed;
        Some(Termios(t))
    }
}

/// Reads the terminal's settings.
pub fn get_termios(fd: &OwnedFd) -> io::Result<Termios> {
    // SAFETY: termios is plain data; tcgetattr fills it or fails.
    let mut t: libc::termios = unsafe { std::mem::zeroed() };
    // SAFETY: `t` is a valid termios to write into; `fd` is open.
    check(unsafe { libc::tcgetattr(fd.as_raw_fd(), &mut t) })?;
    Ok(Termios(t))
}

/// `current` turned into raw 8N1 at `baud`, no flow control, modem lines ignored
/// (CLOCAL). Fails for a baud rate termios cannot set.
pub fn raw_8n1(current: &Termios, baud: u32) -> io::Result<Termios> {
    let speed = speed_constant(baud).ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))?;
    let Termios(mut t) = *current;
    // SAFETY: cfmakeraw changes fields of the termios it is given.
    unsafe { libc::cfmakeraw(&mut t) };
    t.c_cflag &= !(libc::CSIZE | libc::PARENB | libc::CSTOPB | libc::CRTSCTS);
    t.c_cflag |= libc::CS8 | libc::CLOCAL | libc::CREAD;
    t.c_iflag &= !(libc::IXON | libc::IXOFF | libc::IXANY);
    // The speed written as glibc's cfsetspeed does on Linux (the CBAUD bits of c_cflag, and
    // both speed fields), by hand: the libc crate binds cfset*speed to versioned glibc
    // symbols (`@GLIBC_2.2.5`) that a static build (`crt-static`, for boards) cannot link.
    t.c_cflag = (t.c_cflag & !libc::CBAUD) | speed;
    t.c_ispeed = speed;
    t.c_ospeed = speed;
    Ok(Termios(t))
}

/// Writes settings to the terminal at once.
pub fn set_termios(fd: &OwnedFd, settings: &Termios) -> io::Result<()> {
    // SAFETY: `settings` is a complete termios (read from a terminal, then modified).
    check(unsafe { libc::tcsetattr(fd.as_raw_fd(), libc::TCSANOW, &settings.0) })
}

/// Sets raw 8N1 at `baud` (`raw_8n1` of the current settings).
pub fn set_raw_8n1(fd: &OwnedFd, baud: u32) -> io::Result<()> {
    set_termios(fd, &raw_8n1(&get_termios(fd)?, baud)?)
}

/// Puts saved settings back, discarding output not yet sent (so a real UART stops at
/// once instead of draining what the load queued).
pub fn restore_termios(fd: &OwnedFd, saved: &Termios) -> io::Result<()> {
    // SAFETY: tcflush discards queued data of a terminal `fd` keeps open.
    let _ = unsafe { libc::tcflush(fd.as_raw_fd(), libc::TCOFLUSH) };
    // SAFETY: `saved` is a complete termios read from this terminal.
    check(unsafe { libc::tcsetattr(fd.as_raw_fd(), libc::TCSANOW, &saved.0) })
}

/// Writes what it can of `buf` without blocking: Ok(0) when the terminal's buffer is
/// full (EAGAIN).
pub fn write_nonblocking(fd: &OwnedFd, buf: &[u8]) -> io::Result<usize> {
    // SAFETY: `buf` is valid for reads of its length for the whole call.
    let n = unsafe { libc::write(fd.as_raw_fd(), buf.as_ptr().cast(), buf.len()) };
    if n >= 0 {
        return Ok(n as usize);
    }
    let e = super::last_os_error();
    match e.raw_os_error() {
        Some(libc::EAGAIN) | Some(libc::EINTR) => Ok(0),
        _ => Err(e),
    }
}

/// Waits up to `timeout_ms` for input, then reads what is there: Ok(None) when nothing
/// came, Ok(Some(0)) at the end (the other side closed).
pub fn read_within(fd: &OwnedFd, buf: &mut [u8], timeout_ms: i32) -> io::Result<Option<usize>> {
    let mut pfd = libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd, its count passed.
    let rc = unsafe { libc::poll(&mut pfd, 1, timeout_ms) };
    if rc < 0 {
        let e = super::last_os_error();
        return if e.raw_os_error() == Some(libc::EINTR) {
            Ok(None)
        } else {
            Err(e)
        };
    }
    if rc == 0 {
        return Ok(None);
    }
    // SAFETY: `buf` is valid for writes of its length for the whole call.
    let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
    if n >= 0 {
        return Ok(Some(n as usize));
    }
    let e = super::last_os_error();
    match e.raw_os_error() {
        Some(libc::EAGAIN) | Some(libc::EINTR) => Ok(None),
        // A pty's master reads EIO once every terminal-side descriptor is closed.
        Some(libc::EIO) => Ok(Some(0)),
        _ => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pty_raw_at_a_baud_rate_and_back() {
        let pty = open_pty().unwrap();
        assert!(is_tty(&pty.terminal));
        let before = get_termios(&pty.terminal).unwrap();
        set_raw_8n1(&pty.terminal, 9600).unwrap();
        let during = get_termios(&pty.terminal).unwrap();
        assert_eq!(during.output_baud(), Some(9600));
        assert!(!during.same_as(&before));
        restore_termios(&pty.terminal, &before).unwrap();
        assert!(get_termios(&pty.terminal).unwrap().same_as(&before));
        assert_eq!(write_nonblocking(&pty.terminal, b"hi").unwrap(), 2);
        let mut buf = [0u8; 8];
        assert_eq!(read_within(&pty.master, &mut buf, 1000).unwrap(), Some(2));
        drop(pty.terminal);
        assert_eq!(read_within(&pty.master, &mut buf, 1000).unwrap(), Some(0));
    }

    #[test]
    fn not_a_tty_and_missing() {
        assert!(matches!(
            open_tty(Path::new("/dev/null")),
            Err(TtyOpenError::NotATty)
        ));
        for not_a_terminal in ["/dev/zero", "/etc/hostname", "/dev"] {
            assert!(
                matches!(
                    open_tty(Path::new(not_a_terminal)),
                    Err(TtyOpenError::NotATty)
                ),
                "{not_a_terminal}"
            );
        }
        let pty = open_pty().unwrap();
        assert!(open_tty(&pty.terminal_path).is_ok());
        assert!(matches!(
            open_tty(Path::new("/dev/latscope-no-such-tty")),
            Err(TtyOpenError::Open(_))
        ));
        assert!(set_raw_8n1(&open_pty().unwrap().terminal, 12345).is_err());
    }
    #[test]
    fn pty_masters_are_refused() {
        for master in ["/dev/ptmx", "/dev/pts/ptmx"] {
            if Path::new(master).exists() {
                assert!(
                    matches!(locate_tty(Path::new(master)), Err(TtyOpenError::PtyMaster)),
                    "{master}"
                );
            }
        }
        let pty = open_pty().unwrap();
        assert!(is_pty_master(&pty.master));
        assert!(!is_pty_master(&pty.terminal));
        // A master reached through /proc/self/fd is refused on its opened descriptor.
        let via_proc = format!("/proc/self/fd/{}", pty.master.as_raw_fd());
        assert!(open_tty(Path::new(&via_proc)).is_err());
    }

    #[test]
    fn what_is_opened_is_what_was_judged_even_if_the_path_is_swapped() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("serial");
        let pty = open_pty().unwrap();
        std::os::unix::fs::symlink(&pty.terminal_path, &link).unwrap();
        let located = locate_tty(&link).unwrap();
        // Swapped between the checks and the open: the old code opened /dev/null here.
        std::fs::remove_file(&link).unwrap();
        std::os::unix::fs::symlink("/dev/null", &link).unwrap();
        let opened = located.open().unwrap();
        assert!(is_tty(&opened));
        assert_eq!(device_of(&opened).unwrap(), located.rdev);
        assert_eq!(located.rdev, device_of(&pty.terminal).unwrap());
        assert!(matches!(open_tty(&link), Err(TtyOpenError::NotATty)));
    }

    #[test]
    fn termios_fields_round_trip() {
        let pty = open_pty().unwrap();
        let t = get_termios(&pty.terminal).unwrap();
        let raw = raw_8n1(&t, 115200).unwrap();
        let back = Termios::from_fields(&raw.fields()).unwrap();
        assert!(back.same_as(&raw) && !back.same_as(&t));
        assert_eq!(back.fields(), raw.fields());
        let mut short = raw.fields();
        short.cc.pop();
        assert!(Termios::from_fields(&short).is_none());
    }
}
