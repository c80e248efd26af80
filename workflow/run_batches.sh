#!/usr/bin/env bash
# Run a profile's experiments in batches, archiving each finished batch.
#
#   workflow/run_batches.sh [--cores N] [--commit] PROFILE EXPERIMENT...
#
# For each EXPERIMENT (a row of config/experiments.csv), in the order given: run its runs of
# PROFILE through the pipeline (runs only: no figures, claims or report), put its finished runs
# into the results archive data/PROFILE/ (bbrlab archive add), and with --commit commit that
# archive (and nothing else) to the current branch. Runs the archive already holds with this
# checkout's keys are restored, not rerun, so an interrupted batch resumes where it stopped; a
# run cut off by the end of a session is lost, never half-archived (bbrlab/data/archive.py).
# Progress goes to the terminal and to results/PROFILE/batches.log.
set -euo pipefail
cd "$(dirname "$0")/.."

cores=2 commit=0
while [[ $# -gt 0 && $1 == --* ]]; do
    case $1 in
        --cores) cores=$2; shift 2 ;;
        --commit) commit=1; shift ;;
        *) echo "run_batches.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
if [[ $# -lt 2 ]]; then
    sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
fi
profile=$1; shift
for exp in "$@"; do       # every name checked before anything runs
    if ! cut -d, -f1 config/experiments.csv | grep -qx "$exp"; then
        echo "run_batches.sh: $exp is not an experiment of config/experiments.csv" >&2
        exit 2
    fi
done

log=results/$profile/batches.log
mkdir -p "results/$profile"
say() { echo "$(date -u +%FT%TZ) $*" | tee -a "$log"; }

for exp in "$@"; do
    say "batch $exp: running its $profile runs"
    .venv/bin/snakemake --cores "$cores" --until run --keep-going \
        --config profile="$profile" "experiments=[\"$exp\"]" >>"$log.snakemake" 2>&1 \
        || say "batch $exp: some runs failed (see $log.snakemake); archiving the finished ones"
    if [[ -d results/$profile/runs/$exp ]]; then
        PYTHONPATH=mininet .venv/bin/python -m bbrlab archive add "results/$profile/runs" --experiment "$exp" --to "data/$profile" \
            2>&1 | tail -1 | while read -r line; do say "batch $exp: $line"; done
    fi
    if [[ $commit == 1 ]]; then
        for attempt in 1 2 3 4 5; do
            if git add "data/$profile" && git commit -q --only "data/$profile" \
                    -m "Results archive ($profile profile): $exp"; then
                say "batch $exp: committed"; break
            fi
            sleep 20
        done
    fi
done
say "batches done: $*"
