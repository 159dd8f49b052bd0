//! `--host USER@BOARD`: the same command run on boards over the system's ssh, latscope
//! copied there when missing (copy.rs), its progress streamed back with control sequences
//! escaped (relay.rs), its result fetched within limits (fetch.rs; one file per board),
//! and the local exports rendered from it, each local output locked for the whole run.
//! The board restores its own system: a dropped connection is a SIGHUP there, one of
//! latscope's exit paths, and ssh dies with latscope, so even a SIGKILL here ends the run
//! there (session.rs).

pub mod args;
pub mod copy;
pub mod fetch;
pub mod relay;
pub mod session;
pub mod ssh;

use crate::cli::RunArgs;
use crate::error::{UserError, EXIT_FAILURE, EXIT_INTERRUPTED};
use crate::output::exports::Export;
use crate::result::Run;
use std::path::{Path, PathBuf};

/// `run.json` -> `run.HOST.json` when several boards run (one file each).
pub fn path_for_host(path: &Path, host: &str, several: bool) -> PathBuf {
    if !several || path.as_os_str() == "-" {
        return path.to_path_buf();
    }
    let host = args::file_safe(host);
    let name = match (path.file_stem(), path.extension()) {
        (Some(stem), Some(ext)) => format!(
            "{}.{host}.{}",
            stem.to_string_lossy(),
            ext.to_string_lossy()
        ),
        _ => format!("{}.{host}", path.to_string_lossy()),
    };
    path.with_file_name(name)
}

/// Runs the command line on every `--host` at once and brings the results home. The exit
/// code is the first non-zero one of the boards, in the order given.
pub fn run_on_hosts(run: &RunArgs, command_line: &[String], resume: bool) -> anyhow::Result<i32> {
    let hosts = checked_hosts(run, resume)?;
    let several = hosts.len() > 1;
    let out = &run.output;
    let exports = crate::plan::output::exports_from_args(out);
    let limits = crate::plan::output::limits_from_args(out)?;
    crate::output::exports::check_destinations(&exports)?;
    let raw = run.common.raw.clone();
    check_host_destinations(&hosts, &exports, raw.as_deref(), several)?;
    let _locks = lock_host_outputs(&hosts, &exports, raw.as_deref(), several)?;
    let (board_args, plan) = args::board_args(command_line);
    let plan = plan.map(PathBuf::from);
    if let Some(p) = &plan {
        crate::result::read_input_file(p)?;
    }
    let stop = crate::interrupt::install()?;
    // A second signal is handled here: it cuts the boards' connections, so each saves at
    // once, and their results are still fetched (the signal thread does not exit).
    crate::interrupt::saves_on_its_own();
    let outcomes: Vec<Result<session::Outcome, UserError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = hosts
            .iter()
            .map(|host| {
                let board = Board {
                    host,
                    run,
                    args: board_args.clone(),
                    plan: plan.clone(),
                    raw: raw.as_deref().map(|p| path_for_host(p, host, several)),
                    several,
                };
                let stop = &stop;
                scope.spawn(move || board.run(stop))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a host thread does not panic"))
            .collect()
    });
    let stdout_taken = exports.iter().any(|e| e.to_stdout());
    let opts = crate::report::RenderOptions {
        in_ns: out.ns,
        limits,
    };
    let mut code = 0;
    for (host, outcome) in hosts.iter().zip(outcomes) {
        let this = match outcome {
            Err(e) => {
                eprintln!("latscope: error: {e}");
                e.exit_code()
            }
            Ok(o) => bring_home(host, several, &o, &exports, &opts, stdout_taken)?,
        };
        if code == 0 {
            code = this;
        }
    }
    Ok(code)
}

/// The `--host` values, trimmed; refused: `--resume`, an empty host or one that looks
/// like an option.
fn checked_hosts(run: &RunArgs, resume: bool) -> anyhow::Result<Vec<String>> {
    if resume {
        return Err(crate::error::invalid(
            "--resume",
            "with --host",
            "the partial result lives on the board; resume there (ssh to it and run the same suite with --resume and its own --export-json)",
        )
        .into());
    }
    let hosts: Vec<String> = run
        .remote
        .hosts
        .iter()
        .map(|h| h.trim().to_string())
        .collect();
    if let Some(empty) = hosts.iter().find(|h| h.is_empty() || h.starts_with('-')) {
        return Err(crate::error::invalid(
            "--host",
            empty,
            "give USER@BOARD or a host name of ~/.ssh/config",
        )
        .into());
    }
    Ok(hosts)
}

/// Every board's export and `--raw` path (`run.HOST.json` with several) checked before
/// any board runs.
fn check_host_destinations(
    hosts: &[String],
    exports: &[Export],
    raw: Option<&Path>,
    several: bool,
) -> anyhow::Result<()> {
    for host in hosts {
        for e in exports {
            if !e.to_stdout() {
                crate::output::exports::check_output_path(
                    e.format.flag(),
                    &Some(path_for_host(&e.path, host, several)),
                )?;
            }
        }
        crate::output::exports::check_output_path(
            "--raw",
            &raw.map(|p| path_for_host(p, host, several)),
        )?;
    }
    Ok(())
}

/// Every local output of every board locked for the whole run (issue 34, item 3: a
/// local run on the same `--export-json` lost its result and both exited 0).
fn lock_host_outputs(
    hosts: &[String],
    exports: &[Export],
    raw: Option<&Path>,
    several: bool,
) -> anyhow::Result<Vec<crate::output::exports::OutputLock>> {
    let mut outputs: Vec<(&str, PathBuf)> = Vec::new();
    for host in hosts {
        for e in exports.iter().filter(|e| !e.to_stdout()) {
            outputs.push((e.format.flag(), path_for_host(&e.path, host, several)));
        }
        if let Some(raw) = raw {
            outputs.push(("--raw", path_for_host(raw, host, several)));
        }
    }
    let outputs: Vec<(&str, &Path)> = outputs.iter().map(|(o, p)| (*o, p.as_path())).collect();
    crate::output::exports::lock_outputs(&outputs)
}

/// One board's job, run on its own thread.
struct Board<'a> {
    host: &'a String,
    run: &'a RunArgs,
    args: Vec<String>,
    plan: Option<PathBuf>,
    /// Where this board's `--raw` goes here.
    raw: Option<PathBuf>,
    several: bool,
}

impl Board<'_> {
    /// Copies latscope there when missing, runs the command, fetches its result.
    fn run(self, stop: &std::sync::atomic::AtomicBool) -> Result<session::Outcome, UserError> {
        let host = self.host;
        let ssh = ssh::Ssh::new(host, &self.run.remote.ssh_options);
        let binary = copy::ensure_binary(&ssh)?;
        let job = session::Job {
            ssh,
            binary,
            args: self.args,
            plan: self.plan,
            raw: self.raw,
            prefix: self.several.then(|| format!("[{host}] ")),
        };
        session::run(&job, stop).map_err(|reason| UserError::Unreachable {
            host: host.clone(),
            reason,
            fix: "check that the board's $TMPDIR (or /tmp) is writable and that ssh works".into(),
        })
    }
}

/// Prints a board's table, writes its result and the local exports (its `--raw` was
/// written as it was fetched); its exit code.
fn bring_home(
    host: &str,
    several: bool,
    o: &session::Outcome,
    exports: &[Export],
    opts: &crate::report::RenderOptions,
    stdout_taken: bool,
) -> anyhow::Result<i32> {
    let prefix = if several {
        format!("[{host}] ")
    } else {
        String::new()
    };
    if o.not_started {
        eprintln!(
            "latscope: {prefix}stopped here before the run on {host} started; nothing ran there"
        );
        return Ok(EXIT_INTERRUPTED);
    }
    if let Some(refused) = &o.refused {
        let e = copy::refusal(host, refused);
        eprintln!("latscope: error: {prefix}{e}");
        return Ok(e.exit_code());
    }
    print_board_table(&prefix, o, stdout_taken);
    say_how_it_ended(&prefix, host, o);
    let Some(json) = &o.json else {
        // The board's own exit code (a usage error there is 2 here too), never 0.
        return Ok(o.exit.filter(|&c| c != 0).unwrap_or(EXIT_FAILURE));
    };
    let run: Run = match serde_json::from_slice(json) {
        Ok(run) => run,
        Err(e) => {
            let e = crate::output::terminal::escape_controls(&e.to_string()).into_owned();
            eprintln!("latscope: error: {prefix}the board's result does not parse: {e}");
            return Ok(EXIT_FAILURE);
        }
    };
    for e in exports {
        let path = path_for_host(&e.path, host, several);
        if e.format == crate::output::exports::Format::Json {
            crate::output::exports::write_bytes(&path, json)?;
        } else {
            let one = Export {
                format: e.format,
                path,
            };
            crate::report::write_exports(std::slice::from_ref(&one), &run, opts, true)?;
        }
    }
    Ok(if run.interrupted {
        EXIT_INTERRUPTED
    } else {
        o.exit.unwrap_or(EXIT_FAILURE)
    })
}

/// The board's table, each line prefixed (`[HOST] ` with several) and its control
/// characters escaped, on stdout unless an export took it (then stderr).
fn print_board_table(prefix: &str, o: &session::Outcome, stdout_taken: bool) {
    let mut table = String::new();
    for line in String::from_utf8_lossy(&o.stdout).lines() {
        table.push_str(prefix);
        table.push_str(&crate::output::terminal::escape_controls(line));
        table.push('\n');
    }
    let printed = if stdout_taken {
        crate::output::pipe::write_stderr(table.as_bytes())
    } else {
        crate::output::pipe::write_stdout(table.as_bytes())
    };
    printed.ok();
}

/// Says on stderr when the run was stopped from here, lost its connection, or its result
/// could not be fetched.
fn say_how_it_ended(prefix: &str, host: &str, o: &session::Outcome) {
    if o.aborted_here {
        eprintln!(
            "latscope: {prefix}the run on {host} was sent SIGINT, then cut off at the second signal (the board saves and restores as on SIGHUP){}",
            if o.json.is_some() {
                "; its result was fetched"
            } else {
                ""
            }
        );
    } else if o.stopped_here && !o.dropped {
        eprintln!(
            "latscope: {prefix}the run on {host} was sent SIGINT{}",
            if o.json.is_some() {
                "; its result was fetched"
            } else {
                ""
            }
        );
    } else if o.dropped {
        eprintln!(
            "latscope: {prefix}the connection to {host} ended before its run did; the board stopped the run as on SIGHUP (restoring what it changed){}",
            if o.json.is_some() { " and its result was fetched" } else { "" }
        );
    }
    if let Some(e) = &o.fetch_error {
        eprintln!("latscope: error: {prefix}{e}");
    }
}

#[cfg(test)]
mod tests {
    use super::path_for_host;
    use std::path::Path;

    #[test]
    fn several_hosts_get_a_file_each() {
        let p = Path::new("out/run.json");
        assert_eq!(
            path_for_host(p, "root@b1", false),
            Path::new("out/run.json")
        );
        assert_eq!(
            path_for_host(p, "root@b1", true),
            Path::new("out/run.root_b1.json")
        );
        assert_eq!(
            path_for_host(Path::new("run"), "b1", true),
            Path::new("run.b1")
        );
        assert_eq!(path_for_host(Path::new("-"), "b1", true), Path::new("-"));
    }
}
