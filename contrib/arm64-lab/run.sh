#!/usr/bin/env bash
# The arm64 lab: latscope on the kernels most of its users run, without a board. Boots
# Debian's current arm64 stock or PREEMPT_RT kernel on QEMU's virt machine (Cortex-A57,
# 2 CPUs, TCG) with a busybox ramdisk holding an aarch64 latscope, runs COMMAND as root
# there, prints the guest's output as it comes and exits with COMMAND's exit code.
#
# The virt machine's GPIO controller is a PL061 (/dev/gpiochip0, 8 lines, built into both
# kernels); QEMU's power button is wired to its line 3: QMP's `system_powerdown` raises the
# line and drops it ~100 ms later, an edge made outside the guest. gpio-keys (a module) is
# never loaded, so the line is free for `latscope gpio --in gpiochip0:3`. Nothing else is
# wired to the PL061: no second line can be looped back here.
#
# Usage (as root): contrib/arm64-lab/run.sh [--kernel stock|rt] [--qmp PATH] -- COMMAND...
#   e.g. run.sh --kernel rt -- latscope gpio --mode respond --in gpiochip0:3 --edge both -D 20s
#   --qmp PATH   QEMU's QMP socket at PATH, for something on the host to press the button
#                (`contrib/arm64-lab/press.py PATH 20`) while COMMAND runs
#   without it   the guest asks for presses itself: a line `arm64-lab: press N [MS]` on its
#                console (`press N [MS]` in /lab does it) makes this script press N times,
#                MS apart (default 250), and print `arm64-lab: pressed N`
#   --check      prints why the lab cannot boot here and exits 1 (0, silent: it can;
#                tests/it/arm64_lab.rs asks this)
#   --prepare    downloads and builds what a boot needs, prints the aarch64 binary's path
#                and exits (the tests build before they take the latency lock, then boot
#                with LATSCOPE= that path: no build under the lock)
#   LATSCOPE          the aarch64 binary to put on the guest (default: cross-built with
#                     cargo build --profile arm64-lab --target aarch64-unknown-linux-gnu)
#   ARM64_LAB_CACHE   Debian's arm64 kernels and busybox (default ~/.cache/latscope-arm64-lab)
#   ARM64_LAB_SMP     guest CPUs (default 2); ARM64_LAB_TIMEOUT seconds (default 900)
# Needs: dpkg --add-architecture arm64 && apt-get update; apt-get install qemu-system-arm
#   cpio python3, and for the cross build gcc-aarch64-linux-gnu libc6-dev-arm64-cross and
#   rustup target add aarch64-unknown-linux-gnu
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache=${ARM64_LAB_CACHE:-$HOME/.cache/latscope-arm64-lab}
triple=aarch64-unknown-linux-gnu
usage="usage: run.sh [--kernel stock|rt] [--qmp PATH] [--check | --prepare] -- COMMAND..."
flavour=arm64
check=""
prepare=""
qmp=""
while [ $# -gt 0 ]; do
  case $1 in
    --kernel)
      case ${2:-} in
        stock) flavour=arm64 ;;
        rt) flavour=rt-arm64 ;;
        *) echo "run.sh: --kernel ${2:-}: expected stock or rt" >&2; exit 2 ;;
      esac
      shift 2 ;;
    --qmp)
      [ -n "${2:-}" ] || { echo "run.sh: --qmp needs a socket path ($usage)" >&2; exit 2; }
      qmp=$(realpath -m "$2"); shift 2 ;;
    --check) check=1; shift ;;
    --prepare) prepare=1; shift ;;
    --) shift; break ;;
    *) echo "run.sh: unknown option $1 ($usage)" >&2; exit 2 ;;
  esac
done
[ -n "$check$prepare" ] || [ $# -gt 0 ] || { echo "run.sh: no COMMAND ($usage)" >&2; exit 2; }

# Why the lab cannot boot here (empty: it can).
unready() {
  [ "$(id -u)" = 0 ] || { echo "needs root (the ramdisk's /dev/console, apt-get)"; return; }
  local tool
  for tool in qemu-system-aarch64:qemu-system-arm cpio:cpio python3:python3 dpkg-deb:dpkg file:file; do
    command -v "${tool%%:*}" >/dev/null || { echo "no ${tool%%:*} (apt-get install ${tool#*:})"; return; }
  done
  dpkg --print-foreign-architectures | grep -qx arm64 \
    || { echo "apt has no arm64 packages (dpkg --add-architecture arm64 && apt-get update)"; return; }
  [ -z "${LATSCOPE:-}" ] || return 0
  command -v cargo >/dev/null || { echo "no cargo to cross-build latscope (or give LATSCOPE=an aarch64 binary)"; return; }
  command -v aarch64-linux-gnu-gcc >/dev/null && [ -d /usr/aarch64-linux-gnu/lib ] \
    || { echo "no cross linker (apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross)"; return; }
  [ -d "$(rustc --print sysroot 2>/dev/null)/lib/rustlib/$triple" ] \
    || { echo "no Rust standard library for $triple (rustup target add $triple)"; return; }
}
why=$(unready)
if [ -n "$why" ]; then
  [ -n "$check" ] && { echo "$why"; exit 1; }
  echo "run.sh: $why" >&2; exit 2
fi

# The kernel the flavour's meta-package points at, and busybox, from apt's arm64 packages.
mkdir -p "$cache"
kernel_pkg() {
  apt-cache depends "linux-image-$flavour:arm64" 2>/dev/null \
    | awk '/Depends: linux-image-[0-9]/ && !done {sub(/:arm64$/, "", $2); print $2; done = 1}'
}
pkg=$(kernel_pkg)
if [ -z "$pkg" ]; then
  [ -n "$check" ] && { echo "apt knows no linux-image-$flavour:arm64 (apt-get update)"; exit 1; }
  apt-get update -q >&2
  pkg=$(kernel_pkg)
fi
[ -n "$pkg" ] || { echo "run.sh: no linux-image-$flavour:arm64 in apt" >&2; exit 2; }
release=${pkg#linux-image-}
root=$cache/$pkg
bb_version=$(apt-cache show busybox-static:arm64 2>/dev/null | awk '/^Version:/ && !done {print $2; done = 1}')
bb=$cache/busybox-${bb_version//:/_}/busybox
cached() { [ -f "$root/boot/vmlinuz-$release" ] && [ -f "$bb" ]; }
if [ -n "$check" ]; then
  # Offline with everything cached is fine; else apt's mirror must answer.
  cached && exit 0
  # (sed, not head: under pipefail head's early exit kills apt-get with SIGPIPE)
  uri=$(apt-get download --print-uris -q "$pkg:arm64" 2>/dev/null | sed -n 1p)
  host=$(echo "$uri" | sed -n "s|^'[a-z]*://\([^/:]*\).*|\1|p")
  [ -n "$host" ] || { echo "apt cannot download $pkg:arm64 (apt-get update)"; exit 1; }
  timeout 5 bash -c ": </dev/tcp/$host/80" 2>/dev/null \
    || { echo "the lab's downloads are not cached and $host (apt) does not answer: no network"; exit 1; }
  exit 0
fi

# Unpacked once: the kernel and its config (doctor reads it); busybox's one binary.
if [ ! -f "$root/boot/vmlinuz-$release" ]; then
  (cd "$cache" && rm -f "$pkg"_*.deb && apt-get download -q "$pkg:arm64" >&2)
  rm -rf "$root.part" && mkdir -p "$root.part"
  dpkg-deb --fsys-tarfile "$cache/$pkg"_*.deb \
    | tar -x -C "$root.part" --wildcards './boot/vmlinuz-*' './boot/config-*'
  rm -f "$cache/$pkg"_*.deb
  rm -rf "$root" && mv "$root.part" "$root"
fi
if [ ! -f "$bb" ]; then
  (cd "$cache" && rm -f busybox-static_*.deb && apt-get download -q busybox-static:arm64 >&2)
  rm -rf "$cache/bb.part" && mkdir -p "$cache/bb.part" "$(dirname "$bb")"
  dpkg-deb -x "$cache"/busybox-static_*_arm64.deb "$cache/bb.part"
  mv "$cache/bb.part/bin/busybox" "$bb"
  rm -rf "$cache/bb.part" "$cache"/busybox-static_*.deb
fi

if [ -z "${LATSCOPE:-}" ]; then
  # The arm64-lab profile (Cargo.toml): opt-level 1, no LTO, many codegen units; the lab
  # judges counts and wording, not speed, and CI builds it cold.
  (cd "$repo" && CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc \
    cargo build --profile arm64-lab --locked -q --target "$triple")
  LATSCOPE=${CARGO_TARGET_DIR:-$repo/target}/$triple/arm64-lab/latscope
fi
file -L "$LATSCOPE" | grep -q 'ARM aarch64' \
  || { echo "run.sh: LATSCOPE=$LATSCOPE is not an aarch64 binary" >&2; exit 2; }
[ -z "$prepare" ] || { echo "$LATSCOPE"; exit 0; }

work=$(mktemp -d)
qemu_pid=""
cleanup() {
  [ -n "$qemu_pid" ] && kill "$qemu_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

"$here/build-ramdisk.sh" "$work/ramdisk.cpio.gz" "$LATSCOPE" "$bb" "$root/boot/config-$release" "$@"

sock=${qmp:-$work/qmp.sock}
rm -f "$sock"
# The console file exists before tail looks for it (QEMU's redirection is made in the
# background job, which can come after tail under load).
: >"$work/console"
# The guest prints "arm64-lab: exit N" after COMMAND and powers off (PSCI: QEMU exits).
timeout "${ARM64_LAB_TIMEOUT:-900}" qemu-system-aarch64 -M virt -cpu cortex-a57 -accel tcg \
  -smp "${ARM64_LAB_SMP:-2}" -m 1024 -display none -monitor none -serial stdio -no-reboot \
  -qmp "unix:$sock,server=on,wait=off" \
  -kernel "$root/boot/vmlinuz-$release" -initrd "$work/ramdisk.cpio.gz" \
  -append "console=ttyAMA0 quiet panic=-1" </dev/null >"$work/console" &
qemu_pid=$!
# The console as it comes; the guest's press requests answered on the way.
while IFS= read -r line; do
  line=${line%$'\r'}
  printf '%s\n' "$line"
  case $line in
    "arm64-lab: press "*)
      read -r presses gap_ms _ <<<"${line#arm64-lab: press }"
      if [ -n "$qmp" ]; then
        echo "arm64-lab: not pressed: --qmp $qmp belongs to the host's driver"
      else
        python3 "$here/press.py" "$sock" "$presses" "${gap_ms:-250}" &
      fi ;;
  esac
done < <(tail -f -s 0.1 --pid="$qemu_pid" "$work/console")
wait "$qemu_pid" || true
qemu_pid=""
code=$(tr -d '\r' <"$work/console" | sed -n 's/^arm64-lab: exit \([0-9]*\)$/\1/p' | tail -1)
[ -n "$code" ] || { echo "run.sh: the guest ended without COMMAND's exit code" >&2; exit 3; }
exit "$code"
