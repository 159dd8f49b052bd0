#!/bin/sh
# What a long suite costs beside a short one: peak RSS (from /usr/bin/time -v) and the
# time each scenario's save took (latscope's own timing, LATSCOPE_PRINT_WRITE_TIMES), for
# suites of N timer scenarios (50 samples each, distinct periods) with JSON and HTML
# exports. Goal (issue 23): 300 scenarios within 2 MB of 10, and the write time flat from
# the first scenario to the last. RSS and write time need no quiet machine.
#
# Usage: bench/suite-scaling.sh [LATSCOPE] [COUNTS...]   (default: target/release/latscope 10 300)
set -eu
bin=${1:-target/release/latscope}
[ $# -gt 0 ] && shift
counts=${*:-10 300}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
printf '%-10s %12s %10s %14s %14s %14s %12s %12s\n' scenarios peak_rss_kb wall_s \
    write_first_us write_last_us write_median_us json_bytes html_bytes
for n in $counts; do
    python3 - "$n" "$dir/plan$n.toml" <<'PY'
import sys
n, path = int(sys.argv[1]), sys.argv[2]
periods = ", ".join(f'"{200 + i}us"' for i in range(n))
open(path, "w").write(f'title = "scaling"\nsamples = 50\n\n[[matrix]]\n'
                      f'methods = ["clock-nanosleep"]\nperiods = [{periods}]\n')
PY
    LATSCOPE_PRINT_WRITE_TIMES=1 /usr/bin/time -v "$bin" suite --plan "$dir/plan$n.toml" \
        --warmup 0 -q --cpus 1 --export-json "$dir/run$n.json" \
        --export-html "$dir/run$n.html" 2>"$dir/err$n" || { cat "$dir/err$n"; exit 1; }
    python3 - "$n" "$dir" <<'PY'
import os, re, statistics, sys
n, d = sys.argv[1], sys.argv[2]
err = open(f"{d}/err{n}").read()
rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", err).group(1)
wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", err).group(1)
m, s = wall.split(":")[-2:]
writes = [int(x) / 1000 for x in re.findall(r"latscope: write \d+ (\d+) ns", err)]
tenth = max(1, len(writes) // 10)
first, last = statistics.median(writes[:tenth]), statistics.median(writes[-tenth:])
print(f"{n:<10} {rss:>12} {int(m) * 60 + float(s):>10.2f} {first:>14.1f} {last:>14.1f} "
      f"{statistics.median(writes):>14.1f} {os.path.getsize(f'{d}/run{n}.json'):>12} "
      f"{os.path.getsize(f'{d}/run{n}.html'):>12}")
PY
done
echo "write_first/last: median save time of the first and last tenth of the scenarios"
