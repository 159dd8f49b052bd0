//! Kernel checks: PREEMPT_RT (from every source, across the config's renames and
//! mainline 6.12+), the preemption mode in effect, debug options that inflate latency,
//! tracers left running and a console on a serial port.

use super::finding::{CheckId, Finding};
use super::Inputs;
use std::collections::BTreeMap;

/// The kernel's build configuration, from wherever this distribution keeps it.
pub struct KernelConfig {
    /// Where it was read (`/proc/config.gz`, `/boot/config-6.1.0-rt`).
    pub source: String,
    options: BTreeMap<String, String>,
}

impl KernelConfig {
    pub fn parse(source: &str, text: &str) -> Self {
        let options = text
            .lines()
            .filter_map(|l| l.split_once('='))
            .filter(|(k, _)| k.starts_with("CONFIG_"))
            .map(|(k, v)| (k.to_string(), v.trim().to_string()))
            .collect();
        Self {
            source: source.into(),
            options,
        }
    }

    /// The value of `CONFIG_<name>` (`250` for HZ), `None` when not set.
    pub fn value(&self, name: &str) -> Option<&str> {
        self.options
            .get(&format!("CONFIG_{name}"))
            .map(|v| v.trim_matches('"'))
    }

    /// Whether `CONFIG_<name>` is built in or a module.
    pub fn is_set(&self, name: &str) -> bool {
        matches!(
            self.options
                .get(&format!("CONFIG_{name}"))
                .map(String::as_str),
            Some("y") | Some("m")
        )
    }
}

/// The running kernel's config: /proc/config.gz, else /boot/config-RELEASE, else
/// /lib/modules/RELEASE/config; `None` when none is there.
pub fn load_config(inputs: &Inputs) -> Option<KernelConfig> {
    let files = &inputs.files;
    if let Ok(text) = files.read_gz("/proc/config.gz") {
        return Some(KernelConfig::parse("/proc/config.gz", &text));
    }
    let release = files.read_trim("/proc/sys/kernel/osrelease")?;
    [
        format!("/boot/config-{release}"),
        format!("/lib/modules/{release}/config"),
    ]
    .into_iter()
    .find_map(|path| Some(KernelConfig::parse(&path, &files.read(&path).ok()?)))
}

/// Whether this is a PREEMPT_RT kernel, and the evidence of each source that says so.
fn preempt_rt_evidence(inputs: &Inputs, config: Option<&KernelConfig>) -> Vec<String> {
    let mut yes = Vec::new();
    if inputs.files.read_trim("/sys/kernel/realtime").as_deref() == Some("1") {
        yes.push("/sys/kernel/realtime: 1".to_string());
    }
    let version = inputs.version();
    // 5.3+ and mainline 6.12+ say PREEMPT_RT; the 4.x -rt patches said `PREEMPT RT`.
    if version.contains("PREEMPT_RT") || version.contains("PREEMPT RT") {
        yes.push(format!("/proc/sys/kernel/version: {version}"));
    }
    if let Some(config) = config {
        // CONFIG_PREEMPT_RT since 5.3 (and in mainline since 6.12); the -rt patches
        // before 5.3 named it CONFIG_PREEMPT_RT_FULL.
        for name in ["PREEMPT_RT", "PREEMPT_RT_FULL"] {
            if config.is_set(name) {
                yes.push(format!("{}: CONFIG_{name}=y", config.source));
            }
        }
    }
    yes
}

pub fn preempt_rt(inputs: &Inputs, config: Option<&KernelConfig>) -> Finding {
    let yes = preempt_rt_evidence(inputs, config);
    if !yes.is_empty() {
        let mut f = Finding::pass(CheckId::KernelPreemptRt, "PREEMPT_RT kernel");
        f.evidence = yes;
        return f;
    }
    let release = inputs
        .files
        .read_trim("/proc/sys/kernel/osrelease")
        .unwrap_or_default();
    let mut f = Finding::warn(
        CheckId::KernelPreemptRt,
        format!("not a PREEMPT_RT kernel ({release}): spinlocks and interrupt handlers run without preemption, worst cases reach milliseconds"),
        rt_kernel_fix(inputs, &release),
    )
    .with(format!("/proc/sys/kernel/version: {}", inputs.version()))
    .with("/sys/kernel/realtime: absent or 0");
    match config {
        Some(c) => f = f.with(format!("{}: no CONFIG_PREEMPT_RT(_FULL)=y", c.source)),
        None => f = f.with("kernel config: not found (/proc/config.gz, /boot/config-RELEASE)"),
    }
    f
}

/// Where this machine gets a PREEMPT_RT kernel: the package of its architecture
/// (Debian's linux-image-rt-amd64 / -rt-arm64), or, on Raspberry Pi OS's kernels
/// (`+rpt-rpi-…`), that there is none to install.
fn rt_kernel_fix(inputs: &Inputs, release: &str) -> String {
    use crate::sysinfo::arm64::CpuArch;
    let build = "or build one with CONFIG_PREEMPT_RT=y (mainline since 6.12)";
    if release.contains("rpi") {
        return format!("boot a PREEMPT_RT kernel: Raspberry Pi OS ships none ({release} is its own kernel), so build its kernel (github.com/raspberrypi/linux) with CONFIG_PREEMPT_RT=y (mainline since 6.12), or run Debian's linux-image-rt-arm64 (Debian's Pi support, not Raspberry Pi OS's firmware and overlays)");
    }
    match CpuArch::of(&inputs.files) {
        CpuArch::Arm64 => format!("boot a PREEMPT_RT kernel (Debian: linux-image-rt-arm64; Ubuntu: `pro enable realtime-kernel`; a board vendor's BSP kernel: ask the vendor for its RT build; {build})"),
        CpuArch::Arm32 => format!("boot a PREEMPT_RT kernel (Debian armhf has no RT flavour: {build}, or use an arm64 kernel if the board has one: Debian's linux-image-rt-arm64)"),
        _ => format!("boot a PREEMPT_RT kernel (Debian: linux-image-rt-amd64; Ubuntu: `pro enable realtime-kernel`; Fedora/RHEL: kernel-rt; {build})"),
    }
}

/// The dynamic preemption mode from debugfs (`none voluntary (full) lazy`).
fn mode_from_debugfs(inputs: &Inputs) -> Option<String> {
    let text = inputs.files.read_trim("/sys/kernel/debug/sched/preempt")?;
    text.split_whitespace()
        .find(|w| w.starts_with('('))
        .map(|w| w.trim_matches(|c| c == '(' || c == ')').to_string())
}

/// The mode a config selects at build time (a dynamic kernel's default).
fn mode_from_config(config: &KernelConfig) -> Option<&'static str> {
    [
        ("PREEMPT_RT", "full (rt)"),
        ("PREEMPT_LAZY", "lazy"),
        ("PREEMPT", "full"),
        ("PREEMPT_VOLUNTARY", "voluntary"),
        ("PREEMPT_NONE", "none"),
    ]
    .into_iter()
    .find(|(name, _)| config.is_set(name))
    .map(|(_, mode)| mode)
}

/// The preemption mode in effect and where it was read.
fn preempt_mode_of(inputs: &Inputs, config: Option<&KernelConfig>) -> Option<(String, String)> {
    if let Some(mode) = mode_from_debugfs(inputs) {
        return Some((mode, "/sys/kernel/debug/sched/preempt".into()));
    }
    let dynamic = inputs.version().contains("PREEMPT_DYNAMIC")
        || config.is_some_and(|c| c.is_set("PREEMPT_DYNAMIC"));
    if dynamic {
        if let Some(mode) = inputs.cmdline_value("preempt") {
            return Some((mode, "/proc/cmdline: preempt=".into()));
        }
    }
    if let Some(c) = config {
        if let Some(mode) = mode_from_config(c) {
            let note = if dynamic {
                " (the default of PREEMPT_DYNAMIC)"
            } else {
                ""
            };
            return Some((mode.into(), format!("{}{note}", c.source)));
        }
    }
    let version = inputs.version();
    if version.contains("PREEMPT_DYNAMIC") {
        None
    } else if version.contains("PREEMPT") {
        Some(("full".into(), "/proc/sys/kernel/version".into()))
    } else {
        Some((
            "none or voluntary".into(),
            "/proc/sys/kernel/version".into(),
        ))
    }
}

/// The fix for a voluntary or no-preemption kernel: `preempt=full` where the kernel is
/// PREEMPT_DYNAMIC; where its config says it is not (Debian's arm64 6.1 kernels), the
/// parameter is ignored, so another kernel is the fix.
fn preempt_mode_fix(inputs: &Inputs, config: Option<&KernelConfig>) -> String {
    let dynamic = inputs.version().contains("PREEMPT_DYNAMIC")
        || config.is_some_and(|c| c.is_set("PREEMPT_DYNAMIC"));
    match config {
        Some(c) if !dynamic => format!(
            "this kernel is built without PREEMPT_DYNAMIC ({}: CONFIG_PREEMPT_DYNAMIC not set), so preempt=full is ignored: boot a PREEMPT_RT kernel (kernel.preempt_rt's fix names one for this machine) or one built with CONFIG_PREEMPT=y",
            c.source
        ),
        _ => "boot with preempt=full on the kernel command line (PREEMPT_DYNAMIC kernels), or a PREEMPT_RT kernel".into(),
    }
}

pub fn preempt_mode(inputs: &Inputs, config: Option<&KernelConfig>) -> Finding {
    let id = CheckId::KernelPreemptMode;
    if !preempt_rt_evidence(inputs, config).is_empty() {
        return Finding::pass(id, "fully preemptible (PREEMPT_RT)");
    }
    let Some((mode, source)) = preempt_mode_of(inputs, config) else {
        return Finding::skip(id, "PREEMPT_DYNAMIC kernel whose mode is unknown: debugfs not mounted, no preempt= and no kernel config (mount -t debugfs none /sys/kernel/debug as root)");
    };
    let evidence = format!("{source}: {mode}");
    match mode.as_str() {
        "full" | "lazy" | "full (rt)" => Finding::pass(
            id,
            format!("preemption mode {mode}: an RT task preempts kernel code outside locks"),
        )
        .with(evidence),
        _ => Finding::fail(
            id,
            format!("preemption mode {mode}: an RT task waits until the kernel code running reaches a preemption point (milliseconds)"),
            preempt_mode_fix(inputs, config),
        )
        .with(evidence),
    }
}

/// Debug options that make every lock, allocation or preemption toggle slower, with
/// whether they alone make the kernel unfit (FAIL) or only slower (WARN).
const DEBUG_OPTIONS: [(&str, bool); 12] = [
    ("LOCKDEP", true),
    ("PROVE_LOCKING", true),
    ("DEBUG_LOCK_ALLOC", true),
    ("LOCK_STAT", true),
    ("KASAN", true),
    ("KCSAN", true),
    ("KMSAN", true),
    ("DEBUG_PAGEALLOC", true),
    ("DEBUG_PREEMPT", false),
    ("DEBUG_OBJECTS", false),
    ("IRQSOFF_TRACER", false),
    ("PREEMPT_TRACER", false),
];

pub fn debug_options(config: Option<&KernelConfig>) -> Finding {
    let id = CheckId::KernelDebugOptions;
    let Some(config) = config else {
        return Finding::skip(id, "no kernel config found (/proc/config.gz, /boot/config-RELEASE, /lib/modules/RELEASE/config are missing)");
    };
    let set: Vec<(&str, bool)> = DEBUG_OPTIONS
        .into_iter()
        .filter(|(name, _)| config.is_set(name))
        .collect();
    let names: Vec<String> = set.iter().map(|(n, _)| format!("CONFIG_{n}")).collect();
    let fix = "use a kernel built without these options (they are for debugging kernels, not for measuring them)";
    let summary = format!(
        "debug options that slow the kernel down: {}",
        names.join(", ")
    );
    let f = if set.iter().any(|(_, heavy)| *heavy) {
        Finding::fail(id, summary, fix)
    } else if !set.is_empty() {
        Finding::warn(id, summary, fix)
    } else {
        Finding::pass(
            id,
            "no latency-inflating debug option (LOCKDEP, KASAN, KCSAN, DEBUG_PREEMPT, ...)",
        )
    };
    f.with(format!("read from {}", config.source))
}

/// The tracefs mount (the new place, then the one under debugfs).
fn tracefs(inputs: &Inputs) -> Option<&'static str> {
    ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"]
        .into_iter()
        .find(|dir| inputs.files.exists(&format!("{dir}/current_tracer")))
}

pub fn tracers(inputs: &Inputs) -> Finding {
    let id = CheckId::KernelTracers;
    let Some(dir) = tracefs(inputs) else {
        let why = if !inputs.files.list("/sys/kernel/tracing").is_empty() {
            "tracefs not readable (run as root)"
        } else {
            "tracefs not mounted at /sys/kernel/tracing: nothing to read (as root: mount -t tracefs nodev /sys/kernel/tracing, then look again)"
        };
        return Finding::skip(id, why);
    };
    let mut active = Vec::new();
    let mut places = vec![dir.to_string()];
    for instance in inputs.files.list(&format!("{dir}/instances")) {
        // latscope's own instances (`--trace`) belong to runs; they are not left behind.
        if !instance.starts_with("latscope-") {
            places.push(format!("{dir}/instances/{instance}"));
        }
    }
    for place in &places {
        let tracer = inputs
            .files
            .read_trim(&format!("{place}/current_tracer"))
            .unwrap_or_default();
        let on = inputs
            .files
            .read_trim(&format!("{place}/tracing_on"))
            .as_deref()
            != Some("0");
        if !tracer.is_empty() && tracer != "nop" && on {
            active.push(format!("{place}/current_tracer: {tracer}"));
        }
    }
    if active.is_empty() {
        return Finding::pass(id, "no tracer running (current_tracer: nop)");
    }
    let mut f = Finding::warn(
        id,
        format!(
            "{} tracer(s) running: each adds work to every traced function or interrupt toggle",
            active.len()
        ),
        format!("echo nop > {dir}/current_tracer (and in each instance listed)"),
    );
    f.evidence = active;
    f
}

/// What reaches the console at a console_loglevel: messages of a level below it.
fn console_reach(level: i64) -> &'static str {
    match level {
        i64::MIN..=0 => "nothing",
        1 => "only emergencies",
        2 => "alerts and worse",
        3 => "critical messages and worse",
        4 => "errors and worse",
        5 => "warnings and worse",
        6 => "notices and worse",
        7 => "informational messages and worse",
        _ => "every message, debug too",
    }
}

/// The console log level in effect and where it was read: /proc/sys/kernel/printk's
/// first field (what `dmesg -n` sets), else the boot's (`loglevel=`, `quiet` = 4,
/// `debug` = 10, else the kernel's default 7).
fn console_loglevel(inputs: &Inputs) -> (i64, String) {
    let printk = inputs.files.read_trim("/proc/sys/kernel/printk");
    if let Some(level) = printk
        .as_deref()
        .and_then(|t| t.split_whitespace().next())
        .and_then(|v| v.parse().ok())
    {
        return (
            level,
            format!(
                "/proc/sys/kernel/printk: {}",
                printk
                    .unwrap_or_default()
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
            ),
        );
    }
    if let Some(level) = inputs
        .cmdline_value("loglevel")
        .and_then(|v| v.parse().ok())
    {
        return (level, format!("/proc/cmdline loglevel={level}"));
    }
    if inputs.cmdline_has("debug") {
        return (10, "/proc/cmdline: debug".into());
    }
    if inputs.cmdline_has("quiet") {
        return (4, "/proc/cmdline: quiet".into());
    }
    (
        7,
        "the kernel's default (CONSOLE_LOGLEVEL_DEFAULT 7)".into(),
    )
}

/// How to take the kernel console off `ports`: drop the `console=` word that put it there
/// as /proc/cmdline has it (`console=ttyAMA0,115200`), else name the ports the device tree
/// chose: the port this machine has, never x86's ttyS where it is an Arm board's UART.
fn console_parameter(inputs: &Inputs, ports: &[&str]) -> String {
    let given = inputs.cmdline_values("console");
    let on_port = |v: &&String| {
        let name = v.split(',').next().unwrap_or_default();
        ports.contains(&name)
    };
    match given.iter().find(on_port) {
        Some(value) => format!("or drop console={value} from the kernel command line"),
        None => format!(
            "or move the console off {}, which the device tree's stdout-path (or the firmware) chose: console=tty0 on the kernel command line",
            ports.join(", ")
        ),
    }
}

pub fn serial_console(inputs: &Inputs) -> Finding {
    let id = CheckId::KernelSerialConsole;
    let serial = |name: &str| {
        [
            "ttyS", "ttyAMA", "ttyUSB", "ttymxc", "ttySAC", "ttyPS", "hvc",
        ]
        .iter()
        .any(|p| name.starts_with(p))
    };
    let (consoles, source) = match inputs.files.read("/proc/consoles") {
        Ok(text) => (
            text.lines()
                .filter_map(|l| l.split_whitespace().next().map(String::from))
                .collect::<Vec<_>>(),
            "/proc/consoles",
        ),
        Err(_) => (inputs.cmdline_values("console"), "/proc/cmdline console="),
    };
    let consoles_line = format!("{source}: {}", consoles.join(" "));
    let on_serial: Vec<&str> = consoles
        .iter()
        .map(String::as_str)
        .filter(|c| serial(c))
        .collect();
    if on_serial.is_empty() {
        return Finding::pass(id, "no kernel console on a serial port").with(consoles_line);
    }
    let (level, level_source) = console_loglevel(inputs);
    let ports = on_serial.join(", ");
    let reach = console_reach(level);
    if level <= 1 {
        return Finding::pass(
            id,
            format!("kernel console on {ports}, but {reach} reach it (console_loglevel {level})"),
        )
        .with(consoles_line)
        .with(level_source);
    }
    Finding::warn(
        id,
        format!("kernel console on {ports}: {reach} (console_loglevel {level}) wait for the UART at its baud rate as they print"),
        format!("print less: `dmesg -n 1` now (only emergencies reach the console), loglevel=1 at boot; {}", console_parameter(inputs, &on_serial)),
    )
    .with(consoles_line)
    .with(level_source)
}
