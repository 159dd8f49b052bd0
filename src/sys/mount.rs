//! mount(2)/umount(2) for tracefs, and the two process facts the tracefs code needs
//! (effective uid, whether a PID is alive), as safe wrappers.

use std::ffi::CString;
use std::io;
use std::path::Path;

fn c_path(path: &Path) -> io::Result<CString> {
    use std::os::unix::ffi::OsStrExt;
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains a NUL byte"))
}

/// `mount -t FSTYPE nodev TARGET`.
pub fn mount_pseudo(fstype: &str, target: &Path) -> io::Result<()> {
    let target = c_path(target)?;
    let fstype = CString::new(fstype)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "fstype contains a NUL"))?;
    let source = CString::new("nodev").expect("no NUL");
    // SAFETY: all three strings are NUL-terminated and live for the call; data is null.
    let rc = unsafe {
        libc::mount(
            source.as_ptr(),
            target.as_ptr(),
            fstype.as_ptr(),
            0,
            std::ptr::null(),
        )
    };
    if rc != 0 {
        return Err(super::last_os_error());
    }
    Ok(())
}

/// `umount TARGET`.
pub fn umount(target: &Path) -> io::Result<()> {
    let target = c_path(target)?;
    // SAFETY: the string is NUL-terminated and lives for the call.
    let rc = unsafe { libc::umount2(target.as_ptr(), 0) };
    if rc != 0 {
        return Err(super::last_os_error());
    }
    Ok(())
}

/// True when a process with this id exists (also when it belongs to another user).
pub fn pid_alive(pid: i32) -> bool {
    if pid <= 0 {
        return false;
    }
    // SAFETY: signal 0 only checks existence and permission; nothing is delivered.
    let rc = unsafe { libc::kill(pid, 0) };
    rc == 0 || super::last_os_error().raw_os_error() == Some(libc::EPERM)
}
