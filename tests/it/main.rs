//! The integration tests as one binary (one build and one link instead of one per file).
//! Each module lists its tests in `cases()`; they all run under one libtest-mimic harness
//! (tests/common `run_cases`) named `module::test`, so a test whose precondition fails here
//! shows as `ignored` with a SKIPPED line. tests/no_alloc_in_loops.rs stays its own binary:
//! it needs its own global allocator.

#[path = "../common/mod.rs"]
mod common;

mod arm64_lab;
mod bad_input;
mod bad_input_corpus;
mod checkpoint;
mod compare_ab;
mod compare_many;
mod cyclictest_compare;
mod cyclictest_consumers;
mod cyclictest_corpus;
mod cyclictest_dropin;
mod cyclictest_parity;
mod cyclictest_signals;
mod doctor;
mod doctor_try;
mod exit_items;
mod exit_paths;
mod gpio;
mod html_browser;
mod injected_stall;
mod interrupt;
mod isolate;
mod lava;
mod loads;
mod long_term;
mod matching;
mod net;
mod noise;
mod non_root;
mod outputs;
mod packaging;
mod pictures;
mod printed_units;
mod raw_rows;
mod readable;
mod remote;
mod remote_cache;
mod remote_hostile;
mod report_formats;
mod security;
mod suite;
mod suite_progress;
mod suite_studies;
mod terminal_width;
mod timer_methods;
mod trace;
mod trace_recording;
mod verdicts;
mod wake;
mod watch;
mod watch_report;
mod worst_case;

/// A module's `cases`.
type ModuleCases = fn() -> Vec<common::Case>;

fn main() {
    let modules: &[(&str, ModuleCases)] = &[
        ("arm64_lab", arm64_lab::cases),
        ("bad_input", bad_input::cases),
        ("bad_input_corpus", bad_input_corpus::cases),
        ("checkpoint", checkpoint::cases),
        ("compare_ab", compare_ab::cases),
        ("compare_many", compare_many::cases),
        ("cyclictest_compare", cyclictest_compare::cases),
        ("cyclictest_consumers", cyclictest_consumers::cases),
        ("cyclictest_corpus", cyclictest_corpus::cases),
        ("cyclictest_dropin", cyclictest_dropin::cases),
        ("cyclictest_parity", cyclictest_parity::cases),
        ("cyclictest_signals", cyclictest_signals::cases),
        ("doctor", doctor::cases),
        ("doctor_try", doctor_try::cases),
        ("gpio", gpio::cases),
        ("exit_items", exit_items::cases),
        ("exit_paths", exit_paths::cases),
        ("html_browser", html_browser::cases),
        ("injected_stall", injected_stall::cases),
        ("interrupt", interrupt::cases),
        ("isolate", isolate::cases),
        ("lava", lava::cases),
        ("loads", loads::cases),
        ("long_term", long_term::cases),
        ("matching", matching::cases),
        ("net", net::cases),
        ("noise", noise::cases),
        ("packaging", packaging::cases),
        ("pictures", pictures::cases),
        ("non_root", non_root::cases),
        ("outputs", outputs::cases),
        ("printed_units", printed_units::cases),
        ("raw_rows", raw_rows::cases),
        ("remote", remote::cases),
        ("remote_cache", remote_cache::cases),
        ("remote_hostile", remote_hostile::cases),
        ("readable", readable::cases),
        ("report_formats", report_formats::cases),
        ("security", security::cases),
        ("suite", suite::cases),
        ("suite_progress", suite_progress::cases),
        ("suite_studies", suite_studies::cases),
        ("terminal_width", terminal_width::cases),
        ("timer_methods", timer_methods::cases),
        ("trace", trace::cases),
        ("trace_recording", trace_recording::cases),
        ("verdicts", verdicts::cases),
        ("wake", wake::cases),
        ("watch", watch::cases),
        ("watch_report", watch_report::cases),
        ("worst_case", worst_case::cases),
    ];
    common::run_cases(
        modules
            .iter()
            .flat_map(|&(module, cases)| cases().into_iter().map(move |c| c.in_module(module)))
            .collect(),
    )
}
