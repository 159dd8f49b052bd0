#!/bin/sh
# What --isolate buys: timer latency on CPU 1 while a CPU hog (stress-ng --cpu, one worker
# per CPU, started first) runs, at SCHED_OTHER, SCHED_FIFO 95 and SCHED_FIFO 95 with
# --dma-latency 0, each with and without the shield. Run as root from the repository
# root; results land in bench/out/isolate-*.json.
set -eu
B=${LATSCOPE:-./target/release/latscope}
D=${DURATION:-10}
CPUS=$(nproc)
mkdir -p bench/out
stress-ng --cpu "$CPUS" --timeout $((D * 6 + 40))s --quiet &
S=$!
trap 'kill $S 2>/dev/null; wait $S 2>/dev/null; "$B" restore >/dev/null' EXIT
sleep 2
for config in other fifo fifo-dma0; do
    for iso in none 1; do
        case $config in
        other) set -- --policy other ;;
        fifo) set -- --policy fifo ;;
        fifo-dma0) set -- --policy fifo --dma-latency 0 ;;
        esac
        if [ "$iso" != none ]; then set -- "$@" --isolate "$iso"; fi
        echo "== $config, isolate $iso (CPU hog on all $CPUS CPUs)"
        "$B" timer --cpus 1 -D "${D}s" "$@" \
            --export-json "bench/out/isolate-$config-$iso.json" 2>/dev/null
    done
done
