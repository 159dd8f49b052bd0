//! The board's command line: the local one without `--host`, `--ssh-option` and the local
//! output files (the board writes its JSON and `--raw` into its own scratch directory,
//! fetched afterwards), quoted for the remote shell.

/// Options whose value is local (ssh's, or a file written here): dropped from the board's
/// command line, with their value. Every `--export-*` comes from `Format`, so a new export
/// format is never handed to the board as a path of this machine.
fn is_local_only(option: &str) -> bool {
    ["--host", "--ssh-option", "--raw"].contains(&option)
        || crate::output::exports::Format::ALL
            .iter()
            .any(|f| f.flag().starts_with("--export-") && f.flag() == option)
}

/// `--plan FILE`: a local file the board gets a copy of.
pub const PLAN_OPTION: &str = "--plan";

/// The arguments after the program name, without the local-only options and their values,
/// and the value of `--plan` (separately: it is replaced by the board's copy).
pub fn board_args(command_line: &[String]) -> (Vec<String>, Option<String>) {
    let mut out = Vec::new();
    let mut plan = None;
    let mut args = command_line.iter().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--" {
            out.push(arg.clone());
            out.extend(args.by_ref().cloned());
            break;
        }
        if is_local_only(arg) {
            args.next();
            continue;
        }
        if arg
            .split_once('=')
            .is_some_and(|(option, _)| is_local_only(option))
        {
            continue;
        }
        if arg == PLAN_OPTION {
            plan = args.next().cloned();
            continue;
        }
        if let Some(value) = arg.strip_prefix("--plan=") {
            plan = Some(value.to_string());
            continue;
        }
        out.push(arg.clone());
    }
    (out, plan)
}

/// Quotes a word for a POSIX shell: single quotes, each `'` written as `'\''`.
pub fn shell_quote(word: &str) -> String {
    if !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,@%+".contains(&b))
    {
        return word.to_string();
    }
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// A host name as it can stand in a file name (`root@board:22` -> `root_board_22`).
pub fn file_safe(host: &str) -> String {
    host.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn local_only_options_are_dropped_with_their_values() {
        let (args, plan) = board_args(&line(&[
            "latscope",
            "timer",
            "--host",
            "root@a,root@b",
            "--ssh-option=-p2222",
            "--ssh-option",
            "-oBatchMode=yes",
            "-a",
            "1",
            "--export-json",
            "run.json",
            "--export-html=run.html",
            "--raw",
            "raw.csv",
            "--load",
            "exec:\"sh -c 'x --host y'\"",
            "-q",
        ]));
        assert_eq!(
            args,
            line(&[
                "timer",
                "-a",
                "1",
                "--load",
                "exec:\"sh -c 'x --host y'\"",
                "-q"
            ])
        );
        assert_eq!(plan, None);
    }

    #[test]
    fn every_export_format_is_written_here() {
        use clap::ValueEnum;
        for format in crate::output::exports::Format::value_variants() {
            let flag = format.flag();
            if !flag.starts_with("--export-") {
                continue;
            }
            let (args, _) = board_args(&line(&["latscope", "timer", flag, "x", "-q"]));
            assert_eq!(args, line(&["timer", "-q"]), "{flag}");
        }
    }

    #[test]
    fn the_plan_file_is_taken_apart() {
        let (args, plan) = board_args(&line(&["latscope", "suite", "--plan=my.toml", "-q"]));
        assert_eq!(args, line(&["suite", "-q"]));
        assert_eq!(plan.as_deref(), Some("my.toml"));
        let (_, plan) = board_args(&line(&["latscope", "suite", "--plan", "p.toml"]));
        assert_eq!(plan.as_deref(), Some("p.toml"));
    }

    #[test]
    fn quoting_survives_a_shell() {
        for word in [
            "plain",
            "",
            "a b",
            "it's",
            "exec:\"sh -c 'sleep 1 & sleep 2'\"",
            "$HOME",
            "*",
        ] {
            let out = std::process::Command::new("sh")
                .arg("-c")
                .arg(format!("printf %s {}", shell_quote(word)))
                .output()
                .unwrap();
            assert_eq!(String::from_utf8_lossy(&out.stdout), word);
        }
    }

    #[test]
    fn host_names_become_file_names() {
        assert_eq!(file_safe("root@127.0.0.1"), "root_127.0.0.1");
        assert_eq!(file_safe("pi@board-3:22"), "pi_board-3_22");
    }
}
