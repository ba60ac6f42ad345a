#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs gua's benchmarks and prints the figures for docs/PERFORMANCE.md.
# Usage: bench/run.sh [BUILD_DIR] [--short]
#   full:    30 days × 12 GPUs and 365 days × 16 GPUs of the reference fleet workload, 365 days
#            × 12 GPUs with allocations (fails above 10 bytes per card-tick), and the
#            fleet scale test: 1,000 GPUs × 30 days through a real Prometheus
#            (bench/prometheus_scale.sh; generating and backfilling it takes an hour or more
#            the first time)
#   --short: 2 days × 12 GPUs and 7 days × 16 GPUs (and × 12 with allocations), few
#            repetitions, and the fleet scale test on 20 GPUs × 2 days (CI, about a minute and
#            a half)
# Generated databases are cached in BUILD_DIR/bench-data (regenerated when gua-fleetgen changes).
set -euo pipefail
build=${1:-build}
short=0
[ "${2:-}" = "--short" ] && short=1
gua=$build/src/gua
gen=$build/bench/gua-fleetgen
month_days=30
year_days=365
if [ $short -eq 1 ]; then
    month_days=2
    year_days=7
fi
data=$build/bench-data
mkdir -p "$data"

fleet_db() { # DAYS GPUS [--allocations] → path of the cached database
    local db=$data/fleet-v1-$1d-$2g${3:+-alloc}.db
    if [ ! -s "$db" ] || [ "$gen" -nt "$db" ]; then
        echo "generating $1 days × $2 GPUs ${3:+$3 }through store::Writer:" >&2
        "$gen" "$db" "$1" "$2" ${3:+"$3"} >&2
    fi
    echo "$db"
}

size_line() { # DB DAYS GPUS [LABEL]
    local size card_ticks
    size=$(stat -c %s "$1")
    card_ticks=$(($2 * 2880 * $3))
    awk -v s="$size" -v n="$card_ticks" -v d="$2" -v g="$3" -v l="${4:-}" 'BEGIN {
        printf "database %d days × %d GPUs%s: %d bytes = %.2f bytes per card-tick (%d card-ticks)\n",
               d, g, l, s, s / n, n }'
    if [ $short -eq 1 ] && [ "$(awk -v s="$size" -v n="$card_ticks" 'BEGIN { print (s / n > 20) }')" = 1 ]; then
        echo "FAIL: more than 20 bytes per card-tick" >&2
        exit 1
    fi
}

report_line() { # DB DAYS LABEL: best of 3 wall times and the peak RSS of `gua report`
    local from to
    from=2026-05-01T00:17:23Z
    to=$(date -u -d "2026-05-01 00:17:23 UTC + $2 days" +%Y-%m-%dT%H:%M:%SZ)
    for _ in 1 2 3; do
        /usr/bin/time -f "%e %M" "$gua" report --db "$1" --from "$from" --to "$to" \
            2>&1 >/dev/null | tail -1
    done | sort -n | head -1 |
        awk -v l="$3" '{ printf "gua report %s: %.3f s wall, %d KiB peak RSS\n", l, $1, $2 }'
}

html_line() { # DB DAYS LABEL: best of 3 wall times of `gua report --format html`, and its size
    local from to page best
    from=2026-05-01T00:17:23Z
    to=$(date -u -d "2026-05-01 00:17:23 UTC + $2 days" +%Y-%m-%dT%H:%M:%SZ)
    page=$(mktemp --suffix=.html)
    best=$(for _ in 1 2 3; do
        /usr/bin/time -f "%e %M" "$gua" report --db "$1" --from "$from" --to "$to" \
            --format html --output "$page" 2>&1 | tail -1
    done | sort -n | head -1)
    awk -v l="$3" -v b="$best" -v s="$(stat -c %s "$page")" 'BEGIN { split(b, f, " ")
        printf "gua report --format html %s: %.3f s wall, %d KiB peak RSS, %d bytes\n", l, f[1], f[2], s }'
    if [ "$(stat -c %s "$page")" -gt 2000000 ]; then
        echo "FAIL: the HTML report is larger than 2 MB" >&2
        exit 1
    fi
    rm -f "$page"
}

month=$(fleet_db $month_days 12)
year=$(fleet_db $year_days 16)
# Every card allocated to Slurm jobs (gua-fleetgen --allocations): the target is 10 B per
# card-tick over a year of 12 GPUs (docs/PERFORMANCE.md, "Allocation sources").
allocated=$(fleet_db $year_days 12 --allocations)
echo "== storage"
size_line "$month" $month_days 12
size_line "$year" $year_days 16
size_line "$allocated" $year_days 12 " with allocations"
if [ $short -eq 0 ] && [ "$(awk -v s="$(stat -c %s "$allocated")" -v n="$((year_days * 2880 * 12))" 'BEGIN { print (s / n > 10) }')" = 1 ]; then
    echo "FAIL: more than 10 bytes per card-tick with allocations over a year" >&2
    exit 1
fi
echo "== report (command: gua report --db DB --from 2026-05-01T00:17:23Z --to <+DAYS>)"
report_line "$month" $month_days "${month_days}d × 12 GPUs"
report_line "$year" $year_days "${year_days}d × 16 GPUs"
echo "== HTML report (the same windows, --format html --output FILE)"
html_line "$month" $month_days "${month_days}d × 12 GPUs"
html_line "$year" $year_days "${year_days}d × 16 GPUs"
echo "== gua plan: reading the demand and the full sweep (7 timeouts × 3 sharing modes)"
if [ -x "$build/bench/gua-plan-bench" ]; then
    /usr/bin/time -f "whole run: %e s wall, %M KiB peak RSS" "$build/bench/gua-plan-bench" "$year" \
        2>&1 | grep -v '^  T='
else
    echo "skipped: needs $build/bench/gua-plan-bench (ninja gua_plan_bench)"
fi
echo "== gua demo end to end"
tmp=$(mktemp -d)
/usr/bin/time -f "demo: %e s wall, %M KiB peak RSS" "$gua" demo --db "$tmp/demo.db" --quiet >/dev/null
rm -rf "$tmp"

echo "== gua daemon on the fake NVML library: 8 GPUs x 16 processes"
fake=$build/tests/fake_nvml/libnvidia-ml.so.1
if [ -x "$build/bench/gua-daemon-bench" ] && [ -e "$fake" ]; then
    if [ $short -eq 1 ]; then
        "$build/bench/gua-daemon-bench" "$gua" "$fake" --short
    else
        "$build/bench/gua-daemon-bench" "$gua" "$fake"
        echo "== the same daemon without and with GPM (every GPU Hopper), alternating runs"
        "$build/bench/gua-daemon-bench" "$gua" "$fake" --gpm
    fi
else
    echo "skipped: needs $build/bench/gua-daemon-bench and the fake library (ninja gua_daemon_bench fake_nvml)"
fi

echo "== the fold alone (TickBuilder, 8 cards × 16 processes, six polls a tick)"
if [ -x "$build/bench/gua-fold-bench" ]; then
    "$build/bench/gua-fold-bench"
else
    echo "skipped: needs $build/bench/gua-fold-bench (ninja gua_fold_bench)"
fi

echo "== fleet scale through Prometheus (bench/prometheus_scale.sh)"
if [ $short -eq 1 ]; then
    bench/prometheus_scale.sh "$build" --short
else
    bench/prometheus_scale.sh "$build"
fi

echo "== Google Benchmark"
min_time=1
[ $short -eq 1 ] && min_time=0.05
GUA_BENCH_MONTH_DB=$month GUA_BENCH_MONTH_DAYS=$month_days \
    GUA_BENCH_YEAR_DB=$year GUA_BENCH_YEAR_DAYS=$year_days GUA_BENCH_DIR=$data \
    "$build/bench/gua_bench" --benchmark_min_time=$min_time
