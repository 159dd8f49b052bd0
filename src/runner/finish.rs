//! After the last scenario (or an interrupt): the result file as one JSON document and
//! the summary formats, each rendered once from the journal and the summaries in memory,
//! written atomically; the raw file synced.

use super::store::Store;
use crate::output::exports::Format;
use crate::plan::Plan;
use crate::report::RenderOptions;
use crate::result::Run;
use anyhow::Context;
use std::io::Write;

/// Writes the result file and every export that does not go to stdout (`run_plan`
/// prints those after the table).
pub fn finish(plan: &Plan, run: &Run, store: &mut Store) -> anyhow::Result<()> {
    store.finish_raw()?;
    if let Some(path) = &plan.output.export_json {
        if path.as_os_str() != "-" {
            crate::output::atomic::write_atomically_with(path, |out| {
                write_document(run, store, out).map_err(std::io::Error::other)
            })
            .with_context(|| format!("writing {}", path.display()))?;
        }
    }
    let opts = RenderOptions {
        in_ns: plan.output.ns,
        limits: plan.output.limits.clone(),
    };
    for e in plan.output.exports.iter().filter(|e| !e.to_stdout()) {
        write_export(e, run, store, &opts)?;
    }
    Ok(())
}

/// One export: HTML streamed scenario by scenario from the journal (its plots need the
/// histograms), the others rendered from the summaries.
pub fn write_export(
    e: &crate::output::exports::Export,
    run: &Run,
    store: &Store,
    opts: &RenderOptions,
) -> anyhow::Result<()> {
    let written = if e.format == Format::Html {
        let html = crate::report::html::HtmlReporter {
            limits: opts.limits.clone(),
        };
        crate::output::atomic::write_atomically_with(&e.path, |out| {
            let mut each = |f: &mut dyn FnMut(&crate::result::Scenario) -> anyhow::Result<()>| {
                store.each_scenario(&mut |s| f(&s)).map(drop)
            };
            html.write_page(run, &mut each, out)
                .map_err(std::io::Error::other)
        })
    } else {
        let bytes = crate::report::reporter(e.format, opts)
            .render(run)
            .with_context(|| format!("rendering {}", e.format.flag()))?;
        crate::output::atomic::write_atomically(&e.path, &bytes)
    };
    written.with_context(|| format!("writing {}", e.path.display()))
}

/// The result file's one JSON document: `run`'s fields (pretty-printed as before) with
/// its scenarios read back from the journal one at a time, so no whole text is held.
pub fn write_document(run: &Run, store: &Store, out: &mut dyn Write) -> anyhow::Result<()> {
    let header = header_of(run);
    let text = serde_json::to_string_pretty(&header)?;
    // The one top-level key `"scenarios": []` (keys inside are indented further).
    const EMPTY: &str = "\n  \"scenarios\": []";
    let at = text
        .find(EMPTY)
        .context("the result's scenarios key is missing")?;
    out.write_all(&text.as_bytes()[..at])?;
    out.write_all(b"\n  \"scenarios\": [")?;
    let mut first = true;
    store.each_scenario(&mut |s| {
        out.write_all(if first { b"\n    " } else { b",\n    " })?;
        first = false;
        let pretty = serde_json::to_string_pretty(&s)?;
        out.write_all(pretty.replace('\n', "\n    ").as_bytes())?;
        Ok(())
    })?;
    out.write_all(if first { b"]" } else { b"\n  ]" })?;
    out.write_all(&text.as_bytes()[at + EMPTY.len()..])?;
    out.write_all(b"\n")?;
    Ok(())
}

/// `run` without its scenarios or checkpoint, copied field by field: `..run.clone()` would
/// copy every scenario's summary first, a transient that grew the peak RSS with the number
/// of scenarios (issue 23's goal: 300 scenarios within 2 MB of 10).
fn header_of(run: &Run) -> Run {
    Run {
        schema_version: run.schema_version,
        tool: run.tool.clone(),
        tool_version: run.tool_version.clone(),
        command_line: run.command_line.clone(),
        started_at: run.started_at.clone(),
        finished_at: run.finished_at.clone(),
        interrupted: run.interrupted,
        interrupted_by: run.interrupted_by.clone(),
        plan_hash: run.plan_hash.clone(),
        checkpoint: None,
        system: run.system.clone(),
        warnings: run.warnings.clone(),
        scenarios: Vec::new(),
        suite: run.suite.clone(),
    }
}
