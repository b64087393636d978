#!/usr/bin/env bash
# Submits a passk evaluation to Slurm in SHARDS shards, and the merge of their results
# once every shard succeeded (--dependency=afterok on the whole array):
#
#   deploy/slurm/submit.sh SAMPLES PROBLEMS RESULTS_DIR SHARDS [SBATCH_OPTION...]
#
# PROBLEMS is a file or a bundled set's name. Options after SHARDS go to both sbatch
# calls (--partition, --account, --time). The merged results are RESULTS_DIR/merged.jsonl,
# the summary RESULTS_DIR/summary.json; each job's output is passk-*.out in the folder
# it is submitted from. PASSK_K sets pass@k's k (1,10,100).
set -euo pipefail
if [[ $# -lt 4 ]]; then
    echo "usage: $0 SAMPLES PROBLEMS RESULTS_DIR SHARDS [SBATCH_OPTION...]" >&2
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
# Absolute paths: the jobs may start in another folder, on another node.
PASSK_SAMPLES=$(realpath "$1")
PASSK_PROBLEMS=$2
[[ -e $PASSK_PROBLEMS ]] && PASSK_PROBLEMS=$(realpath "$PASSK_PROBLEMS")
PASSK_RESULTS_DIR=$(realpath -m "$3")
shards=$4
shift 4
export PASSK_SAMPLES PASSK_PROBLEMS PASSK_RESULTS_DIR
# --parsable prints the job id, then `;cluster` on a federation.
array=$(sbatch --parsable --array="0-$((shards - 1))" "$@" "$here/shard.sbatch")
array=${array%%;*}
merge=$(sbatch --parsable --dependency="afterok:$array" "$@" "$here/merge.sbatch")
merge=${merge%%;*}
echo "submitted: shards as job array $array ($shards tasks), the merge as job $merge after them"
echo "results: $PASSK_RESULTS_DIR/merged.jsonl and $PASSK_RESULTS_DIR/summary.json"
