//! The study presets, kept as TOML in src/suite/presets/ so each doubles as an example
//! of the `--plan` format.

/// Preset names, in the order `--help` lists them.
pub const NAMES: [&str; 3] = ["memory-load", "wake-methods", "quick"];

/// The TOML text of a preset.
pub fn text(name: &str) -> Option<&'static str> {
    Some(match name {
        "memory-load" => include_str!("presets/memory-load.toml"),
        "wake-methods" => include_str!("presets/wake-methods.toml"),
        "quick" => include_str!("presets/quick.toml"),
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
