//! `latscope cyclictest`: the drop-in for cyclictest, in one folder. Its command line
//! (args.rs: cyclictest's grammar), what the options mean for the timer probe (plan.rs),
//! the output layouts cyclictest's users parse (format.rs) and its live `T:` lines
//! (live.rs). clap's side stays in cli.rs and the command's steps in commands.rs;
//! cyclictest's `--json` files are read back by import/cyclictest.rs, below report and
//! compare.

pub mod args;
pub mod format;
pub mod live;
pub mod plan;
