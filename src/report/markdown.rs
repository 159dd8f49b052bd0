//! `--export-markdown`: the terminal table as a Markdown table (for merge requests,
//! wikis and issue trackers), with the system in one line and the warnings as a list.

use super::Reporter;
use crate::render::markdown::{md_cell, md_table};
use crate::result::Run;
use std::fmt::Write;

pub struct MarkdownReporter {
    pub in_ns: bool,
}

impl Reporter<Run> for MarkdownReporter {
    fn render(&self, run: &Run) -> anyhow::Result<Vec<u8>> {
        let mut out = String::new();
        let sys = &run.system;
        let _ = writeln!(out, "## latscope results\n");
        let _ = writeln!(
            out,
            "**{}**  \n**{}**\n",
            md_cell(&super::headline::run_what_ran(run)),
            md_cell(&super::headline::worst(run))
        );
        let _ = writeln!(
            out,
            "`{}` on {}: Linux {} ({}), {}, clocksource {}, {} CPUs\n",
            run.command_line.join(" ").replace('`', "'"),
            md_cell(&sys.hostname),
            md_cell(&sys.kernel_release),
            md_cell(&sys.preemption_model),
            md_cell(&sys.cpu_model),
            md_cell(&sys.clocksource),
            sys.online_cpus.len()
        );
        match &run.suite {
            // A suite: the study's tables, as the terminal shows them.
            Some(info) => {
                if !info.title.is_empty() {
                    let _ = writeln!(out, "### {}\n", md_cell(&info.title));
                }
                let view = super::study::study_view(run, info, self.in_ns);
                for (i, t) in view.tables.iter().enumerate() {
                    if i > 0 {
                        out.push('\n');
                    }
                    if !t.title.is_empty() {
                        let _ = writeln!(out, "**{}**\n", md_cell(&t.title));
                    }
                    out.push_str(&md_table(&t.header, &t.rows, t.first_numeric));
                }
                for note in &view.notes {
                    let _ = write!(out, "\n*Note: {}*\n", md_cell(note));
                }
            }
            None => {
                let (header, rows, first_numeric) = super::table::header_and_rows(run, self.in_ns);
                out.push_str(&md_table(&header, &rows, first_numeric));
            }
        }
        if run.interrupted {
            out.push_str("\n*Interrupted: the statistics cover what was measured until then.*\n");
        }
        // A killed run's checkpoint: which scenario it is and how much it covers.
        for line in crate::result::journal::partial_lines(run).lines() {
            let _ = writeln!(out, "\n*{}*", md_cell(line));
        }
        let mut warnings: Vec<String> = Vec::new();
        for sc in &run.scenarios {
            for w in &sc.warnings {
                warnings.push(format!("{}: {}", md_cell(&sc.name), md_cell(&w.message)));
            }
        }
        warnings.extend(run.warnings.iter().map(|w| md_cell(&w.message)));
        if !warnings.is_empty() {
            out.push_str("\n**Warnings**\n\n");
            for w in warnings {
                let _ = writeln!(out, "- {w}");
            }
        }
        Ok(out.into_bytes())
    }
}
