//! The result journal: what `--export-json FILE` holds while a run is going (and after a
//! `kill -9`): JSON lines, a header (the Run without scenarios), one line per finished
//! scenario appended once, and at most one `partial` line (the running scenario's
//! checkpoint). Appending keeps the cost of saving a scenario flat; the run's end replaces
//! the journal with the one-document result file. `report`, `compare` and `--resume` read
//! both.

use super::{Checkpoint, Run, Scenario};
use crate::error::UserError;
use serde::{Deserialize, Serialize};
use std::io::BufRead;

/// The key of the header line, the first of every journal.
pub const JOURNAL_KEY: &str = "latscope_journal";
/// The journal layout's version (the Run inside carries its own `schema_version`).
pub const JOURNAL_VERSION: u32 = 1;

/// One line of the journal.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Line {
    /// A finished (or cut short) scenario, written once.
    Scenario(Box<Scenario>),
    /// The running scenario so far (a checkpoint), superseded by the next line.
    Partial(Box<PartialLine>),
}

/// A checkpoint: the running scenario's partial result and its counts (the `checkpoint`
/// object of the result file).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PartialLine {
    pub scenario: Scenario,
    pub checkpoint: Checkpoint,
}

/// The first line: the journal's version and the Run without its scenarios.
#[derive(Serialize, Deserialize)]
struct Header {
    latscope_journal: u32,
    run: Run,
}

/// The header line of `run` (its scenarios left out), with its newline.
pub fn header_line(run: &Run) -> serde_json::Result<Vec<u8>> {
    let mut run = Run {
        scenarios: Vec::new(),
        checkpoint: None,
        ..run.clone()
    };
    // A journal is a run that has not ended: a reader finding one was cut off.
    run.interrupted = true;
    let mut bytes = serde_json::to_vec(&Header {
        latscope_journal: JOURNAL_VERSION,
        run,
    })?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// One line (a scenario or a partial one), with its newline.
pub fn line(line: &Line) -> serde_json::Result<Vec<u8>> {
    let mut bytes = serde_json::to_vec(line)?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// Whether a file's text is a journal (its first line is a header).
pub fn is_journal(text: &str) -> bool {
    text.starts_with(&format!("{{\"{JOURNAL_KEY}\":"))
}

/// Reads a journal's lines one by one: the header's Run (scenarios empty), then `each`
/// finished scenario in order; returns the last checkpoint if no scenario line followed
/// it. A last line without its newline is being written (or was cut by a kill): it is
/// not read. Memory: one line at a time.
pub fn read(
    input: impl BufRead,
    name: &str,
    mut each: impl FnMut(Scenario) -> Result<(), UserError>,
) -> Result<(Run, Option<PartialLine>), UserError> {
    let bad = |reason: String| UserError::BadInputFile {
        path: name.to_string(),
        reason,
    };
    let mut run = None;
    let mut partial = None;
    for (number, text) in input.split(b'\n').enumerate() {
        let text = text.map_err(|e| bad(e.to_string()))?;
        if number == 0 {
            let header: Header =
                serde_json::from_slice(&text).map_err(|e| bad(format!("journal header: {e}")))?;
            check_version(header.run.schema_version).map_err(bad)?;
            run = Some(header.run);
            continue;
        }
        if text.is_empty() {
            continue;
        }
        match serde_json::from_slice::<Line>(&text) {
            Ok(Line::Scenario(s)) => {
                partial = None;
                each(*s)?;
            }
            Ok(Line::Partial(p)) => partial = Some(*p),
            // Only the last line may be cut (split() hands it over without its newline).
            Err(e) => return Err(bad(format!("journal line {}: {e}", number + 1))),
        }
    }
    let run = run.ok_or_else(|| bad("an empty journal".into()))?;
    Ok((run, partial))
}

fn check_version(v: u32) -> Result<(), String> {
    if v == super::SCHEMA_VERSION {
        Ok(())
    } else {
        Err(format!(
            "schema_version {v} is not supported (this latscope reads {}); re-run with this version",
            super::SCHEMA_VERSION
        ))
    }
}

/// The text up to its last newline: a line still being appended is left out.
pub fn complete_lines(text: &str) -> &str {
    match text.rfind('\n') {
        Some(i) => &text[..=i],
        None => "",
    }
}

/// A journal's whole Run (for `report`, `compare`, `--resume`): its scenarios, then the
/// checkpoint's partial scenario (marked `partial` and `interrupted`) and counts.
pub fn parse(path: &std::path::Path, text: &str) -> Result<Run, UserError> {
    let name = super::input_name(path);
    let mut scenarios = Vec::new();
    let (mut run, partial) = read(complete_lines(text).as_bytes(), &name, |s| {
        scenarios.push(s);
        Ok(())
    })?;
    run.scenarios = scenarios;
    if let Some(p) = partial {
        run.scenarios.push(p.scenario);
        run.checkpoint = Some(p.checkpoint);
    }
    run.respell_old_names();
    Ok(run)
}

/// One line per partial scenario (a checkpoint of a run killed while it measured).
pub fn partial_lines(run: &Run) -> String {
    let mut out = String::new();
    for sc in run.scenarios.iter().filter(|s| s.partial) {
        out.push_str(&format!(
            "partial: '{}' was still measuring when the file was last written (a checkpoint after {}): its statistics cover that part\n",
            sc.name,
            crate::units::human_ns(sc.elapsed_ns)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(name: &str) -> Scenario {
        serde_json::from_value(serde_json::json!({
            "name": name, "probe": "timer", "interrupted": false, "started_at": "t",
            "elapsed_ns": 1, "threads": [],
            "params": {"method": "m", "period_ns": 1, "policy": "fifo", "priority": 1,
                "deadline_ns": 1, "warmup_ns": 0, "samples": 1, "duration_ns": 0,
                "cpus": [0], "dma_latency_us": null}
        }))
        .unwrap()
    }

    fn journal() -> (Run, Vec<u8>) {
        let run = Run::new(Default::default(), vec!["latscope".into()]);
        let mut bytes = header_line(&run).unwrap();
        bytes.extend(line(&Line::Scenario(Box::new(scenario("a")))).unwrap());
        (run, bytes)
    }

    #[test]
    fn a_journal_reads_back_as_its_run_marked_interrupted() {
        let (_, mut bytes) = journal();
        let partial = PartialLine {
            scenario: Scenario {
                partial: true,
                ..scenario("b")
            },
            checkpoint: Checkpoint {
                scenario: "b".into(),
                partial: true,
                started_at: "t".into(),
                written_at: "t".into(),
                elapsed_ns: 5,
                threads: vec![],
            },
        };
        bytes.extend(line(&Line::Partial(Box::new(partial))).unwrap());
        // A line being appended when read is left out.
        bytes.extend(b"{\"scenario\":{\"name\":");
        let text = String::from_utf8(bytes).unwrap();
        assert!(is_journal(&text));
        let run = parse(std::path::Path::new("j"), &text).unwrap();
        assert!(run.interrupted);
        let names: Vec<_> = run.scenarios.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        assert!(run.scenarios[1].partial && !run.scenarios[0].partial);
        assert_eq!(run.checkpoint.unwrap().elapsed_ns, 5);
    }

    #[test]
    fn a_scenario_line_supersedes_the_checkpoint_before_it() {
        let (_, mut bytes) = journal();
        let partial = PartialLine {
            scenario: scenario("b"),
            checkpoint: Checkpoint {
                scenario: "b".into(),
                partial: true,
                started_at: "t".into(),
                written_at: "t".into(),
                elapsed_ns: 5,
                threads: vec![],
            },
        };
        bytes.extend(line(&Line::Partial(Box::new(partial))).unwrap());
        bytes.extend(line(&Line::Scenario(Box::new(scenario("b")))).unwrap());
        let run = parse(
            std::path::Path::new("j"),
            std::str::from_utf8(&bytes).unwrap(),
        )
        .unwrap();
        assert_eq!(run.scenarios.len(), 2);
        assert!(run.checkpoint.is_none() && !run.scenarios[1].partial);
    }
}
