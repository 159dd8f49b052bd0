//! The suite's gpio blocks (`probe = "gpio"`: `gpio_in`, `gpio_out`, `drive`, `periods`)
//! checked as typed and expanded through `latscope gpio`'s own builders, and
//! `--gpio-in/--gpio-out/--gpio-drive`, which turn the irq-response study's timer blocks
//! into gpio blocks so its table is an external edge's answer. Beside plan.rs and
//! expand.rs so neither grows past its size.

use super::MatrixEntry;
use crate::cli::{GpioArgs, SuiteArgs};
use crate::error::UserError;
use crate::plan::common::{invalid, scenarios_of, CommonPlan};
use crate::plan::gpio::{check_gpio_probe, resolve_gpio_probe, GpioTyped};
use crate::plan::{ScenarioPlan, TraceSettings};
use crate::probe::gpio::{Bias, DriveKind, Edge, EventClock};
use crate::suite::SuiteSpec;

/// A gpio block's lines and drive as `latscope gpio` checks them (the mode as it infers
/// it: loopback with `gpio_out` or `drive = "sim"`, else respond); an error comes with
/// the key it is about. Its `periods` are checked by plan.rs, as a timer block's.
pub(super) fn gpio_block(entry: &MatrixEntry) -> Result<GpioTyped, (&'static str, UserError)> {
    let drive = match entry.drive.as_deref().unwrap_or("wire") {
        "wire" => DriveKind::Wire,
        "sim" => DriveKind::Sim,
        other => return Err(("drive", invalid("drive", other, "choose wire or sim"))),
    };
    let Some(input) = entry.gpio_in.clone() else {
        return Err((
            "gpio_in",
            invalid(
                "gpio_in",
                "",
                "a gpio block needs gpio_in = \"LINE\" (e.g. \"GPIO17\")",
            ),
        ));
    };
    let args = block_args(input, entry.gpio_out.clone(), drive);
    check_gpio_probe(&args).map_err(|e| ("gpio_in", e))
}

/// `latscope gpio`'s options for a block: its lines and drive, every other option at
/// its default (rising edges, bias as is, the kernel's event buffer, no IRQ priority).
fn block_args(input: String, output: Option<String>, drive: DriveKind) -> GpioArgs {
    GpioArgs {
        list: false,
        input: Some(input),
        output,
        mode: None,
        drive,
        period: "1ms".into(),
        edge: Edge::Rising,
        bias: Bias::AsIs,
        debounce: None,
        event_buffer: None,
        irq_priority: None,
        event_clock: EventClock::Monotonic,
        deadline: "1ms".into(),
        trace: Default::default(),
        run: Default::default(),
    }
}

/// A gpio block's scenarios on one resolved policy × shield × load set: one per period,
/// measuring on `measured` (one CPU).
pub(super) fn gpio_scenarios(
    typed: &GpioTyped,
    periods_ns: &[u64],
    common: &CommonPlan,
    trace: &Option<TraceSettings>,
    measured: &[usize],
) -> Result<Vec<ScenarioPlan>, UserError> {
    let mut common = common.clone();
    common.settings.cpus = measured.to_vec();
    let mut out = Vec::new();
    for &period_ns in periods_ns {
        let typed = GpioTyped {
            period_ns,
            ..typed.clone()
        };
        let probe = resolve_gpio_probe(&typed)?;
        out.extend(scenarios_of(vec![Box::new(probe)], &common, trace));
    }
    Ok(out)
}

/// `--gpio-in`/`--gpio-out`/`--gpio-drive`: the irq-response study's timer blocks become
/// gpio blocks on those lines (the same loads), so its table is an external edge's answer.
pub(super) fn gpio_lines(spec: &mut SuiteSpec, args: &SuiteArgs) {
    let Some(input) = &args.gpio_in else { return };
    for block in spec.matrix.iter_mut().filter(|b| b.probe == "timer") {
        block.probe = "gpio".into();
        block.methods = None;
        block.trace = None;
        block.gpio_in = Some(input.clone());
        block.gpio_out = args.gpio_out.clone();
        block.drive = args.gpio_drive.clone();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::CommonArgs;
    use crate::suite::plan::suite_size;

    fn size(text: &str) -> Result<u128, String> {
        let spec: SuiteSpec = toml::from_str(text).unwrap();
        // As clap fills it: the warm-up has a default there.
        let args = CommonArgs {
            warmup: "1s".into(),
            ..CommonArgs::default()
        };
        suite_size("plan.toml".into(), &spec, &args)
            .map(|s| s.scenarios)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn a_gpio_block_counts_periods_and_loads_and_names_its_keys() {
        let n = size("[[matrix]]\nprobe = \"gpio\"\ngpio_in = \"GPIO17\"\ngpio_out = \"GPIO27\"\nperiods = [\"1ms\", \"2ms\"]\nloads = [\"none\", \"io\"]\n");
        assert_eq!(n, Ok(4));
        let err = size("[[matrix]]\nprobe = \"gpio\"\n").unwrap_err();
        assert!(
            err.contains("block 1, gpio_in") && err.contains("gpio_in = \"LINE\""),
            "{err}"
        );
        let err = size("[[matrix]]\nprobe = \"gpio\"\ngpio_in = \"GPIO17\"\ndrive = \"led\"\n")
            .unwrap_err();
        assert!(
            err.contains("drive") && err.contains("wire or sim"),
            "{err}"
        );
        let err =
            size("[[matrix]]\nprobe = \"gpio\"\ngpio_in = \"GPIO17\"\nmethods = [\"poll\"]\n")
                .unwrap_err();
        assert!(
            err.contains("methods") && err.contains("belongs to timer"),
            "{err}"
        );
        let err = size("[[matrix]]\nprobe = \"timer\"\ngpio_in = \"GPIO17\"\n").unwrap_err();
        assert!(err.contains("belongs to gpio"), "{err}");
    }

    #[test]
    fn gpio_lines_turn_the_irq_response_timer_block_into_a_gpio_block() {
        let mut spec: SuiteSpec =
            toml::from_str(crate::suite::presets::text("irq-response").unwrap()).unwrap();
        use clap::Parser;
        let cli = crate::cli::Cli::try_parse_from([
            "latscope",
            "suite",
            "--preset",
            "irq-response",
            "--gpio-in",
            "sim-in",
            "--gpio-drive",
            "sim",
        ])
        .unwrap();
        let crate::cli::Command::Suite(args) = cli.command else {
            panic!("not suite")
        };
        gpio_lines(&mut spec, &args);
        let block = &spec.matrix[0];
        assert_eq!(block.probe, "gpio");
        assert_eq!(block.gpio_in.as_deref(), Some("sim-in"));
        assert_eq!(block.drive.as_deref(), Some("sim"));
        assert!(block.methods.is_none() && block.trace.is_none());
        assert_eq!(block.loads, ["none", "net", "io", "serial:115200"]);
    }
}
