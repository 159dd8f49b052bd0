//! `latscope cyclictest`: the drop-in for cyclictest, in one folder. Its command line
//! (args.rs: cyclictest's grammar; options.rs: what each option asks), what the options
//! mean for the timer probe (plan.rs), the run from start to end (run.rs), its main loop
//! streaming frames, samples and status while the probe measures (stream.rs), the files
//! it keeps meanwhile (status.rs), `--tracemark` (tracemark.rs) and the output layouts
//! cyclictest's users parse (format.rs). clap's side stays in src/cli/tools.rs; cyclictest's
//! `--json` files are read back by import/cyclictest.rs, below report and compare.

pub mod args;
pub mod format;
pub mod options;
pub mod plan;
pub mod run;
pub mod status;
pub mod stream;
pub mod tracemark;
