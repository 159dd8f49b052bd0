#!/usr/bin/env python3
"""Runs each latscope load beside stress-ng's equivalent stressor (same duration, same
CPU via taskset) and the cpu duty-cycle accuracy check; prints Markdown tables.

Every figure comes from the tools' own reports plus counters neither controls:
getrusage(RUSAGE_CHILDREN) of the run (minor faults, voluntary switches, CPU time,
blocks written) and the loopback interface's byte counter in /proc/net/dev.
"""
import json, os, re, resource, subprocess, sys, time

LATSCOPE = os.environ.get("LATSCOPE", "./target/release/latscope")
DURATION = float(os.environ.get("DURATION", "5"))
CPU = os.environ.get("CPU", "0")


def lo_bytes():
    for line in open("/proc/net/dev"):
        if line.strip().startswith("lo:"):
            return int(line.split(":", 1)[1].split()[0])
    return 0


def measured(argv):
    """Runs argv pinned to CPU; returns (stdout+stderr, counters)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    lo0, t0 = lo_bytes(), time.monotonic()
    p = subprocess.run(["taskset", "-c", CPU] + argv, capture_output=True, text=True)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        sys.exit(f"failed ({p.returncode}): {' '.join(argv)}\n{p.stderr}")
    d = lambda f: getattr(after, f) - getattr(before, f)
    return p.stdout + p.stderr, {
        "wall_s": wall,
        "cpu_pct": (d("ru_utime") + d("ru_stime")) / wall * 100,
        "minflt_s": d("ru_minflt") / wall,
        "nvcsw_s": d("ru_nvcsw") / wall,
        "written_mb_s": d("ru_oublock") * 512 / 1e6 / wall,
        "lo_mb_s": (lo_bytes() - lo0) / 1e6 / wall,
    }


def latscope(spec):
    out, c = measured([LATSCOPE, "load", f"{spec},cpus={CPU}", "-D", f"{DURATION}s", "--json"])
    r = json.loads(out[: out.rindex("]") + 1])[0]
    return r, c


def stress_ng(args, name):
    out, c = measured(["stress-ng"] + args + ["-t", f"{int(DURATION)}s", "--metrics-brief"])
    for line in out.splitlines():
        m = re.search(r"metrc: \[\d+\] (\S+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)", line)
        if m and m.group(1) == name:
            return float(m.group(6)), c
    sys.exit(f"no metrics for {name} in:\n{out}")


# (latscope spec, stress-ng args, stressor, common counter, its label)
ROWS = [
    ("cpu:100%", ["--cpu", "1", "--cpu-method", "int64"], "cpu", "cpu_pct", "CPU %"),
    ("mem-churn:100%,size=64M", ["--mmap", "1", "--mmap-bytes", "64M"], "mmap", "minflt_s", "minor faults/s"),
    ("mem-churn:100%,size=64M", ["--fault", "1"], "fault", "minflt_s", "minor faults/s"),
    ("prot-fault:100%", ["--sigsegv", "1"], "sigsegv", "minflt_s", "minor faults/s"),
    ("mem-access:100%", ["--stream", "1"], "stream", "cpu_pct", "CPU %"),
    ("sleepers:8", ["--nanosleep", "1"], "nanosleep", "nvcsw_s", "voluntary switches/s"),
    ("switch:1", ["--switch", "1"], "switch", "nvcsw_s", "voluntary switches/s"),
    ("syscall:100%", ["--get", "1"], "get", "cpu_pct", "CPU %"),
    ("syscall:100%", ["--kill", "1"], "kill", "cpu_pct", "CPU %"),
    ("io:100%", ["--hdd", "1", "--hdd-bytes", "32M"], "hdd", "written_mb_s", "written MB/s (rusage)"),
    ("net:1", ["--sock", "1"], "sock", "lo_mb_s", "loopback MB/s"),
    ("net:1", ["--udp", "1"], "udp", "lo_mb_s", "loopback MB/s"),
    ("fork:100%", ["--fork", "1"], "fork", "cpu_pct", "CPU %"),
]


def fmt(v):
    return f"{v:,.0f}" if v >= 100 else f"{v:.1f}"


def main():
    os.chdir(os.environ.get("WORKDIR", "/var/tmp"))
    print(f"duration {DURATION:g} s per tool, pinned with taskset -c {CPU}; "
          f"load average before: {open('/proc/loadavg').read().split()[0]}\n")
    only = os.environ.get("ONLY", "all")
    if only in ("all", "throughput"):
        throughput_table()
    if only in ("all", "duty"):
        for _ in range(int(os.environ.get("ROUNDS", "1"))):
            duty_table()
    print(f"\nload average after: {open('/proc/loadavg').read().split()[0]}")


def throughput_table():
    print("| latscope load | latscope throughput | latscope CPU % | stress-ng | stress-ng bogo ops/s | stress-ng CPU % | common counter | latscope | stress-ng |")
    print("|---|---|---|---|---|---|---|---|---|")
    for spec, args, name, key, label in ROWS:
        r, lc = latscope(spec)
        bogo, sc = stress_ng(args, name)
        print(f"| `{spec}` | {fmt(r['throughput'])} {r['unit']} | {lc['cpu_pct']:.0f} | "
              f"`--{' --'.join(' '.join(args).split(' --'))[2:]}` | {fmt(bogo)} | {sc['cpu_pct']:.0f} | "
              f"{label} | {fmt(lc[key])} | {fmt(sc[key])} |")
        sys.stdout.flush()


def duty_table():
    print("\nDuty cycle of `cpu:N%` (target ±3 percentage points), CPU share from getrusage "
          "of the run and from latscope's own /proc reading; stress-ng `--cpu-load N` beside it:\n")
    print("| target | latscope (rusage) | latscope (own /proc) | error | stress-ng --cpu-load (rusage) | error |")
    print("|---|---|---|---|---|---|")
    for duty in (25, 50, 75):
        r, lc = latscope(f"cpu:{duty}%")
        _, sc = stress_ng(["--cpu", "1", "--cpu-load", str(duty)], "cpu")
        print(f"| {duty} % | {lc['cpu_pct']:.1f} % | {r['cpu_percent']:.1f} % | "
              f"{lc['cpu_pct'] - duty:+.1f} pp | {sc['cpu_pct']:.1f} % | {sc['cpu_pct'] - duty:+.1f} pp |")
        sys.stdout.flush()


main()
