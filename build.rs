//! Build script: names the git commit a binary was built from, so `latscope --version`
//! tells two builds apart (src/build_info.rs). The commit comes from, in order: the
//! `LATSCOPE_GIT_COMMIT` environment variable (for distribution builds from a tarball), the
//! `.cargo_vcs_info.json` that `cargo package` puts in a .crate, `git` in this checkout
//! (with `-dirty` when tracked files differ from it), else `unknown`. Kept cheap: three
//! quick git calls, rerun only when HEAD, the branch, the index or the sources change.
//!
//! It also links the `latscope` binary lean (bench/README.md, "Peak memory"): the functions a
//! measuring run executes first in the program text (contrib/lean/hot-functions.txt, LLD's
//! `--symbol-ordering-file`) and relative relocations packed (`-z pack-relative-relocs`), so a
//! run keeps far less of the binary resident. Only where rustc links with its own LLD
//! (x86-64 Linux glibc, Rust >= 1.90) and the user chose no other linker; elsewhere the
//! binary links as before. A name of the list that the build lacks is skipped without a
//! warning, so a stale list never fails a build (contrib/lean-build.sh --check says how much
//! of it still matches).

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
    link_lean(&manifest_dir);
}

/// The committed function order, unless `LATSCOPE_SYMBOL_ORDER` names another file (the
/// static build of contrib/lean-build.sh) or is empty (off).
const ORDER_FILE: &str = "contrib/lean/hot-functions.txt";

/// Adds the lean layout's link arguments for the binary when the linker is rustc's LLD.
fn link_lean(manifest_dir: &Path) {
    println!("cargo:rerun-if-env-changed=LATSCOPE_SYMBOL_ORDER");
    if !links_with_rust_lld() {
        return;
    }
    let order = match std::env::var_os("LATSCOPE_SYMBOL_ORDER") {
        Some(path) if path.is_empty() => None,
        Some(path) => Some(PathBuf::from(path)),
        None => Some(manifest_dir.join(ORDER_FILE)),
    };
    // Its folder is watched, so a list written after a build (contrib/lean-build.sh) counts;
    // a missing one (a packaged crate without contrib/) links in the default order.
    if let Some(folder) = order.as_ref().and_then(|path| path.parent()) {
        if folder.is_dir() {
            println!("cargo:rerun-if-changed={}", folder.display());
        }
    }
    if let Some(order) = order.filter(|path| path.is_file()) {
        // -Xlinker pairs: a path is never split at commas, as -Wl,... would split it.
        for arg in [
            "--no-warn-symbol-ordering".to_owned(),
            format!("--symbol-ordering-file={}", order.display()),
        ] {
            println!("cargo:rustc-link-arg-bins=-Xlinker");
            println!("cargo:rustc-link-arg-bins={arg}");
        }
    }
    // DT_RELR needs glibc 2.36 where the binary runs; a binary linked against this
    // machine's glibc runs on it or a newer one. Not for static builds (glibc relocates a
    // static-pie itself; left as it was).
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    if !flags.contains("crt-static") && glibc_version().is_some_and(|version| version >= (2, 36)) {
        for arg in ["-z", "pack-relative-relocs"] {
            println!("cargo:rustc-link-arg-bins=-Xlinker");
            println!("cargo:rustc-link-arg-bins={arg}");
        }
    }
}

/// True where rustc links with its self-contained LLD: x86-64 Linux glibc (built here, not
/// cross-compiled), Rust >= 1.90 whose sysroot has it, and no linker choice in RUSTFLAGS.
fn links_with_rust_lld() -> bool {
    let target = std::env::var("TARGET").unwrap_or_default();
    let host = std::env::var("HOST").unwrap_or_default();
    if target != "x86_64-unknown-linux-gnu" || host != target {
        return false;
    }
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    let chosen = [
        "linker-features",
        "link-self-contained",
        "linker-flavor",
        "fuse-ld",
    ];
    if chosen.iter().any(|flag| flags.contains(flag)) {
        return false;
    }
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let run = |args: &[&str]| -> Option<String> {
        let output = Command::new(&rustc).args(args).output().ok()?;
        output
            .status
            .success()
            .then(|| String::from_utf8_lossy(&output.stdout).into_owned())
    };
    let minor = run(&["-vV"]).and_then(|text| {
        let release = text
            .lines()
            .find_map(|line| line.strip_prefix("release: "))?;
        let mut parts = release.split('.');
        let major: u32 = parts.next()?.parse().ok()?;
        let minor: u32 = parts.next()?.parse().ok()?;
        (major == 1).then_some(minor)
    });
    let lld = run(&["--print", "sysroot"]).map(|sysroot| {
        Path::new(sysroot.trim()).join("lib/rustlib/x86_64-unknown-linux-gnu/bin/gcc-ld/ld.lld")
    });
    minor.is_some_and(|minor| minor >= 90) && lld.is_some_and(|path| path.exists())
}

/// This machine's glibc version from `getconf GNU_LIBC_VERSION` ("glibc 2.36").
fn glibc_version() -> Option<(u32, u32)> {
    let output = Command::new("getconf")
        .arg("GNU_LIBC_VERSION")
        .output()
        .ok()?;
    let text = String::from_utf8(output.stdout).ok()?;
    let (major, minor) = text.trim().strip_prefix("glibc ")?.split_once('.')?;
    Some((major.parse().ok()?, minor.split('.').next()?.parse().ok()?))
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
    // --no-optional-locks: `git status` would otherwise refresh and rewrite the index,
    // which this script watches, so the next cargo build (the .deb's, the lean check's)
    // would run it again and recompile latscope for nothing.
    let output = Command::new("git")
        .arg("--no-optional-locks")
        .args(args)
        .current_dir(dir)
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    String::from_utf8(output.stdout).ok()
}
