//! The security holes of issue 12: a root run must not write through symlinks another user
//! planted in the output directory (item 1), and the reflector must not echo forged or
//! looping datagrams (item 2). Issue 22: a FIFO at a lock's name is refused at once and a
//! wait for a FIFO's reader ends at the first SIGTERM (item 2), two runs never share an
//! output file (item 3), `--resume` refuses a forged scenario (item 7).

use crate::common;
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
fn item_01_planted_temp_symlinks_do_not_redirect_root_writes() {
    let _lock = latency_lock();
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
    // (The `--export-json` lock file beside the result is removed when the run ends.)
    assert_eq!(left, planted + 3, "temporary files were left behind");
}

/// Item 1: a final path that is a symlink (to a root-only file) is refused before
/// measuring, naming the path and the fix; the file it points to is untouched.
fn item_01_symlink_final_path_is_refused() {
    let _lock = latency_lock();
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

/// Item 1: with `--force` the user's own link at the final path is written through: the
/// file it points to (relative to the link's directory) is replaced, the link stays.
fn item_01_force_writes_through_a_symlinked_final_path() {
    let _lock = latency_lock();
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("results")).unwrap();
    std::fs::write(dir.path().join("results/run.json"), b"old").unwrap();
    let link = dir.path().join("latest.json");
    symlink("results/run.json", &link).unwrap();
    let out = latscope()
        .args(["timer", "-a", &test_cpu().to_string(), "-l", "20", "-q"])
        .args(["--force", "--export-json"])
        .arg(&link)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("results/run.json")).unwrap())
            .unwrap();
    assert_eq!(v["scenarios"][0]["threads"][0]["samples"], 20);
    let left: Vec<_> = std::fs::read_dir(dir.path().join("results"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left.len(), 1, "temporary files left: {left:?}");
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
fn item_01_devices_are_still_written_in_place() {
    let _lock = latency_lock();
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

/// A `latscope net --serve` process; killed if a test fails before stopping it.
struct Reflector {
    child: std::process::Child,
    addr: std::net::SocketAddr,
    stderr: std::io::BufReader<std::process::ChildStderr>,
}

impl Drop for Reflector {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_reflector(addr: &str) -> Reflector {
    use std::io::BufRead;
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("latscope"))
        .args(["net", "--serve", addr, "-D", "60s"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    let bound = line
        .split_whitespace()
        .find_map(|w| w.parse().ok())
        .unwrap_or_else(|| panic!("no address in {line:?}"));
    Reflector {
        child,
        addr: bound,
        stderr,
    }
}

/// Stops a reflector with SIGINT; returns its exit code and its closing report.
fn stop_reflector(mut r: Reflector) -> (Option<i32>, String) {
    let pid = r.child.id().to_string();
    let _ = std::process::Command::new("kill")
        .args(["-INT", &pid])
        .status();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut r.stderr, &mut rest).unwrap();
    let code = r.child.wait().unwrap().code();
    (code, rest)
}

/// The number before `words` in a reflector's closing report.
fn count_before(report: &str, words: &str) -> u64 {
    let at = report
        .find(words)
        .unwrap_or_else(|| panic!("'{words}' not in {report}"));
    report[..at]
        .split_whitespace()
        .last()
        .and_then(|w| w.parse().ok())
        .unwrap_or_else(|| panic!("no count before '{words}' in {report}"))
}

/// Sends one datagram with a forged source address through a raw socket (python3 builds
/// the IPv4 and UDP headers; root only).
fn send_forged(from: std::net::SocketAddr, to: std::net::SocketAddr, payload: &[u8]) {
    let hex: String = payload.iter().map(|b| format!("{b:02x}")).collect();
    let script = format!(
        r#"
import socket, struct
payload = bytes.fromhex("{hex}")
src, sport, dst, dport = "{}", {}, "{}", {}
udp = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload
ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0, 64, 17, 0,
                 socket.inet_aton(src), socket.inet_aton(dst))
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
s.sendto(ip + udp, (dst, 0))
"#,
        from.ip(),
        from.port(),
        to.ip(),
        to.port()
    );
    let status = std::process::Command::new("python3")
        .args(["-c", &script])
        .status()
        .unwrap();
    assert!(
        status.success(),
        "python3 could not send the forged datagram"
    );
}

fn request() -> Vec<u8> {
    let mut d = latscope::probe::net::packet::new_datagram(64);
    latscope::probe::net::packet::stamp(&mut d, 1, 2);
    d
}

/// Item 2: one datagram forged with the reflector's own address as its source is not
/// reflected (it used to loop at 100 % CPU), and a request forged from a second
/// reflector gets one reply there, which that reflector ignores: no ping-pong.
fn item_02_forged_datagrams_do_not_start_an_echo_loop() {
    let _lock = latency_lock();
    let a = start_reflector("127.0.0.1:0");
    let b = start_reflector("127.0.0.1:0");
    send_forged(a.addr, a.addr, &request());
    send_forged(b.addr, a.addr, &request());
    std::thread::sleep(std::time::Duration::from_millis(500));
    let (code_a, report_a) = stop_reflector(a);
    let (code_b, report_b) = stop_reflector(b);
    assert_eq!(
        count_before(&report_a, "addressed to itself"),
        1,
        "{report_a}"
    );
    assert_eq!(count_before(&report_a, "datagrams"), 1, "{report_a}");
    assert_eq!(count_before(&report_b, "datagrams"), 0, "{report_b}");
    assert_eq!(count_before(&report_b, "malformed"), 1, "{report_b}");
    assert_eq!((code_a, code_b), (Some(130), Some(130)));
}

/// Item 2: a datagram from another local socket on the reflector's port (a local address
/// other than the bound one) is not answered either; plain requests are.
fn item_02_local_source_on_the_reflectors_port_is_not_answered() {
    let _lock = latency_lock();
    let r = start_reflector("127.0.0.1:0");
    let same_port = std::net::SocketAddr::new([127, 0, 0, 2].into(), r.addr.port());
    let twin = std::net::UdpSocket::bind(same_port).expect("127.0.0.2 binds (checked in cases)");
    twin.send_to(&request(), r.addr).unwrap();
    let plain = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    plain
        .set_read_timeout(Some(std::time::Duration::from_secs(2)))
        .unwrap();
    plain.send_to(&request(), r.addr).unwrap();
    let mut buf = [0u8; 128];
    let n = plain.recv(&mut buf).expect("a plain request is answered");
    assert_eq!(&buf[..4], &latscope::probe::net::packet::REPLY_MAGIC);
    assert_eq!(n, 64);
    let (code, report) = stop_reflector(r);
    assert_eq!(count_before(&report, "addressed to itself"), 1, "{report}");
    assert_eq!(count_before(&report, "datagrams"), 1, "{report}");
    assert_eq!(code, Some(130), "Ctrl-C ends --serve with 130: {report}");
}

/// This machine's address towards the outside (not loopback), if it has one.
fn non_loopback_address() -> Option<std::net::IpAddr> {
    let s = std::net::UdpSocket::bind("0.0.0.0:0").ok()?;
    s.connect("192.0.2.1:9").ok()?;
    let ip = s.local_addr().ok()?.ip();
    (!ip.is_loopback() && !ip.is_unspecified()).then_some(ip)
}

/// Item 2: a flood of requests from one (non-loopback) source gets at most the burst plus
/// the sustained rate's worth of replies; the rest is counted as rate-limited.
fn item_02_a_flood_from_one_source_is_rate_limited() {
    let _lock = latency_lock();
    let ip = non_loopback_address().expect("checked in cases");
    let r = start_reflector("0.0.0.0:0");
    let target = std::net::SocketAddr::new(ip, r.addr.port());
    let flooder = std::net::UdpSocket::bind((ip, 0)).unwrap();
    let start = std::time::Instant::now();
    let datagram = request();
    let mut sent = 0u64;
    let budget_after = |elapsed_s: f64| {
        latscope::probe::net::reflector::BURST_PER_SOURCE as f64
            + latscope::probe::net::reflector::REPLIES_PER_SOURCE_PER_S as f64 * (elapsed_s + 0.3)
    };
    // A flood twice what the limit allows over its own length, however fast this
    // machine sends (a busy machine sends slower: the flood lasts longer, never thinner).
    loop {
        for _ in 0..200 {
            if flooder.send_to(&datagram, target).is_ok() {
                sent += 1;
            }
        }
        let elapsed_s = start.elapsed().as_secs_f64();
        if (elapsed_s >= 0.5 && sent as f64 >= 2.0 * budget_after(elapsed_s)) || elapsed_s > 5.0 {
            break;
        }
    }
    let elapsed_s = start.elapsed().as_secs_f64();
    std::thread::sleep(std::time::Duration::from_millis(200));
    let (_, report) = stop_reflector(r);
    let reflected = count_before(&report, "datagrams");
    let limited = count_before(&report, "over a source's rate limit");
    let budget = budget_after(elapsed_s);
    eprintln!("sent {sent} in {elapsed_s:.3} s: reflected {reflected}, limited {limited}");
    assert!(
        (reflected as f64) <= budget,
        "{reflected} replies exceed the budget {budget:.0}"
    );
    // What the reflector read beyond the budget (the kernel may drop some of a flood
    // before it is read) was refused, and counted.
    let seen = reflected + limited;
    if (seen as f64) > budget {
        assert!(limited > 0, "saw {seen} but limited none: {report}");
    } else {
        eprintln!("the reflector read only {seen} of {sent} (the kernel dropped the rest)");
    }
}

/// Makes a named pipe at `path`.
fn mkfifo(path: &Path) {
    assert!(std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap()
        .success());
}

/// Waits for `child` at most `limit`; kills it (and fails) when it is still running.
fn exit_within(
    mut child: std::process::Child,
    limit: std::time::Duration,
    what: &str,
) -> (std::process::Output, std::time::Duration) {
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "{what}: still running after {limit:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let took = start.elapsed();
    (child.wait_with_output().unwrap(), took)
}

/// Waits until `path` exists (a run took its locks, wrote its result).
fn wait_for(path: &Path, limit: std::time::Duration) {
    let start = std::time::Instant::now();
    while !path.exists() {
        assert!(start.elapsed() < limit, "{} never appeared", path.display());
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// Waits until `path` holds the run's final one-document JSON with its scenario (while the
/// run goes it is a journal of JSON lines, which does not parse as one document).
fn wait_for_document(path: &Path, limit: std::time::Duration) {
    let start = std::time::Instant::now();
    loop {
        let done = std::fs::read_to_string(path)
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .is_some_and(|v| v["scenarios"].as_array().is_some_and(|a| !a.is_empty()));
        if done {
            return;
        }
        assert!(
            start.elapsed() < limit,
            "{} never became the document",
            path.display()
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// Issue 22 item 2: a FIFO at the lock's name of any output is refused with one line
/// within 1 s; nothing is opened there, nothing measured.
fn item22_02_a_fifo_at_a_lock_name_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    for (flag, name) in [
        ("--export-json", "out.json"),
        ("--export-csv", "out.csv"),
        ("--raw", "raw.csv"),
    ] {
        let lock = dir.path().join(format!(".{name}.lock"));
        mkfifo(&lock);
        let child = latscope_command()
            .args(["timer", "-D", "1s", "-q", flag])
            .arg(dir.path().join(name))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let (out, took) = exit_within(child, std::time::Duration::from_secs(5), flag);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flag}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{flag}: {stderr}");
        for needle in ["named pipe (FIFO)", &lock.display().to_string(), flag] {
            assert!(stderr.contains(needle), "{flag}: no '{needle}': {stderr}");
        }
        assert!(took < std::time::Duration::from_secs(1), "{flag}: {took:?}");
        std::fs::remove_file(&lock).unwrap();
    }
}

/// Issue 22 item 2: a run waiting for a reader of its FIFO export (at the end, after the
/// JSON is written) answers the first SIGTERM within 1 s, naming the pipe and the signal.
fn item22_02_sigterm_ends_the_wait_for_a_fifo_reader_within_1s() {
    let _lock = latency_lock();
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("table.csv");
    mkfifo(&fifo);
    let json = dir.path().join("run.json");
    let cpu = test_cpu().to_string();
    let mut child = latscope_command()
        .args(["timer", "-D", "500ms", "--warmup", "0", "-q", "-a", &cpu])
        .arg("--export-json")
        .arg(&json)
        .arg("--export-csv")
        .arg(&fifo)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The JSON (a journal while the run goes) is written as one document first; the CSV
    // then waits for a reader that never comes.
    wait_for_document(&json, std::time::Duration::from_secs(30));
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(child.try_wait().unwrap().is_none(), "it did not wait");
    let pid = child.id().to_string();
    std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    let (out, took) = exit_within(child, std::time::Duration::from_secs(5), "SIGTERM");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        took < std::time::Duration::from_secs(1),
        "{took:?}: {stderr}"
    );
    assert!(
        stderr.contains("no reader opened the named pipe before SIGTERM")
            && stderr.contains("table.csv"),
        "{stderr}"
    );
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(run["scenarios"][0]["threads"][0]["samples"].as_u64() > Some(0));
}

/// Issue 22 item 3: while a run writes its files, a second run naming any of them (every
/// `--export-*`, `--raw`, the drop-in's `--json`) is refused with exit 5 before measuring,
/// and the first run's files hold the first run's results.
fn item22_03_a_second_run_sharing_any_output_file_is_refused() {
    let _lock = latency_lock();
    let dir = tempfile::tempdir().unwrap();
    let cpu = test_cpu().to_string();
    let outputs = [
        ("--export-json", "a.json"),
        ("--export-csv", "same.csv"),
        ("--export-html", "same.html"),
        ("--export-markdown", "same.md"),
        ("--export-junit", "same.xml"),
        ("--export-lava", "same.lava"),
        ("--raw", "same.raw"),
    ];
    let mut first = latscope_command();
    first.args(["timer", "-D", "3s", "--warmup", "0", "-q", "-a", &cpu]);
    for (flag, name) in outputs {
        first.arg(flag).arg(dir.path().join(name));
    }
    let first = first
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_for(
        &dir.path().join(".same.raw.lock"),
        std::time::Duration::from_secs(20),
    );
    let mut second: Vec<Vec<String>> = outputs
        .iter()
        .map(|(flag, name)| {
            let path = dir.path().join(name).display().to_string();
            vec![
                "timer".into(),
                "-D".into(),
                "1s".into(),
                "-q".into(),
                flag.to_string(),
                path,
            ]
        })
        .collect();
    let json = dir.path().join("a.json").display().to_string();
    second.push(vec![
        "cyclictest".into(),
        "-l".into(),
        "10".into(),
        format!("--json={json}"),
    ]);
    for args in &second {
        let out = latscope().args(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(5), "{args:?}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{args:?}: {stderr}");
        assert!(
            stderr.contains("is being written by another latscope run"),
            "{args:?}: {stderr}"
        );
    }
    let (out, _) = exit_within(first, std::time::Duration::from_secs(30), "the first run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let csv = std::fs::read_to_string(dir.path().join("same.csv")).unwrap();
    assert_eq!(csv.lines().count(), 2, "the first run's one row: {csv}");
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("a.json")).unwrap()).unwrap();
    assert_eq!(
        run["scenarios"][0]["params"]["duration_ns"],
        3_000_000_000u64
    );
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".lock"))
        .collect();
    assert!(left.is_empty(), "lock files left: {left:?}");
}

/// Issue 22 item 7: `--resume` refuses a file whose plan hash matches but which holds a
/// scenario the plan does not have, or one of the plan's with other parameters; the file
/// as written resumes.
fn item22_07_resume_refuses_a_forged_scenario() {
    let _lock = latency_lock();
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("plan.toml");
    std::fs::write(
        &plan,
        "[[matrix]]\nmethods = [\"clock-nanosleep\"]\nperiods = [\"1ms\"]\n",
    )
    .unwrap();
    let json = dir.path().join("run.json");
    let cpu = test_cpu().to_string();
    let suite = |resume: bool| {
        let mut cmd = latscope();
        cmd.args(["suite", "--plan"]).arg(&plan);
        cmd.args([
            "--samples",
            "100",
            "--warmup",
            "0",
            "-q",
            "--cpus",
            &cpu,
            "--export-json",
        ]);
        cmd.arg(&json);
        if resume {
            cmd.arg("--resume");
        }
        cmd.output().unwrap()
    };
    assert_success(suite(false));
    let honest = std::fs::read_to_string(&json).unwrap();
    let mut forged_name: serde_json::Value = serde_json::from_str(&honest).unwrap();
    let mut copy = forged_name["scenarios"][0].clone();
    copy["name"] = "timer forged 1 ms".into();
    forged_name["scenarios"].as_array_mut().unwrap().push(copy);
    let mut forged_params: serde_json::Value = serde_json::from_str(&honest).unwrap();
    forged_params["scenarios"][0]["params"]["period_ns"] = 2_000_000.into();
    for (forged, needle) in [
        (forged_name, "'timer forged 1 ms' is not in this plan"),
        (forged_params, "has parameters other than this plan's"),
    ] {
        std::fs::write(&json, forged.to_string()).unwrap();
        let out = suite(true);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains(needle) && stderr.contains("--resume"),
            "{stderr}"
        );
    }
    std::fs::write(&json, &honest).unwrap();
    assert_success(suite(true));
}

/// This module's tests, for tests/it/main.rs.
pub fn cases() -> Vec<common::Case> {
    let root = (!is_root()).then(|| "needs root (the attack is on root-owned files)".to_string());
    let forge = (!is_root() || !have("python3"))
        .then(|| "needs root and python3 (raw socket to forge the source)".to_string());
    let twin = std::net::UdpSocket::bind("127.0.0.2:0")
        .err()
        .map(|e| format!("cannot bind 127.0.0.2: {e}"));
    let flood = non_loopback_address()
        .is_none()
        .then(|| "no non-loopback address to flood from".to_string());
    let mut cases = vec![
        common::case(
            "item_01_planted_temp_symlinks_do_not_redirect_root_writes",
            item_01_planted_temp_symlinks_do_not_redirect_root_writes,
        )
        .unless(root),
        common::case(
            "item_02_forged_datagrams_do_not_start_an_echo_loop",
            item_02_forged_datagrams_do_not_start_an_echo_loop,
        )
        .unless(forge),
        common::case(
            "item_02_local_source_on_the_reflectors_port_is_not_answered",
            item_02_local_source_on_the_reflectors_port_is_not_answered,
        )
        .unless(twin),
        common::case(
            "item_02_a_flood_from_one_source_is_rate_limited",
            item_02_a_flood_from_one_source_is_rate_limited,
        )
        .unless(flood),
    ];
    cases.extend(common::test_cases![
        item_01_symlink_final_path_is_refused,
        item_01_devices_are_still_written_in_place,
        item_01_force_writes_through_a_symlinked_final_path,
        item22_02_a_fifo_at_a_lock_name_is_refused_at_once,
        item22_02_sigterm_ends_the_wait_for_a_fifo_reader_within_1s,
        item22_03_a_second_run_sharing_any_output_file_is_refused,
        item22_07_resume_refuses_a_forged_scenario,
    ]);
    cases
}
