//! CLOCK_MONOTONIC in integer nanoseconds, and the sleeps the timer probe's methods use.

/// Nanoseconds in one second.
pub const NS_PER_SEC: u64 = 1_000_000_000;

#[inline(always)]
fn timespec_from_ns(ns: u64) -> libc::timespec {
    libc::timespec {
        // `as _`: time_t's width differs between glibc and musl (and is deprecated there).
        tv_sec: (ns / NS_PER_SEC) as _,
        tv_nsec: (ns % NS_PER_SEC) as libc::c_long,
    }
}

#[inline(always)]
fn ns_from_timespec(ts: &libc::timespec) -> u64 {
    ts.tv_sec as u64 * NS_PER_SEC + ts.tv_nsec as u64
}

/// Reads `clock` in ns with clock_gettime (vDSO where the clock has it). Only for clocks
/// that always exist on Linux (CLOCK_MONOTONIC, CLOCK_REALTIME, this thread's CPU clock).
#[inline(always)]
pub(in crate::sys) fn clock_now_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; callers pass only clocks that always
    // exist on Linux.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ns_from_timespec(&ts)
}

/// Reads CLOCK_MONOTONIC (through the vDSO, no system call on x86-64).
#[inline(always)]
pub fn monotonic_ns() -> u64 {
    clock_now_ns(libc::CLOCK_MONOTONIC)
}

/// Sleeps until the absolute CLOCK_MONOTONIC time `deadline_ns` (TIMER_ABSTIME), the
/// cyclictest way. Restarts after signal interruptions, so it never returns early.
#[inline(always)]
pub fn sleep_until_ns(deadline_ns: u64) {
    let ts = timespec_from_ns(deadline_ns);
    loop {
        // SAFETY: `ts` is a valid timespec; a null remainder is allowed with TIMER_ABSTIME.
        let rc = unsafe {
            libc::clock_nanosleep(
                libc::CLOCK_MONOTONIC,
                libc::TIMER_ABSTIME,
                &ts,
                std::ptr::null_mut(),
            )
        };
        if rc != libc::EINTR {
            return;
        }
    }
}

/// Reads CLOCK_REALTIME (through the vDSO): `latscope cyclictest -c 1` measures on it.
#[inline(always)]
pub fn realtime_clock_ns() -> u64 {
    clock_now_ns(libc::CLOCK_REALTIME)
}

/// Sleeps until the absolute CLOCK_REALTIME time `deadline_ns` (cyclictest `-c 1`);
/// restarts after signal interruptions.
#[inline(always)]
pub fn sleep_until_realtime_ns(deadline_ns: u64) {
    let ts = timespec_from_ns(deadline_ns);
    loop {
        // SAFETY: `ts` is a valid timespec; a null remainder is allowed with TIMER_ABSTIME.
        let rc = unsafe {
            libc::clock_nanosleep(
                libc::CLOCK_REALTIME,
                libc::TIMER_ABSTIME,
                &ts,
                std::ptr::null_mut(),
            )
        };
        if rc != libc::EINTR {
            return;
        }
    }
}

/// CLOCK_MONOTONIC's resolution as clock_getres reports it, ns.
pub fn monotonic_resolution_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_getres(libc::CLOCK_MONOTONIC, &mut ts) };
    ns_from_timespec(&ts)
}

/// Sleeps for `relative_ns` with plain nanosleep(2), the way many programs sleep.
#[inline(always)]
pub fn sleep_for_ns(relative_ns: u64) {
    let mut ts = timespec_from_ns(relative_ns);
    loop {
        let mut rem = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: both pointers refer to valid timespecs owned by this frame.
        let rc = unsafe { libc::nanosleep(&ts, &mut rem) };
        if rc == 0 {
            return;
        }
        ts = rem;
    }
}

/// Wall-clock time in nanoseconds since the Unix epoch (for result timestamps only).
pub fn realtime_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

pub(crate) fn to_timespec(ns: u64) -> libc::timespec {
    timespec_from_ns(ns)
}

/// CLOCK_REALTIME − CLOCK_MONOTONIC now, read between two monotonic reads (the closest
/// of three tries), so the error is at most half the tightest bracket (well under 1 µs).
pub fn realtime_offset_ns() -> i64 {
    let mut best: Option<(u64, i64)> = None;
    for _ in 0..3 {
        let before = monotonic_ns();
        let real = realtime_ns();
        let after = monotonic_ns();
        let width = after - before;
        let offset = real as i64 - (before + width / 2) as i64;
        if best.is_none_or(|(w, _)| width < w) {
            best = Some((width, offset));
        }
    }
    best.map_or(0, |(_, offset)| offset)
}
