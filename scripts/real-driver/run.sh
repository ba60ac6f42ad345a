#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs gua against a real NVIDIA driver with loads it starts itself, for docs/real-driver.md.
# Needs: a GPU, python3 with PyTorch and CuPy, and a folder (argument 1, default .rd) holding a
# gua binary, nvml_probe (scripts/real-driver/build.sh) and the shared libraries gua links.
# Writes everything under argument 2 (default ./real-driver-out).
#
# Timeline (s): 0-30 nothing; 30-210 a process holds 20 GiB; 90-150 matrix products beside it;
# 150-210 one spinning thread block beside it; 210-240 nothing. Two daemons record it, at 1 s
# and at 30 s; nvidia-smi dmon/pmon and nvml_probe watch it once a second.
set -u
bin=$(cd "${1:-.rd}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
[ -f "$here/load.py" ] || { echo "run.sh: $here/load.py missing" >&2; exit 1; }
out=${2:-real-driver-out}
mkdir -p "$out"
cd "$out"
# The carried libraries are for gua alone: nvidia-smi and python keep the machine's own.
gua() { LD_LIBRARY_PATH="$bin" "$bin/gua" "$@"; }
log() { echo "[$(date -u +%T)] $*"; }

cat /proc/driver/nvidia/version >proc-driver-version.txt 2>&1
python3 -c 'import torch; print(torch.__version__, torch.cuda.is_available())' >python.txt 2>&1
nvidia-smi >nvidia-smi.txt 2>&1
nvidia-smi -q >nvidia-smi-q.txt 2>&1
gua version >version.txt 2>&1
gua doctor >doctor.txt 2>&1
"$bin/nvml_probe" rings >rings-00-start.txt 2>&1

nvidia-smi dmon -s pucm -d 1 >dmon.txt 2>&1 &
nvidia-smi pmon -s um -d 1 >pmon.txt 2>&1 &
"$bin/nvml_probe" watch 245 >watch.txt 2>&1 &
LD_LIBRARY_PATH="$bin" "$bin/gua" daemon --db d1.db --interval 1s --log d1.log -q --listen 127.0.0.1:9477 &
d1=$!
LD_LIBRARY_PATH="$bin" "$bin/gua" daemon --db d30.db --interval 30s --log d30.log -q &
d30=$!
t0=$(date +%s)
at() { while [ $(($(date +%s) - t0)) -lt "$1" ]; do sleep 0.2; done; }

at 25; log rings idle; "$bin/nvml_probe" rings >rings-25-idle.txt 2>&1
at 30; log hold; python3 "$here/load.py" hold 20 180 >hold.txt 2>&1 &
at 60; gua now --db d1.db >now-60-held.txt 2>&1; gua now --db d1.db --format json >now-60-held.json 2>&1
at 80; log rings held; "$bin/nvml_probe" rings >rings-80-held.txt 2>&1
at 90; log busy; python3 "$here/load.py" busy 60 >busy.txt 2>&1 &
at 120; python3 -c 'import urllib.request as u; print(u.urlopen("http://127.0.0.1:9477/metrics").read().decode())' >metrics-120-busy.txt 2>&1
at 140; log rings busy; "$bin/nvml_probe" rings >rings-140-busy.txt 2>&1
at 150; log light; python3 "$here/load.py" light 60 >light.txt 2>&1 &
at 195; log rings light; "$bin/nvml_probe" rings >rings-195-light.txt 2>&1
gua now --db d1.db --format json >now-195-light.json 2>&1
at 225; log rings after; "$bin/nvml_probe" rings >rings-225-after.txt 2>&1
at 245
kill -TERM $d1 $d30; wait $d1 $d30
log daemons stopped
for d in d1 d30; do
    gua report --db $d.db --since 1h >report-$d.txt 2>&1
    gua report --db $d.db --since 1h --format json >report-$d.json 2>&1
done
gua db --db d1.db stats >db-stats-d1.txt 2>&1
kill %1 %2 %3 2>/dev/null
log done
