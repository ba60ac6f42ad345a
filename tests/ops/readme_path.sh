#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The README's path for a new user, in its order, on a fresh clone of the committed tree: `make
# demo`, the binary by the path the README names, `make package`, and the .deb at the path its
# `apt install` line names (inspected with dpkg-deb, not installed). Each path and command is read
# from README.md, so the test fails when the README and the tree disagree.
# Usage: readme_path.sh SOURCE_DIR [WORK_DIR]   (ctest -L readme; .ci/run runs it)
set -euo pipefail
source_dir=$(cd "$1" && pwd)
work=${2:-$(mktemp -d /tmp/gua-readme-XXXXXX)}
readme=$source_dir/README.md
fail() { echo "README path: $*" >&2; exit 1; }

# What the README says.
grep -q '^make demo ' "$readme" || fail "no \`make demo\` line"
binary=$(grep -o 'The binary is `[^`]*`' "$readme" | head -1 | sed 's/.*`\(.*\)`/\1/')
[ -n "$binary" ] || fail "the README does not say where the binary is"
grep -q '^make package ' "$readme" || fail "no \`make package\` line"
deb=$(grep -o 'apt install \./[^ ]*\.deb' "$readme" | head -1 | sed 's/apt install \.\///')
[ -n "$deb" ] || fail "no \`apt install ./….deb\` line"
echo "README: make demo; $binary; make package; $deb"

rm -rf "$work" && git clone --quiet "$source_dir" "$work"
cd "$work"
start=$(date +%s)
make demo >demo.out 2>demo.err || { tail -20 demo.err; fail "make demo failed"; }
grep -q 'idle-held' demo.out || fail "make demo printed no report"
demo_s=$(($(date +%s) - start))
[ -x "$binary" ] || fail "$binary (the README's binary path) does not exist after make demo"
"$binary" demo --ticks 20 -q >/dev/null || fail "$binary demo failed"
start=$(date +%s)
make package >package.out 2>&1 || { tail -20 package.out; fail "make package failed"; }
package_s=$(($(date +%s) - start))
[ -f "$deb" ] || fail "$deb (the README's apt install path) does not exist after make package: $(ls build/*.deb 2>&1)"
dpkg-deb -f "$deb" Package Version
echo "make demo ${demo_s}s, make package ${package_s}s (fresh clone in $work)"
rm -rf "$work"
