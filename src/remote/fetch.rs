//! The files a board's run leaves in its scratch directory, fetched over one connection
//! as frames (`NAME SIZE`, then exactly SIZE bytes), each read within its limit: the
//! result and the table as input files are (256 MiB), the short ones within 64 KiB, each
//! name once, and `--raw` streamed straight into its local file; a board that sends more
//! is refused and its directory kept (issue 34, item 5: a 300 MB run.json frame was held
//! whole, above the limit of files).

use super::ssh::{said, ssh_failed, Failed, Output, Ssh, SHORT_OUTPUT_MAX};
use std::collections::BTreeMap;
use std::io::{BufRead, Read};
use std::path::Path;
use std::time::Duration;

/// Connections tried to fetch the result after the run.
const FETCH_TRIES: u32 = 5;
/// How long the board's run may take to end after its connection dropped.
const END_WAIT_TENTHS: u32 = 1200;
/// After a second local signal: one try, and the board's run gets this long to save.
const END_WAIT_ABORTING_TENTHS: u32 = 150;

/// What a board's run leaves in its scratch directory, fetched in one connection: the
/// exit code the shell wrote, a refusal to run the cached binary, the result, the `--raw`
/// CSV and the table it printed.
const RUN_FILES: [&str; 5] = ["exit", "refused", "run.json", "raw.csv", "stdout"];

/// The most bytes of a fetched file kept in memory: a result as `report` reads one.
fn limit_of(name: &str) -> u64 {
    match name {
        "run.json" | "stdout" => crate::result::MAX_INPUT_FILE_BYTES,
        _ => SHORT_OUTPUT_MAX,
    }
}

/// The fetched files (`--raw` not among them: written to its local file).
#[derive(Debug, Default)]
pub struct Fetched {
    pub files: BTreeMap<String, Vec<u8>>,
    pub raw_written: bool,
}

/// Reads the frames of `input`: `NAME SIZE\n` and SIZE bytes, again and again, each a
/// name of RUN_FILES, once, within its limit; `raw.csv` copied into `raw` (atomically)
/// when given, else skipped. A cut frame is the connection's failure; anything else
/// wrong is what the board sent (`Failed::Content`).
pub fn read_frames(input: &mut dyn Read, raw: Option<&Path>) -> Result<Fetched, Failed> {
    let refused = Failed::Content;
    let cut = Failed::Connection;
    let mut r = std::io::BufReader::new(input);
    let mut fetched = Fetched::default();
    loop {
        let mut header = Vec::new();
        let n = (&mut r)
            .take(256)
            .read_until(b'\n', &mut header)
            .map_err(|e| cut(e.to_string()))?;
        if n == 0 {
            return Ok(fetched);
        }
        let text = String::from_utf8_lossy(&header).into_owned();
        let quoted = crate::error::clip(text.trim_end());
        if header.last() != Some(&b'\n') {
            return Err(if n < 256 {
                cut(format!("a file's header line is cut off: \"{quoted}\""))
            } else {
                refused(format!("not a file header: \"{quoted}\""))
            });
        }
        let mut words = text.split_whitespace();
        let (Some(name), Some(size), None) = (words.next(), words.next(), words.next()) else {
            return Err(refused(format!("not a file header: \"{quoted}\"")));
        };
        let size: u64 = size
            .parse()
            .map_err(|_| refused(format!("not a file size: \"{quoted}\"")))?;
        let Some(name) = RUN_FILES.into_iter().find(|n| *n == name) else {
            return Err(refused(format!(
                "not a file latscope fetches: \"{quoted}\""
            )));
        };
        if fetched.files.contains_key(name) || (name == "raw.csv" && fetched.raw_written) {
            return Err(refused(format!("{name} was sent twice")));
        }
        let mut body = (&mut r).take(size);
        if name == "raw.csv" {
            fetched.raw_written = copy_raw(&mut body, size, raw)?;
            continue;
        }
        if size > limit_of(name) {
            return Err(refused(format!(
                "the board's {name} is {size} bytes, more than latscope reads ({} KiB at most)",
                limit_of(name) >> 10
            )));
        }
        let mut bytes = Vec::with_capacity(size as usize);
        body.read_to_end(&mut bytes)
            .map_err(|e| cut(e.to_string()))?;
        if (bytes.len() as u64) < size {
            return Err(cut(format!(
                "{name}: {} of {size} bytes arrived",
                bytes.len()
            )));
        }
        fetched.files.insert(name.to_string(), bytes);
    }
}

/// The `--raw` frame (`size` bytes) copied into `raw` atomically, or skipped; whether it
/// was written.
fn copy_raw(body: &mut dyn Read, size: u64, raw: Option<&Path>) -> Result<bool, Failed> {
    let short = |n: u64| format!("raw.csv: {n} of {size} bytes arrived");
    let Some(path) = raw else {
        let n = std::io::copy(body, &mut std::io::sink())
            .map_err(|e| Failed::Connection(e.to_string()))?;
        return if n < size {
            Err(Failed::Connection(short(n)))
        } else {
            Ok(false)
        };
    };
    crate::output::atomic::write_atomically_with(path, |out| {
        let n = std::io::copy(body, out)?;
        if n < size {
            return Err(std::io::Error::other(short(n)));
        }
        Ok(())
    })
    .map_err(|e| Failed::Connection(format!("writing {}: {e}", path.display())))?;
    Ok(true)
}

/// One short remote command, over a new connection each try (the board may be rebooting
/// its network, or the drop may have been ours); an error after FETCH_TRIES failed
/// connections.
pub fn fetch_one(ssh: &Ssh, remote: &str) -> Result<Output, String> {
    let mut last = String::new();
    for attempt in 0..FETCH_TRIES {
        if attempt > 0 {
            std::thread::sleep(Duration::from_secs(1 << (attempt - 1)));
        }
        match ssh.capture(remote, None) {
            Ok(out) if !ssh_failed(&out) => return Ok(out),
            Ok(out) => last = said(&out),
            Err(e) => last = e.to_string(),
        }
    }
    Err(format!(
        "{FETCH_TRIES} connections failed, the last: {last}"
    ))
}

/// What a fetch brought back, and what it could not.
#[derive(Debug, Default)]
pub struct Brought {
    /// The exit code the board's shell wrote.
    pub exit: Option<i32>,
    /// The board's refusal to run its cached binary (`KIND PATH DETAIL`).
    pub refused: Option<String>,
    pub json: Option<Vec<u8>>,
    /// The `--raw` CSV was written to its local file.
    pub raw_written: bool,
    /// The table the run printed.
    pub stdout: Vec<u8>,
    /// Why nothing (or not everything) was fetched.
    pub fetch_error: Option<String>,
    /// The scratch directory stays on the board (unreachable, still running, or it sent
    /// more than latscope reads).
    pub kept_on_board: bool,
}

/// The frames of the script, over `tries` new connections at most (a refused content is
/// not tried again).
fn fetch_frames(
    ssh: &Ssh,
    raw: Option<&Path>,
    script: &str,
    tries: u32,
) -> Result<Fetched, String> {
    let mut last = String::new();
    for attempt in 0..tries {
        if attempt > 0 {
            std::thread::sleep(Duration::from_secs(1 << (attempt - 1)));
        }
        match ssh.stream(script, |r| read_frames(r, raw)) {
            Ok(fetched) => return Ok(fetched),
            Err(Failed::Content(e)) => return Err(e),
            Err(Failed::Connection(e)) => last = e,
        }
    }
    Err(format!("{tries} connection(s) failed, the last: {last}"))
}

/// Waits for the board's run to end and fetches its files over one connection, `--raw`
/// into `raw` (the caller removes the directory `dir`, unless the board could not be
/// reached or sent more than latscope reads: then it stays, and `fetch_error` says
/// where). After a second local signal (`aborting`) it tries once and waits less.
pub fn fetch(ssh: &Ssh, raw: Option<&Path>, dir: &str, aborting: bool) -> Brought {
    let mut outcome = Brought::default();
    let q = super::args::shell_quote(dir);
    let (tries, wait) = if aborting {
        (1, END_WAIT_ABORTING_TENTHS)
    } else {
        (FETCH_TRIES, END_WAIT_TENTHS)
    };
    // `head -c`: a file replaced meanwhile cannot shift the frames after it.
    let script = format!(
        "i=0; while [ ! -e {q}/exit ] && [ $i -lt {wait} ]; do sleep 0.1; i=$((i+1)); done; \
         cd {q} && for f in {}; do if [ -f \"$f\" ]; then s=$(wc -c < \"$f\"); echo \"$f $s\"; head -c \"$s\" \"$f\"; fi; done",
        RUN_FILES.join(" ")
    );
    let host = &ssh.host;
    let mut fetched = match fetch_frames(ssh, raw, &script, tries) {
        Ok(fetched) => fetched,
        Err(e) => {
            outcome.fetch_error = Some(format!("the result stays on {host} in {dir}: {e}"));
            outcome.kept_on_board = true;
            return outcome;
        }
    };
    let files = &mut fetched.files;
    if !files.contains_key("exit") {
        // Still running (or killed before it could say how it ended): what it writes
        // later goes there, so the directory stays.
        outcome.fetch_error = Some(format!(
            "the board's run had not ended {} s after its connection did; its result will be in {dir} on {host}",
            wait / 10
        ));
        outcome.kept_on_board = true;
    }
    outcome.exit = files
        .get("exit")
        .and_then(|b| String::from_utf8_lossy(b).trim().parse().ok());
    outcome.refused = files
        .remove("refused")
        .map(|b| String::from_utf8_lossy(&b).trim().to_string());
    outcome.json = files.remove("run.json");
    outcome.raw_written = fetched.raw_written;
    outcome.stdout = files.remove("stdout").unwrap_or_default();
    if outcome.kept_on_board || outcome.refused.is_some() {
        return outcome;
    }
    if outcome.json.is_none() {
        outcome.fetch_error = Some(format!(
            "the board's run wrote no result (exit code {}; its messages above say why)",
            outcome
                .exit
                .map_or("unknown".to_string(), |c| c.to_string())
        ));
    } else if raw.is_some() && !outcome.raw_written {
        outcome.fetch_error = Some("the board's run wrote no --raw file".to_string());
    }
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(bytes: &[u8]) -> Result<Fetched, String> {
        read_frames(&mut &bytes[..], None).map_err(|e| match e {
            Failed::Connection(e) => format!("cut: {e}"),
            Failed::Content(e) => e,
        })
    }

    #[test]
    fn fetched_files_are_split_by_their_headers() {
        let f = frames(b"exit 4\n130\nrun.json    2\n{}raw.csv 3\nx,ystdout 0\n").unwrap();
        assert_eq!(f.files["exit"], b"130\n");
        assert_eq!(f.files["run.json"], b"{}");
        assert_eq!(f.files["stdout"], b"");
        assert!(!f.raw_written && !f.files.contains_key("raw.csv"));
        for (bad, why) in [
            (&b"run.json 10\n{}"[..], "2 of 10 bytes"),
            (b"run.json\n{}", "not a file header"),
            (b"run.json 2", "cut off"),
            (b"../../etc/passwd 2\nxx", "not a file latscope fetches"),
            (b"stdout 1\nastdout 1\nb", "sent twice"),
        ] {
            let e = frames(bad).unwrap_err();
            assert!(e.contains(why), "{e}");
        }
    }

    /// Issue 34, item 5: a frame past its limit is refused from its header, before any
    /// of it is read; `--raw` is streamed to its file whatever its size.
    #[test]
    fn a_frame_past_its_limit_is_refused_unread() {
        let big = crate::result::MAX_INPUT_FILE_BYTES + 1;
        let e = frames(format!("run.json {big}\n").as_bytes()).unwrap_err();
        assert!(e.contains(&format!("run.json is {big} bytes")), "{e}");
        let e = frames(b"exit 70000\n").unwrap_err();
        assert!(e.contains("64 KiB at most"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let raw = dir.path().join("raw.csv");
        let f = read_frames(&mut &b"raw.csv 5\na,b\n\nexit 2\n0\n"[..], Some(&raw)).unwrap();
        assert!(f.raw_written);
        assert_eq!(std::fs::read(&raw).unwrap(), b"a,b\n\n");
        assert_eq!(f.files["exit"], b"0\n");
    }
}
