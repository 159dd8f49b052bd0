//! `compare` for a real A/B (issue 25, item 6), on files of short real runs: idle against
//! loaded lines up only with `--ignore load` (without it: exit code 9 naming the axis);
//! the same command run twice is REGRESSED only where the 95 % intervals compare printed
//! do not overlap; the rule, both runs' context and the marked rows appear in the
//! terminal, Markdown and HTML; colour only on a terminal and never with NO_COLOR.

use crate::common;

use common::{fixture, latency_lock, latscope, usable_cpu};
use std::path::{Path, PathBuf};

/// `latscope timer -l 300 -a CPU` (with `extra`) saved as `name` in `dir`.
fn run(dir: &Path, name: &str, extra: &[&str]) -> PathBuf {
    let path = dir.join(name);
    let cpu = usable_cpu().to_string();
    common::assert_success(
        latscope()
            .args(["timer", "-l", "300", "-a", &cpu, "-q", "--export-json"])
            .arg(&path)
            .args(extra)
            .output()
            .unwrap(),
    );
    path
}

fn compare(args: &[&std::ffi::OsStr]) -> (i32, String, String) {
    let out = latscope().arg("compare").args(args).output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The cells of the row of `stat` in a two-run table, trimmed.
fn row<'a>(text: &'a str, stat: &str) -> Vec<&'a str> {
    text.lines()
        .filter(|l| l.starts_with('│'))
        .map(|l| {
            l.trim_matches('│')
                .split('┆')
                .map(str::trim)
                .collect::<Vec<_>>()
        })
        .find(|c| c[0] == stat)
        .unwrap_or_else(|| panic!("no {stat} row in:\n{text}"))
}

/// `a–b | c–d` (µs) as two intervals.
fn intervals(cell: &str) -> [(f64, f64); 2] {
    let one = |s: &str| {
        let (lo, hi) = s.trim().split_once('–').expect(cell);
        (lo.parse::<f64>().unwrap(), hi.parse::<f64>().unwrap())
    };
    let (a, b) = cell.split_once('|').expect(cell);
    [one(a), one(b)]
}

fn idle_and_loaded_line_up_only_with_ignore_load() {
    let dir = tempfile::tempdir().unwrap();
    let (idle, loaded) = {
        let _lock = latency_lock();
        (
            run(dir.path(), "idle.json", &[]),
            run(dir.path(), "loaded.json", &["--load", "cpu"]),
        )
    };
    for extra in [&[][..], &["--fail-on-regression"][..]] {
        let mut args = vec![idle.as_os_str(), loaded.as_os_str()];
        args.extend(extra.iter().map(std::ffi::OsStr::new));
        let (code, out, err) = compare(&args);
        assert_eq!(
            code, 9,
            "nothing compared is exit code 9 ({extra:?}):\n{out}{err}"
        );
        assert!(out.is_empty(), "{out}");
        assert!(
            err.contains("nothing to compare")
                && err.contains("differ in load (idle.json: none; loaded.json: cpu")
                && err.contains("add --ignore load"),
            "{err}"
        );
    }
    let (code, out, err) = compare(&[
        idle.as_os_str(),
        loaded.as_os_str(),
        "--ignore".as_ref(),
        "load".as_ref(),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let cpu = usable_cpu();
    assert!(
        out.contains(&format!(
            "\ntimer clock-nanosleep 1 ms cpu{cpu} (any load) — "
        )),
        "{out}"
    );
    let loads = row(&out, "loads");
    assert_eq!(
        loads[1..],
        ["none", "cpu"],
        "the context shows each run's loads"
    );
    let (code, _, err) = compare(&[
        idle.as_os_str(),
        loaded.as_os_str(),
        "--ignore=lod".as_ref(),
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("'load'"), "a near miss is named: {err}");
}

fn the_same_command_twice_regresses_only_beyond_the_printed_noise() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = {
        let _lock = latency_lock();
        (
            run(dir.path(), "a.json", &[]),
            run(dir.path(), "b.json", &[]),
        )
    };
    let md = dir.path().join("cmp.md");
    let html = dir.path().join("cmp.html");
    let (code, out, err) = compare(&[
        a.as_os_str(),
        b.as_os_str(),
        "--export-markdown".as_ref(),
        md.as_os_str(),
        "--export-html".as_ref(),
        html.as_os_str(),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    // latscope's decision against the intervals it printed, not the host's mood.
    let marked = marks_follow_the_intervals(&out);
    let verdict = out
        .lines()
        .find(|l| {
            [
                "REGRESSED:",
                "improved:",
                "within noise:",
                "undecidable:",
                "unchanged:",
            ]
            .iter()
            .any(|v| l.starts_with(v))
        })
        .expect(&out);
    assert_eq!(marked > 0, !verdict.starts_with("unchanged:"), "{out}");
    if verdict.starts_with("REGRESSED") {
        eprintln!("note: two runs of one command differed beyond their noise here:\n{out}");
    }
    // The rule, the noise method and both runs' context, in every format.
    let rule = "Rule: a scenario regressed when p99.9 or max is worse by more than 10 % and \
more than 5 µs than in a.json, beyond the noise";
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    let md = std::fs::read_to_string(&md).unwrap();
    let html = std::fs::read_to_string(&html).unwrap();
    for (what, text) in [("terminal", &out), ("markdown", &md), ("html", &html)] {
        assert!(text.contains(rule), "{what}: {text}");
        assert!(
            text.contains("95 % bootstrap interval (1000 resamples"),
            "{what}"
        );
        assert!(text.contains(kernel.trim()), "{what}: the kernel");
        assert!(
            text.contains("latscope timer -l 300") && text.contains("b.json"),
            "{what}: the command lines"
        );
        assert!(
            text.contains("dma latency") && text.contains("fifo 95"),
            "{what}"
        );
    }
    assert_eq!(html.contains("<tr class=\"behind\">"), marked > 0, "{html}");
    command_lines_read_as_code(&html, &md);
}

/// Each judged statistic's mark agrees with the two intervals printed beside it (apart
/// only when regressed or improved); how many rows carry a `◀` mark.
fn marks_follow_the_intervals(out: &str) -> usize {
    let mut marked = 0;
    for stat in ["p99.9", "max"] {
        let cells = row(out, stat);
        let [ia, ib] = intervals(cells[5]);
        if stat == "max" {
            let (va, vb): (f64, f64) = (cells[1].parse().unwrap(), cells[2].parse().unwrap());
            assert!(
                ia.1 == va && ib.1 == vb,
                "a max interval ends at the max: {cells:?}"
            );
        }
        let apart = ib.0 > ia.1 || ib.1 < ia.0;
        match cells[6] {
            "◀ regressed" | "◀ improved" => assert!(apart, "beyond the noise only: {cells:?}"),
            // Undecidable is said only of a change inside the noise whose intervals are too
            // wide to tell (a host's stop in one run's max): never of intervals apart.
            "◀ within noise" | "within noise" | "◀ undecidable" | "undecidable" => {
                assert!(!apart, "{cells:?}")
            }
            "judged" => {}
            other => panic!("mark {other:?} on a judged row: {cells:?}"),
        }
        marked += usize::from(cells[6].starts_with('◀'));
    }
    marked
}

/// The context's command lines read as code: `<code>` in HTML, a code span in Markdown.
fn command_lines_read_as_code(html: &str, md: &str) {
    let cmd_row = |text: &str, head: &str| {
        text.lines()
            .find(|l| l.contains(head))
            .unwrap_or_else(|| panic!("no command line row: {text}"))
            .to_string()
    };
    let html_row = cmd_row(html, "<td>command line</td>");
    let md_row = cmd_row(md, "| command line |");
    assert_eq!(
        html_row.matches("<td><code>latscope timer -l 300").count(),
        2,
        "{html_row}"
    );
    assert!(html_row.contains("b.json</code></td>"), "{html_row}");
    assert_eq!(
        md_row.matches("| `latscope timer -l 300").count(),
        2,
        "{md_row}"
    );
    assert!(md_row.contains("b.json` |"), "{md_row}");
}

/// The verdict lines are coloured on a terminal (a real pty through `script`), and not
/// with NO_COLOR nor into a pipe.
fn verdicts_are_coloured_only_on_a_terminal() {
    let files = format!(
        "{} {}",
        fixture("run.json").display(),
        fixture("run_regressed.json").display()
    );
    let on_tty = |no_color: bool| {
        let mut cmd = std::process::Command::new("script");
        cmd.args(["-qec"])
            .arg(format!(
                "{} compare {files}",
                common::latscope_path().display()
            ))
            .arg("/dev/null")
            .env_remove("NO_COLOR")
            .env_remove("CLICOLOR_FORCE")
            .env("TERM", "xterm-256color");
        if no_color {
            cmd.env("NO_COLOR", "1");
        }
        String::from_utf8_lossy(&cmd.output().unwrap().stdout).into_owned()
    };
    let red = "\x1b[31mREGRESSED: ";
    let coloured = on_tty(false);
    assert!(coloured.contains(red), "{coloured:?}");
    assert!(!on_tty(true).contains('\x1b'), "NO_COLOR is honoured");
    let (_, piped, _) = compare(&[
        fixture("run.json").as_os_str(),
        fixture("run_regressed.json").as_os_str(),
    ]);
    assert!(
        !piped.contains('\x1b') && piped.contains("\nREGRESSED: "),
        "{piped}"
    );
}

/// This module's tests, for tests/it/main.rs.
pub fn cases() -> Vec<common::Case> {
    let mut cases = common::test_cases![
        idle_and_loaded_line_up_only_with_ignore_load,
        the_same_command_twice_regresses_only_beyond_the_printed_noise
    ];
    cases.push(
        common::case(
            "verdicts_are_coloured_only_on_a_terminal",
            verdicts_are_coloured_only_on_a_terminal,
        )
        .unless(common::missing("script", "bsdutils")),
    );
    cases
}
