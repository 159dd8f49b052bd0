//! The options of the commands that read saved runs: report (its outputs and the
//! worst-case series) and compare.

use super::*;
use crate::compare::multi::Axis;
use crate::output::exports::Format;
use clap::Args;
use std::path::PathBuf;

/// Options of `latscope report`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  latscope report run.json                        \
# the table again\n  latscope report run.json --format html -o run.html\n  \
latscope report run.json --fail-above p99=50us,max=100us --export-junit junit.xml\n  \
latscope report cyclictest.json                 # cyclictest --json output works too\n  \
latscope report wake.json --iterations 1-20     # the wake probe's first iterations\n  \
latscope report jan.json feb.json mar.json --by date -f html -o trend.html   # trend chart\n  \
latscope report /var/lib/latscope/watch/ -f html -o month.html   # long-term plot\n  \
latscope report lava-job.yaml                   # a LAVA job log with --export-lava's cases"
)]
pub struct ReportArgs {
    /// A result file written by --export-json (or by `cyclictest --json`).
    #[arg(value_name = "RUN.json")]
    pub input: PathBuf,
    /// More result files: one view of them all (a column per host, kernel, date or file).
    #[arg(value_name = "MORE.json")]
    pub more_inputs: Vec<PathBuf>,
    /// With several files: what the columns stand for (host, kernel, date, file; default
    /// file).
    #[arg(long, value_enum, value_name = "AXIS")]
    pub by: Option<Axis>,
    /// One machine's interval files over days as OSADL's long-term view: a row per interval
    /// in time order, the long-term plot (HTML), the worst case over the whole period. The
    /// default for a directory (`latscope report /var/lib/latscope/watch/`) and for files
    /// all named `watch-*.json`.
    #[arg(long)]
    pub long_term: bool,
    /// The format to print (or write with -o).
    #[arg(short = 'f', long, value_enum, default_value = "table")]
    pub format: Format,
    /// Write the --format output to this file instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub out_file: Option<PathBuf>,
    /// List these iterations of every wake scenario instead of the table: iteration,
    /// switch time (needs a `--trace` run), response time. `1-20` or `5`; iteration 1 is
    /// the first wake-up (cold, warm-up); the result keeps the first 100.
    #[arg(long, value_name = "RANGE")]
    pub iterations: Option<String>,
    #[command(flatten)]
    pub worst_case: WorstCaseArgs,
    #[command(flatten)]
    pub output: ReportOutputArgs,
}

/// What `latscope report` writes besides --format: the run's exports and verdict, without
/// the options of a running measurement (--checkpoint, --resume), so its help lists none
/// that would do nothing (issue 25, item 5).
#[derive(Debug, Args, Clone, Default)]
#[command(next_help_heading = "Exports and verdicts")]
pub struct ReportOutputArgs {
    /// No table on stdout and no PASS line (FAIL lines, errors and warnings still go to
    /// stderr; the exit code says the verdict).
    #[arg(short = 'q', long)]
    pub quiet: bool,
    /// Show latencies in ns instead of µs with two decimals.
    #[arg(long)]
    pub ns: bool,
    /// Write the run as latscope's JSON result (`-` = stdout): a cyclictest --json file or
    /// a LAVA log becomes a result `report` and `compare` read.
    #[arg(long = "export-json", value_name = "FILE")]
    pub export_json: Option<PathBuf>,
    #[command(flatten)]
    pub exports: ExportArgs,
}

/// `latscope report --worst-case`: the estimate beyond the samples.
#[derive(Debug, Args, Clone, Default)]
#[command(next_help_heading = "Worst case beyond the samples (--worst-case)")]
pub struct WorstCaseArgs {
    /// Estimate the latency exceeded with probability 1e-6, 1e-9, 1e-12 per period, with
    /// 95 % intervals and the checks that allow it. Input: a result (its per-second maxima:
    /// block maxima) or a plain series, one latency per line in time order (needs --unit).
    #[arg(long = "worst-case")]
    pub worst_case: bool,
    /// The unit of a plain series' values.
    #[arg(long, value_enum, value_name = "UNIT")]
    pub unit: Option<SeriesUnit>,
    /// The fit: peaks-over-threshold (GPD; the default for a series) or block-maxima
    /// (GEV; the only one a result file allows).
    #[arg(long = "worst-case-method", value_enum, value_name = "METHOD")]
    pub method: Option<crate::stats::worst_case::Method>,
    /// Samples per block (block maxima; a result's blocks are whole seconds). Default: √n.
    #[arg(long = "block-size", value_name = "N")]
    pub block_size: Option<u64>,
    /// The threshold of peaks over threshold, e.g. `120us`. Default: 2·√n samples above.
    #[arg(long = "threshold", value_name = "DURATION")]
    pub threshold: Option<String>,
    /// The period of a plain series, e.g. `1ms`, for the per-hour figures.
    #[arg(long = "period", value_name = "DURATION")]
    pub period: Option<String>,
}

/// The unit of a plain series (`--unit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SeriesUnit {
    Ns,
    Us,
}

/// Options of `latscope compare`.
#[derive(Debug, Args)]
#[command(
    after_help = "Scenarios are aligned by probe, method, period, loads, CPU and metric (a \
method's parenthesized suffix such as `(cyclictest)` is ignored; `--ignore` leaves axes \
out). Nothing lined up is an error (exit code 9) naming the axes that differ.\n\n\
Rule syntax: STATS:PERCENT[:ABSOLUTE], e.g. `p99.9,max:10%:5us` (the default): a \
statistic regressed when it is worse than the first run by more than PERCENT and by more \
than ABSOLUTE and the two runs' 95 % bootstrap intervals (from each histogram, seeded) do \
not overlap; improved when better by all three; \"within noise\" when the intervals overlap. Give --rule several times to judge several \
groups; a scenario regressed when any rule says so.\n\nExamples:\n  latscope compare \
base.json new.json\n  latscope compare idle.json loaded.json --ignore load     # idle against loaded\n  \
latscope compare base.json new.json --fail-on-regression --rule \
'max:20%:10us'\n  latscope compare latscope.json cyclictest.json --export-html cmp.html\n  \
latscope compare a.json b.json c.json --by host --export-html boards.html   # one column per board\n  \
latscope compare vanilla.json rt.json                # two rt-cost suite runs: the % change table\n\n\
Files may also be LAVA job logs holding the test sets and cases of --export-lava."
)]
pub struct CompareArgs {
    /// Two or more result files (latscope --export-json or cyclictest --json); the first
    /// is the baseline.
    #[arg(value_name = "RUN.json", num_args = 2.., required = true)]
    pub inputs: Vec<PathBuf>,
    /// One table with a column per host, kernel, date or file (the default with more
    /// than two files); `date` puts the columns in time order and draws trend charts.
    #[arg(long, value_enum, value_name = "AXIS")]
    pub by: Option<Axis>,
    /// Regression rule(s): STATS:PERCENT[:ABSOLUTE]. [default: p99.9,max:10%:5us]
    #[arg(long, value_name = "RULE")]
    pub rule: Vec<String>,
    /// Leave an axis out of the line-up (repeat or comma-separate), e.g. `--ignore load`
    /// to compare an idle run with a loaded one.
    #[arg(long, value_enum, value_name = "AXIS", value_delimiter = ',')]
    pub ignore: Vec<crate::compare::IgnoreAxis>,
    /// Exit with code 3 when any scenario regressed.
    #[arg(long)]
    pub fail_on_regression: bool,
    #[command(flatten)]
    pub output: CompareOutputArgs,
}

/// What `latscope compare` writes: the comparison's formats only (HTML, Markdown, CSV),
/// so its help lists no option it would refuse (issue 22, item 8).
#[derive(Debug, Args, Clone, Default)]
pub struct CompareOutputArgs {
    /// No table on stdout (errors, warnings and verdicts still go to stderr).
    #[arg(short = 'q', long)]
    pub quiet: bool,
    /// Show latencies in ns instead of µs with two decimals.
    #[arg(long)]
    pub ns: bool,
    /// Write the comparison as CSV (`-` = stdout): one row per scenario × CPU ×
    /// statistic × run, with the change and verdict.
    #[arg(long = "export-csv", value_name = "FILE")]
    pub export_csv: Option<PathBuf>,
    /// Write the comparison tables as Markdown (`-` = stdout).
    #[arg(long = "export-markdown", value_name = "FILE")]
    pub export_markdown: Option<PathBuf>,
    /// Write a self-contained HTML comparison with overlaid histograms (`-` = stdout).
    #[arg(long = "export-html", value_name = "FILE")]
    pub export_html: Option<PathBuf>,
    /// Fail (exit code 3, one FAIL line per breach) when a statistic of a later run
    /// exceeds its limit, e.g. `p99=50us,max=100us`.
    #[arg(long = "fail-above", value_name = "STAT=LIMIT,...")]
    pub fail_above: Option<String>,
}
