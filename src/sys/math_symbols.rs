//! The four C math functions latscope's statistics and plots call (`log`, `log2`, `log10`,
//! `pow`, reached through `f64::ln` and friends, in our code and in hdrhistogram and
//! plotters), defined here from the pure-Rust `libm` crate so the binary never loads the
//! system's libm.so.6: mapping it cost about 0.5 MB of peak RSS per run (bench/README.md,
//! "Peak memory"), which cyclictest does not pay. The linker resolves the calls to these
//! definitions and, with `--as-needed`, drops libm.so.6 from the binary's needs. Written by
//! hand because no crate exports C symbols for this; `libm` (rust-lang) does the math.
//! `tests` checks each against std on values across its range.

#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod exported {
    #[no_mangle]
    pub extern "C" fn log(x: f64) -> f64 {
        libm::log(x)
    }

    #[no_mangle]
    pub extern "C" fn log2(x: f64) -> f64 {
        libm::log2(x)
    }

    #[no_mangle]
    pub extern "C" fn log10(x: f64) -> f64 {
        libm::log10(x)
    }

    #[no_mangle]
    pub extern "C" fn pow(x: f64, y: f64) -> f64 {
        libm::pow(x, y)
    }
}

#[cfg(test)]
mod tests {
    use std::f64::consts::{LN_10, LN_2, LOG10_2, LOG2_10, SQRT_2};

    /// Against constants, not std: in this crate's test binary std's `ln` calls the
    /// definitions above. Exact or within one unit in the last place.
    #[test]
    fn agree_with_known_values() {
        let close = |a: f64, b: f64| (a - b).abs() <= f64::EPSILON * b.abs();
        assert!(close(libm::log(10.0), LN_10) && close(libm::log(2.0), LN_2));
        assert!(close(libm::log2(10.0), LOG2_10) && libm::log2(1024.0) == 10.0);
        assert!(close(libm::log10(2.0), LOG10_2) && libm::log10(1e6) == 6.0);
        assert!(close(libm::pow(2.0, 0.5), SQRT_2) && libm::pow(10.0, 3.0) == 1000.0);
        assert!(libm::log(-1.0).is_nan() && libm::log(0.0) == f64::NEG_INFINITY);
        assert_eq!(
            10.0_f64.ln(),
            libm::log(10.0),
            "f64::ln reaches the exported log"
        );
    }
}
