#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Slurm Prolog (slurm.conf: Prolog=/usr/share/gua/slurm/prolog.sh, PrologFlags=Alloc): records
# which job holds which GPU in the job-mapping directory gua (and dcgm-exporter) read.
#
# Writes, for each GPU of the job, the file DIR/<NVML index> holding the job id (one id per line,
# dcgm-exporter's format; several lines when jobs share a card), and DIR/.gua-owners/<job id>
# with user= and account= lines (a directory: dcgm-exporter skips it). Slurm numbers GPUs by
# their /dev/nvidiaN minor number; NVML numbers them by PCI bus id. The two are joined through
# the bus id: /proc/driver/nvidia/gpus/<bus id>/information gives each minor number, and
# `nvidia-smi --query-gpu=index,pci.bus_id` each NVML index. Without either, the numbers are
# taken as equal (true on most hosts), and the log says so.
#
# Settings (environment, e.g. from a wrapper): GUA_MAPPING_DIR (default /run/gua/jobs),
# GUA_NVIDIA_SMI (default nvidia-smi), GUA_NVIDIA_PROC (default /proc/driver/nvidia/gpus).
# It never fails the job: problems are logged to stderr (slurmd's log) and it exits 0.
set -u
PATH=/usr/sbin:/usr/bin:/sbin:/bin
dir=${GUA_MAPPING_DIR:-/run/gua/jobs}
. "$(dirname "$0")/mapping-lib.sh"

job=${SLURM_JOB_ID:-}
case $job in '' | *[!0-9]*) gua_log "no numeric SLURM_JOB_ID; nothing recorded"; exit 0 ;; esac
gpus=${SLURM_JOB_GPUS:-${CUDA_VISIBLE_DEVICES:-}}
[ -n "$gpus" ] || exit 0 # a job without GPUs

gua_prepare_dir || exit 0
owner_tmp=$(mktemp "$dir/.gua-owners/.tmp.XXXXXX") || exit 0
{
    echo "user=$(gua_plain "${SLURM_JOB_USER:-}")"
    echo "account=$(gua_plain "${SLURM_JOB_ACCOUNT:-}")"
} >"$owner_tmp"
chmod 644 "$owner_tmp"
mv -f "$owner_tmp" "$dir/.gua-owners/$job"

for slurm_number in $(echo "$gpus" | tr ',' ' '); do
    case $slurm_number in '' | *[!0-9]*) continue ;; esac # a UUID or MIG name: not an index
    index=$(gua_nvml_index "$slurm_number")
    gua_add_job "$index" "$job"
done
exit 0
