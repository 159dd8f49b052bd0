#!/usr/bin/env bash
# Each latscope load beside stress-ng's equivalent stressor, same duration and CPU, plus
# the duty-cycle accuracy of cpu:25%/50%/75%. Prints Markdown for bench/README.md.
# Usage: bench/loads-vs-stress-ng.sh   (env: DURATION=5 CPU=0 ONLY=all|throughput|duty ROUNDS=1)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
command -v stress-ng >/dev/null || { echo "stress-ng is not installed" >&2; exit 1; }
LATSCOPE="$PWD/target/release/latscope" exec python3 bench/loads_vs_stress_ng.py
