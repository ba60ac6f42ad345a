#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs every libFuzzer target of a fuzz build (fuzz/CMakeLists.txt) for FUZZ_SECONDS seconds
# (default 60; FUZZ_TARGETS="a b" runs only those) on its seed corpus fuzz/corpus/<target>/, and
# prints one line per target:
# executions, executions per second, and libFuzzer's coverage (cov: edges, ft: features).
# New inputs go to <build>/fuzz-work/<target>/corpus; the committed seeds are never changed.
# The Prometheus target takes inputs up to 1 MiB (answers of many series, long labels); the others
# libFuzzer's default (the largest seed, at least 4096 bytes).
# Exits non-zero when a target crashes, hangs (25 s per input), leaks or runs out of memory; the
# input that did it is kept under <build>/fuzz-work/<target>/ and named in the output.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-fuzz}
seconds=${FUZZ_SECONDS:-60}
targets=(time config scenario block prior_art prometheus http escape identity kmsg)
if [ -n "${FUZZ_TARGETS:-}" ]; then # a subset, e.g. FUZZ_TARGETS="identity escape"
    read -r -a targets <<<"$FUZZ_TARGETS"
fi
failed=0
printf '%-11s %10s %9s %7s %7s %s\n' target execs execs/s cov ft result
for t in "${targets[@]}"; do
    work="$build/fuzz-work/$t"
    mkdir -p "$work/corpus"
    log="$work/log"
    if [ -z "$(ls -A "fuzz/corpus/$t" 2>/dev/null)" ]; then
        printf '%-11s %10s %9s %7s %7s %s\n' "$t" - - - - "FAILED: no seed corpus in fuzz/corpus/$t"
        failed=1
        continue
    fi
    extra=()
    if [ "$t" = prometheus ]; then
        extra=(-max_len=1048576)
    fi
    "$build/fuzz/fuzz_$t" -max_total_time="$seconds" -timeout=25 -rss_limit_mb=2048 \
        "${extra[@]}" -print_final_stats=1 -artifact_prefix="$work/" "$work/corpus" "fuzz/corpus/$t" \
        >"$log" 2>&1
    rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
    ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
    result=ok
    if [ "$rc" -ne 0 ]; then
        result="FAILED (exit $rc): $(ls "$work"/crash-* "$work"/timeout-* "$work"/leak-* \
            "$work"/oom-* 2>/dev/null | head -1); log: $log"
        failed=1
    fi
    printf '%-11s %10s %9s %7s %7s %s\n' "$t" "${execs:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" \
        "$result"
    if [ "$rc" -ne 0 ]; then # what the sanitizer or libFuzzer said, for a CI log without the file
        grep -m4 -E 'ERROR: |runtime error: |SUMMARY: |^Base64: ' "$log" | sed 's/^/    /'
    fi
done
exit "$failed"
