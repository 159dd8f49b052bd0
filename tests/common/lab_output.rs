//! What a QEMU lab's checks script printed (contrib/gpio-lab/checks.sh,
//! contrib/arm64-lab/checks.sh): result files between `=== BEGIN NAME ===` and
//! `=== END NAME ===`, and `fact NAME=VALUE` lines, read back for the tests that judge them;
//! and what both labs' tests do alike: ask run.sh whether it can boot, boot it under the
//! latency lock, keep the console.

use serde_json::Value;
use std::collections::BTreeMap;
use std::process::Command;

/// contrib/LAB/run.sh of this checkout (`lab`: "gpio-lab", "arm64-lab").
pub fn run_sh(lab: &str) -> String {
    format!("{}/contrib/{lab}/run.sh", env!("CARGO_MANIFEST_DIR"))
}

/// Why `lab` cannot boot `kernel` here (None: it can): run.sh --check's one line.
pub fn lab_unavailable(lab: &str, kernel: &str) -> Option<String> {
    match Command::new(run_sh(lab))
        .args(["--kernel", kernel, "--check"])
        .output()
    {
        Ok(o) if o.status.success() => None,
        Ok(o) => Some(format!(
            "the {lab} cannot boot here: {}{}",
            String::from_utf8_lossy(&o.stdout).trim(),
            String::from_utf8_lossy(&o.stderr).trim()
        )),
        Err(e) => Some(format!("contrib/{lab}/run.sh --check: {e}")),
    }
}

/// Boots `lab` on `kernel` with `binary` as the guest's latscope and runs the lab's
/// checks.sh; the console is kept in the temp dir for a failing judgement's reader.
pub fn boot_lab(lab: &str, kernel: &str, binary: &std::path::Path) -> LabOutput {
    // QEMU under TCG takes both CPUs: no latency test measures beside it.
    let _lock = super::latency_lock();
    let out = Command::new(run_sh(lab))
        .args(["--kernel", kernel, "--", "sh", "/lab/checks.sh"])
        .env("LATSCOPE", binary)
        .output()
        .unwrap_or_else(|e| panic!("run contrib/{lab}/run.sh: {e}"));
    let console = String::from_utf8_lossy(&out.stdout).replace('\r', "");
    let _ = std::fs::write(
        std::env::temp_dir().join(format!("latscope-{lab}-{kernel}.txt")),
        &console,
    );
    assert!(
        out.status.success(),
        "{lab}/run.sh --kernel {kernel}: {:?}\n{console}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    LabOutput::parse(console)
}

/// The guest's kernel is PREEMPT_RT exactly when `rt`, and latscope says so too (its
/// preemption model in the result `json`).
pub fn assert_preempt_rt(lab: &LabOutput, rt: bool, json: &str) {
    let kernel = lab.fact("kernel");
    assert_eq!(kernel.contains("PREEMPT_RT"), rt, "{kernel}");
    if rt {
        let model = lab.json(json)["system"]["preemption_model"].clone();
        assert!(
            model.to_string().to_lowercase().contains("rt"),
            "latscope's model: {model}"
        );
    }
}

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
