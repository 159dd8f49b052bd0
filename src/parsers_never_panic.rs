//! Property tests: the parsers of what users type (CPU lists, durations, sizes, load
//! specs) never panic and never expand a CPU list beyond what can exist.
#![cfg(test)]

use crate::units::{parse_cpu_list, parse_duration_ns, parse_size_bytes};
use proptest::prelude::*;

/// Text built from the characters these parsers care about, and any text at all.
fn hostile() -> impl Strategy<Value = String> {
    prop_oneof![
        "[0-9,\\- a-z%=:.\"'µ]{0,40}",
        "[0-9]{1,25}(-[0-9]{1,25})?(,[0-9]{1,25}(-[0-9]{1,25})?){0,3}",
        any::<String>(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn cpu_lists(text in hostile()) {
        if let Ok(cpus) = parse_cpu_list(&text, &[0, 1]) {
            prop_assert!(cpus.len() <= crate::sys::cpu_list::MAX_CPUS);
            prop_assert!(cpus.windows(2).all(|w| w[0] < w[1]));
        }
    }

    #[test]
    fn durations(text in hostile()) {
        let _ = parse_duration_ns(&text, "us");
        let _ = crate::units::parse_duration_ns_with_default(&text, 1_000);
    }

    #[test]
    fn sizes(text in hostile()) {
        let _ = parse_size_bytes(&text);
        let _ = crate::units::parse_size_with_unit(&text);
    }

    #[test]
    fn load_specs(text in hostile(), kind in "(cpu|mem-churn|sleepers|exec|io|fork|net|switch|syscall|mem-access|prot-fault|proc-stat|x)") {
        let _ = crate::load::parse_spec(&text);
        let _ = crate::load::parse_spec(&format!("{kind}:{text}"));
    }
}
