#!/usr/bin/env bash
# gpio-sim for a Debian kernel that does not build it (# CONFIG_GPIO_SIM is not set in
# bookworm's 6.1 stock and PREEMPT_RT kernels): the kernel's own simulator, gpio-sim.c and
# gpiolib.h from Debian's linux-source package, with kernel/irq/irq_sim.c (CONFIG_IRQ_SIM is
# off too) compiled into the same out-of-tree module against that flavour's linux-headers.
# One change: irq_to_desc is not exported to modules, so irq_sim's
# handle_simple_irq(irq_to_desc(irq)) becomes generic_handle_irq_safe(irq), which does the
# same through an exported function. Nothing of the kernel's source is kept in this
# repository: the package is downloaded at build time and the module cached.
#
# Usage (as root): build-module.sh KERNEL_RELEASE   e.g. 6.1.0-56-amd64 or 6.1.0-56-rt-amd64
#   prints the path of the cached gpio-sim.ko
#   GPIO_LAB_CACHE  where sources and modules are kept (default ~/.cache/latscope-gpio-lab)
# Needs: apt-get (linux-source-6.1 and linux-headers-RELEASE are fetched), gcc, make.
set -euo pipefail
release=$1
cache=${GPIO_LAB_CACHE:-$HOME/.cache/latscope-gpio-lab}
module=$cache/modules/$release/gpio-sim.ko
if [ -f "$module" ]; then
  echo "$module"
  exit 0
fi
mkdir -p "$cache"
series=${release%%-*}                  # 6.1.0 -> the source package's 6.1
series=${series%.*}
headers=/usr/src/linux-headers-$release
if [ ! -d "$headers" ]; then
  echo "build-module.sh: installing linux-headers-$release" >&2
  apt-get install -y -q "linux-headers-$release" >&2 \
    || { apt-get update -q >&2 && apt-get install -y -q "linux-headers-$release" >&2; }
fi
src=$cache/src-$series
if [ ! -f "$src/gpio-sim.c" ]; then
  echo "build-module.sh: fetching linux-source-$series (gpio-sim.c, gpiolib.h, irq_sim.c)" >&2
  (cd "$cache" && rm -f linux-source-"$series"_*.deb \
    && { apt-get download -q "linux-source-$series" >&2 \
      || { apt-get update -q >&2 && apt-get download -q "linux-source-$series" >&2; }; })
  rm -rf "$src.part" && mkdir -p "$src.part"
  dpkg-deb --fsys-tarfile "$cache"/linux-source-"$series"_*.deb \
    | tar -xO "./usr/src/linux-source-$series.tar.xz" \
    | tar -xJ -C "$src.part" --strip-components=3 \
      "linux-source-$series/drivers/gpio/gpio-sim.c" \
      "linux-source-$series/drivers/gpio/gpiolib.h" \
      "linux-source-$series/kernel/irq/irq_sim.c"
  rm -f "$cache"/linux-source-"$series"_*.deb
  mv "$src.part" "$src"
fi
build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT
cp "$src/gpio-sim.c" "$build/sim.c"
cp "$src/gpiolib.h" "$build/gpiolib.h"
sed 's/handle_simple_irq(irq_to_desc(irqnum));/generic_handle_irq_safe(irqnum);/' \
  "$src/irq_sim.c" >"$build/irq-sim.c"
grep -q 'generic_handle_irq_safe(irqnum)' "$build/irq-sim.c" \
  || { echo "build-module.sh: irq_sim.c changed upstream: irq_to_desc call not found" >&2; exit 1; }
cat >"$build/Makefile" <<'MK'
obj-m := gpio-sim.o
gpio-sim-objs := sim.o irq-sim.o
MK
make -s -C "$headers" M="$build" modules >&2
mkdir -p "$(dirname "$module")"
cp "$build/gpio-sim.ko" "$module.part"
mv "$module.part" "$module"
echo "$module"
