//! Build script: names the git commit a binary was built from, so `latscope --version`
//! tells two builds apart (src/build_info.rs). The commit comes from, in order: the
//! `LATSCOPE_GIT_COMMIT` environment variable (for distribution builds from a tarball), the
//! `.cargo_vcs_info.json` that `cargo package` puts in a .crate, `git` in this checkout
//! (with `-dirty` when tracked files differ from it), else `unknown`. Kept cheap: three
//! quick git calls, rerun only when HEAD, the branch, the index or the sources change.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=LATSCOPE_GIT_COMMIT");

    let from_git = commit_from_git(&manifest_dir);
    let commit = std::env::var("LATSCOPE_GIT_COMMIT")
        .ok()
        .map(|c| c.trim().to_owned())
        .filter(|c| !c.is_empty() && c.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '-'))
        .or_else(|| commit_from_cargo_vcs_info(&manifest_dir))
        .or_else(|| from_git.as_ref().map(|git| git.commit.clone()))
        .unwrap_or_else(|| "unknown".to_owned());
    // The man pages' date: the commit's, so the same commit always renders the same pages.
    let date = from_git.map(|git| git.date).unwrap_or_default();

    let version = std::env::var("CARGO_PKG_VERSION").unwrap_or_default();
    println!("cargo:rustc-env=LATSCOPE_GIT_COMMIT={commit}");
    println!("cargo:rustc-env=LATSCOPE_COMMIT_DATE={date}");
    println!("cargo:rustc-env=LATSCOPE_VERSION={version} (commit {commit})");
}

/// What git says about the checkout being built.
struct GitState {
    /// Short hash, `-dirty` appended when tracked files differ from it.
    commit: String,
    /// The commit's date, YYYY-MM-DD.
    date: String,
}

/// A packaged crate records its commit: `{"git": {"sha1": "…", "dirty": true}, …}`. Read
/// with plain string search so the build script needs no dependency.
fn commit_from_cargo_vcs_info(manifest_dir: &Path) -> Option<String> {
    let path = manifest_dir.join(".cargo_vcs_info.json");
    // Only an existing file is watched: cargo reruns a script whose watched file is missing.
    let text = std::fs::read_to_string(&path).ok()?;
    println!("cargo:rerun-if-changed={}", path.display());
    let after_key = &text[text.find("\"sha1\"")? + "\"sha1\"".len()..];
    let value = after_key.split('"').nth(1)?;
    if value.len() < 7 || !value.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let dirty = text.contains("\"dirty\": true") || text.contains("\"dirty\":true");
    Some(format!(
        "{}{}",
        &value[..7],
        if dirty { "-dirty" } else { "" }
    ))
}

/// `git log -1` in the source tree for the short hash and date, `-dirty` when `git status`
/// lists a changed tracked file. Registers the files whose change means another commit or
/// state.
fn commit_from_git(manifest_dir: &Path) -> Option<GitState> {
    let paths = git(
        manifest_dir,
        &[
            "rev-parse",
            "--git-dir",
            "--git-common-dir",
            "--symbolic-full-name",
            "HEAD",
        ],
    )?;
    let mut lines = paths.lines();
    let git_dir = manifest_dir.join(lines.next()?);
    let common_dir = manifest_dir.join(lines.next()?);
    // "refs/heads/main" on a branch, "HEAD" when detached.
    let head_ref = lines.next().unwrap_or("HEAD");
    let watched = [
        git_dir.join("HEAD"),
        git_dir.join("index"),
        common_dir.join(head_ref),
        common_dir.join("packed-refs"),
        manifest_dir.join("src"),
        manifest_dir.join("Cargo.toml"),
    ];
    for path in watched.iter().filter(|p| p.exists()) {
        println!("cargo:rerun-if-changed={}", path.display());
    }
    let described = git(manifest_dir, &["log", "-1", "--format=%h %cs", "HEAD"])?;
    let (hash, date) = described.trim().split_once(' ')?;
    if hash.is_empty() || !hash.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let changes = git(
        manifest_dir,
        &["status", "--porcelain", "--untracked-files=no"],
    )
    .unwrap_or_default();
    let dirty = if changes.trim().is_empty() {
        ""
    } else {
        "-dirty"
    };
    Some(GitState {
        commit: format!("{hash}{dirty}"),
        date: date.to_owned(),
    })
}

/// Runs git in `dir`; None when git is missing or fails (not a checkout, not trusted).
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let output = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    String::from_utf8(output.stdout).ok()
}
