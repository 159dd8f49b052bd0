#!/bin/sh
# The arm64 lab guest's /init (run.sh): busybox's applets linked (the arm64 busybox cannot
# run on the host that builds the ramdisk, so they are linked here), the kernel file systems
# mounted, then /lab/command as root; its exit code is printed as "arm64-lab: exit N" for
# run.sh, and the guest powers off.
/bin/busybox mount -t proc proc /proc
/bin/busybox --install -s
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts && mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
ip link set lo up
mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
mount -t debugfs nodev /sys/kernel/debug 2>/dev/null
export HOME=/root PATH=/usr/bin:/bin:/usr/sbin:/sbin:/lab
echo "arm64-lab: kernel $(uname -r) $(uname -v) on $(uname -m)"
cd /root
sh /lab/command
echo "arm64-lab: exit $?"
poweroff -f
