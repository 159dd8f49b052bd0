//! The kernel's CPU list format (`0-3,6`), as sysfs, /proc and cgroup files print it and
//! as users type it: parsed and formatted here so sys reads CPU lists without reaching up.

/// Parses a CPU list such as `1`, `0-3,6`, without `all`.
pub fn parse_cpu_list_plain(text: &str) -> Result<Vec<usize>, String> {
    let mut cpus = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let bad = || format!("'{part}' in CPU list '{text}' is not a CPU number or range like 0-3");
        if let Some((a, b)) = part.split_once('-') {
            let a: usize = a.trim().parse().map_err(|_| bad())?;
            let b: usize = b.trim().parse().map_err(|_| bad())?;
            if b < a {
                return Err(format!("range '{part}' runs backwards; write {b}-{a}"));
            }
            cpus.extend(a..=b);
        } else {
            cpus.push(part.parse().map_err(|_| bad())?);
        }
    }
    if cpus.is_empty() {
        return Err(format!("CPU list '{text}' names no CPU"));
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
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
