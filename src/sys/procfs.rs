//! Reading one task's facts from /proc/TID/stat and /proc/TID/comm: its name, whether it
//! is a kernel thread, when it started (to recognize a reused id) and where it last ran.

/// What /proc/TID/stat says about a task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskStat {
    pub comm: String,
    /// Start time in clock ticks after boot; with the id it names a task uniquely.
    pub start_time: u64,
    /// The CPU it last ran on.
    pub processor: usize,
    pub kernel_thread: bool,
    /// `R`, `S`, `D`, `Z` (zombie: dead but not yet reaped), ...
    pub state: char,
}

const PF_KTHREAD: u64 = 0x0020_0000;

/// Parses the text of /proc/TID/stat.
pub fn parse_stat(text: &str) -> Option<TaskStat> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let comm = text.get(open + 1..close)?.to_string();
    // Fields after the name, starting with field 3 (state).
    let rest: Vec<&str> = text.get(close + 1..)?.split_whitespace().collect();
    let field = |n: usize| rest.get(n - 3).and_then(|f| f.parse::<u64>().ok());
    Some(TaskStat {
        comm,
        start_time: field(22)?,
        processor: field(39)? as usize,
        kernel_thread: field(9)? & PF_KTHREAD != 0,
        state: rest.first()?.chars().next()?,
    })
}

/// The stat of task `tid` (any thread id), if it still exists.
pub fn task_stat(tid: i32) -> Option<TaskStat> {
    parse_stat(&std::fs::read_to_string(format!("/proc/{tid}/stat")).ok()?)
}

/// True when `tid` exists and started at `start_time` (its id was not reused).
pub fn is_same_task(tid: i32, start_time: u64) -> bool {
    task_stat(tid).is_some_and(|s| s.start_time == start_time)
}

/// True when `tid` is the task that started at `start_time` and has not exited.
pub fn is_running_task(tid: i32, start_time: u64) -> bool {
    task_stat(tid).is_some_and(|s| s.start_time == start_time && s.state != 'Z' && s.state != 'X')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_names_with_spaces_and_parens() {
        let line = "123 (my (odd) task) S 1 123 123 0 -1 2097216 0 0 0 0 0 0 0 0 20 0 1 0 4567 0 0 18446744073709551615 0 0 0 0 0 0 0 2147483647 0 0 0 0 17 1 0 0 0 0 0";
        let s = parse_stat(line).unwrap();
        assert_eq!(s.comm, "my (odd) task");
        assert_eq!(s.start_time, 4567);
        assert_eq!(s.processor, 1);
        assert!(s.kernel_thread);
        assert_eq!(s.state, 'S');
    }

    #[test]
    fn reads_own_task() {
        let s = task_stat(std::process::id() as i32).unwrap();
        assert!(!s.kernel_thread);
        assert!(is_same_task(std::process::id() as i32, s.start_time));
    }
}
