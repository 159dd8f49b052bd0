//! What a QEMU lab's checks script printed (contrib/gpio-lab/checks.sh,
//! contrib/arm64-lab/checks.sh): result files between `=== BEGIN NAME ===` and
//! `=== END NAME ===`, and `fact NAME=VALUE` lines, read back for the tests that judge them.

use serde_json::Value;
use std::collections::BTreeMap;

/// A lab boot's console, split into sections and facts.
pub struct LabOutput {
    pub sections: BTreeMap<String, String>,
    pub facts: BTreeMap<String, String>,
    pub console: String,
}

impl LabOutput {
    pub fn parse(console: String) -> LabOutput {
        let mut sections = BTreeMap::new();
        let mut facts = BTreeMap::new();
        let mut current: Option<(String, String)> = None;
        for line in console.lines() {
            if let Some(name) = line
                .strip_prefix("=== BEGIN ")
                .and_then(|l| l.strip_suffix(" ==="))
            {
                current = Some((name.to_string(), String::new()));
            } else if line.starts_with("=== END ") {
                if let Some((name, text)) = current.take() {
                    sections.insert(name, text);
                }
            } else if let Some((_, text)) = current.as_mut() {
                text.push_str(line);
                text.push('\n');
            } else if let Some((k, v)) = line.strip_prefix("fact ").and_then(|f| f.split_once('='))
            {
                facts.insert(k.to_string(), v.to_string());
            }
        }
        LabOutput {
            sections,
            facts,
            console,
        }
    }

    pub fn section(&self, name: &str) -> &str {
        self.sections
            .get(name)
            .unwrap_or_else(|| panic!("no section {name}:\n{}", self.console))
    }

    pub fn json(&self, name: &str) -> Value {
        let text = self.section(name);
        serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("{name}: {e}\n{text}"))
    }

    pub fn fact(&self, name: &str) -> &str {
        self.facts
            .get(name)
            .unwrap_or_else(|| panic!("no fact {name}:\n{}", self.console))
    }

    /// The thread of `metric` in the first scenario of section `name`.
    pub fn thread(&self, name: &str, metric: &str) -> Value {
        let run = self.json(name);
        run["scenarios"][0]["threads"]
            .as_array()
            .expect("threads")
            .iter()
            .find(|t| t["metric"] == metric)
            .unwrap_or_else(|| panic!("{name}: no {metric} thread: {run}"))
            .clone()
    }
}
