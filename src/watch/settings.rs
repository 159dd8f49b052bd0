//! `latscope watch`'s own options checked as typed (rotation, the endpoint's address,
//! the alert and its hook, the directory), `--config FILE` merged under the command line,
//! and the `timer` arguments the measurement is planned from.

use crate::cli::{OutputArgs, RunArgs, TimerArgs, WatchArgs};
use crate::error::{invalid, UserError};
use crate::plan::range::{duration_in_range, out_of_range};
use serde::Deserialize;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

/// Seconds in a day: every rotation divides it, aligned to UTC midnight.
pub const DAY_S: u64 = 86_400;

/// What watch does besides measuring, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct WatchSettings {
    pub dir: PathBuf,
    pub rotate_s: u64,
    pub listen: Option<SocketAddr>,
    pub fail_above_ns: Option<u64>,
    pub on_fail: Vec<String>,
    pub on_fail_timeout_ns: u64,
    pub readiness: bool,
}

/// `/etc/latscope/watch.toml`: the same settings by their long option names.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct WatchConfig {
    cpus: Option<String>,
    policy: Option<String>,
    priority: Option<i32>,
    interval: Option<String>,
    period: Option<String>,
    method: Option<String>,
    deadline: Option<String>,
    dma_latency: Option<String>,
    timer_slack: Option<String>,
    isolate: Option<String>,
    #[serde(default)]
    load: Vec<String>,
    dir: Option<PathBuf>,
    rotate: Option<String>,
    listen: Option<String>,
    fail_above: Option<String>,
    #[serde(default)]
    on_fail: Vec<String>,
    on_fail_timeout: Option<String>,
    readiness: Option<bool>,
}

/// Fills what the command line left unset from `--config FILE` (the command line wins).
pub fn merge_config(args: &mut WatchArgs) -> Result<(), UserError> {
    let Some(path) = args.config.clone() else {
        return Ok(());
    };
    let text = crate::result::read_input_file(&path)?;
    let file: WatchConfig = toml::from_str(&text).map_err(|e| {
        invalid(
            "--config",
            &path.display().to_string(),
            format!(
                "{}; write the settings by their long option names (cpus = \"1\", interval = \"1ms\", ...)",
                e.message()
            ),
        )
    })?;
    let c = &mut args.common;
    fill(&mut c.cpus, file.cpus);
    if c.policy.is_none() {
        if let Some(p) = file.policy {
            let parsed = <crate::sys::sched::Policy as clap::ValueEnum>::from_str(&p, true)
                .map_err(|_| invalid("policy (in --config)", &p, "allowed: fifo, rr, other"))?;
            c.policy = Some(parsed);
        }
    }
    fill(&mut c.priority, file.priority);
    fill(&mut c.dma_latency, file.dma_latency);
    fill(&mut c.timer_slack, file.timer_slack);
    fill(&mut c.isolate, file.isolate);
    if c.loads.is_empty() {
        c.loads = file.load;
    }
    if args.period.is_none() {
        fill(&mut args.interval, file.interval);
    }
    if args.interval.is_none() {
        fill(&mut args.period, file.period);
    }
    fill(&mut args.method, file.method);
    fill(&mut args.deadline, file.deadline);
    fill(&mut args.dir, file.dir);
    fill(&mut args.rotate, file.rotate);
    fill(&mut args.listen, file.listen);
    fill(&mut args.fail_above, file.fail_above);
    if args.on_fail.is_empty() {
        args.on_fail = file.on_fail;
    }
    fill(&mut args.on_fail_timeout, file.on_fail_timeout);
    args.readiness |= file.readiness.unwrap_or(false);
    Ok(())
}

fn fill<T>(slot: &mut Option<T>, from_file: Option<T>) {
    if slot.is_none() {
        *slot = from_file;
    }
}

/// Checks watch's own options; refuses what would store every sample.
pub fn check(args: &WatchArgs) -> Result<WatchSettings, UserError> {
    if let Some(raw) = &args.common.raw {
        return Err(invalid(
            "--raw",
            &raw.display().to_string(),
            "watch keeps no per-sample storage, so its memory stays bounded for days; \
             each interval file holds the histogram and the per-second maxima (for every \
             sample, run `latscope timer --raw FILE -D DURATION`)",
        ));
    }
    if args.common.worst_case {
        return Err(invalid(
            "--worst-case",
            "on",
            "watch keeps no samples to fit; `latscope report` estimates the worst case from \
             the interval files' per-second maxima",
        ));
    }
    if args
        .method
        .as_deref()
        .is_some_and(|m| m.contains(',') || m.trim() == "all")
    {
        let m = args.method.as_deref().unwrap_or_default();
        return Err(invalid(
            "--method",
            m,
            "watch measures one method; name one, e.g. timerfd",
        ));
    }
    let rotate_s = rotate_seconds(args.rotate.as_deref().unwrap_or("1d"))?;
    let listen = args.listen.as_deref().map(listen_address).transpose()?;
    let fail_above_ns = match &args.fail_above {
        Some(t) => Some(duration_in_range(
            "--fail-above",
            t,
            1_000,
            1,
            60_000_000_000,
        )?),
        None => None,
    };
    let on_fail_timeout_ns = match &args.on_fail_timeout {
        Some(t) => duration_in_range(
            "--on-fail-timeout",
            t,
            1_000_000_000,
            1_000_000,
            3_600_000_000_000,
        )?,
        None => 10_000_000_000,
    };
    if !args.on_fail.is_empty() && fail_above_ns.is_none() {
        return Err(invalid(
            "--on-fail",
            &args.on_fail.join(" "),
            "it runs when an interval fails --fail-above; give --fail-above too (e.g. --fail-above 200us)",
        ));
    }
    Ok(WatchSettings {
        dir: args.dir.clone().unwrap_or_else(default_dir),
        rotate_s,
        listen,
        fail_above_ns,
        on_fail: args.on_fail.clone(),
        on_fail_timeout_ns,
        readiness: args.readiness,
    })
}

/// /var/lib/latscope/watch as root, else ./latscope-watch.
fn default_dir() -> PathBuf {
    if crate::sys::process::effective_uid() == 0 {
        PathBuf::from("/var/lib/latscope/watch")
    } else {
        Path::new("latscope-watch").to_path_buf()
    }
}

/// `--rotate`: whole seconds, at least 1 s, dividing a day evenly.
pub fn rotate_seconds(text: &str) -> Result<u64, UserError> {
    const RANGE: &str =
        "a duration from 1s to 1d that divides a day evenly (1s, 2s, 10m, 1h, 6h, 1d...)";
    // Days are watch's own unit (the shared parser stops at hours).
    let days = text
        .trim()
        .strip_suffix('d')
        .map(|n| n.trim().parse::<f64>());
    let parsed = match days {
        Some(Ok(d)) if d.is_finite() && (0.0..=1.0).contains(&d) => {
            Ok((d * 86_400e9).round() as u64)
        }
        _ => crate::units::parse_duration_ns(text, "s"),
    };
    let ns = match parsed {
        Ok(ns) => ns,
        Err(reason) => {
            return Err(invalid(
                "--rotate",
                text,
                format!("{reason}; allowed {RANGE}"),
            ))
        }
    };
    if ns % 1_000_000_000 != 0 || ns == 0 || ns > DAY_S * 1_000_000_000 {
        return Err(out_of_range("--rotate", text, RANGE));
    }
    let s = ns / 1_000_000_000;
    if DAY_S % s != 0 {
        return Err(out_of_range("--rotate", text, RANGE));
    }
    Ok(s)
}

/// `--listen`: an IP address and a port, as given (0.0.0.0 only when written).
pub fn listen_address(text: &str) -> Result<SocketAddr, UserError> {
    text.trim().parse::<SocketAddr>().map_err(|_| {
        invalid(
            "--listen",
            text,
            "expected an IP address and a port, e.g. 127.0.0.1:9464 or [::1]:9464 \
             (0.0.0.0:9464 serves every interface)",
        )
    })
}

/// The `timer` arguments the watch is planned from: its measuring options, quiet, no
/// result file of the runner's own (the intervals are watch's).
pub fn timer_args(args: &WatchArgs) -> TimerArgs {
    TimerArgs {
        method: args
            .method
            .clone()
            .unwrap_or_else(|| "clock-nanosleep".into()),
        period: args.period.clone(),
        interval_us: args.interval.clone(),
        deadline: args.deadline.clone(),
        break_above: None,
        trace: Default::default(),
        run: RunArgs {
            common: args.common.clone(),
            output: OutputArgs {
                quiet: true,
                checkpoint: "10s".into(),
                ..Default::default()
            },
            remote: Default::default(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotations_divide_a_day_and_refusals_name_value_and_range() {
        assert_eq!(rotate_seconds("1d").unwrap(), 86_400);
        assert_eq!(rotate_seconds("2s").unwrap(), 2);
        assert_eq!(rotate_seconds("10m").unwrap(), 600);
        for bad in ["7s", "0s", "1500ms", "2d", "soon"] {
            let e = rotate_seconds(bad).unwrap_err().to_string();
            assert!(e.contains("--rotate") && e.contains(bad), "{e}");
            assert!(e.contains("divides a day"), "{e}");
        }
    }

    #[test]
    fn listen_takes_an_address_with_a_port() {
        assert!(listen_address("127.0.0.1:9464").is_ok());
        assert!(listen_address("[::1]:9464").is_ok());
        let e = listen_address("localhost").unwrap_err().to_string();
        assert!(
            e.contains("--listen 'localhost'") && e.contains("127.0.0.1:9464"),
            "{e}"
        );
    }

    #[test]
    fn the_command_line_wins_over_the_config_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("watch.toml");
        std::fs::write(
            &path,
            "cpus = \"1\"\npolicy = \"fifo\"\npriority = 90\ninterval = \"1ms\"\n\
             dir = \"/var/lib/latscope/watch\"\nrotate = \"1d\"\nlisten = \"127.0.0.1:9464\"\n\
             fail_above = \"200us\"\n",
        )
        .unwrap();
        let mut args = WatchArgs {
            config: Some(path.clone()),
            rotate: Some("1h".into()),
            ..Default::default()
        };
        args.common.priority = Some(80);
        merge_config(&mut args).unwrap();
        assert_eq!(args.common.cpus.as_deref(), Some("1"));
        assert_eq!(args.common.priority, Some(80));
        assert_eq!(args.rotate.as_deref(), Some("1h"));
        assert_eq!(args.listen.as_deref(), Some("127.0.0.1:9464"));
        let s = check(&args).unwrap();
        assert_eq!((s.rotate_s, s.fail_above_ns), (3600, Some(200_000)));
        std::fs::write(&path, "cpu = \"1\"\n").unwrap();
        let e = merge_config(&mut WatchArgs {
            config: Some(path),
            ..Default::default()
        })
        .unwrap_err()
        .to_string();
        assert!(e.contains("--config") && e.contains("cpu"), "{e}");
    }

    /// The packaged /etc/latscope/watch.toml (contrib/deb/): every key it names, uncommented
    /// as written, is one this parser takes with that syntax (lists as TOML arrays), and it
    /// names every key the parser takes (the refusal of an unknown key lists them).
    #[test]
    fn the_packaged_watch_toml_names_every_key_and_parses_uncommented() {
        let packaged = include_str!("../../contrib/deb/watch.toml");
        let key = regex::Regex::new(r"^# ([a-z_]+) = ").unwrap();
        let mut named = Vec::new();
        let mut text = String::new();
        for line in packaged.lines() {
            if let Some(k) = key.captures(line) {
                named.push(k[1].to_string());
                text.push_str(&line[2..]);
                text.push('\n');
            }
        }
        let file: WatchConfig = toml::from_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!((file.load.len(), file.on_fail.len()), (1, 3), "{file:?}");
        assert_eq!(file.readiness, Some(true));
        let unknown = toml::from_str::<WatchConfig>("no_such_key = 1")
            .unwrap_err()
            .to_string();
        let taken: Vec<&str> = unknown
            .split('`')
            .skip(3)
            .step_by(2)
            .filter(|k| k.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
            .collect();
        assert!(taken.len() > 10, "{unknown}");
        for k in taken {
            assert!(
                named.iter().any(|n| n == k) || packaged.contains(&format!("`{k}`")),
                "the parser takes {k:?}; the packaged watch.toml does not name it"
            );
        }
    }
}
