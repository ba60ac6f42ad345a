#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Slurm Epilog (slurm.conf: Epilog=/usr/share/gua/slurm/epilog.sh): removes the job from the
# job-mapping directory the prolog wrote: its line from every GPU file (a file left empty is
# removed), then its owner file. Same settings as prolog.sh; never fails the job.
set -u
PATH=/usr/sbin:/usr/bin:/sbin:/bin
dir=${GUA_MAPPING_DIR:-/run/gua/jobs}
. "$(dirname "$0")/mapping-lib.sh"

job=${SLURM_JOB_ID:-}
case $job in '' | *[!0-9]*) gua_log "no numeric SLURM_JOB_ID; nothing removed"; exit 0 ;; esac
[ -d "$dir" ] || exit 0
# Every GPU file, not only the job's GPUs: the epilog's environment need not list them.
for file in "$dir"/*; do
    name=${file##*/}
    case $name in '' | *[!0-9.]*) continue ;; esac
    gua_remove_job "$name" "$job"
done
rm -f "$dir/.gua-owners/$job"
exit 0
