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
#          run.sh --kernel rt --check   prints why the lab cannot boot here and exits 1
#                                       (0, silent: it can; tests/it/gpio.rs asks this)
#   LATSCOPE        the binary to put on the guest (default: cargo build --release)
#   LAVA_CACHE      the kernels, shared with the LAVA lab (contrib/lava/local/run.sh;
#                   default ~/.cache/latscope-lava): vmlinuz, e1000.ko and configfs.ko
#   GPIO_LAB_CACHE  kernel sources and gpio-sim modules (default ~/.cache/latscope-gpio-lab)
#   GPIO_LAB_SMP    guest CPUs (default 2); GPIO_LAB_TIMEOUT seconds (default 900)
# Needs: apt-get install qemu-system-x86 busybox-static cpio gcc make
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache=${GPIO_LAB_CACHE:-$HOME/.cache/latscope-gpio-lab}
flavour=amd64
check=""
while [ $# -gt 0 ]; do
  case $1 in
    --kernel)
      case ${2:-} in
        stock) flavour=amd64 ;;
        rt) flavour=rt-amd64 ;;
        *) echo "run.sh: --kernel ${2:-}: expected stock or rt" >&2; exit 2 ;;
      esac
      shift 2 ;;
    --check) check=1; shift ;;
    --) shift; break ;;
    *) echo "run.sh: unknown option $1 (usage: run.sh [--kernel stock|rt] -- COMMAND...)" >&2; exit 2 ;;
  esac
done
[ -n "$check" ] || [ $# -gt 0 ] || { echo "run.sh: no COMMAND (usage: run.sh [--kernel stock|rt] -- COMMAND...)" >&2; exit 2; }
# Why the lab cannot boot here (empty: it can).
unready() {
  [ "$(id -u)" = 0 ] || { echo "needs root (the ramdisk's /dev/console, apt-get)"; return; }
  local tool
  for tool in qemu-system-x86_64:qemu-system-x86 cpio:cpio gcc:gcc make:make file:file; do
    command -v "${tool%%:*}" >/dev/null || { echo "no ${tool%%:*} (apt-get install ${tool#*:})"; return; }
  done
  file -L /bin/busybox 2>/dev/null | grep -q static \
    || { echo "/bin/busybox is not static (apt-get install busybox-static)"; return; }
}
why=$(unready)
if [ -n "$why" ]; then
  [ -n "$check" ] && { echo "$why"; exit 1; }
  echo "run.sh: $why" >&2; exit 2
fi

# The kernel the flavour's meta-package points at, from the LAVA lab's download cache.
kernels=${LAVA_CACHE:-$HOME/.cache/latscope-lava}
mkdir -p "$cache" "$kernels"
pkg=$(apt-cache depends "linux-image-$flavour" 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
if [ -z "$pkg" ]; then
  [ -n "$check" ] && { echo "apt knows no linux-image-$flavour (apt-get update)"; exit 1; }
  apt-get update -q >&2
  pkg=$(apt-cache depends "linux-image-$flavour" | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
fi
[ -n "$pkg" ] || { echo "run.sh: no linux-image-$flavour in apt" >&2; exit 2; }
release=${pkg#linux-image-}
root=$kernels/$pkg
cached() {
  [ -f "$root/boot/vmlinuz-$release" ] \
    && [ -f "$root/lib/modules/$release/kernel/fs/configfs/configfs.ko" ]
}
if [ -n "$check" ]; then
  # Offline with everything cached is fine; else apt's mirror must answer.
  cached && [ -f "$cache/modules/$release/gpio-sim.ko" ] && exit 0
  uri=$(apt-get download --print-uris -q "linux-source-${release%%.0-*}" 2>/dev/null | head -1)
  host=$(echo "$uri" | sed -n "s|^'[a-z]*://\([^/:]*\).*|\1|p")
  [ -n "$host" ] || { echo "apt knows no linux-source-${release%%.0-*} (apt-get update)"; exit 1; }
  timeout 5 bash -c ": </dev/tcp/$host/80" 2>/dev/null \
    || { echo "the lab's downloads are not cached and $host (apt) does not answer: no network"; exit 1; }
  exit 0
fi

if [ -z "${LATSCOPE:-}" ]; then
  (cd "$repo" && cargo build --release --locked -q)
  LATSCOPE=${CARGO_TARGET_DIR:-$repo/target}/release/latscope
fi

# Unpacked once: what the LAVA lab keeps (vmlinuz, e1000.ko) and configfs.ko.
if ! cached; then
  (cd "$kernels" && rm -f "$pkg"_*.deb && apt-get download -q "$pkg" >&2)
  rm -rf "$root.part" && mkdir -p "$root.part"
  dpkg-deb --fsys-tarfile "$kernels/$pkg"_*.deb \
    | tar -x -C "$root.part" --wildcards './boot/vmlinuz-*' '*/e1000/e1000.ko' \
      '*/fs/configfs/configfs.ko'
  rm -f "$kernels/$pkg"_*.deb
  rm -rf "$root" && mv "$root.part" "$root"
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
# noirqdebug: on the RT kernel under a busy host the serial port's threaded IRQ was once
# judged spurious ("irq 4: nobody cared ... Disabling IRQ #4"), the console stopped and the
# guest hung until the timeout.
timeout "${GPIO_LAB_TIMEOUT:-900}" qemu-system-x86_64 -accel tcg -m 1024 -smp "${GPIO_LAB_SMP:-2}" \
  -display none -monitor none -serial stdio -no-reboot \
  -kernel "$root/boot/vmlinuz-$release" -initrd "$work/ramdisk.cpio.gz" \
  -append "console=ttyS0 quiet panic=-1 no_timer_check noirqdebug" </dev/null >"$work/console" &
qemu_pid=$!
tail -f --pid="$qemu_pid" "$work/console" | tr -d '\r'
wait "$qemu_pid" || true
qemu_pid=""
code=$(tr -d '\r' <"$work/console" | sed -n 's/^gpio-lab: exit \([0-9]*\)$/\1/p' | tail -1)
[ -n "$code" ] || { echo "run.sh: the guest ended without COMMAND's exit code" >&2; exit 3; }
exit "$code"
