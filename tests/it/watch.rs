//! `latscope watch` for real: Debian's Prometheus scraping a running watch (its count and
//! buckets against the interval file's histogram), rotation every 2 s, a SIGKILL and a
//! restart inside an interval (the file goes on, the gap is marked), SIGTERM writing the
//! last interval, and bad input named with its range and fix.

use crate::common;
use common::*;
use serde_json::Value;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

pub(crate) fn watch(dir: &Path, extra: &[&str]) -> Child {
    latscope_command()
        .args([
            "watch",
            "--cpus",
            &test_cpu().to_string(),
            "--warmup",
            "0",
            "--dir",
        ])
        .arg(dir)
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("latscope watch starts")
}

fn signal(child: &Child, sig: &str) {
    Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status()
        .unwrap();
}

/// SIGTERM, then its stderr; the watch must exit 0 within 10 s.
pub(crate) fn stop(mut child: Child) -> String {
    signal(&child, "-TERM");
    let deadline = Instant::now() + Duration::from_secs(10);
    while child.try_wait().unwrap().is_none() {
        assert!(
            Instant::now() < deadline,
            "watch did not stop after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{stderr}");
    stderr
}

pub(crate) fn files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    v.sort();
    v
}

pub(crate) fn thread0(run: &Value) -> &Value {
    &run["scenarios"][0]["threads"][0]
}

pub(crate) fn samples(run: &Value) -> u64 {
    thread0(run)["samples"].as_u64().unwrap()
}

pub(crate) fn unix_s(text: &str) -> u64 {
    humantime::parse_rfc3339(text)
        .unwrap()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// The file's own statistics agree with its histogram and per-second maxima.
pub(crate) fn assert_file_consistent(run: &Value) {
    let t = thread0(run);
    let hist: u64 = t["histogram"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p[1].as_u64().unwrap())
        .sum();
    assert_eq!(hist, samples(run), "histogram counts = samples");
    let per_s: Vec<u64> = t["per_second_max_ns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    let max = t["max_ns"].as_u64().unwrap();
    assert_eq!(
        per_s.iter().copied().max().unwrap_or(0),
        max,
        "max = largest per-second max"
    );
}

pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A plain HTTP/1.0 GET: the body (the tests' only HTTP client).
pub(crate) fn http_get(port: u16, path: &str) -> Option<String> {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    let (head, body) = text.split_once("\r\n\r\n")?;
    let ok = head.starts_with("HTTP/1.1 200") || head.starts_with("HTTP/1.0 200");
    ok.then(|| body.to_string())
}

/// A Prometheus instant query's vector: (labels, value).
fn prom_query(port: u16, query: &str) -> Vec<(Value, f64)> {
    let q: String = query
        .bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect();
    let Some(body) = http_get(port, &format!("/api/v1/query?query={q}")) else {
        return Vec::new();
    };
    let v: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    v["data"]["result"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .map(|r| {
            let x = r["value"][1]
                .as_str()
                .unwrap_or("nan")
                .parse()
                .unwrap_or(f64::NAN);
            (r["metric"].clone(), x)
        })
        .collect()
}

/// Debian's Prometheus with a 1 s scrape of 127.0.0.1:`target`, serving its API on `port`.
fn start_prometheus(dir: &Path, target: u16, port: u16) -> Child {
    let config = dir.join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  \
             - job_name: latscope\n    static_configs:\n      - targets: ['127.0.0.1:{target}']\n"
        ),
    )
    .unwrap();
    Command::new("prometheus")
        .arg(format!("--config.file={}", config.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.join("tsdb").display()
        ))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("prometheus starts")
}

const COUNT_Q: &str = "max_over_time(latscope_latency_seconds_count[5m])";

/// Until Prometheus holds 4 scrapes of the watch with samples.
fn wait_for_scrapes(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(40);
    loop {
        let seen = prom_query(port, "count_over_time(latscope_latency_seconds_count[5m])");
        let counted = prom_query(port, COUNT_Q);
        if seen.first().is_some_and(|(_, n)| *n >= 4.0)
            && counted.first().is_some_and(|(_, n)| *n > 0.0)
        {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "Prometheus never scraped the watch 4 times"
        );
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// Prometheus (Debian's package) scrapes a watch every second; after SIGTERM its last
/// scrape's count and cumulative buckets are what the interval file holds, less only the
/// samples measured after that scrape (at most a few scrape intervals' worth, and the
/// same shortfall bounds every bucket: the scrape saw a subset of the file's samples).
fn prometheus_scrapes_what_the_interval_file_holds() {
    let _lock = latency_lock();
    let dir = tempfile::tempdir().unwrap();
    let (wport, pport) = (free_port(), free_port());
    let data = dir.path().join("watch");
    let w = watch(
        &data,
        &[
            "--listen",
            &format!("127.0.0.1:{wport}"),
            "--readiness",
            "--fail-above",
            "1s",
        ],
    );
    let mut prom = start_prometheus(dir.path(), wport, pport);
    wait_for_scrapes(pport);
    assert_dashboard_queries_answer(pport);
    let body = http_get(wport, "/metrics").expect("GET /metrics");
    assert!(
        body.contains("latscope_readiness_info{") && body.contains("verdict=\""),
        "{body}"
    );
    assert!(body.contains("latscope_watch_start_time_seconds"), "{body}");
    let stderr = stop(w);
    std::thread::sleep(Duration::from_millis(1500));
    let prom_count = prom_query(pport, COUNT_Q);
    let buckets = prom_query(pport, "max_over_time(latscope_latency_seconds_bucket[5m])");
    let _ = prom.kill();
    let _ = prom.wait();
    let (labels, prom_count) = prom_count.first().cloned().expect("a count in Prometheus");
    assert_eq!(labels["cpu"], test_cpu().to_string());
    assert_eq!(
        (labels["probe"].as_str(), labels["period"].as_str()),
        (Some("timer"), Some("1ms"))
    );
    let paths = files(&data);
    assert_eq!(paths.len(), 1, "one daily file: {paths:?} {stderr}");
    let run = read_result(&paths[0]).unwrap();
    assert_file_consistent(&run);
    let n = samples(&run);
    let shortfall = n as i64 - prom_count as i64;
    // 1 ms period: one scrape interval is ~1000 samples; the reader and Prometheus each
    // add up to a second, and SIGTERM came after the last scrape.
    assert!(
        (0..=3_000).contains(&shortfall),
        "file {n}, Prometheus {prom_count}"
    );
    assert_buckets_agree(&run, &buckets, shortfall);
}

/// Every query of contrib/grafana/latscope.json, with Grafana's variables filled in as a
/// dashboard would (all hosts and CPUs, a 15 s rate window), is valid PromQL to the real
/// Prometheus and returns series from the running watch: the dashboard works on real data.
fn assert_dashboard_queries_answer(pport: u16) {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("contrib/grafana/latscope.json");
    let dash: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    for panel in dash["panels"].as_array().unwrap() {
        for target in panel["targets"].as_array().unwrap() {
            let expr = target["expr"]
                .as_str()
                .unwrap()
                .replace("$host", ".*")
                .replace("$cpu", ".*")
                .replace("$__rate_interval", "15s")
                .replace("$__range", "1m");
            let series = prom_query(pport, &expr);
            assert!(
                !series.is_empty(),
                "panel {}: no series for {expr} (refused, or nothing scraped)",
                panel["title"]
            );
        }
    }
    // The host and cpu variables: Grafana's label_values(METRIC, LABEL) is this API call.
    for label in ["host", "cpu"] {
        let body = http_get(
            pport,
            &format!("/api/v1/label/{label}/values?match%5B%5D=latscope_latency_seconds_count"),
        )
        .unwrap_or_default();
        let values: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
        assert!(
            values["data"].as_array().is_some_and(|v| !v.is_empty()),
            "variable {label}: {body}"
        );
    }
}

/// Each cumulative bucket Prometheus scraped is the file's count at or below its bound,
/// short by no more than the samples after the last scrape.
fn assert_buckets_agree(run: &Value, buckets: &[(Value, f64)], shortfall: i64) {
    let hist: Vec<(u64, u64)> = thread0(run)["histogram"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p[0].as_u64().unwrap(), p[1].as_u64().unwrap()))
        .collect();
    assert_eq!(buckets.len(), 20, "19 bounds and +Inf");
    for (labels, prom_le) in buckets {
        let le = labels["le"].as_str().unwrap();
        let le_ns = match le {
            "+Inf" => u64::MAX,
            _ => (le.parse::<f64>().unwrap() * 1e9).round() as u64,
        };
        let file_le: u64 = hist
            .iter()
            .filter(|(v, _)| *v <= le_ns)
            .map(|(_, c)| c)
            .sum();
        let d = file_le as i64 - *prom_le as i64;
        assert!(
            (0..=shortfall).contains(&d),
            "le {le}: file {file_le}, Prometheus {prom_le}, shortfall {shortfall}"
        );
    }
}

/// `--rotate 2s`: a file per 2 s named by its UTC start; each complete one covers its
/// interval whole, with at most 2 per-second maxima; SIGTERM writes the last one. Every
/// complete interval fails `--fail-above 1us`: `--on-fail` gets its CPU, maximum and file,
/// and the watch waits at exit for the hook still running.
fn rotation_every_two_seconds_and_sigterm_writes_the_last() {
    let _lock = latency_lock();
    let dir = tempfile::tempdir().unwrap();
    let hook_out = tempfile::NamedTempFile::new().unwrap();
    // Each hook takes 2.5 s, longer than an interval: the hook of the interval that ended
    // last is still running at SIGTERM, and the watch must wait for it.
    let script = format!(
        "sleep 2.5; echo \"$LATSCOPE_CPU $LATSCOPE_MAX_NS $LATSCOPE_LIMIT_NS $LATSCOPE_FILE\" >> {}",
        hook_out.path().display()
    );
    let args = [
        "--rotate",
        "2s",
        "--fail-above",
        "1us",
        "--on-fail",
        "sh",
        "-c",
        &script,
    ];
    let w = watch(dir.path(), &args);
    std::thread::sleep(Duration::from_millis(6_500));
    let stderr = stop(w);
    let paths = files(dir.path());
    assert!(paths.len() >= 3, "{paths:?} {stderr}");
    assert!(stderr.contains("above --fail-above 1 µs"), "{stderr}");
    assert!(
        stderr.contains("--on-fail hook"),
        "the wait is said: {stderr}"
    );
    for (i, p) in paths.iter().enumerate() {
        let run = read_result(p).unwrap();
        assert_file_consistent(&run);
        let name = p.file_name().unwrap().to_str().unwrap();
        let start = unix_s(run["started_at"].as_str().unwrap());
        let stamp = &name[name.len() - 24..name.len() - 5];
        let named = unix_s(&format!(
            "{}:{}:{}Z",
            &stamp[..13],
            &stamp[14..16],
            &stamp[17..19]
        ));
        assert_eq!(named % 2, 0, "{name}");
        let end = unix_s(run["finished_at"].as_str().unwrap());
        let complete = !run["interrupted"].as_bool().unwrap();
        // The last is cut by SIGTERM (complete only if it fell right on a boundary).
        assert!(
            complete || i + 1 == paths.len(),
            "only the last is cut: {name}"
        );
        if i > 0 && complete {
            assert_eq!((start, end), (named, named + 2), "{name}");
            let n = samples(&run) + thread0(&run)["missed"].as_u64().unwrap();
            assert!(
                (1_000..=2_300).contains(&n),
                "{name}: {n} samples and missed periods in 2 s"
            );
        }
        let per_s = thread0(&run)["per_second_max_ns"].as_array().unwrap().len();
        assert!(per_s <= 2, "{name}: {per_s} per-second maxima");
        if complete {
            let line = format!(
                "{} {} 1000 {}",
                test_cpu(),
                thread0(&run)["max_ns"],
                p.display()
            );
            let hooked = std::fs::read_to_string(hook_out.path()).unwrap();
            assert!(
                hooked.lines().any(|l| l == line),
                "{line:?} not in {hooked}"
            );
        }
    }
}

/// SIGKILL in the middle of a 1-minute interval, then a new watch: the same file goes on
/// (the first life's samples kept), the span not measured is a gap with a warning, and
/// `report` reads the file.
fn a_restart_after_sigkill_goes_on_in_the_file_with_the_gap_marked() {
    let _lock = latency_lock();
    // Not across a minute boundary: start in the first 35 s of a minute.
    while SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
        % 60
        > 35
    {
        std::thread::sleep(Duration::from_millis(200));
    }
    let dir = tempfile::tempdir().unwrap();
    let mut first = watch(dir.path(), &["--rotate", "1m"]);
    let deadline = Instant::now() + Duration::from_secs(10);
    while files(dir.path()).is_empty() {
        assert!(Instant::now() < deadline, "no file after the first samples");
        std::thread::sleep(Duration::from_millis(50));
    }
    let before = read_result(&files(dir.path())[0]).unwrap();
    first.kill().unwrap();
    first.wait().unwrap();
    let killed_at = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    std::thread::sleep(Duration::from_secs(2));
    let second = watch(dir.path(), &["--rotate", "1m"]);
    std::thread::sleep(Duration::from_secs(3));
    stop(second);
    let paths = files(dir.path());
    assert_eq!(paths.len(), 1, "{paths:?}");
    let run = read_result(&paths[0]).unwrap();
    assert_file_consistent(&run);
    assert_eq!(
        run["started_at"], before["started_at"],
        "the first life's start kept"
    );
    assert!(
        samples(&run) >= samples(&before) + 1_500,
        "{} then {}",
        samples(&before),
        samples(&run)
    );
    let sc = &run["scenarios"][0];
    let gaps = sc["params"]["extra"]["watch_gaps"]
        .as_array()
        .expect("a gap");
    assert_eq!(gaps.len(), 1);
    let (from, to) = (
        unix_s(gaps[0][0].as_str().unwrap()),
        unix_s(gaps[0][1].as_str().unwrap()),
    );
    assert!(
        from <= killed_at && to >= killed_at + 2 && to <= killed_at + 5,
        "{gaps:?} killed at {killed_at}"
    );
    assert!(
        sc["warnings"].to_string().contains("watch_gap"),
        "{}",
        sc["warnings"]
    );
    let out = latscope().arg("report").arg(&paths[0]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Bad input: one line naming the value, the allowed range and the fix; nothing measured.
fn bad_input_names_the_value_the_range_and_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&[&str], &[&str]); 5] = [
        (
            &["--rotate", "7s"],
            &["--rotate '7s'", "divides a day", "1h"],
        ),
        (
            &["--raw", "x.csv"],
            &["--raw", "bounded", "latscope timer --raw"],
        ),
        (
            &["--listen", "localhost"],
            &["--listen 'localhost'", "127.0.0.1:9464"],
        ),
        (
            &["--listen", "192.0.2.1:9464"],
            &["--listen '192.0.2.1:9464'", "choose a free port"],
        ),
        (&["--on-fail", "true"], &["--on-fail", "--fail-above"]),
    ];
    for (args, wanted) in cases {
        let out = latscope()
            .args(["watch", "--cpus", &test_cpu().to_string(), "--dir"])
            .arg(dir.path())
            .args(args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        for w in wanted {
            assert!(stderr.contains(w), "{args:?}: {w:?} not in {stderr}");
        }
        assert!(files(dir.path()).is_empty(), "{args:?} measured");
    }
}

pub fn cases() -> Vec<common::Case> {
    let prometheus = missing("prometheus", "prometheus");
    vec![
        common::case(
            "prometheus_scrapes_what_the_interval_file_holds",
            prometheus_scrapes_what_the_interval_file_holds,
        )
        .unless(prometheus),
        common::case(
            "rotation_every_two_seconds_and_sigterm_writes_the_last",
            rotation_every_two_seconds_and_sigterm_writes_the_last,
        ),
        common::case(
            "a_restart_after_sigkill_goes_on_in_the_file_with_the_gap_marked",
            a_restart_after_sigkill_goes_on_in_the_file_with_the_gap_marked,
        ),
        common::case(
            "bad_input_names_the_value_the_range_and_the_fix",
            bad_input_names_the_value_the_range_and_the_fix,
        ),
    ]
}
