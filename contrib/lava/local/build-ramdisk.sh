#!/usr/bin/env bash
# The ramdisk the local LAVA job boots (contrib/lava/local/run.sh): Debian's static busybox,
# latscope (with the shared libraries it links, if any: a crt-static build has none),
# each given kernel's e1000 driver (the
# network LAVA's overlay comes through), and an /init that mounts the kernel file systems,
# brings the network up for QEMU's user-mode net (10.0.2.15, the host at 10.0.2.2) and
# keeps a shell on the serial console. Needs root (it creates /dev/console).
# Usage: build-ramdisk.sh OUT.cpio.gz LATSCOPE_BINARY KERNEL_ROOT...
#   KERNEL_ROOT: a linux-image-*.deb unpacked with dpkg-deb -x (its lib/modules is read)
set -euo pipefail
out=$1
latscope=$2
shift 2
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,proc,sys,dev,tmp,run,root,etc,usr/bin,lib/modules}
cp /bin/busybox "$root/bin/busybox"
for applet in $(/bin/busybox --list); do
  [ "$applet" = busybox ] || ln -s busybox "$root/bin/$applet"
done
install -m 755 "$latscope" "$root/usr/bin/latscope"
# The libraries and loader a dynamic build needs, at the paths it looks for them.
for lib in $(ldd "$latscope" 2>/dev/null | grep -o '/[^ ]*' || true); do
  mkdir -p "$root$(dirname "$lib")"
  cp -L "$lib" "$root$lib"
done
for kernel in "$@"; do
  for ko in "$kernel"/lib/modules/*/kernel/drivers/net/ethernet/intel/e1000/e1000.ko; do
    version=${ko#"$kernel"/lib/modules/}
    version=${version%%/*}
    mkdir -p "$root/lib/modules/$version"
    cp "$ko" "$root/lib/modules/$version/"
  done
done
mknod -m 600 "$root/dev/console" c 5 1
echo "root:x:0:0:root:/root:/bin/sh" >"$root/etc/passwd"
cat >"$root/init" <<'INIT'
#!/bin/sh
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts && mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
mount -t debugfs nodev /sys/kernel/debug 2>/dev/null
insmod "/lib/modules/$(uname -r)/e1000.ko" && sleep 1 && ip link set eth0 up \
  && ip addr add 10.0.2.15/24 dev eth0 && ip route add default via 10.0.2.2
echo "latscope ramdisk up: kernel $(uname -r) $(uname -v)"
export HOME=/root PATH=/usr/bin:/bin PS1='latscope-ramdisk# '
cd /root
while true; do setsid cttyhack sh; done
INIT
chmod 755 "$root/init"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$out"
