#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The fleet scale test: a simulated fleet of gua daemons (gua-promgen) backfilled into a real
# Prometheus with promtool, then `gua report --prometheus` over 30 and 7 days, timed and held to
# the generator's ground truth (docs/PERFORMANCE.md, "Fleet scale through Prometheus").
# Usage: bench/prometheus_scale.sh [BUILD_DIR] [--short] [--hosts N] [--gpus-per-host N]
#                                  [--days N] [--scrape-interval SECONDS] [--keep]
#   full (default): 125 hosts × 8 GPUs, 30 days at the shipped 30 s scrape interval;
#   --short:        5 hosts × 4 GPUs, 2 days (CI; fails when a card is off by more than the
#                   tolerance).
# The TSDB is cached in BUILD_DIR/bench-data/prom-… and regenerated when the scenario's version
# (gua-promgen version) changes.
# Needs prometheus and promtool (Debian package `prometheus`); skips without them.
set -euo pipefail
build=build
if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then
    build=$1
    shift
fi
hosts=125 gpus=8 days=30 scrape=30 short=0 keep=0
while [ $# -gt 0 ]; do
    case $1 in
    --short) short=1 hosts=5 gpus=4 days=2 ;;
    --hosts) hosts=$2 && shift ;;
    --gpus-per-host) gpus=$2 && shift ;;
    --days) days=$2 && shift ;;
    --scrape-interval) scrape=$2 && shift ;;
    --keep) keep=1 ;;
    *) echo "prometheus_scale.sh: unknown option $1" >&2 && exit 2 ;;
    esac
    shift
done
gua=$(realpath "$build/src/gua")
gen=$(realpath "$build/bench/gua-promgen")
if ! command -v prometheus >/dev/null || ! command -v promtool >/dev/null; then
    echo "skipped: needs prometheus and promtool (Debian package prometheus)"
    exit 0
fi
tick=30
# Tolerance per card: at a window's edge the counters read are up to one tick old (they advance
# at the end of a tick) plus the age of the last scrape: one interval, two when a scrape failed.
tolerance=$((tick + 2 * scrape))
# The data: the daemons start an hour before the long window (a fleet that was running
# already) and are scraped until an hour after the windows' end, so that every tick a window
# holds is recorded and scraped.
data_end=2026-11-26T00:00:00Z
end=2026-11-25T23:00:00Z
short_days=$((days < 7 ? 1 : 7))
from30=$(date -u -d "2026-11-25 23:00:00 UTC - $days days" +%Y-%m-%dT%H:%M:%SZ)
from7=$(date -u -d "2026-11-25 23:00:00 UTC - $short_days days" +%Y-%m-%dT%H:%M:%SZ)
start=$(date -u -d "$from30 - 1 hour" +%Y-%m-%dT%H:%M:%SZ)
data=$(realpath -m "$build/bench-data/prom-${hosts}x${gpus}-${days}d-${scrape}s")
log=$data/log
mkdir -p "$data"

windows=(--window "$from30/$end" --window "$from7/$end")
shape=(--hosts "$hosts" --gpus-per-host "$gpus" --start "$start" --end "$data_end"
    --scrape-interval "$scrape" --tick "$tick")
version=$("$gen" version)
if [ ! -s "$data/truth.json" ] || [ "$(cat "$data/version" 2>/dev/null)" != "$version" ]; then
    rm -rf "$data/tsdb" "$data/chunks" "$data/truth.json" "$data/version" "$data/promtool.times"
    mkdir -p "$data/chunks" "$data/tsdb"
    echo "generating $hosts hosts × $gpus GPUs × $days days at ${scrape}s and backfilling with promtool"
    t0=$(date +%s.%N)
    # One OpenMetrics file per 2-hour block: promtool parses its input once per block it cuts.
    "$gen" generate "${shape[@]}" --out "$data/chunks" --truth "$data/truth.json.tmp" \
        "${windows[@]}" 2>"$data/generate.log" |
        while read -r chunk; do
            /usr/bin/time -a -o "$data/promtool.times" -f '%e %U %S %M' \
                promtool tsdb create-blocks-from openmetrics -q "$chunk" "$data/tsdb" >/dev/null
            rm -f "$chunk"
        done
    t1=$(date +%s.%N)
    cat "$data/generate.log"
    awk -v w="$(echo "$t1 - $t0" | bc)" '{ e += $1; c += $2 + $3; if ($4 > m) m = $4; n++ }
        END { printf "backfill: %d promtool runs, %.0f s of promtool wall, %.0f s CPU, peak RSS %d KiB; pipeline %.0f s wall\n", n, e, c, m, w }' \
        "$data/promtool.times" | tee "$data/backfill.txt"
    mv "$data/truth.json.tmp" "$data/truth.json"
    echo "$version" >"$data/version"
    echo "${windows[*]}" >"$data/windows"
    rm -rf "$data/chunks"
    rm -f "$data/compacted"
else
    cat "$data/generate.log" "$data/backfill.txt"
    # The same scenario: the truth is integrated again when its format or the windows changed.
    if [ "$gen" -nt "$data/truth.json" ] || [ "$(cat "$data/windows" 2>/dev/null)" != "${windows[*]}" ]; then
        "$gen" truth "${shape[@]}" --truth "$data/truth.json" "${windows[@]}"
        echo "${windows[*]}" >"$data/windows"
    fi
fi
echo "TSDB on disk: $(du -sh "$data/tsdb" | cut -f1) in $(find "$data/tsdb" -maxdepth 1 -name '01*' | wc -l) blocks"

port=$((20000 + RANDOM % 20000))
url=http://127.0.0.1:$port
printf 'global:\n  scrape_interval: %ss\nscrape_configs: []\n' "$scrape" >"$data/prometheus.yml"
prometheus --config.file="$data/prometheus.yml" --storage.tsdb.path="$data/tsdb" \
    --storage.tsdb.retention.time=3650d --web.listen-address="127.0.0.1:$port" \
    >"$data/prometheus.log" 2>&1 &
prom_pid=$!
trap 'kill $prom_pid 2>/dev/null || true; wait $prom_pid 2>/dev/null || true' EXIT
for _ in $(seq 1 600); do
    curl -fs "$url/-/ready" >/dev/null 2>&1 && break
    kill -0 $prom_pid 2>/dev/null || { cat "$data/prometheus.log" >&2; exit 1; }
    sleep 0.5
done
curl -fs "$url/-/ready" >/dev/null || { echo "prometheus did not become ready" >&2; exit 1; }
blocks() { curl -fs "$url/metrics" | awk '$1 == "prometheus_tsdb_blocks_loaded" { print $2 }'; }
echo "prometheus ready: $(blocks) blocks loaded"
if [ $short -eq 0 ] && [ ! -e "$data/compacted" ]; then
    # A month-old Prometheus has compacted its 2-hour blocks; let this one do so first (it
    # starts a minute after start-up), so the queries run on the blocks a real server has.
    echo "waiting for Prometheus to compact the backfilled blocks"
    c0=$(date +%s)
    last=$(blocks) stable=0
    while [ $stable -lt 8 ]; do
        sleep 15
        now=$(blocks)
        if [ "$now" = "$last" ] && [ "$(($(date +%s) - c0))" -gt 90 ]; then
            stable=$((stable + 1))
        else
            stable=0
        fi
        last=$now
    done
    echo "compaction: $(($(date +%s) - c0 - 120)) s (± 15 s), $(blocks) blocks" | tee "$data/compacted"
elif [ -e "$data/compacted" ]; then
    cat "$data/compacted"
fi

fail=0
runs=3
[ $short -eq 1 ] && runs=1
run_report() { # LABEL FROM WINDOW_INDEX: best, median and worst of $runs, then the accuracy
    local out=$data/report-$1.json
    rm -f "$data/time-$1"
    for _ in $(seq 1 $runs); do
        /usr/bin/time -a -o "$data/time-$1" -f '%e %M' "$gua" report --prometheus "$url" \
            --from "$2" --to "$end" --tz UTC --format json --top 100000 --output "$out"
    done
    sort -n "$data/time-$1" | awk -v l="$1" '{ t[NR] = $1; if ($2 > m) m = $2 }
        END { printf "gua report --prometheus %s: %.2f s wall (best of %d; median %.2f, worst %.2f), %d KiB peak RSS\n",
              l, t[1], NR, t[int((NR + 1) / 2)], t[NR], m }'
    "$gen" compare --truth "$data/truth.json" --window "$3" --report "$out" \
        --tolerance "$tolerance" || fail=1
}
echo "== $((hosts * gpus)) GPUs ($hosts hosts), window ${days}d: $from30 .. $end"
run_report "${days}d" "$from30" 0
echo "== window ${short_days}d: $from7 .. $end"
run_report "${short_days}d" "$from7" 1
awk '/^VmHWM|^VmRSS/ { printf "prometheus %s %s %s\n", $1, $2, $3 }' "/proc/$prom_pid/status"
[ $keep -eq 1 ] && echo "Prometheus stays up at $url (pid $prom_pid); ctrl-c ends it" && wait $prom_pid
exit $fail
