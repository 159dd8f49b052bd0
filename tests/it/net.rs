//! `latscope net` over loopback (in-process reflector, and a separate `--serve`
//! process that must ignore malformed datagrams) and over a veth pair between two
//! network namespaces the test creates and always removes. Only loopback and the
//! test's own namespace addresses are used.

use crate::common;
use common::run_json;

use latscope::probe::net::packet;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::net::UdpSocket;
use std::process::{Child, Stdio};
use std::time::Duration;

/// Checks one scenario's three series against each other and its counters.
fn check_scenario(sc: &Value, max_lost: u64) {
    assert_eq!(sc["probe"], "net");
    let threads = sc["threads"].as_array().unwrap();
    let metric = |m: &str| {
        threads
            .iter()
            .find(|t| t["metric"] == m)
            .unwrap_or_else(|| panic!("no {m} series in {}", sc["name"]))
    };
    let (rt, net, k2u) = (
        metric("round_trip"),
        metric("network"),
        metric("kernel_to_user"),
    );
    let e = &rt["extra"];
    let n = |v: &Value, k: &str| v[k].as_u64().unwrap_or_else(|| panic!("{k} in {v}"));
    let f = |v: &Value, k: &str| v[k].as_f64().unwrap();
    let (sent, received, lost) = (n(e, "sent"), n(e, "received"), n(e, "lost"));
    eprintln!(
        "{}: sent {sent} received {received} lost {lost} reordered {} | mean round trip {:.0} ns = network {:.0} + kernel-to-user {:.0}",
        sc["name"],
        n(e, "reordered"),
        f(rt, "mean_ns"),
        f(net, "mean_ns"),
        f(k2u, "mean_ns")
    );
    assert!(sent > 100, "only {sent} packets sent");
    assert_eq!(received + lost, sent, "every packet is received or lost");
    assert!(lost <= max_lost, "{lost} lost");
    assert_eq!(n(rt, "samples"), received, "one round trip per reply");
    assert_eq!(n(net, "samples"), received - n(e, "no_timestamp"));
    assert_eq!(n(k2u, "samples"), n(net, "samples"));
    // network = round_trip - kernel_to_user per packet, so these hold exactly...
    assert!(n(rt, "max_ns") >= n(net, "max_ns"));
    assert!(n(rt, "min_ns") >= n(net, "min_ns"));
    assert!(f(rt, "mean_ns") >= f(net, "mean_ns"));
    // ...and the kernel stamp lies inside the round trip (up to clock slew).
    assert!(f(rt, "mean_ns") * 1.01 + 1_000.0 >= f(k2u, "mean_ns"));
    assert!(
        (f(net, "mean_ns") + f(k2u, "mean_ns") - f(rt, "mean_ns")).abs()
            <= f(rt, "mean_ns") * 0.01 + 1_000.0,
        "the split adds up to the round trip"
    );
    assert!(f(k2u, "mean_ns") > 0.0 && f(net, "mean_ns") > 0.0);
}

fn loopback_with_in_process_reflector() {
    let _lock = common::latency_lock();
    // A 2 s timeout: on this shared VM a reply may wait behind other RT work, but
    // nothing on loopback may be lost.
    let run = run_json(&[
        "net",
        "-D",
        "2s",
        "--warmup",
        "200ms",
        "--size",
        "64,8192",
        "--timeout",
        "2s",
    ]);
    let scenarios = run["scenarios"].as_array().unwrap();
    assert_eq!(scenarios.len(), 2, "one scenario per size");
    assert_eq!(scenarios[1]["params"]["extra"]["size_bytes"], 8192);
    for sc in scenarios {
        check_scenario(sc, 0);
        assert_eq!(sc["params"]["extra"]["reflector_malformed"], 0);
    }
}

/// A child process killed (SIGKILL) when dropped, so no reflector outlives a failure.
struct KillOnDrop(Child);
impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A running reflector process, the address it printed and the rest of its stderr.
struct Server {
    process: KillOnDrop,
    addr: String,
    stderr: BufReader<std::process::ChildStderr>,
}

/// Starts `[prefix...] latscope net --serve ADDR` and reads the address it printed.
fn start_server(prefix: &[&str], addr: &str) -> Server {
    let mut cmd = match prefix.split_first() {
        Some((first, rest)) => {
            let mut c = std::process::Command::new(first);
            c.args(rest).arg(common::latscope_path());
            c
        }
        None => common::latscope_command(),
    };
    let mut child = cmd
        .args(["net", "--serve", addr, "-D", "60s"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut guard = KillOnDrop(child);
    let mut line = String::new();
    let mut stderr = BufReader::new(stderr);
    stderr.read_line(&mut line).unwrap();
    let bound = line
        .split_whitespace()
        .find(|w| w.contains(':') && w.chars().next().is_some_and(|c| c.is_ascii_digit()))
        .unwrap_or_else(|| {
            let _ = guard.0.kill();
            panic!("no address in the server's first line: {line:?}")
        })
        .to_string();
    Server {
        process: guard,
        addr: bound,
        stderr,
    }
}

/// Stops a server with SIGINT (as Ctrl-C) and returns the rest of its stderr.
fn stop_server(mut server: Server) -> String {
    let pid = server.process.0.id().to_string();
    assert!(std::process::Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .unwrap()
        .success());
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut server.stderr, &mut rest).unwrap();
    let status = server.process.0.wait().unwrap();
    // Ctrl-C ends `--serve` with the documented interrupted code (issue 12, item 15).
    assert_eq!(status.code(), Some(130), "server exit {status}: {rest}");
    rest
}

fn separate_server_process_ignores_malformed_datagrams() {
    let _lock = common::latency_lock();
    let server = start_server(&[], "127.0.0.1:0");
    let addr = server.addr.clone();
    let probe = UdpSocket::bind("127.0.0.1:0").unwrap();
    probe.connect(&addr).unwrap();
    probe
        .set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let mut valid = packet::new_datagram(64);
    packet::stamp(&mut valid, 1, 42);
    let mut wrong_length = valid.clone();
    wrong_length.truncate(40);
    let mut wrong_magic = valid.clone();
    wrong_magic[0] ^= 0xff;
    let mut buf = [0u8; 256];
    for bad in [&b"hello"[..], &wrong_length, &wrong_magic, &[][..]] {
        probe.send(bad).unwrap();
        assert!(
            probe.recv(&mut buf).is_err(),
            "the reflector answered a malformed datagram of {} bytes",
            bad.len()
        );
    }
    probe.send(&valid).unwrap();
    let n = probe
        .recv(&mut buf)
        .expect("the reflector answers a valid datagram");
    // The answer is the request marked as a reply (which no reflector answers).
    assert_eq!(&buf[..4], &packet::REPLY_MAGIC);
    assert_eq!(&buf[4..n], &valid[4..]);

    let run = run_json(&[
        "net",
        "--target",
        &addr,
        "--flood",
        "-D",
        "1s",
        "--warmup",
        "100ms",
        "--timeout",
        "2s",
    ]);
    let sc = &run["scenarios"][0];
    check_scenario(sc, 0);
    assert_eq!(sc["params"]["extra"]["target"], addr.as_str());

    let report = stop_server(server);
    assert!(
        report.contains("ignored 4 malformed"),
        "the server counts what it ignored: {report}"
    );
}

/// Two network namespaces joined by a veth pair with 10.200.77.1/30 and .2/30, removed
/// (with the pair) on drop, also when the test fails.
struct VethPair {
    server_ns: String,
    client_ns: String,
    veth: String,
}

const SERVER_IP: &str = "10.200.77.1";
const CLIENT_IP: &str = "10.200.77.2";

fn ip(args: &[&str]) -> Result<(), String> {
    let out = std::process::Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| format!("ip {args:?}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

impl VethPair {
    /// Creates the namespaces and the pair; Err(reason) when namespaces are not allowed.
    fn create() -> Result<Self, String> {
        let id = std::process::id();
        let pair = VethPair {
            server_ns: format!("lsnet-s{id}"),
            client_ns: format!("lsnet-c{id}"),
            veth: format!("lsv{}", id % 100_000),
        };
        ip(&["netns", "add", &pair.server_ns])?;
        ip(&["netns", "add", &pair.client_ns])?;
        let (s, c, v) = (&pair.server_ns, &pair.client_ns, &pair.veth);
        let peer = format!("{v}p");
        ip(&["link", "add", v, "type", "veth", "peer", "name", &peer])?;
        ip(&["link", "set", v, "netns", s])?;
        ip(&["link", "set", &peer, "netns", c])?;
        ip(&["-n", s, "addr", "add", &format!("{SERVER_IP}/30"), "dev", v])?;
        ip(&[
            "-n",
            c,
            "addr",
            "add",
            &format!("{CLIENT_IP}/30"),
            "dev",
            &peer,
        ])?;
        for (ns, dev) in [(s, v.as_str()), (c, peer.as_str())] {
            ip(&["-n", ns, "link", "set", "lo", "up"])?;
            ip(&["-n", ns, "link", "set", dev, "up"])?;
        }
        Ok(pair)
    }
}

impl Drop for VethPair {
    fn drop(&mut self) {
        // Deleting a namespace destroys the veth end inside it, and with it the pair;
        // the link delete covers a failure before the ends were moved.
        let _ = ip(&["netns", "del", &self.server_ns]);
        let _ = ip(&["netns", "del", &self.client_ns]);
        let _ = ip(&["link", "del", &self.veth]);
    }
}

fn veth_pair_between_two_namespaces() {
    let _lock = common::latency_lock();
    let pair = VethPair::create().unwrap_or_else(|reason| panic!("veth pair: {reason}"));
    let server = start_server(
        &["ip", "netns", "exec", &pair.server_ns],
        &format!("{SERVER_IP}:0"),
    );
    let addr = server.addr.clone();
    assert!(addr.starts_with(SERVER_IP), "{addr}");
    let out = std::process::Command::new("ip")
        .args(["netns", "exec", &pair.client_ns])
        .arg(common::latscope_path())
        .args([
            "net",
            "--target",
            &addr,
            "-D",
            "2s",
            "--warmup",
            "200ms",
            "--timeout",
            "2s",
        ])
        .args(["--size", "64,4000", "-q", "--export-json", "-"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "client: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run: Value = serde_json::from_slice(&out.stdout).unwrap();
    for sc in run["scenarios"].as_array().unwrap() {
        // A veth pair drops nothing unless the machine is starved: allow 1 % for that.
        let sent = sc["threads"][0]["extra"]["sent"].as_u64().unwrap();
        check_scenario(sc, sent / 100);
    }
    let report = stop_server(server);
    assert!(report.contains("reflected"), "{report}");
    drop(pair);
}

/// Why test-made network namespaces cannot be had here, if they cannot.
fn no_namespaces() -> Option<String> {
    if !common::have("ip") {
        return Some("ip not installed (apt-get install iproute2)".into());
    }
    // SAFETY-free check: only root may create network namespaces and veth pairs.
    let root = std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"));
    (!root).then(|| "needs root to create network namespaces".to_string())
}

/// This module's tests, for tests/it/main.rs.
pub fn cases() -> Vec<common::Case> {
    vec![
        common::case(
            "loopback_with_in_process_reflector",
            loopback_with_in_process_reflector,
        ),
        common::case(
            "separate_server_process_ignores_malformed_datagrams",
            separate_server_process_ignores_malformed_datagrams,
        ),
        common::case(
            "veth_pair_between_two_namespaces",
            veth_pair_between_two_namespaces,
        )
        .unless(no_namespaces()),
    ]
}
