#!/bin/sh
# Takes the README's screenshots (docs/*.png) again from the field fixtures recorded on the
# 2-vCPU VM (tests/fixtures/field/record.sh), in headless chromium as tests/it/pictures.rs
# drives it. Run from anywhere after `cargo build --release`:
#
#   contrib/dev/screenshots.sh
#
# docs/spikes-1400.png   the timer run with 13 spikes (up to 14.51 ms), from the top
# docs/spikes-420.png    the same on a phone (420 px)
# docs/suite-1400.png    the 27-scenario memory-load suite's charts with its 3 s stall
# docs/suite-420.png     the same on a phone
# docs/compare-1400.png  the idle and loaded runs compared (the overlay)
set -eu
cd "$(dirname "$0")/../.."
bin=${LATSCOPE:-target/release/latscope}
browser=$(command -v chromium || command -v chromium-browser)
field=tests/fixtures/field
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin" report "$field/spikes.json" -f html -q -o "$tmp/spikes.html"
"$bin" report "$field/suite.json" -f html -q -o "$tmp/suite.html"
# The suite's page from its headline straight to its charts: the contents, the study table
# and the 27 scenarios' sections hidden (a #fragment is not scrolled to before the shot).
sed 's|</head>|<style>nav,#study,section[id^="scenario-"],#system{display:none}</style></head>|' \
  "$tmp/suite.html" >"$tmp/suite-charts.html"
"$bin" compare "$field/idle.json" "$field/loaded.json" --ignore load -q \
  --export-html "$tmp/compare.html"
# shot PAGE OUT WIDTH HEIGHT
shot() {
  DBUS_SESSION_BUS_ADDRESS=disabled: "$browser" --headless --no-sandbox --disable-gpu \
    --hide-scrollbars --no-first-run --user-data-dir="$tmp/profile" \
    --screenshot="docs/$2" --window-size="$3,$4" "file://$tmp/$1" 2>/dev/null
}
shot spikes.html spikes-1400.png 1400 2300
shot spikes.html spikes-420.png 420 2600
shot suite-charts.html suite-1400.png 1400 1750
shot suite-charts.html suite-420.png 420 1500
shot compare.html compare-1400.png 1400 2700
ls -l docs/*.png
