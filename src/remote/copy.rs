//! latscope on the board: this very binary, cached as `~/.cache/latscope/latscope-VERSION-
//! SIZE` and copied only when that name is missing (a new build has a new name); the
//! three newest are kept, older ones removed, so a board that sees many builds does not
//! fill up.

use super::ssh::{said, ssh_failed, Ssh};
use crate::error::UserError;

/// How many cached binaries a board keeps.
const KEEP: usize = 3;

/// The cache file name of this build: its version (with the commit) and its size.
fn cached_name(size: u64) -> String {
    let version = super::args::file_safe(crate::build_info::VERSION);
    format!("latscope-{version}-{size}")
}

/// The path of latscope on the board, copied there first when missing. Says on stderr when
/// it copies.
pub fn ensure_binary(ssh: &Ssh) -> Result<String, UserError> {
    let unreachable = |reason: String, fix: &str| UserError::Unreachable {
        host: ssh.host.clone(),
        reason,
        fix: fix.into(),
    };
    let exe = std::env::current_exe().map_err(|e| {
        unreachable(
            format!("this latscope's own path: {e}"),
            "run it from a file",
        )
    })?;
    let size = std::fs::metadata(&exe)
        .map_err(|e| unreachable(format!("{}: {e}", exe.display()), "run it from a file"))?
        .len();
    let name = cached_name(size);
    let probe = format!(
        "uname -m; d=\"$HOME/.cache/latscope\"; echo \"$d\"; if [ -x \"$d/{name}\" ]; then echo present; fi"
    );
    let out = ssh.capture(&probe, None).map_err(|e| {
        unreachable(
            format!("{}: {e}", ssh.program),
            "install openssh-client or set LATSCOPE_SSH",
        )
    })?;
    if ssh_failed(&out) || !out.status.success() {
        return Err(unreachable(
            said(&out),
            &format!(
                "check that `ssh {} true` works without a password prompt (keys, ~/.ssh/config), or pass ssh options with --ssh-option",
                ssh.host
            ),
        ));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    let arch = lines.next().unwrap_or("").trim().to_string();
    let dir = lines.next().unwrap_or("").trim().to_string();
    let present = lines.any(|l| l.trim() == "present");
    let path = format!("{dir}/{name}");
    if present {
        return Ok(path);
    }
    if arch != std::env::consts::ARCH {
        return Err(unreachable(
            format!(
                "the board is {arch}, this latscope is built for {}",
                std::env::consts::ARCH
            ),
            "run a latscope built for the board's architecture (README: \"aarch64 boards\") with --host",
        ));
    }
    eprintln!(
        "latscope: copying latscope ({:.1} MB) to {}:{path}",
        size as f64 / 1e6,
        ssh.host
    );
    let install = format!(
        "mkdir -p \"{dir}\" && t=\"{dir}/.{name}.$$\" && cat > \"$t\" && chmod 755 \"$t\" && mv \"$t\" \"{path}\" \
         && cd \"{dir}\" && ls -t latscope-* | tail -n +{} | xargs -r rm -f",
        KEEP + 1
    );
    let out = ssh
        .capture(&install, Some(&exe))
        .map_err(|e| unreachable(format!("{}: {e}", ssh.program), "install openssh-client"))?;
    if !out.status.success() {
        return Err(unreachable(
            format!("copying latscope to {path}: {}", said(&out)),
            "make room in the board's home directory, or check it is writable",
        ));
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_cache_name_has_the_version_and_the_size() {
        let name = super::cached_name(123);
        assert!(name.starts_with("latscope-0."), "{name}");
        assert!(name.ends_with("-123"), "{name}");
        assert!(
            name.chars()
                .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c)),
            "{name}"
        );
    }
}
