//! What every check reads from: the machine's files (or a fixture tree), the CPUs the
//! user means to measure on and the priority they mean to run at, with the small
//! parsers the checks share (command-line parameters, CPU lists, /proc/PID/stat).

use crate::sys::host_files::HostFiles;

/// The checks' view of the machine and of the user's intent.
pub struct Inputs {
    pub files: HostFiles,
    pub online: Vec<usize>,
    /// The CPUs the checks judge (and the A/Bs measure on).
    pub cpus: Vec<usize>,
    /// Why those: `--cpus`, `the isolated CPUs`, `the last online CPU`.
    pub cpus_why: String,
    /// The priority an RT task of the user's will run at (`--priority`, default 95).
    pub priority: i32,
}

impl Inputs {
    /// The inputs on `files`: `cpus` as typed (None: the isolated or nohz_full CPUs,
    /// else the last online one).
    pub fn new(files: HostFiles, cpus: Option<&str>, priority: i32) -> Result<Self, String> {
        let online = files
            .read_trim("/sys/devices/system/cpu/online")
            .and_then(|s| crate::units::parse_cpu_list_plain(&s).ok())
            .unwrap_or_else(|| vec![0]);
        let mut inputs = Self {
            files,
            online,
            cpus: Vec::new(),
            cpus_why: String::new(),
            priority,
        };
        (inputs.cpus, inputs.cpus_why) = match cpus {
            Some(text) => (online_cpu_list(text, &inputs.online)?, "--cpus".into()),
            None => inputs.default_cpus(),
        };
        Ok(inputs)
    }

    fn default_cpus(&self) -> (Vec<usize>, String) {
        let mut isolated = self.cpu_list("/sys/devices/system/cpu/isolated");
        isolated.extend(self.cpu_list("/sys/devices/system/cpu/nohz_full"));
        isolated.sort_unstable();
        isolated.dedup();
        isolated.retain(|c| self.online.contains(c));
        if !isolated.is_empty() {
            return (isolated, "the isolated CPUs".into());
        }
        let last = *self.online.last().unwrap_or(&0);
        (vec![last], "the last online CPU; choose with --cpus".into())
    }

    /// A kernel CPU list file (`2-3,6`), empty when missing, empty or `(null)`.
    pub fn cpu_list(&self, path: &str) -> Vec<usize> {
        self.files
            .read_trim(path)
            .filter(|s| !s.is_empty() && s != "(null)")
            .and_then(|s| crate::units::parse_cpu_list_plain(&s).ok())
            .unwrap_or_default()
    }

    /// /proc/sys/kernel/version (`#1 SMP PREEMPT_DYNAMIC ...`).
    pub fn version(&self) -> String {
        self.files
            .read_trim("/proc/sys/kernel/version")
            .unwrap_or_default()
    }

    /// The kernel command line's words (the init's arguments after ` -- ` left out).
    pub fn cmdline_words(&self) -> Vec<String> {
        let line = self.files.read_trim("/proc/cmdline").unwrap_or_default();
        line.split_whitespace()
            .take_while(|w| *w != "--")
            .map(String::from)
            .collect()
    }

    /// Every value of `name=` on the kernel command line, in order.
    pub fn cmdline_values(&self, name: &str) -> Vec<String> {
        self.cmdline_words()
            .iter()
            .filter_map(|w| w.split_once('='))
            .filter(|(k, _)| *k == name)
            .map(|(_, v)| v.to_string())
            .collect()
    }

    /// The last value of `name=` (the kernel takes the last one).
    pub fn cmdline_value(&self, name: &str) -> Option<String> {
        self.cmdline_values(name).pop()
    }

    /// Whether the bare word `name` is on the command line (`quiet`, `threadirqs`).
    pub fn cmdline_has(&self, name: &str) -> bool {
        self.cmdline_words().iter().any(|w| w == name)
    }

    /// CPUs in a `isolcpus=`-style value: flags (`nohz,domain,managed_irq`) dropped.
    pub fn cmdline_cpus(&self, name: &str) -> Option<Vec<usize>> {
        let value = self.cmdline_value(name)?;
        let cpus: Vec<&str> = value
            .split(',')
            .filter(|p| p.starts_with(|c: char| c.is_ascii_digit()))
            .collect();
        crate::units::parse_cpu_list_plain(&cpus.join(",")).ok()
    }

    /// Every process: (pid, its /proc/PID/stat parsed).
    pub fn processes(&self) -> Vec<(u32, ProcStat)> {
        self.files
            .list("/proc")
            .iter()
            .filter_map(|name| name.parse::<u32>().ok())
            .filter_map(|pid| {
                let text = self.files.read(&format!("/proc/{pid}/stat")).ok()?;
                Some((pid, ProcStat::parse(&text)?))
            })
            .collect()
    }
}

/// A typed CPU list (`all` = every online CPU) whose CPUs must all be online.
pub fn online_cpu_list(text: &str, online: &[usize]) -> Result<Vec<usize>, String> {
    let cpus = crate::units::parse_cpu_list(text, online)?;
    match cpus.iter().find(|c| !online.contains(c)) {
        Some(cpu) => Err(format!(
            "CPU {cpu} is not online (online CPUs: {})",
            crate::units::format_cpu_list(online)
        )),
        None => Ok(cpus),
    }
}

/// The fields of /proc/PID/stat the priority checks use.
#[derive(Debug, Clone, PartialEq)]
pub struct ProcStat {
    pub comm: String,
    /// 0 for SCHED_OTHER, 1-99 for FIFO/RR.
    pub rt_priority: i32,
    /// 0 OTHER, 1 FIFO, 2 RR, 3 BATCH, 5 IDLE, 6 DEADLINE.
    pub policy: i32,
    pub kernel_thread: bool,
    /// The CPU it last ran on (field 39).
    pub processor: Option<usize>,
}

impl ProcStat {
    /// Parses a stat line: the name is in parentheses and may hold spaces or `)`.
    pub fn parse(text: &str) -> Option<Self> {
        let open = text.find('(')?;
        let close = text.rfind(')')?;
        let comm = text.get(open + 1..close)?.to_string();
        // Fields after the name start at field 3 (state); flags is field 9,
        // processor 39, rt_priority 40, policy 41.
        let rest: Vec<&str> = text.get(close + 1..)?.split_whitespace().collect();
        let field = |n: usize| rest.get(n - 3).and_then(|v| v.parse::<i64>().ok());
        const PF_KTHREAD: i64 = 0x0020_0000;
        Some(Self {
            comm,
            rt_priority: field(40)? as i32,
            policy: field(41)? as i32,
            kernel_thread: field(9)? & PF_KTHREAD != 0,
            processor: field(39).and_then(|c| usize::try_from(c).ok()),
        })
    }

    pub fn policy_name(&self) -> &'static str {
        match self.policy {
            1 => "FIFO",
            2 => "RR",
            3 => "BATCH",
            5 => "IDLE",
            6 => "DEADLINE",
            _ => "OTHER",
        }
    }

    pub fn is_realtime(&self) -> bool {
        matches!(self.policy, 1 | 2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_with_odd_names_parse() {
        // This machine's /proc/50/stat (irq/24-ACPI:Ged, SCHED_FIFO 50).
        let line = "50 (irq/24-ACPI:Ged) S 2 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 -51 0 1 0 27 0 0 18446744073709551615 0 0 0 0 0 0 0 2147483647 0 1 0 0 17 0 50 1 0 0 0 0 0 0 0 0 0 0 0";
        let s = ProcStat::parse(line).unwrap();
        assert_eq!(s.comm, "irq/24-ACPI:Ged");
        assert_eq!((s.rt_priority, s.policy, s.kernel_thread), (50, 1, true));
        assert_eq!(s.processor, Some(0));
        let odd = line.replace("(irq/24-ACPI:Ged)", "(a) b (c)");
        assert_eq!(ProcStat::parse(&odd).unwrap().comm, "a) b (c");
    }
}
