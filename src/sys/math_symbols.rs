//! The C math functions latscope's statistics and plots call (`log`, `log2`, `log10`,
//! `pow`, `exp`, `expm1`, `log1p`, `sin`, `cos`, `sincos`, `hypotf`, reached through
//! `f64::ln` and friends, in our code and in hdrhistogram, plotters and the worst-case
//! estimate's statrs and argmin), defined here from the pure-Rust `libm` crate so the binary
//! never loads the system's libm.so.6: mapping it cost about 0.5 MB of peak RSS per run
//! (bench/README.md, "Peak memory"), which cyclictest does not pay. The linker resolves the
//! calls to these definitions and, with `--as-needed`, drops libm.so.6 from the binary's
//! needs; a new function called anywhere brings it back (issue 34 item 11: `exp` and six
//! more did), which `tests/it/packaging.rs` catches with `ldd`. Written by hand because no
//! crate exports C symbols for this; `libm` (rust-lang) does the math. `tests` checks each
//! against known values.

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

    #[no_mangle]
    pub extern "C" fn exp(x: f64) -> f64 {
        libm::exp(x)
    }

    #[no_mangle]
    pub extern "C" fn expm1(x: f64) -> f64 {
        libm::expm1(x)
    }

    #[no_mangle]
    pub extern "C" fn log1p(x: f64) -> f64 {
        libm::log1p(x)
    }

    #[no_mangle]
    pub extern "C" fn sin(x: f64) -> f64 {
        libm::sin(x)
    }

    #[no_mangle]
    pub extern "C" fn cos(x: f64) -> f64 {
        libm::cos(x)
    }

    #[no_mangle]
    pub extern "C" fn hypotf(x: f32, y: f32) -> f32 {
        libm::hypotf(x, y)
    }

    /// GNU's `sincos`, which the compiler calls where both of one angle are computed.
    ///
    /// # Safety
    /// `s` and `c` point to writable f64s, as C's contract says.
    #[no_mangle]
    pub unsafe extern "C" fn sincos(x: f64, s: *mut f64, c: *mut f64) {
        let (sin, cos) = libm::sincos(x);
        // SAFETY: the caller (compiled code calling C's sincos) passes two valid,
        // writable pointers to f64.
        unsafe {
            *s = sin;
            *c = cos;
        }
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
        assert!(close(libm::exp(1.0), std::f64::consts::E) && libm::exp(0.0) == 1.0);
        // x ± x²/2 for a small x, exact in f64.
        assert!(close(libm::expm1(1e-10), 1.00000000005e-10));
        assert!(close(libm::log1p(1e-10), 9.9999999995e-11));
        let half_pi = std::f64::consts::FRAC_PI_2;
        assert!(libm::sin(half_pi) == 1.0 && libm::cos(0.0) == 1.0);
        assert_eq!(libm::sincos(half_pi).0, 1.0);
        assert_eq!(libm::hypotf(3.0, 4.0), 5.0);
        assert_eq!(
            10.0_f64.ln(),
            libm::log(10.0),
            "f64::ln reaches the exported log"
        );
    }
}
