//! `--raw` rows land whole: a reader polling the file while a suite appends each
//! scenario's rows finds it ending at a row's end, and a SIGKILL sent while a scenario's
//! rows are being appended leaves only complete rows. The one exception is the kernel's:
//! it publishes a write page by page, so a row straddling a page boundary can be seen (or
//! cut by a kill) at that boundary for the µs of its copy; it is counted and printed.

use crate::common;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// The unit the kernel publishes a write's bytes in (output/whole_rows.rs).
const PAGE: u64 = 4096;

/// Samples per scenario at 100 µs: about 0.8 MB of rows, appended in a few ms.
const SAMPLES: u64 = 12_000;

/// What the poller saw: every length it read, and whether it killed the run.
struct Polled {
    lengths: usize,
    /// Polls that found the file ending at a page boundary inside a straddling row.
    page_cuts: usize,
    appends_seen: usize,
    killed: bool,
}

/// Polls `raw` (its length, then the byte before it) until `child` exits; panics when
/// the file ends inside a row. Sends SIGKILL as soon as the third scenario's rows start
/// to land (the second burst of growth after the file appeared), so the kill falls
/// among the appending writes.
fn poll(raw: &Path, child: &mut std::process::Child) -> Polled {
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut file = None;
    let (mut last_len, mut last_change) = (0u64, Instant::now());
    let mut polled = Polled {
        lengths: 0,
        page_cuts: 0,
        appends_seen: 0,
        killed: false,
    };
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the suite took over 60 s");
        }
        if file.is_none() {
            file = std::fs::File::open(raw).ok();
        }
        let Some(f) = &file else {
            std::thread::sleep(Duration::from_micros(200));
            continue;
        };
        let len = f.metadata().unwrap().len();
        if len > 0 {
            let mut last = [0u8];
            f.read_exact_at(&mut last, len - 1).unwrap();
            if last[0] != b'\n' {
                // The kernel raises a file's size page by page within one write: a row
                // that straddles a page boundary is seen cut there for the µs of its copy
                // (output/whole_rows.rs). Anywhere else, a write ended inside a row.
                if len % PAGE != 0 {
                    let _ = child.kill();
                    panic!("the file ended inside a row at byte {len}, not at a page boundary");
                }
                polled.page_cuts += 1;
            }
            polled.lengths += 1;
        }
        if len != last_len {
            // A new burst: growth after the file stood still for 100 ms (a scenario).
            if last_len > 0 && last_change.elapsed() > Duration::from_millis(100) {
                polled.appends_seen += 1;
                if polled.appends_seen == 2 && !polled.killed {
                    child.kill().unwrap();
                    polled.killed = true;
                }
            }
            (last_len, last_change) = (len, Instant::now());
        }
        std::thread::sleep(Duration::from_micros(20));
    }
    polled
}

/// Every line of the file is a complete row: it ends with a line end and has the
/// header's number of fields, and no scenario has more rows than samples.
fn assert_whole_rows(raw: &Path) -> usize {
    let mut text = std::fs::read(raw).unwrap();
    if text.last() != Some(&b'\n') {
        // Only a kill during the copy of a row that straddles a page boundary can cut
        // it, and only at that boundary.
        assert_eq!(text.len() as u64 % PAGE, 0, "the file ends inside a row");
        let end = text.iter().rposition(|&b| b == b'\n').unwrap() + 1;
        eprintln!(
            "killed while a row straddling byte {} was copied: cut there",
            text.len()
        );
        text.truncate(end);
    }
    let mut reader = csv::ReaderBuilder::new().from_reader(text.as_slice());
    let columns = reader.headers().unwrap().len();
    let mut per_scenario = std::collections::BTreeMap::<String, u64>::new();
    for (i, record) in reader.records().enumerate() {
        let record = record.unwrap_or_else(|e| panic!("row {i}: {e}"));
        assert_eq!(record.len(), columns, "row {i} is cut: {record:?}");
        let value: u64 = record[columns - 1].parse().expect("a whole number");
        assert!(value > 0, "row {i}: {record:?}");
        *per_scenario.entry(record[0].to_string()).or_default() += 1;
    }
    for (name, rows) in &per_scenario {
        assert!(
            *rows <= SAMPLES,
            "{name}: {rows} rows for {SAMPLES} samples"
        );
    }
    per_scenario.len()
}

fn raw_rows_land_whole_for_a_reader_and_after_sigkill() {
    // It measures (a 100 µs timer): no latency test beside it.
    let _lock = common::latency_lock();
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("plan.toml");
    let periods: Vec<String> = (0..6).map(|i| format!("\"{}us\"", 100 + i)).collect();
    let mut f = std::fs::File::create(&plan).unwrap();
    writeln!(
        f,
        "title = \"raw rows\"\nsamples = {SAMPLES}\n\n[[matrix]]\nmethods = [\"clock-nanosleep\"]\nperiods = [{}]",
        periods.join(", ")
    )
    .unwrap();
    let raw = dir.path().join("raw.csv");
    let mut child = common::latscope_command()
        .args(["suite", "--plan"])
        .arg(&plan)
        .args([
            "--warmup",
            "0",
            "-q",
            "--cpus",
            &common::test_cpu().to_string(),
        ])
        .arg("--raw")
        .arg(&raw)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let polled = poll(&raw, &mut child);
    child.wait().unwrap();
    assert!(
        polled.killed,
        "the suite ended before its third scenario's rows ({} appends seen)",
        polled.appends_seen
    );
    assert!(polled.lengths > 100, "only {} polls", polled.lengths);
    let scenarios = assert_whole_rows(&raw);
    // The first two scenarios' rows, and of the third none, some or all: whole rows.
    assert!((2..=3).contains(&scenarios), "{scenarios} scenarios' rows");
    eprintln!(
        "{} polls of the file's end, all at a row's end but {} at a page boundary inside a straddling row; killed among the third scenario's appends; {scenarios} scenarios' rows whole",
        polled.lengths, polled.page_cuts
    );
}

/// This module's tests, for tests/it/main.rs.
pub fn cases() -> Vec<common::Case> {
    common::test_cases![raw_rows_land_whole_for_a_reader_and_after_sigkill]
}
