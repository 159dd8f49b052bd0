#!/usr/bin/env bash
# Installs a latscope .deb (contrib/deb/build.sh) and checks what it promises, printing
# each check: the binary runs from /usr/bin and names its commit, `man latscope` works,
# the completions and the LAVA test definition are in place, the latscope-watch unit (not
# enabled; `systemd-analyze verify` where there is one) and its conffile /etc/latscope/watch.toml
# with every key commented are installed, `latscope timer -D 1s` runs;
# then removes the package again and checks it is gone. Run as root (CI does, after the
# tests): usage  contrib/deb/check.sh target/debian/latscope_*.deb
set -euo pipefail
deb=${1:?usage: contrib/deb/check.sh PATH/TO/latscope_VERSION_ARCH.deb}
repo=$(cd "$(dirname "$0")/../.." && pwd)

check() { printf 'check.sh: %s\n' "$*"; }
fail() {
  printf 'check.sh: FAIL: %s\n' "$*" >&2
  exit 1
}

if [ "$(id -u)" != 0 ]; then
  echo "check.sh: SKIPPED: dpkg -i needs root (run as root, as CI does)"
  exit 0
fi
if dpkg-query -W -f='${Status}' latscope 2>/dev/null | grep -q 'install ok installed'; then
  fail "a latscope package is installed already; remove it first (dpkg -r latscope)"
fi

check "installing $deb"
# Minimal images often exclude /usr/share/man from dpkg (path-exclude); include it back.
dpkg --path-include='/usr/share/man/*' -i "$deb"
trap 'dpkg --purge latscope >/dev/null 2>&1 || true' EXIT

check "latscope on PATH is the installed /usr/bin/latscope"
[ "$(command -v latscope)" = /usr/bin/latscope ] || fail "latscope resolves to $(command -v latscope)"

version=$(/usr/bin/latscope --version)
check "latscope --version names the commit: $version"
if expected=$(git -C "$repo" log -1 --format=%h 2>/dev/null); then
  case "$version" in
    *"(commit $expected)"* | *"(commit $expected-dirty)"*) ;;
    *) fail "--version does not name the checkout's commit $expected" ;;
  esac
else
  echo "check.sh: (not a git checkout here: the build says 'commit unknown', as documented)"
  [[ "$version" =~ \(commit\ ([0-9a-f]{7,}(-dirty)?|unknown)\)$ ]] || fail "--version names no commit"
fi

# Captured first: under pipefail a `man | head` pipeline fails on SIGPIPE.
check "man latscope renders (man -P cat latscope | head):"
page_text=$(man -P cat latscope 2>&1) || fail "man latscope: $page_text"
printf '%s\n' "$page_text" | sed -n '1,8s/^/    /p'
[[ "$page_text" == *"latscope-timer(1)"* ]] || fail "man latscope does not list latscope-timer(1)"
for page in /usr/share/man/man1/latscope*.1.gz; do
  name=$(basename "$page" .1.gz)
  page_text=$(man -P cat "$name" 2>&1) || fail "man $name: $page_text"
  [[ "$page_text" == *"$name"* ]] || fail "man $name does not name itself"
done
check "every page renders: $(ls /usr/share/man/man1/latscope*.1.gz | xargs -n1 basename | tr '\n' ' ')"

for completion in /usr/share/bash-completion/completions/latscope \
  /usr/share/zsh/vendor-completions/_latscope \
  /usr/share/fish/vendor_completions.d/latscope.fish; do
  check "completion $completion present and knows 'timer'"
  { [ -s "$completion" ] && grep -q timer "$completion"; } || fail "$completion missing or empty"
done
check "bash loads the completion: $(bash -c 'source /usr/share/bash-completion/completions/latscope && complete -p latscope')"

check "LAVA test definition installed: /usr/share/latscope/lava/latscope.yaml"
[ -s /usr/share/latscope/lava/latscope.yaml ] || fail "contrib/lava not installed"
check "docs installed: $(ls /usr/share/doc/latscope | tr '\n' ' ')"

unit=/lib/systemd/system/latscope-watch.service
check "systemd unit installed, not enabled: $unit"
[ -s "$unit" ] || fail "$unit not installed"
grep -qx 'ExecStart=/usr/bin/latscope watch --config /etc/latscope/watch.toml' "$unit" ||
  fail "$unit does not start latscope watch --config /etc/latscope/watch.toml"
[ ! -e /etc/systemd/system/multi-user.target.wants/latscope-watch.service ] ||
  fail "latscope-watch.service is enabled by the package"
for page in $(sed -n 's/^Documentation=//p' "$unit" | tr ' ' '\n' | sed -n 's/^man:\(.*\)(1)$/\1/p'); do
  check "the unit's Documentation man:$page(1) is installed"
  [ -s "/usr/share/man/man1/$page.1.gz" ] || fail "$unit names man:$page(1), not in the package"
done
if command -v systemd-analyze >/dev/null; then
  check "systemd-analyze verify $unit: $(systemd-analyze verify "$unit" 2>&1 | tr '\n' ' ')"
  systemd-analyze verify "$unit" || fail "systemd-analyze verify $unit"
else
  check "(systemd-analyze not installed: the unit's syntax not verified)"
fi
check "Grafana dashboard installed: /usr/share/latscope/grafana/latscope.json"
python3 -m json.tool /usr/share/latscope/grafana/latscope.json >/dev/null ||
  fail "/usr/share/latscope/grafana/latscope.json missing or not JSON"
check "conffile /etc/latscope/watch.toml installed, every key commented"
[ -s /etc/latscope/watch.toml ] || fail "/etc/latscope/watch.toml not installed"
dpkg-query -W -f='${Conffiles}' latscope | grep -q /etc/latscope/watch.toml ||
  fail "/etc/latscope/watch.toml is not a conffile"
! grep -Eq '^[[:space:]]*[a-z_]+[[:space:]]*=' /etc/latscope/watch.toml ||
  fail "/etc/latscope/watch.toml sets a key: $(grep -E '^[[:space:]]*[a-z_]+[[:space:]]*=' /etc/latscope/watch.toml)"

check "latscope timer -D 1s from the installed binary:"
# Under the latency tests' lock (tests/common latency_lock, flock): a test isolating CPUs
# at the same time would confine this run to the CPUs it leaves.
timer_output=$(cd /tmp && flock /tmp/latscope-latency-tests.lock latscope timer -D 1s 2>&1) || {
  printf '%s\n' "$timer_output" >&2
  fail "latscope timer -D 1s failed"
}
printf '%s\n' "$timer_output" | sed 's/^/    /'

check "removing the package (dpkg -r latscope)"
trap - EXIT
dpkg -r latscope >/dev/null
[ ! -e /usr/bin/latscope ] || fail "/usr/bin/latscope still there after dpkg -r"
[ ! -e /lib/systemd/system/latscope-watch.service ] || fail "the unit still there after dpkg -r"
dpkg --purge latscope >/dev/null
[ ! -e /etc/latscope/watch.toml ] || fail "/etc/latscope/watch.toml still there after dpkg --purge"
check "all passed"
