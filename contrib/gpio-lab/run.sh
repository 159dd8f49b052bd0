#!/usr/bin/env bash
# The GPIO lab: a board's GPIO pins without a board. Boots Debian's stock or PREEMPT_RT
# kernel under QEMU (TCG) with a busybox ramdisk in which the kernel's GPIO simulator
# (gpio-sim, built out of tree for that kernel by build-module.sh) has made a chip live as
# /dev/gpiochip0 with two named lines, sim-in (offset 0) and sim-out (offset 1), and
# latscope on PATH; runs COMMAND as root there, prints the guest's output and exits with
# COMMAND's exit code. The simulator's sysfs files of the chip are at $GPIO_SIM_DIR in the
# guest (sim_gpio0/pull drives sim-in, sim_gpio1/value shows what sim-out was set to), and
# this directory's scripts are in /lab.
#
# Usage (as root): contrib/gpio-lab/run.sh [--kernel stock|rt] -- COMMAND...
#   e.g. run.sh --kernel rt -- latscope gpio --in sim-in --drive sim -D 2s
#   LATSCOPE        the binary to put on the guest (default: cargo build --release)
#   GPIO_LAB_CACHE  kernels, sources and modules (default ~/.cache/latscope-gpio-lab)
#   GPIO_LAB_SMP    guest CPUs (default 2); GPIO_LAB_TIMEOUT seconds (default 900)
# Needs: apt-get install qemu-system-x86 busybox-static cpio gcc make
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache=${GPIO_LAB_CACHE:-$HOME/.cache/latscope-gpio-lab}
flavour=amd64
while [ $# -gt 0 ]; do
  case $1 in
    --kernel)
      case ${2:-} in
        stock) flavour=amd64 ;;
        rt) flavour=rt-amd64 ;;
        *) echo "run.sh: --kernel ${2:-}: expected stock or rt" >&2; exit 2 ;;
      esac
      shift 2 ;;
    --) shift; break ;;
    *) echo "run.sh: unknown option $1 (usage: run.sh [--kernel stock|rt] -- COMMAND...)" >&2; exit 2 ;;
  esac
done
[ $# -gt 0 ] || { echo "run.sh: no COMMAND (usage: run.sh [--kernel stock|rt] -- COMMAND...)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "run.sh: needs root (the ramdisk's /dev/console, apt-get)" >&2; exit 2; }
command -v qemu-system-x86_64 >/dev/null || { echo "run.sh: apt-get install qemu-system-x86" >&2; exit 2; }
file -L /bin/busybox 2>/dev/null | grep -q static \
  || { echo "run.sh: /bin/busybox is not static: apt-get install busybox-static" >&2; exit 2; }

if [ -z "${LATSCOPE:-}" ]; then
  (cd "$repo" && cargo build --release --locked -q)
  LATSCOPE=${CARGO_TARGET_DIR:-$repo/target}/release/latscope
fi

# The kernel the flavour's meta-package points at: vmlinuz and configfs.ko, unpacked once.
mkdir -p "$cache"
pkg=$(apt-cache depends "linux-image-$flavour" 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
if [ -z "$pkg" ]; then
  apt-get update -q >&2
  pkg=$(apt-cache depends "linux-image-$flavour" | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
fi
[ -n "$pkg" ] || { echo "run.sh: no linux-image-$flavour in apt" >&2; exit 2; }
release=${pkg#linux-image-}
root=$cache/$pkg
if [ ! -d "$root" ]; then
  (cd "$cache" && rm -f "$pkg"_*.deb && apt-get download -q "$pkg" >&2)
  rm -rf "$root.part" && mkdir -p "$root.part"
  dpkg-deb --fsys-tarfile "$cache/$pkg"_*.deb \
    | tar -x -C "$root.part" --wildcards './boot/vmlinuz-*' '*/fs/configfs/configfs.ko'
  rm -f "$cache/$pkg"_*.deb
  mv "$root.part" "$root"
fi
module=$("$here/build-module.sh" "$release")

work=$(mktemp -d)
qemu_pid=""
cleanup() {
  [ -n "$qemu_pid" ] && kill "$qemu_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
# The base ramdisk of the LAVA lab (busybox, latscope and its libraries), then a second
# archive on top (the kernel unpacks both, later files win): the lab's /init, modules, the
# command and this directory's scripts.
"$repo/contrib/lava/local/build-ramdisk.sh" "$work/base.cpio.gz" "$LATSCOPE"
overlay=$work/overlay
mkdir -p "$overlay/lab" "$overlay/lib/modules/$release"
cp "$root"/lib/modules/*/kernel/fs/configfs/configfs.ko "$module" "$overlay/lib/modules/$release/"
cp "$here"/*.sh "$overlay/lab/"
cp "$here/guest-init.sh" "$overlay/init"
{
  echo '#!/bin/sh'
  printf '%q ' "$@"
  echo
} >"$overlay/lab/command"
chmod 755 "$overlay/init" "$overlay/lab/command"
(cd "$overlay" && find . | cpio -o -H newc --quiet | gzip -1) >"$work/overlay.cpio.gz"
cat "$work/base.cpio.gz" "$work/overlay.cpio.gz" >"$work/ramdisk.cpio.gz"

# The guest prints "gpio-lab: exit N" after COMMAND and powers off. no_timer_check: under
# TCG on a busy host the kernel's IO-APIC timer check can fail and panic the boot.
timeout "${GPIO_LAB_TIMEOUT:-900}" qemu-system-x86_64 -accel tcg -m 1024 -smp "${GPIO_LAB_SMP:-2}" \
  -display none -monitor none -serial stdio -no-reboot \
  -kernel "$root/boot/vmlinuz-$release" -initrd "$work/ramdisk.cpio.gz" \
  -append "console=ttyS0 quiet panic=-1 no_timer_check" </dev/null >"$work/console" &
qemu_pid=$!
tail -f --pid="$qemu_pid" "$work/console" | tr -d '\r'
wait "$qemu_pid" || true
qemu_pid=""
code=$(tr -d '\r' <"$work/console" | sed -n 's/^gpio-lab: exit \([0-9]*\)$/\1/p' | tail -1)
[ -n "$code" ] || { echo "run.sh: the guest ended without COMMAND's exit code" >&2; exit 3; }
exit "$code"
