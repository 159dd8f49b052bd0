//! latscope on the board: this very binary, cached as `~/.cache/latscope/latscope-VERSION-
//! SHA256` in a directory of the ssh user's own (0700; refused when it is a symbolic link,
//! someone else's or writable by others), run only when its SHA-256 is this binary's, and
//! copied when it is not: under a random name `mktemp` creates (O_EXCL, never through a
//! planted link), checked by SHA-256 there and only then renamed into place. The three
//! newest builds are kept, so a board that sees many builds does not fill up.
//!
//! The run itself checks it again and runs it in one shell (`run_prefix`): inside the
//! cache directory as entered (the shell's working directory, which nobody else may
//! write), the entry's SHA-256, owner and mode are checked, the directory is held open
//! (fd 9) and the binary run as `/proc/self/fd/9/NAME`, so swapping the directory by its
//! path after the check (whoever can write `~/.cache`) changes nothing that runs (issue
//! 34, item 1: the check and the run were two connections apart).

use super::ssh::{said, ssh_failed, Ssh};
use crate::error::UserError;
use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::PathBuf;
use std::sync::OnceLock;

/// How many cached binaries a board keeps.
const KEEP: usize = 3;

/// A board script's refusal: `refused KIND PATH DETAIL` on stdout, and the end.
const REFUSE_ON_STDOUT: &str = "refuse() { echo \"refused $1 $2 $3\"; exit 0; }\n";

/// The board's shell entering its cache directory: `d` is its physical path (no symbolic
/// link anywhere in it), the shell is in it, and it is a directory of the ssh user's own
/// that nobody else may write (made 0700). Else it calls `refuse KIND PATH DETAIL` (the
/// script defines it). Checked on `.` after `cd` and by `pwd -P`, so what was checked is
/// what is used.
const ENTER_CACHE: &str = r#"umask 077
c="${XDG_CACHE_HOME:-$HOME/.cache}"
mkdir -p "$c" 2>/dev/null; c=$(cd -P "$c" 2>/dev/null && pwd -P) || refuse create "${XDG_CACHE_HOME:-$HOME/.cache}" -
d="$c/latscope"
[ -L "$d" ] && refuse symlink "$d" "$(readlink "$d")"
mkdir -m 700 "$d" 2>/dev/null; cd "$d" 2>/dev/null || refuse create "$d" -
[ "$(pwd -P)" = "$d" ] || refuse symlink "$d" "$(pwd -P)"
set -- $(ls -ldn .)
[ "$3" = "$(id -u)" ] || refuse owner "$d" "$3"
case "$1" in d????w*|d???????w*) refuse writable "$d" "$1";; d*) ;; *) refuse create "$d" "$1";; esac
chmod 700 . || refuse create "$d" chmod
"#;

/// The tools the board's scripts need beyond a POSIX shell's usual ones.
const TOOLS: &str = "sha256sum mktemp";

/// latscope in a board's cache: its directory (physical path), file name and SHA-256.
#[derive(Debug, Clone)]
pub struct Cached {
    pub dir: String,
    pub name: String,
    pub sha256: String,
}

impl Cached {
    /// Its path on the board.
    pub fn path(&self) -> String {
        format!("{}/{}", self.dir, self.name)
    }
}

/// The start of the run's shell script (issue 34, item 1): the cache directory entered
/// and checked as the probe does, the binary in it checked (a regular file of the ssh
/// user's own that nobody else may write, with this build's SHA-256) and the directory
/// held open as fd 9; then back to the login directory, with `$latscope` naming the
/// binary through fd 9. On a refusal it writes `refused KIND PATH DETAIL` to `refused`
/// and exit code 6 to `exit` in the scratch directory `dir` (quoted) and ends.
pub fn run_prefix(cached: &Cached, dir: &str) -> String {
    let name = &cached.name;
    let sum = &cached.sha256;
    format!(
        "o=$PWD; u=$(umask)\n\
         refuse() {{ echo \"$1 $2 $3\" > {dir}/refused; echo 6 > {dir}/exit; exit 0; }}\n\
         {ENTER_CACHE}n={name}\n\
         {{ [ -f \"$n\" ] && [ ! -L \"$n\" ]; }} || refuse changed \"$d/$n\" missing\n\
         set -- $(ls -ln \"$n\")\n\
         [ \"$3\" = \"$(id -u)\" ] || refuse entry-owner \"$d/$n\" \"$3\"\n\
         case \"$1\" in -????w*|-???????w*) refuse entry-writable \"$d/$n\" \"$1\";; esac\n\
         h=$(sha256sum < \"$n\") || refuse changed \"$d/$n\" unreadable\n\
         [ \"${{h%% *}}\" = {sum} ] || refuse changed \"$d/$n\" \"${{h%% *}}\"\n\
         exec 9<. || refuse create \"$d\" open\n\
         cd \"$o\" 2>/dev/null || cd /; umask \"$u\"\n\
         latscope=/proc/self/fd/9/$n\n"
    )
}

/// This binary as the board gets it.
#[derive(Debug, Clone)]
struct Local {
    path: PathBuf,
    size: u64,
    sha256: String,
}

/// This binary's path, size and SHA-256, read once per run (several boards share it).
fn local_binary() -> Result<&'static Local, String> {
    static LOCAL: OnceLock<Result<Local, String>> = OnceLock::new();
    LOCAL
        .get_or_init(|| {
            let path =
                std::env::current_exe().map_err(|e| format!("this latscope's own path: {e}"))?;
            let mut file =
                std::fs::File::open(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            let mut hasher = Sha256::new();
            let mut buf = vec![0u8; 1 << 20];
            let mut size = 0u64;
            loop {
                let n = file
                    .read(&mut buf)
                    .map_err(|e| format!("{}: {e}", path.display()))?;
                if n == 0 {
                    break;
                }
                hasher.update(&buf[..n]);
                size += n as u64;
            }
            let sha256 = hasher
                .finalize()
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            Ok(Local { path, size, sha256 })
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// The cache file name of a build: its version (with the commit) and its SHA-256.
fn cached_name(sha256: &str) -> String {
    let version = super::args::file_safe(crate::build_info::VERSION);
    format!("latscope-{version}-{sha256}")
}

/// What the board's cache holds under this build's name.
#[derive(Debug, PartialEq)]
enum Entry {
    Missing,
    /// A regular executable file with this SHA-256.
    Sum(String),
    /// A symbolic link (never run through; replaced).
    Symlink,
    /// A regular file that is not executable (replaced).
    NotExecutable,
    /// A directory or a special file (refused: not removed for the user).
    Other,
}

/// What the probe found on the board.
#[derive(Debug, PartialEq)]
struct Board {
    arch: String,
    /// The cache directory's physical path.
    dir: String,
    entry: Entry,
}

/// The probe's script: the architecture, the tools, the cache directory entered and what
/// it holds under `name`. Changes nothing but creating the directory (0700) and making an
/// existing one of the user's own 0700.
fn probe_script(name: &str) -> String {
    format!(
        "echo \"arch $(uname -m)\"\n\
         for t in {TOOLS}; do command -v $t >/dev/null 2>&1 || {{ echo \"missing $t\"; exit 0; }}; done\n\
         {REFUSE_ON_STDOUT}{ENTER_CACHE}echo \"dir $d\"\nn={name}\n\
         if [ -L \"$n\" ]; then echo 'entry symlink'\n\
         elif [ -f \"$n\" ] && [ -x \"$n\" ]; then h=$(sha256sum < \"$n\") && echo \"entry sum ${{h%% *}}\"\n\
         elif [ -f \"$n\" ]; then echo 'entry not-executable'\n\
         elif [ -e \"$n\" ]; then echo 'entry other'\n\
         else echo 'entry missing'; fi\n"
    )
}

/// The copy's script (the binary on stdin): a new file by `mktemp` in the cache directory,
/// written, its SHA-256 compared with `sha256`, made executable and renamed over `name`
/// (a link there removed first: `mv` would follow one to a directory). Prints `installed`,
/// or `copied SUM` when the copy's SHA-256 is another (the copy removed). Then keeps the
/// KEEP newest builds and removes copies left by runs cut an hour ago or more.
fn install_script(name: &str, sha256: &str) -> String {
    format!(
        "{REFUSE_ON_STDOUT}{ENTER_CACHE}n={name}\n\
         t=$(mktemp .incoming-XXXXXXXXXX) || refuse create \"$d\" mktemp\n\
         if cat > \"$t\" && h=$(sha256sum < \"$t\") && [ \"${{h%% *}}\" = {sha256} ]; then :; \
         else rm -f \"$t\"; echo \"copied ${{h%% *}}\"; exit 0; fi\n\
         chmod 755 \"$t\" && {{ [ ! -L \"$n\" ] || rm -f \"$n\"; }} && mv -f \"$t\" \"$n\" || {{ rm -f \"$t\"; exit 1; }}\n\
         echo installed\n\
         ls -t latscope-* | tail -n +{} | xargs -r rm -f\n\
         find . -name '.incoming-*' -mmin +60 -exec rm -f {{}} \\; 2>/dev/null\n",
        KEEP + 1
    )
}

/// The `key value` lines of a board script's output.
fn lines_of(stdout: &[u8]) -> Vec<(String, String)> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|l| match l.trim().split_once(' ') {
            Some((k, v)) => (k.to_string(), v.to_string()),
            None => (l.trim().to_string(), String::new()),
        })
        .collect()
}

/// The probe's output read back: what the board holds, or the board's refusal.
fn read_probe(host: &str, stdout: &[u8]) -> Result<Board, UserError> {
    let mut board = Board {
        arch: String::new(),
        dir: String::new(),
        entry: Entry::Missing,
    };
    let mut seen_entry = false;
    for (key, value) in lines_of(stdout) {
        match key.as_str() {
            "arch" => board.arch = value,
            "dir" => board.dir = value,
            "missing" => return Err(missing_tool(host, &value)),
            "refused" => return Err(refusal(host, &value)),
            "entry" => {
                seen_entry = true;
                board.entry = match value.split_once(' ') {
                    Some(("sum", sum)) => Entry::Sum(sum.to_string()),
                    _ => match value.as_str() {
                        "symlink" => Entry::Symlink,
                        "not-executable" => Entry::NotExecutable,
                        "missing" => Entry::Missing,
                        _ => Entry::Other,
                    },
                }
            }
            _ => {}
        }
    }
    if !seen_entry || !board.dir.starts_with('/') || board.dir.chars().any(char::is_control) {
        return Err(unreachable(
            host,
            format!(
                "the board's shell did not answer latscope's probe (it said \"{}\")",
                crate::error::clip(String::from_utf8_lossy(stdout).trim())
            ),
            "give the ssh user a POSIX login shell (sh, bash, dash, ash)",
        ));
    }
    Ok(board)
}

fn unreachable(host: &str, reason: String, fix: &str) -> UserError {
    UserError::Unreachable {
        host: host.to_string(),
        reason,
        fix: fix.to_string(),
    }
}

/// A tool the board lacks (fail closed: no binary runs unchecked).
fn missing_tool(host: &str, tool: &str) -> UserError {
    unreachable(
        host,
        format!("the board has no `{tool}` on the ssh user's PATH; latscope checks the binary it runs there by SHA-256 and creates its copy with `mktemp`"),
        &format!("install it on the board (coreutils, or busybox with its `{tool}` applet linked on PATH)"),
    )
}

/// The board's `refused KIND PATH DETAIL` as an error naming the path, what is wrong and
/// the fix (the words are the board's: quoted with control characters escaped).
pub fn refusal(host: &str, value: &str) -> UserError {
    let value = crate::error::clip(value.trim());
    let mut words = value.splitn(3, ' ');
    let kind = words.next().unwrap_or("");
    let path = words.next().unwrap_or("?");
    let detail = words.next().unwrap_or("");
    let (what, fix) = match kind {
        "symlink" => (
            format!("the cache directory {path} is a symbolic link (to {detail}); latscope runs only a binary in a directory of the ssh user's own"),
            format!("remove the link on the board (`rm {path}`): latscope creates the directory (mode 0700) on its next run"),
        ),
        "owner" => (
            format!("the cache directory {path} belongs to uid {detail}, not to the ssh user"),
            format!("remove it on the board (`rm -r {path}`, as its owner or root) so latscope creates its own, or ssh as its owner"),
        ),
        "writable" => (
            format!("the cache directory {path} is writable by others than its owner ({detail}): anyone of them could have replaced what it holds"),
            format!("remove it on the board (`rm -r {path}`): latscope creates it again with mode 0700"),
        ),
        "changed" => (
            format!("{path} is not the latscope that was checked and copied (its SHA-256 is now {detail}): something changed it between the check and the run, which was not started"),
            "run again; if it happens again, find who writes the board's cache directory (or its parent, ~/.cache)".to_string(),
        ),
        "entry-owner" => (
            format!("{path} belongs to uid {detail}, not to the ssh user; it was not run"),
            format!("remove it on the board (`rm {path}`): latscope copies itself there again"),
        ),
        "entry-writable" => (
            format!("{path} is writable by others than its owner ({detail}); it was not run"),
            format!("remove it on the board (`rm {path}`): latscope copies itself there again"),
        ),
        _ => (
            format!("the cache directory {path} cannot be created or entered ({detail})"),
            format!("check that the ssh user's home is writable, or set XDG_CACHE_HOME there; {path} must be a directory"),
        ),
    };
    unreachable(host, what, &fix)
}

/// latscope in the board's cache, copied there first when the cache does not hold this
/// build (by SHA-256). Says on stderr when it copies, and why when it replaces an entry.
/// The run checks it again where it runs it (`run_prefix`).
pub fn ensure_binary(ssh: &Ssh) -> Result<Cached, UserError> {
    let host = ssh.host.as_str();
    let local = local_binary().map_err(|e| unreachable(host, e, "run latscope from a file"))?;
    let name = cached_name(&local.sha256);
    let out = ssh.capture(&probe_script(&name), None).map_err(|e| {
        unreachable(
            host,
            format!("{}: {e}", ssh.program),
            "install openssh-client or set LATSCOPE_SSH",
        )
    })?;
    if ssh_failed(&out) {
        return Err(unreachable(
            host,
            said(&out),
            &format!(
                "check that `ssh {host} true` works without a password prompt (keys, ~/.ssh/config), or pass ssh options with --ssh-option"
            ),
        ));
    }
    let board = read_probe(host, &out.stdout)?;
    let cached = Cached {
        dir: board.dir.clone(),
        name: name.clone(),
        sha256: local.sha256.clone(),
    };
    let path = cached.path();
    let replacing = match &board.entry {
        Entry::Sum(sum) if *sum == local.sha256 => return Ok(cached),
        Entry::Sum(sum) => Some(format!(
            "its SHA-256 is {}, not this binary's",
            crate::error::clip(sum)
        )),
        Entry::Symlink => Some("it is a symbolic link".to_string()),
        Entry::NotExecutable => Some("it is not executable".to_string()),
        Entry::Missing => None,
        Entry::Other => {
            return Err(unreachable(
                host,
                format!("{path} is not a regular file"),
                &format!("remove it on the board (`rm -r {path}`)"),
            ))
        }
    };
    if board.arch != std::env::consts::ARCH {
        return Err(unreachable(
            host,
            format!(
                "the board is {}, this latscope is built for {}",
                crate::error::clip(&board.arch),
                std::env::consts::ARCH
            ),
            "run a latscope built for the board's architecture (README: \"aarch64 boards\") with --host",
        ));
    }
    if let Some(why) = replacing {
        eprintln!("latscope: {host}:{path} is not run ({why}); replacing it");
    }
    install(ssh, local, &name, &path)?;
    Ok(cached)
}

/// Copies this binary to the board's cache as `name` (at `path`).
fn install(ssh: &Ssh, local: &Local, name: &str, path: &str) -> Result<(), UserError> {
    let host = ssh.host.as_str();
    eprintln!(
        "latscope: copying latscope ({:.1} MB) to {host}:{path}",
        local.size as f64 / 1e6
    );
    let out = ssh
        .capture(&install_script(name, &local.sha256), Some(&local.path))
        .map_err(|e| {
            unreachable(
                host,
                format!("{}: {e}", ssh.program),
                "install openssh-client",
            )
        })?;
    let lines = lines_of(&out.stdout);
    if let Some((_, value)) = lines.iter().find(|(k, _)| k == "refused") {
        return Err(refusal(host, value));
    }
    if let Some((_, sum)) = lines.iter().find(|(k, _)| k == "copied") {
        return Err(unreachable(
            host,
            format!(
                "the copy arrived with SHA-256 \"{}\", this binary's is {} (the transfer was cut or altered); it was removed",
                crate::error::clip(sum),
                local.sha256
            ),
            "run again; if it happens again, check the board's disk space and the connection",
        ));
    }
    if ssh_failed(&out) || !lines.iter().any(|(k, _)| k == "installed") {
        return Err(unreachable(
            host,
            format!("copying latscope to {path}: {}", said(&out)),
            "make room in the board's home directory, or check it is writable",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::unix::fs::PermissionsExt;
    use std::path::Path;
    use std::process::{Command, Stdio};

    #[test]
    fn the_cache_name_has_the_version_and_the_hash() {
        let name = cached_name(&"ab".repeat(32));
        assert!(name.starts_with("latscope-0."), "{name}");
        assert!(name.ends_with(&format!("-{}", "ab".repeat(32))), "{name}");
        assert!(
            name.chars()
                .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c)),
            "{name}"
        );
    }

    /// A board's shell: `shell -c script` with the cache under `cache` and only `path`'s
    /// tools, `input` on stdin.
    fn board(shell: &str, path: &str, cache: &Path, script: &str, input: &[u8]) -> String {
        let mut child = Command::new(shell)
            .arg("-c")
            .arg(script)
            .env_clear()
            .env("PATH", path)
            .env("HOME", cache)
            .env("XDG_CACHE_HOME", cache)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(input).unwrap();
        let out = child.wait_with_output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The probe and the copy under `shell` with `path`'s tools: missing, copied, found by
    /// its SHA-256, a same-size file of another SHA-256 found as such, a link as a link.
    fn scripts_work_under(shell: &str, path: &str) {
        let home = tempfile::tempdir().unwrap();
        let bytes = b"#!/bin/sh\necho not latscope\n".to_vec();
        let sha256: String = Sha256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let name = cached_name(&sha256);
        let dir = home.path().canonicalize().unwrap().join("latscope");
        let probe = |what: &str| {
            let out = board(shell, path, home.path(), &probe_script(&name), b"");
            let board = read_probe("b", out.as_bytes()).unwrap();
            assert_eq!(board.dir, dir.to_str().unwrap(), "{what}: {out}");
            board.entry
        };
        assert_eq!(probe("empty"), Entry::Missing);
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700, "{mode:o}");
        let out = board(
            shell,
            path,
            home.path(),
            &install_script(&name, &sha256),
            &bytes,
        );
        assert!(out.contains("installed"), "{out}");
        assert_eq!(probe("copied"), Entry::Sum(sha256.clone()));
        assert_eq!(std::fs::read(dir.join(&name)).unwrap(), bytes);
        let other = b"#!/bin/sh\necho not latscope?\n".to_vec();
        let cut = board(
            shell,
            path,
            home.path(),
            &install_script(&name, &sha256),
            &other,
        );
        assert!(cut.contains("copied "), "{cut}");
        assert_eq!(
            std::fs::read(dir.join(&name)).unwrap(),
            bytes,
            "left as it was"
        );
        std::fs::write(dir.join(&name), &other).unwrap();
        assert!(matches!(probe("another"), Entry::Sum(s) if s != sha256));
        std::fs::remove_file(dir.join(&name)).unwrap();
        std::os::unix::fs::symlink("/bin/true", dir.join(&name)).unwrap();
        assert_eq!(probe("link"), Entry::Symlink);
        let names: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().collect();
        assert_eq!(names.len(), 1, "no copy left behind: {names:?}");
        run_prefix_works_under(shell, path, home.path(), &bytes);
    }

    /// A new executable file (O_EXCL: never through a link left at its name).
    fn new_file(path: &Path, bytes: &[u8]) {
        use std::os::unix::fs::OpenOptionsExt;
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o755)
            .open(path)
            .unwrap();
        f.write_all(bytes).unwrap();
    }

    /// The run's prefix under `shell`: the checked binary runs (through fd 9) in the login
    /// directory; a changed one, or a cache directory swapped for another user's, is
    /// refused into the scratch directory's `refused` and `exit`, and nothing runs.
    fn run_prefix_works_under(shell: &str, path: &str, home: &Path, good: &[u8]) {
        let dir = home.canonicalize().unwrap().join("latscope");
        let sha256: String = Sha256::digest(good)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let cached = Cached {
            dir: dir.to_string_lossy().into_owned(),
            name: cached_name(&sha256),
            sha256,
        };
        // A new file (the name held a link to /bin/true: never written through).
        let entry = dir.join(&cached.name);
        let _ = std::fs::remove_file(&entry);
        new_file(&entry, good);
        let scratch = tempfile::tempdir().unwrap();
        let q = scratch.path().to_string_lossy().into_owned();
        let run = format!(
            "cd /; {}\"$latscope\"; echo \"in $PWD\"",
            run_prefix(&cached, &q)
        );
        let out = board(shell, path, home, &run, b"");
        assert_eq!(out, "not latscope\nin /\n", "{shell}");
        std::fs::remove_file(&entry).unwrap();
        new_file(&entry, b"#!/bin/sh\necho impostor\n");
        let out = board(shell, path, home, &run, b"");
        assert_eq!(out, "", "{shell}: it ran");
        let refused = std::fs::read_to_string(scratch.path().join("refused")).unwrap();
        assert!(refused.starts_with("changed "), "{refused}");
        assert_eq!(
            std::fs::read_to_string(scratch.path().join("exit")).unwrap(),
            "6\n"
        );
    }

    #[test]
    fn the_board_scripts_work_under_sh_with_coreutils() {
        scripts_work_under("sh", "/usr/bin:/bin");
    }

    #[test]
    fn the_board_scripts_work_under_busybox_alone() {
        let busybox = ["/usr/bin/busybox", "/bin/busybox"]
            .into_iter()
            .find(|p| Path::new(p).exists())
            .expect("busybox (apt-get install busybox-static; .ci/run installs it)");
        let bin = tempfile::tempdir().unwrap();
        let list = Command::new(busybox).arg("--list").output().unwrap();
        for applet in String::from_utf8_lossy(&list.stdout).lines() {
            std::os::unix::fs::symlink(busybox, bin.path().join(applet)).unwrap();
        }
        scripts_work_under(
            bin.path().join("sh").to_str().unwrap(),
            bin.path().to_str().unwrap(),
        );
    }

    #[test]
    fn a_board_without_sha256sum_is_refused_naming_it() {
        let bin = tempfile::tempdir().unwrap();
        for tool in ["uname", "mktemp"] {
            std::os::unix::fs::symlink(format!("/usr/bin/{tool}"), bin.path().join(tool)).unwrap();
        }
        let home = tempfile::tempdir().unwrap();
        let out = board(
            "/bin/sh",
            bin.path().to_str().unwrap(),
            home.path(),
            &probe_script("x"),
            b"",
        );
        let e = read_probe("b", out.as_bytes()).unwrap_err().to_string();
        assert!(e.contains("no `sha256sum`") && e.contains("install"), "{e}");
    }

    #[test]
    fn a_cache_directory_that_is_a_link_is_refused() {
        let home = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), home.path().join("latscope")).unwrap();
        let out = board("sh", "/usr/bin:/bin", home.path(), &probe_script("x"), b"");
        let e = read_probe("b", out.as_bytes()).unwrap_err().to_string();
        assert!(e.contains("is a symbolic link") && e.contains("rm "), "{e}");
    }
}
