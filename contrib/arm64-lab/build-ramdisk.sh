#!/usr/bin/env bash
# The arm64 lab's ramdisk (run.sh): Debian's static arm64 busybox, the aarch64 latscope
# with the libraries it links (from the cross toolchain's /usr/aarch64-linux-gnu/lib),
# the kernel's config at /boot (doctor reads it), this folder's scripts in /lab, the lab's
# /init (guest-init.sh) and COMMAND as /lab/command. No kernel module: gpio-keys stays
# unloaded, so the PL061's line 3 is free. Needs root (it creates /dev/console).
# Usage: build-ramdisk.sh OUT.cpio.gz LATSCOPE BUSYBOX KERNEL_CONFIG COMMAND...
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$1 latscope=$2 busybox=$3 config=$4
shift 4
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,run,root,etc,boot,lab}
install -m 755 "$busybox" "$root/bin/busybox"
ln -s busybox "$root/bin/sh"
install -m 755 "$latscope" "$root/usr/bin/latscope"
cp "$config" "$root/boot/"
# The loader and libraries a dynamic build needs, where the aarch64 loader looks for them
# (the binary's NEEDED entries, and theirs; a crt-static build has none).
sysroot=/usr/aarch64-linux-gnu
needed() { LC_ALL=C aarch64-linux-gnu-readelf -d "$1" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }
interp=$(LC_ALL=C aarch64-linux-gnu-readelf -l "$latscope" 2>/dev/null \
  | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p')
if [ -n "$interp" ]; then
  mkdir -p "$root/lib" "$root$(dirname "$interp")"
  cp -L "$sysroot/lib/$(basename "$interp")" "$root$interp"
  todo=$(needed "$latscope")
  while [ -n "$todo" ]; do
    next=""
    for lib in $todo; do
      [ -e "$root/lib/$lib" ] && continue
      cp -L "$sysroot/lib/$lib" "$root/lib/$lib"
      next="$next $(needed "$sysroot/lib/$lib")"
    done
    todo=$next
  done
fi
cp "$here"/*.sh "$root/lab/"
install -m 755 "$here/guest-init.sh" "$root/init"
printf '#!/bin/sh\n# Asks run.sh on the host to press the power button N times, MS apart.\necho "arm64-lab: press $1 ${2:-250}"\n' >"$root/lab/press"
{
  echo '#!/bin/sh'
  printf '%q ' "$@"
  echo
} >"$root/lab/command"
chmod 755 "$root/lab/command" "$root/lab/press"
mknod -m 600 "$root/dev/console" c 5 1
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/sh\n' >"$root/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$out"
