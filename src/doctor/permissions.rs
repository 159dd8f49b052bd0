//! Permission checks: RLIMIT_RTPRIO and RLIMIT_MEMLOCK (or the capabilities that make
//! them moot), and an actual attempt at SCHED_FIFO at the priority asked for, which is
//! the only answer that counts capabilities, limits and cgroup RT budgets together.

use super::finding::{CheckId, Finding};
use super::Inputs;

const CAP_IPC_LOCK: u32 = 14;
const CAP_SYS_NICE: u32 = 23;

/// The effective capability set (CapEff of /proc/self/status).
fn capabilities(inputs: &Inputs) -> Option<u64> {
    let status = inputs.files.read("/proc/self/status").ok()?;
    let hex = status.lines().find_map(|l| l.strip_prefix("CapEff:"))?;
    u64::from_str_radix(hex.trim(), 16).ok()
}

fn has_cap(caps: Option<u64>, cap: u32) -> bool {
    caps.is_some_and(|c| c & (1 << cap) != 0)
}

/// The soft limit of a /proc/self/limits row (`None`: unlimited).
fn soft_limit(inputs: &Inputs, row: &str) -> Result<Option<u64>, String> {
    let text = inputs.files.read("/proc/self/limits").map_err(|e| {
        format!(
            "/proc/self/limits {}",
            crate::sys::host_files::why_unreadable(&e)
        )
    })?;
    let line = text
        .lines()
        .find(|l| l.starts_with(row))
        .ok_or_else(|| format!("/proc/self/limits has no '{row}' row"))?;
    let soft = line[row.len()..].split_whitespace().next().unwrap_or("");
    if soft == "unlimited" {
        return Ok(None);
    }
    soft.parse()
        .map(Some)
        .map_err(|_| format!("/proc/self/limits: '{soft}' is no number"))
}

pub fn rtprio(inputs: &Inputs) -> Finding {
    let id = CheckId::PermRtprio;
    let caps = capabilities(inputs);
    let limit = match soft_limit(inputs, "Max realtime priority") {
        Ok(l) => l,
        Err(why) => return Finding::skip(id, why),
    };
    let shown = limit.map_or("unlimited".into(), |l| l.to_string());
    let line = format!("/proc/self/limits Max realtime priority: {shown}");
    if has_cap(caps, CAP_SYS_NICE) {
        return Finding::pass(
            id,
            format!("CAP_SYS_NICE: any RT priority (RLIMIT_RTPRIO {shown} does not apply)"),
        )
        .with(line);
    }
    let p = inputs.priority as u64;
    if limit.is_none_or(|l| l >= p) {
        Finding::pass(id, format!("RLIMIT_RTPRIO {shown} allows priority {p}")).with(line)
    } else {
        Finding::fail(
            id,
            format!("RLIMIT_RTPRIO {shown} < priority {p} and no CAP_SYS_NICE: SCHED_FIFO {p} is refused"),
            format!("add `@realtime - rtprio 99` to /etc/security/limits.d/realtime.conf and join the group (log in again), or run as root; ulimit -r {p} in a root shell"),
        )
        .with(line)
    }
}

pub fn memlock(inputs: &Inputs) -> Finding {
    let id = CheckId::PermMemlock;
    let caps = capabilities(inputs);
    let limit = match soft_limit(inputs, "Max locked memory") {
        Ok(l) => l,
        Err(why) => return Finding::skip(id, why),
    };
    let shown = limit.map_or("unlimited".into(), |l| format!("{} KiB", l / 1024));
    let line = format!("/proc/self/limits Max locked memory: {shown}");
    if has_cap(caps, CAP_IPC_LOCK) {
        return Finding::pass(id, format!("CAP_IPC_LOCK: memory can be locked without limit (RLIMIT_MEMLOCK {shown} does not apply)")).with(line);
    }
    // 64 MiB: enough for a typical RT process' code, heap and stacks.
    if limit.is_none_or(|l| l >= 64 << 20) {
        Finding::pass(id, format!("RLIMIT_MEMLOCK {shown}")).with(line)
    } else {
        Finding::warn(
            id,
            format!("RLIMIT_MEMLOCK {shown}: mlockall of a real process fails, and its pages can be faulted in or out while it runs"),
            "add `@realtime - memlock unlimited` to /etc/security/limits.d/realtime.conf (log in again), or ulimit -l unlimited in a root shell",
        )
        .with(line)
    }
}

/// The cgroup RT budget of this process' cgroup v1 `cpu` hierarchy (0 refuses
/// SCHED_FIFO), and a line saying which cgroup version placed it.
fn cgroup_rt_budget(inputs: &Inputs) -> (Option<i64>, Option<String>) {
    let text = inputs.files.read("/proc/self/cgroup").unwrap_or_default();
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (
            parts.next(),
            parts.next().unwrap_or(""),
            parts.next().unwrap_or(""),
        );
        if controllers.is_empty() && path != "/" {
            return (None, Some(format!("/proc/self/cgroup: cgroup v2 {path}")));
        }
        if controllers.split(',').any(|c| c == "cpu") {
            for mount in [
                format!("/sys/fs/cgroup/{controllers}"),
                "/sys/fs/cgroup/cpu".into(),
            ] {
                let file = format!("{mount}{}/cpu.rt_runtime_us", path.trim_end_matches('/'));
                if let Some(v) = inputs.files.read_trim(&file).and_then(|v| v.parse().ok()) {
                    return (Some(v), Some(format!("{file}: {v}")));
                }
            }
        }
    }
    (None, None)
}

pub fn sched_fifo(inputs: &Inputs) -> Finding {
    let id = CheckId::PermSchedFifo;
    let p = inputs.priority;
    let (budget, cgroup_line) = cgroup_rt_budget(inputs);
    let fix_cgroup = "move the task to a cgroup with an RT budget (echo 950000 > …/cpu.rt_runtime_us of its cpu cgroup) or to the root cgroup";
    if !inputs.files.is_real() {
        if budget == Some(0) {
            let f = Finding::fail(
                id,
                "this process' cpu cgroup has an RT budget of 0: SCHED_FIFO is refused in it",
                fix_cgroup,
            );
            return f.with(cgroup_line.unwrap_or_default());
        }
        let f = Finding::skip(id, "a fixture tree (--root): no attempt is made");
        return match cgroup_line {
            Some(l) => f.with(l),
            None => f,
        };
    }
    let mut f = match crate::sys::sched::try_policy(crate::sys::sched::Policy::Fifo, p) {
        Ok(()) => Finding::pass(
            id,
            format!("SCHED_FIFO {p} granted (tried on a scratch thread)"),
        ),
        Err(e) => {
            let fix = if budget == Some(0) {
                fix_cgroup.to_string()
            } else {
                "run as root, grant CAP_SYS_NICE (setcap cap_sys_nice+ep BINARY) or raise RLIMIT_RTPRIO (see perm.rtprio)".to_string()
            };
            Finding::fail(id, format!("SCHED_FIFO {p} refused: {e}"), fix)
        }
    };
    if let Some(l) = cgroup_line {
        f = f.with(l);
    }
    f
}
