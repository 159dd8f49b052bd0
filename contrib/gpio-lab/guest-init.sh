#!/bin/sh
# The lab guest's /init (run.sh): kernel file systems, configfs and gpio-sim loaded, a
# simulated chip made live with two named lines (sim-in, sim-out), then /lab/command as
# root; its exit code is printed as "gpio-lab: exit N" for run.sh, and the guest powers off.
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts && mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /tmp
ip link set lo up
mount -t tmpfs tmpfs /run
mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
mount -t debugfs nodev /sys/kernel/debug 2>/dev/null
export HOME=/root PATH=/usr/bin:/bin:/lab
modules=/lib/modules/$(uname -r)
insmod "$modules/configfs.ko" && insmod "$modules/gpio-sim.ko" \
  && mount -t configfs none /sys/kernel/config || echo "gpio-lab: loading gpio-sim failed"
chip=/sys/kernel/config/gpio-sim/lab
mkdir -p "$chip/bank0/line0" "$chip/bank0/line1"
echo 2 >"$chip/bank0/num_lines"
echo sim-in >"$chip/bank0/line0/name"
echo sim-out >"$chip/bank0/line1/name"
echo gpio-sim-lab >"$chip/bank0/label"
echo 1 >"$chip/live"
name=$(cat "$chip/bank0/chip_name" 2>/dev/null)
GPIO_SIM_DIR=$(dirname "$(ls -d /sys/devices/platform/gpio-sim.*/"$name"/sim_gpio0 2>/dev/null | head -1)")
export GPIO_SIM_DIR
echo "gpio-lab: kernel $(uname -r) $(uname -v); chip ${name:-none} live; sim files $GPIO_SIM_DIR"
cd /root
sh /lab/command
echo "gpio-lab: exit $?"
poweroff -f
