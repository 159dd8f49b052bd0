//! The board's binary cache and scratch directory under attack (issue 22, item 1 and 8),
//! each reproducer of the audit against a real sshd on 127.0.0.1 (tests/it/remote.rs):
//! links planted at the temporary names the old copy used and at the new ones once seen, a
//! cache directory that is a link, someone else's or writable by others, a same-name
//! same-size file of another SHA-256, a cache entry that is a link; and the scratch
//! directory gone after a failed board command, a dropped connection and Ctrl-C (during
//! the copy: nothing started there; during the run: tests/it/remote.rs).

use crate::common::*;
use crate::remote::{remote_leftovers, run_remote, text, unavailable, LocalRun, Sshd};
use std::collections::BTreeSet;
use std::os::unix::fs::{symlink, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// What the victim file of planted links holds, and its mode.
const VICTIM: &[u8] = b"precious: not latscope\n";
const VICTIM_MODE: u32 = 0o644;

/// The SHA-256 of a file, by the system's sha256sum (not latscope's code).
fn sha256(path: &Path) -> String {
    let out = Command::new("sha256sum").arg(path).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    text(&out.stdout)
        .split_whitespace()
        .next()
        .unwrap()
        .to_string()
}

/// latscope's cache directory on the board `sshd` stands for.
fn cache_dir(sshd: &Sshd) -> PathBuf {
    sshd.cache().join("latscope")
}

/// The cache entry this build runs as.
fn entry(sshd: &Sshd) -> PathBuf {
    let version = latscope::remote::args::file_safe(latscope::build_info::VERSION);
    cache_dir(sshd).join(format!("latscope-{version}-{}", sha256(&latscope_path())))
}

/// The cache directory made as latscope makes it (0700), before latscope ever ran.
fn make_cache_dir(sshd: &Sshd) -> PathBuf {
    let dir = cache_dir(sshd);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    dir
}

/// A short timer run on the board (it holds the latency lock while it measures).
fn a_short_run(sshd: &Sshd) -> Output {
    let cpu = test_cpu().to_string();
    let _lock = latency_lock();
    run_remote(
        sshd,
        &["timer", "-l", "100", "-a", &cpu, "--host", "root@127.0.0.1"],
    )
}

/// A file other links point at, with its content and mode.
fn victim(sshd: &Sshd) -> PathBuf {
    let path = sshd.tmp().join("../victim");
    std::fs::write(&path, VICTIM).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(VICTIM_MODE)).unwrap();
    path
}

fn assert_victim_untouched(path: &Path) {
    assert_eq!(
        std::fs::read(path).unwrap(),
        VICTIM,
        "{} was written",
        path.display()
    );
    let mode = std::fs::metadata(path).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, VICTIM_MODE, "{} has mode {mode:o}", path.display());
}

/// The cache entry is a regular file of this binary's SHA-256, not a link.
fn assert_entry_is_this_binary(sshd: &Sshd) {
    let entry = entry(sshd);
    let meta = std::fs::symlink_metadata(&entry).expect("the cache entry");
    assert!(
        meta.file_type().is_file(),
        "{} is {:?}",
        entry.display(),
        meta.file_type()
    );
    assert_eq!(sha256(&entry), sha256(&latscope_path()));
}

/// A latscope run while the names appearing in the cache directory are collected (every
/// millisecond): the temporary names its copy used.
fn run_watching_copies(sshd: &Sshd) -> (Output, BTreeSet<String>) {
    let dir = cache_dir(sshd);
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let watcher = scope.spawn(|| {
            let mut seen = BTreeSet::new();
            while !done.load(Ordering::SeqCst) {
                if let Ok(entries) = std::fs::read_dir(&dir) {
                    for e in entries.flatten() {
                        let name = e.file_name().to_string_lossy().into_owned();
                        if name.starts_with(".incoming-") {
                            seen.insert(name);
                        }
                    }
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            seen
        });
        let out = a_short_run(sshd);
        done.store(true, Ordering::SeqCst);
        (out, watcher.join().unwrap())
    })
}

/// The audit's reproducer: links at the 5 000 next PIDs' temporary names of the old copy
/// (`.NAME.$$`, NAME with the binary's size) point at a victim. The copy neither writes
/// the victim nor makes the entry a link; its temporary name (mktemp's) is new each copy,
/// and a link planted at the name a copy used before is not followed either.
fn planted_links_at_the_temporary_names_are_not_followed() {
    let sshd = Sshd::start();
    let dir = make_cache_dir(&sshd);
    let victim = victim(&sshd);
    let version = latscope::remote::args::file_safe(latscope::build_info::VERSION);
    let size = std::fs::metadata(latscope_path()).unwrap().len();
    let last: u64 = std::fs::read_to_string("/proc/sys/kernel/ns_last_pid")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    for pid in last + 1..=last + 5000 {
        symlink(
            &victim,
            dir.join(format!(".latscope-{version}-{size}.{pid}")),
        )
        .unwrap();
    }
    let (out, first) = run_watching_copies(&sshd);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_victim_untouched(&victim);
    assert_entry_is_this_binary(&sshd);
    assert_eq!(first.len(), 1, "one temporary name per copy: {first:?}");
    // A second copy, with links planted at the name the first one used.
    std::fs::remove_file(entry(&sshd)).unwrap();
    for name in &first {
        symlink(&victim, dir.join(name)).unwrap();
    }
    let (out, second) = run_watching_copies(&sshd);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_victim_untouched(&victim);
    assert_entry_is_this_binary(&sshd);
    let new: Vec<_> = second.difference(&first).collect();
    assert_eq!(
        new.len(),
        1,
        "a new temporary name: {first:?} then {second:?}"
    );
    let random = &new[0][".incoming-".len()..];
    assert!(
        random.len() >= 6 && random.chars().all(|c| c.is_ascii_alphanumeric()),
        "{random}"
    );
    let links = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_type().unwrap().is_symlink())
        .count();
    assert_eq!(links, 5001, "the planted links are left as they were");
}

/// A cache directory that is a link is refused (exit 6, the path and the fix named) and
/// nothing is written where it points.
fn a_cache_directory_that_is_a_link_is_refused() {
    let sshd = Sshd::start();
    let elsewhere = sshd.tmp().join("../elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    std::fs::create_dir(sshd.cache()).unwrap();
    symlink(&elsewhere, cache_dir(&sshd)).unwrap();
    let out = a_short_run(&sshd);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(6), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "{} is a symbolic link",
            cache_dir(&sshd).display()
        )) && stderr.contains("remove the link"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    assert!(std::fs::symlink_metadata(cache_dir(&sshd))
        .unwrap()
        .file_type()
        .is_symlink());
}

/// A cache directory of another user, or writable by the group or by all, is refused
/// (exit 6, the path, what is wrong and the fix named) and nothing is written in it.
fn a_cache_directory_of_others_is_refused() {
    let sshd = Sshd::start();
    let dir = make_cache_dir(&sshd);
    let nobody = 65534;
    std::os::unix::fs::chown(&dir, Some(nobody), Some(nobody)).unwrap();
    let out = a_short_run(&sshd);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(6), "{stderr}");
    assert!(
        stderr.contains(&format!("{} belongs to uid {nobody}", dir.display())),
        "{stderr}"
    );
    std::os::unix::fs::chown(&dir, Some(0), Some(0)).unwrap();
    for mode in [0o770, 0o777, 0o1777] {
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(mode)).unwrap();
        let out = a_short_run(&sshd);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(6), "mode {mode:o}: {stderr}");
        assert!(
            stderr.contains(&format!("{} is writable by others", dir.display()))
                && stderr.contains("rm -r"),
            "mode {mode:o}: {stderr}"
        );
        let meta = std::fs::metadata(&dir).unwrap();
        assert_eq!(meta.mode() & 0o7777, mode, "left as it was");
    }
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        0,
        "nothing written"
    );
}

/// A program the test can tell was run: it creates `marker`. Padded to `size` bytes.
fn impostor(marker: &Path, size: u64) -> Vec<u8> {
    let mut bytes = format!("#!/bin/sh\ntouch {}\nexit 0\n", marker.display()).into_bytes();
    bytes.resize(size as usize, b'#');
    bytes
}

/// An executable of the entry's name and this binary's size but another SHA-256 is not
/// run: it is replaced, and the run goes on with this binary.
fn a_same_size_file_of_another_hash_is_replaced_not_run() {
    let sshd = Sshd::start();
    make_cache_dir(&sshd);
    let marker = sshd.tmp().join("../impostor-ran");
    let size = std::fs::metadata(latscope_path()).unwrap().len();
    std::fs::write(entry(&sshd), impostor(&marker, size)).unwrap();
    std::fs::set_permissions(entry(&sshd), std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = a_short_run(&sshd);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!marker.exists(), "the impostor ran");
    assert!(
        stderr.contains("is not run (its SHA-256 is") && stderr.contains("copying latscope"),
        "{stderr}"
    );
    assert!(
        text(&out.stdout).contains("clock-nanosleep"),
        "the run's table"
    );
    assert_entry_is_this_binary(&sshd);
}

/// A cache entry that is a link (to an executable that would betray being run) is neither
/// run nor written through: the link itself is replaced by this binary.
fn a_cache_entry_that_is_a_link_is_replaced_not_followed() {
    let sshd = Sshd::start();
    make_cache_dir(&sshd);
    let marker = sshd.tmp().join("../impostor-ran");
    let target = sshd.tmp().join("../impostor");
    let bytes = impostor(&marker, 64);
    std::fs::write(&target, &bytes).unwrap();
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o755)).unwrap();
    symlink(&target, entry(&sshd)).unwrap();
    let out = a_short_run(&sshd);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!marker.exists(), "the link's target ran");
    assert!(stderr.contains("it is a symbolic link"), "{stderr}");
    assert_eq!(
        std::fs::read(&target).unwrap(),
        bytes,
        "written through the link"
    );
    assert_entry_is_this_binary(&sshd);
}

/// The board's command fails (a CPU the board does not have): its exit code comes home,
/// and its scratch directory is gone.
fn a_failed_board_command_leaves_no_scratch_directory() {
    let sshd = Sshd::start();
    let out = {
        let _lock = latency_lock();
        run_remote(
            &sshd,
            &[
                "timer",
                "-l",
                "100",
                "-a",
                "4095",
                "--host",
                "root@127.0.0.1",
            ],
        )
    };
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("4095"), "the board's message: {stderr}");
    assert!(
        remote_leftovers(&sshd).is_empty(),
        "{:?}",
        remote_leftovers(&sshd)
    );
}

/// The connection carrying the run drops (its ssh killed): the board's run ends as on
/// SIGHUP, and its scratch directory is gone once its result is fetched.
fn a_dropped_connection_leaves_no_scratch_directory() {
    let sshd = Sshd::start();
    let _lock = latency_lock();
    let mut run = LocalRun::start(
        &sshd,
        &["timer", "-D", "60s", "-q", "--host", "root@127.0.0.1"],
    );
    let ssh = run.wait_for_the_board_run(&sshd);
    // Past the board's 1 s warm-up, so it has measured when the connection drops.
    std::thread::sleep(Duration::from_secs(2));
    Command::new("kill").args(["-9", &ssh]).status().unwrap();
    let (code, stderr) = run.finish(Duration::from_secs(90));
    assert_eq!(code, Some(130), "{stderr}");
    assert!(stderr.contains("ended before its run did"), "{stderr}");
    assert!(
        remote_leftovers(&sshd).is_empty(),
        "{:?}",
        remote_leftovers(&sshd)
    );
}

/// Ctrl-C here while latscope is being copied to the board: the copy ends, the run is
/// never started there (exit 130, said so), and no scratch directory is made.
fn ctrl_c_during_the_copy_starts_nothing_there() {
    let sshd = Sshd::start();
    let dir = make_cache_dir(&sshd);
    let _lock = latency_lock();
    let mut run = LocalRun::start(
        &sshd,
        &["timer", "-D", "60s", "-q", "--host", "root@127.0.0.1"],
    );
    let copying = || {
        std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .any(|e| e.file_name().to_string_lossy().starts_with(".incoming-"))
    };
    let started = std::time::Instant::now();
    while !copying() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the copy never started"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    Command::new("kill")
        .args(["-INT", &run.pid().to_string()])
        .status()
        .unwrap();
    let (code, stderr) = run.finish(Duration::from_secs(60));
    assert_eq!(code, Some(130), "{stderr}");
    assert!(stderr.contains("nothing ran there"), "{stderr}");
    assert!(
        remote_leftovers(&sshd).is_empty(),
        "{:?}",
        remote_leftovers(&sshd)
    );
}

pub fn cases() -> Vec<Case> {
    cases_unless(
        unavailable().or_else(|| missing("sha256sum", "coreutils")),
        &[
            (
                "planted_links_at_the_temporary_names_are_not_followed",
                planted_links_at_the_temporary_names_are_not_followed,
            ),
            (
                "a_cache_directory_that_is_a_link_is_refused",
                a_cache_directory_that_is_a_link_is_refused,
            ),
            (
                "a_cache_directory_of_others_is_refused",
                a_cache_directory_of_others_is_refused,
            ),
            (
                "a_same_size_file_of_another_hash_is_replaced_not_run",
                a_same_size_file_of_another_hash_is_replaced_not_run,
            ),
            (
                "a_cache_entry_that_is_a_link_is_replaced_not_followed",
                a_cache_entry_that_is_a_link_is_replaced_not_followed,
            ),
            (
                "a_failed_board_command_leaves_no_scratch_directory",
                a_failed_board_command_leaves_no_scratch_directory,
            ),
            (
                "a_dropped_connection_leaves_no_scratch_directory",
                a_dropped_connection_leaves_no_scratch_directory,
            ),
            (
                "ctrl_c_during_the_copy_starts_nothing_there",
                ctrl_c_during_the_copy_starts_nothing_there,
            ),
        ],
    )
}
