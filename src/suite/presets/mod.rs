//! The study presets, kept as TOML files beside this one so each doubles as an example
//! of the `--plan` format.

/// Preset names, in the order `--help` lists them.
pub const NAMES: [&str; 3] = ["memory-load", "wake-methods", "quick"];

/// The TOML text of a preset.
pub fn text(name: &str) -> Option<&'static str> {
    Some(match name {
        "memory-load" => include_str!("memory-load.toml"),
        "wake-methods" => include_str!("wake-methods.toml"),
        "quick" => include_str!("quick.toml"),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_preset_parses() {
        for name in super::NAMES {
            let spec: super::super::SuiteSpec = toml::from_str(super::text(name).unwrap())
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(!spec.matrix.is_empty());
        }
    }
}
