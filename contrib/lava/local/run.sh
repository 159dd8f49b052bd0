#!/usr/bin/env bash
# A real LAVA job of latscope on this machine, no farm needed: lava-run (Debian's
# lava-dispatcher) boots Debian's stock and PREEMPT_RT kernels under QEMU (TCG) with a
# ramdisk (build-ramdisk.sh), transfers LAVA's overlay into it over QEMU's user network,
# runs the test definition contrib/lava/latscope.yaml (inline, from this working tree) and
# collects the LAVA results: a test set per scenario with a case per statistic and its
# measurement, the verdicts of the limits, the kernel's preemption model as a line of the
# log, and the JSON, HTML and JUnit files uploaded to a local Artifactorial-style store
# (artefact-store.py, which also serves LAVA's overlay) as test references.
#
# Usage (as root): contrib/lava/local/run.sh [OUT_DIR]
#   OUT_DIR      where each kernel's job output goes (default ./target/lava): KERNEL.log
#                (lava-run's log), artefacts/KERNEL/ (the uploaded files) and results.tsv:
#                kernel, definition/[set/]case, result, measurement, units, reference
#   KERNELS      Debian kernel flavours (default "amd64 rt-amd64")
#   DURATION     how long latscope measures on the guest (default 3s)
#   FAIL_ABOVE   the definition's limits (default max=1s)
#   LATSCOPE     the binary to put on the guest (default: cargo build --release)
#   LAVA_CACHE   downloaded kernels (default ~/.cache/latscope-lava)
# Needs: apt-get install lava-dispatcher qemu-system-x86 busybox-static cpio
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
definition=$here/../latscope.yaml
repo=$(cd "$here/../../.." && pwd)
out=$(realpath -m "${1:-target/lava}")
kernels=${KERNELS:-amd64 rt-amd64}
duration=${DURATION:-3s}
fail_above=${FAIL_ABOVE:-max=1s}
cache=${LAVA_CACHE:-$HOME/.cache/latscope-lava}

need() {
  command -v "$1" >/dev/null || {
    echo "run.sh: $1 not found: apt-get install $2" >&2
    exit 2
  }
}
need lava-run lava-dispatcher
need qemu-system-x86_64 qemu-system-x86
need cpio cpio
# LAVA's own Python (with the yaml module lava-dispatcher depends on), not a PATH's pyenv.
py=/usr/bin/python3
[ -x "$py" ] || py=python3
[ "$(id -u)" = 0 ] || { echo "run.sh: lava-run needs root" >&2; exit 2; }
file -L /bin/busybox 2>/dev/null | grep -q static \
  || { echo "run.sh: /bin/busybox is not static: apt-get install busybox-static" >&2; exit 2; }

if [ -z "${LATSCOPE:-}" ]; then
  if [ -f "$repo/Cargo.toml" ]; then
    command -v cargo >/dev/null || {
      echo "run.sh: cargo not found (under sudo, rustup's is not on PATH): build as yourself first and give the binary, sudo LATSCOPE=\$PWD/target/release/latscope $0" >&2
      exit 2
    }
    (cd "$repo" && cargo build --release --locked -q)
    LATSCOPE=${CARGO_TARGET_DIR:-$repo/target}/release/latscope
  else
    # Installed from the .deb (/usr/share/latscope/lava/local): the installed binary.
    LATSCOPE=$(command -v latscope)
  fi
fi
mkdir -p "$out" "$cache"
rm -rf "$out/results.tsv" "$out/artefacts"

# The kernel packages the flavours' meta-packages point at, unpacked once.
roots=()
for flavour in $kernels; do
  pkg=$(apt-cache depends "linux-image-$flavour" | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
  [ -n "$pkg" ] || { echo "run.sh: no linux-image-$flavour in apt (apt-get update?)" >&2; exit 2; }
  if [ ! -d "$cache/$pkg" ]; then
    (cd "$cache" && rm -f "${pkg}"_*.deb && apt-get download -q "$pkg" >/dev/null)
    rm -rf "$cache/$pkg.part"
    mkdir -p "$cache/$pkg.part"
    # Only what the ramdisk job needs: the kernel and its e1000 driver (8 MB of 400), and
    # configfs.ko for the GPIO lab (contrib/gpio-lab/run.sh shares this cache).
    dpkg-deb --fsys-tarfile "$cache/${pkg}"_*.deb \
      | tar -x -C "$cache/$pkg.part" --wildcards './boot/vmlinuz-*' '*/e1000/e1000.ko' \
        '*/fs/configfs/configfs.ko'
    rm -f "$cache/${pkg}"_*.deb
    mv "$cache/$pkg.part" "$cache/$pkg"
  fi
  roots+=("$cache/$pkg")
done

work=$(mktemp -d)
http_pid=""
cleanup() {
  [ -n "$http_pid" ] && kill "$http_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
"$here/build-ramdisk.sh" "$work/ramdisk.cpio.gz" "$LATSCOPE" "${roots[@]}"

# LAVA serves its overlay from /var/lib/lava/dispatcher (tmp/JOB/...), and the jobs upload
# their files to /artefacts/KERNEL/ of the same server; the guest reaches this machine's
# loopback as 10.0.2.2 through QEMU's user network.
mkdir -p /var/lib/lava/dispatcher/tmp
port=$("$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$py" "$here/artefact-store.py" "$port" /var/lib/lava/dispatcher "$out/artefacts" \
  "http://10.0.2.2:$port" >"$work/http.log" 2>&1 &
http_pid=$!
printf 'dispatcher_http_ip: "10.0.2.2:%s"\n' "$port" >"$work/dispatcher.yaml"

# A kernel's job: the test definition inline (so this working tree's, not a commit's).
write_job() {
"$py" - "$definition" "$duration" "http://10.0.2.2:$port/artefacts/$1/" "$fail_above" \
  >"$work/job-$1.yaml" <<'PY'
import sys, yaml
definition = yaml.safe_load(open(sys.argv[1]))
job = {
    "device_type": "qemu-latscope",
    "job_name": "latscope under QEMU",
    "priority": "medium",
    "visibility": "public",
    "timeouts": {"job": {"minutes": 10}, "action": {"minutes": 5},
                 "connection": {"minutes": 2}},
    "actions": [
        {"deploy": {"to": "overlay", "os": "oe", "timeout": {"minutes": 2}}},
        {"boot": {"method": "minimal", "reset": False, "timeout": {"minutes": 2},
                  "prompts": ["latscope-ramdisk# "],
                  "transfer_overlay": {"download_command": "cd / && wget -q",
                                       "unpack_command": "tar -C / -xzf"}}},
        {"test": {"timeout": {"minutes": 5}, "definitions": [{
            "from": "inline", "name": "latscope", "path": "inline/latscope.yaml",
            "repository": definition,
            "parameters": {"DURATION": sys.argv[2], "CPUS": "1", "SKIP_INSTALL": "true",
                           "FAIL_ABOVE": sys.argv[4], "ARTIFACTORIAL_URL": sys.argv[3],
                           "ARTIFACTORIAL_TOKEN": "local"}}]}},
    ],
}
print(yaml.safe_dump(job, sort_keys=False))
PY
}

status=0
job_id=$(( ($$ % 10000) * 10 ))
for root in "${roots[@]}"; do
  kernel=$(basename "$root")
  kernel=${kernel#linux-image-}
  vmlinuz=$(ls "$root"/boot/vmlinuz-*)
  job_id=$((job_id + 1))
  cat >"$work/device-$kernel.yaml" <<DEV
device_type: qemu-latscope
constants:
  shutdown-message: "reboot: Restarting system"
  kernel-start-message: "Linux version [0-9]"
  default-shell-prompt: "lava-test: # "
  # LAVA matches its prompts in the last 4000 bytes it has read: with reads of LAVA's
  # usual 4092 bytes, "Linux version" at the start of a fast chunk of boot messages went
  # unseen (3 of 4 PREEMPT_RT boots here timed out in auto-login); with 1000, 6 of 6 passed.
  spawn_maxread: 1000
  failure_retry: 1
  boot_retry: 1
  posix:
    lava_test_sh_cmd: /bin/sh
    lava_test_results_dir: /lava-%s
    lava_test_shell_file: ~/.profile
commands:
  connect: qemu-system-x86_64 -accel tcg -m 1024 -smp 2 -display none -monitor none -serial stdio -no-reboot -kernel $vmlinuz -initrd $work/ramdisk.cpio.gz -append "console=ttyS0 panic=-1" -netdev user,id=n0 -device e1000,netdev=n0
actions:
  deploy:
    methods:
      overlay:
  boot:
    connections:
      serial:
    methods:
      minimal:
timeouts:
  actions: {}
  connections: {}
DEV
  rm -rf "$out/$kernel"
  write_job "$kernel"
  started=$(date +%s.%N)
  rc=0
  lava-run --job-id "$job_id" --output-dir "$out/$kernel" --device "$work/device-$kernel.yaml" \
    --dispatcher "$work/dispatcher.yaml" "$work/job-$kernel.yaml" >"$out/$kernel.log" 2>&1 || rc=$?
  took=$("$py" -c "import time; print(f'{time.time() - $started:.1f}')")
  rm -rf "/var/lib/lava/dispatcher/tmp/$job_id"
  # Every result LAVA recorded (its own and the definition's), as tab-separated rows.
  "$py" - "$out/$kernel.log" "$kernel" >>"$out/results.tsv" <<'PY'
import sys, yaml
# One YAML flow mapping a line (JSON but for tags such as `! "571"`).
for line in open(sys.argv[1], errors="replace"):
    if '"lvl": "results"' not in line:
        continue
    try:
        entry = yaml.safe_load(line)
    except yaml.YAMLError:
        continue
    if not isinstance(entry, dict) or entry.get("lvl") != "results":
        continue
    r = entry["msg"]
    path = "/".join(str(r[k]) for k in ("definition", "set", "case") if k in r)
    print("\t".join([sys.argv[2], path, str(r.get("result")), str(r.get("measurement", "")),
                     str(r.get("units", "")), str(r.get("reference", ""))]))
PY
  echo "$kernel: lava-run exit $rc in $took s; log $out/$kernel.log"
  [ "$rc" = 0 ] || status=1
done
echo "results: $out/results.tsv"
exit "$status"
