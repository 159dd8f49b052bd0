//! Entry point: parse the command line, run, print errors once with their context, and
//! exit with the documented code.

#![deny(unsafe_code)]

use clap::Parser;
use latscope::error::{UserError, EXIT_FAILURE, EXIT_INTERRUPTED};

/// The write a signal gave up (standard output or a FIFO nobody read), if that was it.
fn given_up(err: &anyhow::Error) -> Option<&latscope::sys::fifo::WriteGivenUp> {
    err.chain().find_map(|e| {
        e.downcast_ref::<std::io::Error>()
            .and_then(latscope::sys::fifo::given_up)
    })
}

/// Whether the error is a write to a closed pipe (`latscope timer | head -1`).
fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

fn main() {
    let command_line: Vec<String> = std::env::args().collect();
    if let Some(refusal) = latscope::cli::cyclictest_histogram_typed_to_timer(&command_line) {
        eprintln!("latscope: error: {refusal}");
        std::process::exit(latscope::error::EXIT_USAGE);
    }
    let cli = match latscope::cli::Cli::try_parse() {
        Ok(cli) => cli,
        // clap's refusals of values and options in the one-line style of the rest.
        Err(err) => match latscope::cli_error::one_line(&err) {
            Some(line) => {
                eprintln!("latscope: error: {line}");
                std::process::exit(latscope::error::EXIT_USAGE);
            }
            None => err.exit(),
        },
    };
    let code = match latscope::commands::dispatch(cli, command_line) {
        Ok(code) => code,
        Err(err) => {
            // A second signal is restoring the system: its error (a removed tracefs
            // instance, say) is not the outcome; the signal thread exits with 130.
            latscope::interrupt::wait_if_aborting();
            let (line, code) = if let Some(user) = err.downcast_ref::<UserError>() {
                (format!("latscope: error: {user}"), user.exit_code())
            } else if let Some(stop) = given_up(&err) {
                // A signal ended a wait for a reader (issue 34, item 4): the files were
                // written and the system restored before this output.
                (format!("latscope: output stopped: {stop}; the system is restored and the result files were written"), EXIT_INTERRUPTED)
            } else if is_broken_pipe(&err) {
                // The SIGPIPE exit path: guards restored and result files written before
                // anything was printed; only the rest of the output is lost.
                ("latscope: output stopped: its reader closed the pipe (SIGPIPE); the system is restored and the result files were written".to_string(), EXIT_INTERRUPTED)
            } else {
                (format!("latscope: error: {err:#}"), EXIT_FAILURE)
            };
            // Escaped (a message may quote a file's text) and never waiting past a
            // signal for a stderr pipe nobody reads.
            let line = latscope::output::terminal::escape_controls(&line);
            let _ = latscope::output::pipe::write_stderr(format!("{line}\n").as_bytes());
            code
        }
    };
    latscope::interrupt::wait_if_aborting();
    std::process::exit(code);
}
