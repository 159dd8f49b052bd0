//! Writing an output file whole or not at all: a new temporary file beside it, renamed
//! over it (a reader never sees half a result), devices and FIFOs written in place, `-`
//! as stdout, symbolic links refused unless `--force` (then written through); and the
//! check before measuring that the write will work.

/// How a final output path is written.
enum WriteTarget {
    Stdout,
    /// A device, FIFO or socket (e.g. /dev/null, /dev/stdout, a named pipe) is written in
    /// place: renaming a file over it would replace the device node itself.
    InPlace,
    /// A regular file or nothing yet: a new temporary file renamed over it.
    Replace,
    /// `--force` and `path` is a link: the file it points to, replaced as above.
    Through(std::path::PathBuf),
}

/// Set by `--force`: a symbolic link at an output path is written through.
static WRITE_THROUGH_SYMLINKS: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// `--force`: from now on an output path that is a symbolic link is written through (the
/// file it points to is replaced atomically) instead of refused.
pub fn write_through_symlinks() {
    WRITE_THROUGH_SYMLINKS.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Where a link points, relative targets taken from the link's directory; a chain of
/// links is followed (at most 8).
fn resolve_link(path: &std::path::Path) -> std::io::Result<std::path::PathBuf> {
    let mut current = path.to_path_buf();
    for _ in 0..8 {
        let target = std::fs::read_link(&current)?;
        current = directory_of(&current).join(target);
        match std::fs::symlink_metadata(&current) {
            Ok(m) if m.file_type().is_symlink() => continue,
            _ => return Ok(current),
        }
    }
    Err(std::io::Error::other("more than 8 symbolic links in a row"))
}

/// Decides how `path` is written, refusing a directory and a symbolic link (which an
/// unprivileged user owning the directory may have planted to redirect a root-owned
/// write, issue 12 item 1). A link to a device owned by root or by this user (/dev/stdout,
/// /proc/self/fd/1) is followed: that is how a terminal or pipe is named.
fn write_target(path: &std::path::Path) -> std::io::Result<WriteTarget> {
    use std::io::{Error, ErrorKind};
    use std::os::unix::fs::MetadataExt;
    if path.as_os_str() == "-" {
        return Ok(WriteTarget::Stdout);
    }
    let link = match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(WriteTarget::Replace),
        Err(e) => return Err(e),
        Ok(m) => m,
    };
    let is_special = |m: &std::fs::Metadata| !m.is_file() && !m.is_dir();
    if link.file_type().is_symlink() {
        let trusted_owner = link.uid() == 0 || link.uid() == crate::sys::process::effective_uid();
        if trusted_owner && std::fs::metadata(path).is_ok_and(|m| is_special(&m)) {
            return Ok(WriteTarget::InPlace);
        }
        if WRITE_THROUGH_SYMLINKS.load(std::sync::atomic::Ordering::Relaxed) {
            // The link resolved now, once: its target's directory gets the temporary
            // file, and the target (a regular file or nothing yet) is replaced.
            let target = resolve_link(path)?;
            return match write_target(&target)? {
                WriteTarget::Replace => Ok(WriteTarget::Through(target)),
                other => Ok(other),
            };
        }
        let target = std::fs::read_link(path)
            .map(|t| t.display().to_string())
            .unwrap_or_else(|_| "?".into());
        return Err(Error::other(format!(
            "it is a symbolic link (to {target}) and latscope neither writes through nor replaces \
             a link, which another user may have planted to redirect the write; remove the link, \
             give the path of the file itself, or add --force to write through it"
        )));
    }
    if link.is_dir() {
        return Err(Error::new(ErrorKind::IsADirectory, "is a directory"));
    }
    Ok(if is_special(&link) {
        WriteTarget::InPlace
    } else {
        WriteTarget::Replace
    })
}

/// The directory a new file beside `path` goes into.
fn directory_of(path: &std::path::Path) -> std::path::PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    }
}

/// A new temporary file in `dir` with an unpredictable name, created with
/// `O_CREAT|O_EXCL|O_NOFOLLOW` (never through a symlink planted at its name) and removed
/// when dropped unless persisted.
fn new_temporary_file(
    dir: &std::path::Path,
    prefix: &str,
) -> std::io::Result<tempfile::NamedTempFile> {
    tempfile::Builder::new()
        .prefix(prefix)
        .suffix(".tmp")
        .rand_bytes(12)
        .make_in(dir, crate::sys::new_file::create_exclusive_nofollow)
}

/// Writes bytes to `path` atomically: a new temporary file beside it (unpredictable name,
/// never through a symlink), fsync, rename. `-` writes to stdout; a device or FIFO is
/// written in place; a symbolic link is refused.
pub fn write_atomically(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    write_atomically_with(path, |out| out.write_all(bytes))
}

/// `write_atomically` for output produced piece by piece: `fill` writes into a buffered
/// writer on the temporary file (or stdout, or the device), so no whole text is held.
pub fn write_atomically_with(
    path: &std::path::Path,
    fill: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    use std::io::Write;
    match write_target(path)? {
        WriteTarget::Stdout => {
            let mut out = crate::output::pipe::stdout()?;
            fill(&mut out)?;
            out.flush()
        }
        WriteTarget::InPlace if crate::sys::fifo::is_fifo(path) => {
            // Waits for a reader and for room, but never past the next signal.
            let give_up = crate::output::pipe::at_next_signal();
            let fifo = crate::sys::fifo::open_writer(path, give_up)?;
            let mut out = std::io::BufWriter::new(fifo);
            fill(&mut out)?;
            out.flush()
        }
        WriteTarget::InPlace => {
            // A terminal or another device: its waits end at the next signal too.
            let f = std::fs::OpenOptions::new().write(true).open(path)?;
            let give_up = crate::output::pipe::at_next_signal();
            let device = crate::sys::fifo::PollWriter::new(f, "the device", give_up);
            let mut out = std::io::BufWriter::new(device);
            fill(&mut out)?;
            out.flush()
        }
        WriteTarget::Through(target) => replace_file(&target, fill).map(drop),
        WriteTarget::Replace => replace_file(path, fill).map(drop),
    }
}

/// For files that grow (the result journal, `--raw`): when `path` is (or will be) a
/// regular file, writes its first bytes atomically as `write_atomically` does and returns
/// the file, open, for appending (a reader sees a whole prefix, never a torn rename);
/// None, writing nothing, for `-`, a device or a FIFO (written once at the end instead).
pub fn create_growing(
    path: &std::path::Path,
    fill: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> std::io::Result<Option<std::fs::File>> {
    match write_target(path)? {
        WriteTarget::Replace => replace_file(path, fill).map(Some),
        WriteTarget::Through(target) => replace_file(&target, fill).map(Some),
        WriteTarget::Stdout | WriteTarget::InPlace => Ok(None),
    }
}

/// A new temporary file beside `path`, filled, fsynced and renamed over `path`.
fn replace_file(
    path: &std::path::Path,
    fill: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> std::io::Result<std::fs::File> {
    use std::io::Write;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "result".into());
    let mut tmp = new_temporary_file(&directory_of(path), &format!(".{name}."))?;
    {
        let mut out = std::io::BufWriter::with_capacity(1 << 16, tmp.as_file_mut());
        fill(&mut out)?;
        out.flush()?;
    }
    tmp.as_file().sync_all()?;
    // rename(2) replaces whatever is at `path` now (even a link planted since the check)
    // without following it; the temporary file is removed on failure.
    tmp.persist(path).map_err(|e| e.error)
}

/// Checks before measuring that `path` can be written (so a long run does not end in
/// an error): creates and removes a probe file in its directory the way the write will.
pub fn check_writable(path: &std::path::Path) -> std::io::Result<()> {
    match write_target(path)? {
        WriteTarget::Stdout => Ok(()),
        // A FIFO is not opened: that would wait for a reader, and closing it would end
        // the reader's input before the run wrote anything.
        WriteTarget::InPlace if crate::sys::fifo::is_fifo(path) => {
            crate::sys::fifo::may_write(path)
        }
        // A device is written in place; opening it is the check.
        WriteTarget::InPlace => std::fs::OpenOptions::new().write(true).open(path).map(drop),
        WriteTarget::Replace => {
            new_temporary_file(&directory_of(path), ".latscope-write-check.").map(drop)
        }
        WriteTarget::Through(target) => {
            new_temporary_file(&directory_of(&target), ".latscope-write-check.").map(drop)
        }
    }
}
