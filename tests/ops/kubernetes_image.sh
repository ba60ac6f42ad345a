#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Replays packaging/kubernetes/Dockerfile without docker and runs the DaemonSet's command in it:
# apt resolves what `apt-get install --no-install-recommends` of the Dockerfile's arguments puts on
# an empty Debian system, a root tree is made of those packages' files (taken from this host, which
# has them installed) plus the .deb, and the container's args from daemonset.yaml run there as the
# image's USER, chrooted, read-only, in a private network namespace, with the fake NVML where the
# NVIDIA runtime mounts the real one. Passes when /metrics answers on loopback and, with
# [allocations] kubelet_socket set, the image's gua loads its kubelet module (gua-kubelet).
# Usage: kubernetes_image.sh SOURCE_DIR DEB KUBELET_DEB FAKE_NVML_LIBRARY WORK_DIR
# Exit 0: served; 77: cannot run here (not root, no apt lists, a package not on this host); else failed.
set -euo pipefail
source_dir=$1 deb=$2 kubelet_deb=$3 fake_nvml=$4 work=$5
dockerfile=$source_dir/packaging/kubernetes/Dockerfile
daemonset=$source_dir/packaging/kubernetes/daemonset.yaml
skip() { echo "skip: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root (chroot, mounts, a network namespace)"
for tool in apt-get dpkg-query unshare chroot ip curl python3; do
    command -v "$tool" >/dev/null || skip "$tool is not installed"
done
python3 -c 'import yaml' 2>/dev/null || skip "python3-yaml is not installed"
ls /var/lib/apt/lists/*_Packages* >/dev/null 2>&1 || skip "no apt package lists (apt-get update)"
rm -rf "$work" && mkdir -p "$work"

# The Dockerfile's install command: its arguments after --no-install-recommends, up to `&&`.
install_line=$(tr '\n' ' ' <"$dockerfile" | sed 's/\\ / /g' | grep -o 'apt-get install [^&]*')
echo "Dockerfile: $install_line"
case $install_line in *--no-install-recommends*) ;; *) echo "no --no-install-recommends"; exit 1 ;; esac
args=()
for word in ${install_line#apt-get install}; do
    case $word in
        -*) ;;
        /tmp/gua_*.deb) args+=("$deb") ;;
        /tmp/gua-kubelet_*.deb) args+=("$kubelet_deb") ;;
        *) args+=("$word") ;;
    esac
done
user=$(sed -n 's/^USER \([0-9]*:[0-9]*\)$/\1/p' "$dockerfile")
entrypoint=$(sed -n 's/^ENTRYPOINT \["\(.*\)"\]$/\1/p' "$dockerfile")
[ -n "$user" ] && [ -n "$entrypoint" ] || { echo "Dockerfile: no USER uid:gid or ENTRYPOINT"; exit 1; }

# What apt installs on a system with nothing installed (smaller than bookworm-slim, which also has
# the Priority: required set; nothing there is a library gua loads).
: >"$work/status"
apt-get install -s -y --no-install-recommends -o Dir::State::status="$work/status" \
    -o Debug::NoLocking=1 "${args[@]}" >"$work/apt.txt" 2>&1 || { cat "$work/apt.txt"; exit 1; }
packages=$(sed -n 's/^Inst \([^ ]*\) .*/\1/p' "$work/apt.txt" | grep -vxE 'gua|gua-kubelet')
echo "apt installs: gua gua-kubelet" $packages
case " ${args[*]} " in *" $kubelet_deb "*) ;; *) echo "the Dockerfile does not install gua-kubelet"; exit 1 ;; esac

# The root tree: merged /usr as in bookworm, the packages' files, then the .deb's.
root=$work/root
mkdir -p "$root"/usr/{bin,sbin,lib,lib64} "$root"/{etc,proc,dev,tmp,var/lib/gua}
for d in bin sbin lib lib64; do ln -s usr/$d "$root/$d"; done
for p in $packages; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
        skip "$p (from the image's apt resolution) is not installed on this host"
    dpkg-query -L "$p" | grep '^/' | grep -vxE '/|/\.|/(bin|sbin|lib|lib64)' >>"$work/files"
done
sort -u "$work/files" | tar -C / -cf - --no-recursion -T - 2>/dev/null |
    tar -C "$root" -xf - --keep-directory-symlink
for d in "$deb" "$kubelet_deb"; do
    dpkg-deb --fsys-tarfile "$d" | tar -C "$root" -xf - --keep-directory-symlink
done
# The NVIDIA runtime's part: the driver library mounted, then ldconfig (as the image's triggers).
cp "$fake_nvml" "$root/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1"
ldconfig -r "$root"

# The DaemonSet container's args, env and metrics port.
mapfile -t container < <(python3 - "$daemonset" <<'EOF'
import sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
c = doc["spec"]["template"]["spec"]["containers"][0]
port = next(p["containerPort"] for p in c["ports"] if p["name"] == "metrics")
print(port)
print(" ".join(f"{e['name']}={e['value']}" for e in c.get("env", [])))
for a in c["args"]:
    print(a)
EOF
)
port=${container[0]}
read -ra env_vars <<<"${container[1]}"
cmd=("$entrypoint" "${container[@]:2}")
echo "container: ${env_vars[*]} ${cmd[*]} (as $user, metrics on port $port)"

cat >"$work/scenario.json" <<'EOF'
{"driver_version": "550.54.15", "devices": [{"util": [[0, 90]]}, {"util": [[0, 0]]}]}
EOF
cat >"$work/run.sh" <<EOF
set -e
ip link set lo up
mount --bind "$root" "$root" && mount -o remount,bind,ro "$root"
mount -t proc proc "$root/proc" && mount --rbind /dev "$root/dev"
mount -t tmpfs -o mode=1777 tmpfs "$root/tmp"
mkdir -p "$work/db" && chown $user "$work/db" && mount --bind "$work/db" "$root/var/lib/gua"
cp "$work/scenario.json" "$root/tmp/scenario.json" && chmod 644 "$root/tmp/scenario.json"
env -i ${env_vars[*]} GUA_FAKE_NVML_SCENARIO=/tmp/scenario.json \
    $(command -v chroot) --userspec=$user "$root" ${cmd[*]} >"$work/daemon.log" 2>&1 &
daemon=\$!
for i in \$(seq 1 100); do
    if curl -sf "http://127.0.0.1:$port/metrics" >"$work/metrics.txt" &&
        grep -q '^gua_build_info{' "$work/metrics.txt"; then
        kill \$daemon; wait \$daemon || true
        echo "served /metrics: \$(grep -c '^gua_' "$work/metrics.txt") samples"
        # The kubelet source: the module loads from where gua-kubelet put it (no kubelet here,
        # so its answers are "unknown"; a module that cannot load stops the daemon).
        printf '[allocations]\\nkubelet_socket = "/tmp/kubelet.sock"\\n' >"$root/tmp/kubelet.toml"
        env -i GUA_FAKE_NVML_SCENARIO=/tmp/scenario.json $(command -v chroot) --userspec=$user \\
            "$root" $entrypoint daemon --db /tmp/kubelet.db --config /tmp/kubelet.toml \\
            --interval 500ms --ticks 2 --quiet >"$work/kubelet.log" 2>&1 ||
            { echo "with kubelet_socket set, gua daemon failed:"; cat "$work/kubelet.log"; exit 1; }
        echo "loaded the kubelet module"
        exit 0
    fi
    kill -0 \$daemon 2>/dev/null || { wait \$daemon && rc=0 || rc=\$?; echo "the container's command exited \$rc:"; cat "$work/daemon.log"; exit 1; }
    sleep 0.2
done
kill \$daemon; echo "no /metrics on port $port within 20 s:"; cat "$work/daemon.log"; exit 1
EOF
unshare -m -n sh "$work/run.sh"
