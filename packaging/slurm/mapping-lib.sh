# SPDX-License-Identifier: Apache-2.0
# Shared by prolog.sh and epilog.sh: the job-mapping directory's updates (atomic renames under
# a lock) and the Slurm-number-to-NVML-index translation. Sourced with $dir set.

gua_log() {
    echo "gua slurm mapping: $*" >&2
}

# Keeps only characters a user or account name may hold.
gua_plain() {
    printf '%s' "$1" | tr -cd 'A-Za-z0-9_.:+-' | cut -c1-64
}

gua_prepare_dir() {
    mkdir -p "$dir/.gua-owners" && chmod 755 "$dir" "$dir/.gua-owners" && return 0
    gua_log "cannot create $dir"
    return 1
}

# The NVML index of the GPU Slurm numbers $1 (its /dev/nvidia minor number).
gua_nvml_index() {
    proc=${GUA_NVIDIA_PROC:-/proc/driver/nvidia/gpus}
    smi=${GUA_NVIDIA_SMI:-nvidia-smi}
    bus=""
    for info in "$proc"/*/information; do
        [ -r "$info" ] || continue
        minor=$(sed -n 's/^Device Minor:[[:space:]]*//p' "$info")
        if [ "$minor" = "$1" ]; then
            bus=$(basename "$(dirname "$info")")
            break
        fi
    done
    if [ -n "$bus" ] && command -v "$smi" >/dev/null 2>&1; then
        # Bus ids: /proc writes "0000:3b:00.0", nvidia-smi "00000000:3B:00.0"; compare the tails.
        want=$(echo "$bus" | tr 'A-F' 'a-f' | sed 's/^0*//')
        index=$("$smi" --query-gpu=index,pci.bus_id --format=csv,noheader 2>/dev/null |
            tr 'A-F' 'a-f' | tr -d ' ' |
            awk -F, -v want="$want" '{ b = $2; sub(/^0*/, "", b); if (b == want) print $1 }')
        case $index in '' | *[!0-9]*) ;; *) echo "$index"; return ;; esac
    fi
    [ -z "$bus" ] || gua_log "no NVML index for bus $bus; using Slurm's number $1"
    echo "$1"
}

# Rewrites DIR/$1 through a temporary file and a rename, under DIR/.gua-lock: $2 is a filter
# (a command reading the old lines and printing the new ones); an empty result removes the file.
gua_rewrite() {
    target="$dir/$1"
    (
        flock 9
        tmp=$(mktemp "$dir/.tmp.XXXXXX") || exit 0
        if [ -f "$target" ] && [ ! -L "$target" ]; then
            head -c 4096 "$target" | eval "$2" >"$tmp"
        else
            : | eval "$2" >"$tmp"
        fi
        if [ -s "$tmp" ]; then
            chmod 644 "$tmp"
            mv -f "$tmp" "$target"
        else
            rm -f "$tmp" "$target"
        fi
    ) 9>"$dir/.gua-lock"
}

gua_add_job() {
    gua_rewrite "$1" "{ grep -vx '$2'; echo '$2'; }"
}

gua_remove_job() {
    gua_rewrite "$1" "grep -vx '$2'"
}
