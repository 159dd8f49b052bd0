//! The study presets, kept as TOML files beside this one so each doubles as an example
//! of the `--plan` format.

/// Preset names, in the order `--help` and `--list` show them: the list the command line
/// completes from (cli sits below suite, so it holds the one copy).
pub const NAMES: [&str; 6] = crate::cli::PRESET_NAMES;

/// The TOML text of a preset.
pub fn text(name: &str) -> Option<&'static str> {
    Some(match name {
        "memory-load" => include_str!("memory-load.toml"),
        "wake-methods" => include_str!("wake-methods.toml"),
        "wake-competitors" => include_str!("wake-competitors.toml"),
        "rt-cost" => include_str!("rt-cost.toml"),
        "irq-response" => include_str!("irq-response.toml"),
        "quick" => include_str!("quick.toml"),
        _ => return None,
    })
}

/// The study each preset reproduces, one line.
pub fn study(name: &str) -> &'static str {
    match name {
        "memory-load" => "periodic-task latency under memory load (vanilla vs RT kernel)",
        "wake-methods" => "wake-up methods on isolated and non-isolated cores",
        "wake-competitors" => {
            "thread wake-up response, SCHED_RR 1 vs SCHED_OTHER, 0-32 competitors"
        }
        "rt-cost" => "the RT patch's cost: round trips, timer interrupt latency, load throughput",
        "irq-response" => "interrupt response idle and under network, disk and serial load",
        "quick" => "a one-minute health check",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn completion_offers_every_preset() {
        assert_eq!(crate::cli::PRESET_NAMES, super::NAMES);
    }

    #[test]
    fn every_preset_parses() {
        for name in super::NAMES {
            let spec: super::super::SuiteSpec = toml::from_str(super::text(name).unwrap())
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(!spec.matrix.is_empty());
        }
    }
}
