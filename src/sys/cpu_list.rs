//! The kernel's CPU list format (`0-3,6`), as sysfs, /proc and cgroup files print it and
//! as users type it: parsed and formatted here so sys reads CPU lists without reaching up.

/// The most CPUs a Linux kernel can have (the largest `CONFIG_NR_CPUS`): CPU numbers
/// run from 0 to `MAX_CPUS - 1`, whatever a list says.
pub const MAX_CPUS: usize = 8192;

/// Parses a CPU list such as `1`, `0-3,6`, without `all`. Numbers are checked against
/// `MAX_CPUS` before a range is expanded, and the result is collected in a set of that
/// size, so no list can allocate more (issue 12, item 10).
pub fn parse_cpu_list_plain(text: &str) -> Result<Vec<usize>, String> {
    let mut present = vec![false; MAX_CPUS];
    let mut any = false;
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let bad = || format!("'{part}' in CPU list '{text}' is not a CPU number or range like 0-3");
        let cpu = |n: &str| -> Result<usize, String> {
            let n = n.trim();
            if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) {
                match n.parse::<usize>() {
                    Ok(cpu) if cpu < MAX_CPUS => return Ok(cpu),
                    _ => {
                        return Err(format!(
                        "CPU {n} cannot exist: CPU numbers run from 0 to {} (the kernel's limit)",
                        MAX_CPUS - 1
                    ))
                    }
                }
            }
            Err(bad())
        };
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (cpu(a)?, cpu(b)?),
            None => {
                let c = cpu(part)?;
                (c, c)
            }
        };
        if b < a {
            return Err(format!("range '{part}' runs backwards; write {b}-{a}"));
        }
        present[a..=b].iter_mut().for_each(|p| *p = true);
        any = true;
    }
    if !any {
        return Err(format!("CPU list '{text}' names no CPU"));
    }
    Ok((0..MAX_CPUS).filter(|&c| present[c]).collect())
}

/// Formats a CPU list compactly (`0-3,6`).
pub fn format_cpu_list(cpus: &[usize]) -> String {
    let mut out = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let start = cpus[i];
        let mut end = start;
        while i + 1 < cpus.len() && cpus[i + 1] == end + 1 {
            i += 1;
            end = cpus[i];
        }
        out.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    out.join(",")
}
