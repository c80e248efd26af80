# Backend cross-check (docs/native-backend.md): `snakemake --cores all crosscheck` runs the
# experiments whose config/experiments.csv row lists profile `crosscheck` (mininet/specs/crosscheck/)
# on the uml backend (their own clock, virtual) and on the native backend (real clock, as root) into
# separate trees and prints per-metric differences (analysis/crosscheck.R). Not part of `all`. The
# onstart hook (runs.smk) refuses before anything runs when a side cannot run on this host.
rule crosscheck_run:
    """One run of a cross-check spec on one backend (uml: its own clock; native: the real clock)."""
    input:
        unpack(crosscheck_inputs),
    output:
        f"{XC}/{{backend}}/runs/{{experiment}}/{{point}}/rep{{rep}}/run.json",
    wildcard_constraints:
        backend="uml|native",
    log:
        f"{XC}/{{backend}}/logs/{{experiment}}/{{point}}/rep{{rep}}.log",
    threads: lambda wildcards: 1 if wildcards.backend == "uml" else workflow.cores   # native: alone on the host
    resources:
        mem_mb=lambda wildcards: bbrresources.mem_mb(crosscheck_job(wildcards), wildcards.backend),
        runtime=lambda wildcards, attempt: bbrresources.runtime_min(crosscheck_job(wildcards), attempt),
    params:
        spec=lambda wildcards: spec_path(wildcards.experiment),
        backend_args=lambda wildcards: f"--kernel {KERNEL}" if wildcards.backend == "uml" else "--clock real",
    shell:
        f"{PY} run {{params.spec}} --profile crosscheck --out {XC}/{{wildcards.backend}}/runs "
        "--point {wildcards.point} --rep {wildcards.rep} --backend {wildcards.backend} {params.backend_args} "
        "2>&1 | tee {log}; exit ${{PIPESTATUS[0]}}"


rule crosscheck:
    """Both backends' runs of the cross-check specs, compared metric by metric (printed, and kept)."""
    input:
        uml=crosscheck_runs("uml"),
        native=crosscheck_runs("native"),
        script="analysis/crosscheck.R",
        sourced=analysis_inputs("analysis/crosscheck.R", [j for e in CROSSCHECK for j in crosscheck_jobs(e)], XC),
    output:
        csv=f"{XC}/comparison.csv",
        md=f"{XC}/comparison.md",
    log:
        f"{XC}/logs/comparison.log",
    shell:
        f"Rscript {{input.script}} {XC}/uml/runs {XC}/native/runs {{output.csv}} {config['warmup_s']} uml,native"
        " 2>&1 | tee {log}; exit ${{PIPESTATUS[0]}}"
