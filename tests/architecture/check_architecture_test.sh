#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ctest -L architecture: the repository passes scripts/check-architecture.py, and copies of it with
# a back-edge, an undescribed folder, a described folder that is gone, a leaked NVML header, or a
# folder library linking other than the table allows fail.
set -euo pipefail
root=${1:?usage: check_architecture_test.sh REPOSITORY_ROOT}
check="$root/scripts/check-architecture.py"
python3 "$check" "$root"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fresh() { # a copy of what the check reads
    rm -rf "$work/tree" && mkdir -p "$work/tree"
    cp "$root/ARCHITECTURE.md" "$work/tree/"
    cp -r "$root/src" "$work/tree/src"
}
expect_failure() { # $1: what was broken, $2: a word the finding must contain
    local out
    if out=$(python3 "$check" "$work/tree" 2>&1); then
        echo "FAIL: the check passed with $1" >&2
        exit 1
    fi
    if ! grep -q -- "$2" <<<"$out"; then
        echo "FAIL: with $1 the check said: $out" >&2
        exit 1
    fi
    echo "ok: $1 -> $(head -n1 <<<"$out")"
}

fresh
echo '#include "cli/app.hpp"' >>"$work/tree/src/core/time.cpp"
expect_failure "a back-edge core -> cli" "may not depend on cli"

fresh
mkdir "$work/tree/src/unmapped" && echo '// x' >"$work/tree/src/unmapped/x.cpp"
expect_failure "a folder missing from ARCHITECTURE.md" "src/unmapped/ has no"

fresh
rm -rf "$work/tree/src/live"
expect_failure "a described folder that does not exist" "names src/live/, which does not exist"

fresh
echo '#include "nvml/abi.hpp"' >>"$work/tree/src/cli/now.cpp"
expect_failure "an NVML header outside src/nvml" "may include only open.hpp"

fresh
sed -i 's/^audit: \(.*\)$/audit: \1 report/' "$work/tree/ARCHITECTURE.md"
expect_failure "a cycle in the declared dependencies" "cycle"
fresh
sed -i 's/^gua_folder_library(audit DEPS \(.*\))$/gua_folder_library(audit DEPS \1 store)/' \
    "$work/tree/src/CMakeLists.txt"
expect_failure "a folder library linking a folder the table does not allow" "the dependency table says"

echo "check-architecture: all cases behave"
