#!/usr/bin/env bash
# Runs gua's benchmarks and prints the figures for docs/PERFORMANCE.md.
# Usage: bench/run.sh [BUILD_DIR] [--short]   (--short: 2 days of fleet data, few repetitions; CI)
set -euo pipefail
build=${1:-build}
short=0
[ "${2:-}" = "--short" ] && short=1
gua=$build/src/gua
gen=$build/bench/gua-fleetgen
days=30
[ $short -eq 1 ] && days=2
data=$build/bench-data
mkdir -p "$data"
db=$data/fleet-${days}d.db

echo "== fleet database: 12 GPUs, ${days} days at 30 s (the prior art's reference workload)"
if [ ! -s "$db" ]; then
    "$gen" "$db" "$days" 12
fi
size=$(stat -c %s "$db")
card_ticks=$((days * 2880 * 12))
echo "database: $size bytes, $((size / card_ticks)) bytes per card-tick"

echo "== gua report on the whole history (wall seconds, peak RSS KiB)"
/usr/bin/time -f "report ${days}d: %e s wall, %M KiB peak RSS" \
    "$gua" report --db "$db" --from 2026-05-01 --to "2026-05-$(printf %02d $((1 + days)))" >/dev/null

echo "== gua demo end to end"
tmp=$(mktemp -d)
/usr/bin/time -f "demo: %e s wall, %M KiB peak RSS" "$gua" demo --db "$tmp/demo.db" --quiet >/dev/null
rm -rf "$tmp"

echo "== gua daemon on the fake NVML library: 8 GPUs x 16 processes (issue 3)"
fake=$build/tests/fake_nvml/libnvidia-ml.so.1
if [ -x "$build/bench/gua-daemon-bench" ] && [ -e "$fake" ]; then
    if [ $short -eq 1 ]; then
        "$build/bench/gua-daemon-bench" "$gua" "$fake" --short
    else
        "$build/bench/gua-daemon-bench" "$gua" "$fake"
    fi
else
    echo "skipped: needs $build/bench/gua-daemon-bench and the fake library (ninja gua_daemon_bench fake_nvml)"
fi

echo "== Google Benchmark"
min_time=0.5
[ $short -eq 1 ] && min_time=0.05
GUA_BENCH_FLEET_DB=$db GUA_BENCH_FLEET_DAYS=$days GUA_BENCH_DIR=$data \
    "$build/bench/gua_bench" --benchmark_min_time=$min_time
