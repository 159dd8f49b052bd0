//! The security holes of issue 12: a root run must not write through symlinks another user
//! planted in the output directory (item 1), and the reflector must not echo forged or
//! looping datagrams (item 2).

mod common;
use common::*;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};

/// The secret file an attacker wants root to overwrite: root-owned, mode 0600.
fn root_only_file(dir: &Path) -> PathBuf {
    let secret = dir.join("secret");
    std::fs::write(&secret, b"root's own bytes\n").unwrap();
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600)).unwrap();
    secret
}

/// A directory owned by `nobody` (the attacker) with the files an attacker would plant.
fn attacker_directory(base: &Path) -> PathBuf {
    let dir = base.join("out");
    std::fs::create_dir(&dir).unwrap();
    std::os::unix::fs::chown(&dir, Some(65534), Some(65534)).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    dir
}

/// Plants, as `nobody`, a symlink to `target` at `dir/name`.
fn plant(dir: &Path, name: &str, target: &Path) {
    let link = dir.join(name);
    symlink(target, &link).unwrap();
    std::os::unix::fs::lchown(&link, Some(65534), Some(65534)).unwrap();
}

fn next_pid() -> u32 {
    std::fs::read_to_string("/proc/sys/kernel/ns_last_pid")
        .ok()
        .and_then(|s| s.trim().parse::<u32>().ok())
        .unwrap_or(1000)
        + 1
}

fn is_root() -> bool {
    latscope::sys::process::effective_uid() == 0
}

/// Item 1: symlinks at every temporary name the old code used, for the next PIDs, leave
/// the root-only file untouched and the results are written as regular files.
#[test]
fn item_01_planted_temp_symlinks_do_not_redirect_root_writes() {
    if !is_root() {
        eprintln!("SKIPPED: needs root (the attack is on root-owned files)");
        return;
    }
    let base = tempfile::tempdir().unwrap();
    let secret = root_only_file(base.path());
    let dir = attacker_directory(base.path());
    let first = next_pid();
    for pid in first..first + 400 {
        plant(&dir, &format!(".latscope-write-check.{pid}"), &secret);
        plant(&dir, &format!(".run.json.tmp.{pid}"), &secret);
        plant(&dir, &format!(".raw.csv.tmp.{pid}"), &secret);
        plant(&dir, &format!(".run.html.tmp.{pid}"), &secret);
    }
    let planted = std::fs::read_dir(&dir).unwrap().count();
    let (json, raw, html) = (
        dir.join("run.json"),
        dir.join("raw.csv"),
        dir.join("run.html"),
    );
    let cpu = test_cpu().to_string();
    let out = latscope()
        .args([
            "timer",
            "-D",
            "300ms",
            "-a",
            &cpu,
            "--quiet",
            "--export-json",
        ])
        .arg(&json)
        .arg("--raw")
        .arg(&raw)
        .arg("--export-html")
        .arg(&html)
        .output()
        .unwrap();
    let out = assert_success(out);
    drop(out);
    assert_eq!(
        std::fs::read(&secret).unwrap(),
        b"root's own bytes\n",
        "the root-only file was overwritten through a planted symlink"
    );
    assert_eq!(
        std::fs::metadata(&secret).unwrap().permissions().mode() & 0o777,
        0o600
    );
    for result in [&json, &raw, &html] {
        let m = std::fs::symlink_metadata(result).unwrap();
        assert!(m.is_file(), "{} is not a regular file", result.display());
    }
    let run: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert!(run["scenarios"].as_array().is_some_and(|s| !s.is_empty()));
    // Every planted link is still there and nothing else was left behind.
    let left = std::fs::read_dir(&dir).unwrap().count();
    assert_eq!(left, planted + 3, "temporary files were left behind");
}

/// Item 1: a final path that is a symlink (to a root-only file) is refused before
/// measuring, naming the path and the fix; the file it points to is untouched.
#[test]
fn item_01_symlink_final_path_is_refused() {
    let base = tempfile::tempdir().unwrap();
    let secret = root_only_file(base.path());
    let dir = if is_root() {
        attacker_directory(base.path())
    } else {
        base.path().to_path_buf()
    };
    plant_or_link(&dir, "run.json", &secret);
    let json = dir.join("run.json");
    let start = std::time::Instant::now();
    let out = latscope()
        .args(["timer", "-D", "20s", "--export-json"])
        .arg(&json)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    for needle in [
        json.to_str().unwrap(),
        "--export-json",
        "symbolic link",
        "remove the link",
    ] {
        assert!(
            stderr.contains(needle),
            "stderr lacks '{needle}':\n{stderr}"
        );
    }
    assert!(stderr.lines().count() <= 2, "error is not short:\n{stderr}");
    assert!(
        start.elapsed().as_secs() < 10,
        "refused only after measuring"
    );
    assert_eq!(std::fs::read(&secret).unwrap(), b"root's own bytes\n");

    // `report -o` refuses it the same way.
    let out = latscope()
        .args(["report", "-f", "json", "-o"])
        .arg(&json)
        .arg(fixture("run.json"))
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(0), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("symbolic link"), "{stderr}");
    assert_eq!(std::fs::read(&secret).unwrap(), b"root's own bytes\n");
}

fn plant_or_link(dir: &Path, name: &str, target: &Path) {
    if is_root() {
        plant(dir, name, target)
    } else {
        symlink(target, dir.join(name)).unwrap()
    }
}

/// Devices reached through root's own links are still written in place: /dev/null and
/// /dev/stdout (a link to /proc/self/fd/1).
#[test]
fn item_01_devices_are_still_written_in_place() {
    let out = latscope()
        .args(["report", "-f", "json", "-o", "/dev/stdout"])
        .arg(fixture("run.json"))
        .output()
        .unwrap();
    let out = assert_success(out);
    let _: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    let out = latscope()
        .args(["report", "-f", "json", "-o", "/dev/null"])
        .arg(fixture("run.json"))
        .output()
        .unwrap();
    assert_success(out);
    assert!(std::fs::metadata("/dev/null").unwrap().permissions().mode() & 0o666 == 0o666);
}
