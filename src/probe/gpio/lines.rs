//! GPIO lines as the user names them (`gpiochip0:17`, `0:17`, `gpiochip0:sim-in`, a line
//! name such as `GPIO17`), found on this machine's chips; `latscope gpio --list`; and the
//! gpio-sim files that drive a simulated input (`--drive sim`).

use crate::sys::gpio::{self, flag, Chip};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// A line as typed: checked for syntax only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineSpec {
    /// `CHIP:LINE`: a chip (`gpiochipN`, `N`, or its label) and an offset or line name.
    OnChip { chip: String, line: String },
    /// A line name, looked up on every chip.
    Named(String),
}

impl LineSpec {
    /// Parses `--in`/`--out` text; the error says what was expected.
    pub fn parse(text: &str) -> Result<LineSpec, String> {
        let text = text.trim();
        if text.is_empty() {
            return Err("empty: give CHIP:LINE (gpiochip0:17) or a line name (GPIO17)".into());
        }
        match text.rsplit_once(':') {
            Some((chip, line)) if !chip.is_empty() && !line.is_empty() => Ok(LineSpec::OnChip {
                chip: chip.to_string(),
                line: line.to_string(),
            }),
            Some(_) => Err(
                "expected CHIP:LINE with both parts (gpiochip0:17) or a line name (GPIO17)".into(),
            ),
            None => Ok(LineSpec::Named(text.to_string())),
        }
    }
}

/// A line found on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// /dev/gpiochipN.
    pub chip: PathBuf,
    /// `gpiochipN`.
    pub chip_name: String,
    pub offset: u32,
    /// The line's name (may be empty).
    pub name: String,
}

impl Line {
    /// `gpiochip0:17 (GPIO17)`.
    pub fn label(&self) -> String {
        if self.name.is_empty() {
            format!("{}:{}", self.chip_name, self.offset)
        } else {
            format!("{}:{} ({})", self.chip_name, self.offset, self.name)
        }
    }
}

/// The one-line refusal of a machine without GPIO character devices.
pub fn no_gpio_message() -> String {
    "no /dev/gpiochip*: this kernel has no GPIO chip with a character device (gpiolib and CONFIG_GPIO_CDEV); run latscope gpio on a board, or in the lab: contrib/gpio-lab/run.sh -- latscope gpio --list".into()
}

struct ChipLines {
    path: PathBuf,
    info: gpio::ChipInfo,
    lines: Vec<gpio::LineInfo>,
}

fn read_chips() -> Result<Vec<ChipLines>, String> {
    let paths = gpio::chip_paths();
    if paths.is_empty() {
        return Err(no_gpio_message());
    }
    let mut chips = Vec::new();
    for path in paths {
        let chip = Chip::open(&path).map_err(|e| format!("opening {}: {e}", path.display()))?;
        let info = chip
            .info()
            .map_err(|e| format!("reading {}: {e}", path.display()))?;
        let lines = (0..info.lines)
            .map(|o| chip.line_info(o))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("reading the lines of {}: {e}", path.display()))?;
        chips.push(ChipLines { path, info, lines });
    }
    Ok(chips)
}

/// Finds `spec` on this machine's chips; the error names what exists.
pub fn resolve(spec: &LineSpec) -> Result<Line, String> {
    let chips = read_chips()?;
    let line_of = |c: &ChipLines, l: &gpio::LineInfo| Line {
        chip: c.path.clone(),
        chip_name: c.info.name.clone(),
        offset: l.offset,
        name: l.name.clone(),
    };
    match spec {
        LineSpec::Named(name) => {
            let found: Vec<Line> = chips
                .iter()
                .flat_map(|c| {
                    c.lines
                        .iter()
                        .filter(|l| &l.name == name)
                        .map(move |l| line_of(c, l))
                })
                .collect();
            match found.len() {
                0 => Err(format!("no line is named '{name}' (latscope gpio --list shows every line; or give CHIP:OFFSET)")),
                1 => Ok(found.into_iter().next().expect("one")),
                _ => Err(format!("{} lines are named '{name}' ({}); give CHIP:OFFSET", found.len(),
                    found.iter().map(Line::label).collect::<Vec<_>>().join(", "))),
            }
        }
        LineSpec::OnChip { chip, line } => {
            let wanted = chip.strip_prefix("gpiochip").unwrap_or(chip);
            let c = chips
                .iter()
                .find(|c| {
                    c.info.name.strip_prefix("gpiochip") == Some(wanted) || &c.info.label == chip
                })
                .ok_or_else(|| {
                    format!(
                        "no chip '{chip}' (chips here: {}; latscope gpio --list)",
                        chips
                            .iter()
                            .map(|c| c.info.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                })?;
            let l = match line.parse::<u32>() {
                Ok(offset) => c.lines.get(offset as usize).ok_or_else(|| {
                    format!(
                        "{} has lines 0 to {}, not {offset}",
                        c.info.name,
                        c.info.lines.saturating_sub(1)
                    )
                })?,
                Err(_) => c.lines.iter().find(|l| &l.name == line).ok_or_else(|| {
                    format!(
                        "{} has no line named '{line}' (latscope gpio --list)",
                        c.info.name
                    )
                })?,
            };
            Ok(line_of(c, l))
        }
    }
}

/// `latscope gpio --list`: every chip and line with its name, use and direction.
pub fn list_text() -> Result<String, String> {
    let chips = read_chips()?;
    let mut out = String::new();
    for c in &chips {
        let _ = writeln!(
            out,
            "{} [{}] {} lines ({})",
            c.info.name,
            c.info.label,
            c.info.lines,
            c.path.display()
        );
        for l in &c.lines {
            let dir = if l.flags & flag::OUTPUT != 0 {
                "output"
            } else {
                "input"
            };
            let used = if l.flags & flag::USED != 0 {
                format!(
                    "used by \"{}\"",
                    if l.consumer.is_empty() {
                        "kernel"
                    } else {
                        &l.consumer
                    }
                )
            } else {
                "unused".to_string()
            };
            let name = if l.name.is_empty() {
                "unnamed"
            } else {
                &l.name
            };
            let _ = writeln!(out, "  {:>4}  {:<20} {:<7} {}", l.offset, name, dir, used);
        }
    }
    Ok(out)
}

/// The gpio-sim `pull` file of `line` (writing `pull-up`/`pull-down` there raises a
/// real edge through the simulator's interrupt), when the chip is a gpio-sim chip.
pub fn sim_pull_file(line: &Line) -> Result<PathBuf, String> {
    let dir = sim_line_dir(line)?;
    Ok(dir.join("pull"))
}

/// The gpio-sim `value` file of `line` (what an output line was set to).
pub fn sim_value_file(line: &Line) -> Result<PathBuf, String> {
    Ok(sim_line_dir(line)?.join("value"))
}

fn sim_line_dir(line: &Line) -> Result<PathBuf, String> {
    let device = Path::new("/sys/bus/gpio/devices").join(&line.chip_name);
    let dir = device.join(format!("sim_gpio{}", line.offset));
    if dir.join("pull").exists() {
        return Ok(dir);
    }
    // Older kernels: the chip's device under the platform device.
    let platform = std::fs::canonicalize(&device)
        .ok()
        .map(|d| d.join(format!("sim_gpio{}", line.offset)));
    match platform {
        Some(d) if d.join("pull").exists() => Ok(d),
        _ => Err(format!(
            "{} is not a gpio-sim line (no {}/pull): --drive sim needs the kernel's GPIO simulator; use --drive wire with a jumper from --out to --in",
            line.label(),
            dir.display()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_chip_line_and_names() {
        assert_eq!(
            LineSpec::parse("gpiochip0:17"),
            Ok(LineSpec::OnChip {
                chip: "gpiochip0".into(),
                line: "17".into()
            })
        );
        assert_eq!(
            LineSpec::parse("GPIO17"),
            Ok(LineSpec::Named("GPIO17".into()))
        );
        assert!(LineSpec::parse(":3").is_err());
        assert!(LineSpec::parse("").is_err());
    }

    #[test]
    fn labels_name_the_line() {
        let l = Line {
            chip: "/dev/gpiochip0".into(),
            chip_name: "gpiochip0".into(),
            offset: 3,
            name: "sim-in".into(),
        };
        assert_eq!(l.label(), "gpiochip0:3 (sim-in)");
    }
}
