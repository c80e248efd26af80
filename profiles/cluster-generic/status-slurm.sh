#!/bin/sh
# Job status for Snakemake's cluster-generic executor on SLURM: prints running, success or
# failed for the job id given (sbatch --parsable may append ";cluster"). Asks squeue, which
# knows finished jobs for MinJobAge seconds, then sacct (needs accounting).
id=${1%%;*}
state=$(squeue --noheader --states=all --format=%T --jobs "$id" 2>/dev/null | head -n 1)
[ -n "$state" ] || state=$(sacct --noheader --parsable2 -X --format=State --jobs "$id" 2>/dev/null | head -n 1)
case "${state%% *}" in
  COMPLETED) echo success ;;
  PENDING|CONFIGURING|RUNNING|COMPLETING|SUSPENDED|REQUEUED|REQUEUE_FED|REQUEUE_HOLD|RESIZING|SIGNALING|STAGE_OUT|STOPPED|RESV_DEL_HOLD|SPECIAL_EXIT)
    echo running ;;
  "") echo "status-slurm: job $id is unknown to squeue and sacct" >&2; echo failed ;;
  *) echo failed ;;
esac
