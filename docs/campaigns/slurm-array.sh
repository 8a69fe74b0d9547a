#!/usr/bin/env bash
# A sharded mlasim campaign as a Slurm job array: each array task checks one shard of the
# scenarios and fuzzes one shard of the runs (`--shard auto` reads SLURM_ARRAY_TASK_ID, _MIN,
# _STEP and _COUNT), then a job that depends on the array merges the shards' reports.
#   sbatch docs/campaigns/slurm-array.sh            # from a checkout, mlasim installed in .venv
#SBATCH --job-name=mlasim-shard
#SBATCH --array=0-7
#SBATCH --cpus-per-task=4
#SBATCH --time=01:00:00
#SBATCH --output=reports/slurm-%A_%a.out
set -euo pipefail
out=reports/$SLURM_ARRAY_JOB_ID
mkdir -p "$out"
i=$SLURM_ARRAY_TASK_ID
# Exit 1 (a regression, a violation) still writes the reports; the merge judges them.
.venv/bin/mlasim check scenarios -j "$SLURM_CPUS_PER_TASK" --shard auto --json "$out/check-$i.json" \
  --junit "$out/check-$i.xml" || [[ $? -eq 1 ]]
.venv/bin/mlasim fuzz --seed 1 --runs 200000 -j "$SLURM_CPUS_PER_TASK" --shard auto --json "$out/fuzz-$i.json" \
  -o "$out/findings" || [[ $? -eq 1 ]]
# The last task to start submits the merge, after every task of the array has ended.
if [[ $i -eq $SLURM_ARRAY_TASK_MAX ]]; then
  sbatch --dependency="afterany:$SLURM_ARRAY_JOB_ID" --job-name=mlasim-merge --output="$out/merge.out" --wrap \
    ".venv/bin/mlasim merge $out/check-*.json -o $out/check.json && .venv/bin/mlasim merge $out/check-*.xml -o $out/check.xml && .venv/bin/mlasim merge $out/fuzz-*.json -o $out/fuzz.json"
fi
