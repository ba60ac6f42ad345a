#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Renders the demo report as HTML (`gua demo --workload overnight --format html`) and takes full-page
# screenshots of it in headless Chromium at desktop (1280 px) and phone (390 px) widths into
# docs/screenshots/. Usage: scripts/screenshots.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
gua=$build/src/gua
out=docs/screenshots
chromium=${CHROMIUM:-chromium}
command -v "$chromium" >/dev/null || {
    echo "screenshots: needs Debian's chromium (scripts/install-deps.sh --test)" >&2
    exit 1
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
"$gua" demo --workload overnight --start 2026-01-05T00:00:00Z --db "$tmp/demo.db" --quiet \
    --format html --output "$tmp/report.html"

# As root, Chromium needs --no-sandbox; each run gets its own profile.
headless() {
    "$chromium" --headless=new --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
        --user-data-dir="$tmp/profile" "$@" 2>/dev/null
}

# The page's height at a width: a measuring page (ours, not the report, which has no script)
# loads the report in an iframe of that width and writes its height into its title.
height() { # WIDTH
    cat >"$tmp/measure.html" <<HTML
<!DOCTYPE html><html><head><title>0</title></head><body style="margin:0">
<iframe id="f" src="report.html" style="border:0;width:$1px;height:100px"></iframe>
<script>document.getElementById("f").onload = function () {
  document.title = String(this.contentDocument.documentElement.scrollHeight); };</script>
</body></html>
HTML
    headless --allow-file-access-from-files --virtual-time-budget=5000 \
        --dump-dom "file://$tmp/measure.html" | sed -n 's:.*<title>\([0-9]*\)</title>.*:\1:p'
}

for shot in desktop:1280 phone:390; do
    name=${shot%%:*}
    width=${shot##*:}
    h=$(height "$width")
    [ -n "$h" ] && [ "$h" -gt 0 ] || { echo "screenshots: could not measure the page" >&2; exit 1; }
    headless --window-size="$width,$h" --screenshot="$PWD/$out/report-$name.png" \
        "file://$tmp/report.html" >/dev/null
    echo "$out/report-$name.png: ${width}×${h}"
done
