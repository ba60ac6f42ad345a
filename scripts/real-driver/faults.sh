#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Faults and fabric on a real driver, for docs/real-driver.md: fault_probe's fabric readings,
# then fault_probe's event wait while one process holds 4 GiB and others fault on purpose
# (an illegal address, a trap, a holder that faults and lives on); the kernel log's NVRM lines
# and raw /dev/kmsg records; a gua daemon at 1 s records it all. Needs a GPU, python3 with CuPy
# and a folder (argument 1, default .rd) from scripts/real-driver/build.sh. Writes under
# argument 2 (default ./faults-out). About 60 s.
set -u
bin=$(cd "${1:-.rd}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
out=${2:-faults-out}
mkdir -p "$out"
cd "$out"
gua() { LD_LIBRARY_PATH="$bin" "$bin/gua" "$@"; }
log() { echo "[$(date -u +%T.%N)] $*"; }
kmsg() { python3 - "$1" <<'PY'
import os, sys
fd = os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK)
out = open(sys.argv[1], "w")
while True:
    try:
        rec = os.read(fd, 8192)
    except BlockingIOError:
        break
    except OSError as e:
        out.write(f"# read error {e}\n")
        continue
    out.write(rec.decode("utf-8", "replace"))
PY
}
uname -a >uname.txt
cat /proc/driver/nvidia/version >proc-driver-version.txt 2>&1
cat /proc/sys/kernel/dmesg_restrict >dmesg-restrict.txt 2>&1
nvidia-smi -q >smi-q-before.txt 2>&1
for d in /sys/bus/pci/devices/*; do
    [ "$(cat "$d/vendor" 2>/dev/null)" = 0x10de ] || continue
    echo "$d class $(cat "$d/class") device $(cat "$d/device") link $(cat "$d/current_link_speed" 2>/dev/null)" \
        "x$(cat "$d/current_link_width" 2>/dev/null) max $(cat "$d/max_link_speed" 2>/dev/null)" \
        "x$(cat "$d/max_link_width" 2>/dev/null) driver $(basename "$(readlink "$d/driver" 2>/dev/null)")"
done >sysfs-pci.txt 2>&1
ls -la /dev/nvidia* >dev-nodes.txt 2>&1
"$bin/fault_probe" fabric >fabric-before.txt 2>&1
kmsg kmsg-before.txt
gua daemon --db d1.db --interval 1s --log d1.log -q --listen 127.0.0.1:9477 &
daemon=$!
"$bin/fault_probe" events 50 >events.txt 2>&1 &
probe=$!
sleep 3
log hold; python3 "$here/fault.py" hold 4 40 >hold.txt 2>&1 &
sleep 6
log illegal; python3 "$here/fault.py" illegal >illegal.txt 2>&1
sleep 4
log trap; python3 "$here/fault.py" trap >trap.txt 2>&1
sleep 4
log holdfault; python3 "$here/fault.py" holdfault 2 12 >holdfault.txt 2>&1 &
sleep 8
gua now --db d1.db --format json >now-after-holdfault.json 2>&1
nvidia-smi --query-compute-apps=pid,used_memory --format=csv >apps-after-holdfault.txt 2>&1
python3 -c 'import urllib.request as u; print(u.urlopen("http://127.0.0.1:9477/metrics").read().decode())' >metrics.txt 2>&1
wait $probe
kill -TERM $daemon; wait $daemon
log done waiting
kmsg kmsg-after.txt
dmesg >dmesg.txt 2>&1
"$bin/fault_probe" fabric >fabric-after.txt 2>&1
nvidia-smi -q >smi-q-after.txt 2>&1
gua report --db d1.db --since 1h >report.txt 2>&1
gua report --db d1.db --since 1h --format json >report.json 2>&1
log done
