# Tidy runs -> figures, claims tables and the report's other tables (R scripts in analysis/).
# Every R rule depends on its script, on every file the script sources (common.smk
# analysis_inputs: read from its source() calls) and on the registry labels of its runs'
# congestion controls, so an edit to any of them replans exactly the outputs it can change.


rule cc_labels_key:
    """The stamp of the registry labels a rule's runs use (common.smk cc_labels_stamp)."""
    output:
        touch("results/{tree}/keys/cc_labels.{key}"),
    wildcard_constraints:
        tree="[^/]+",
        key="[0-9a-f]{16}",
    log:
        "results/{tree}/logs/keys/cc_labels.{key}.log",
    localrule: True
    shell:
        "true > {log}"


rule figure:
    """An experiment's figure, by its figure script (config/experiments.csv), from its runs only."""
    input:
        runs=lambda wildcards: runs_of(wildcards.experiment),
        script=lambda wildcards: figure_script(wildcards.experiment),
        sourced=lambda wildcards: analysis_inputs(figure_script(wildcards.experiment), jobs_of(wildcards.experiment)),
    output:
        f"{GEN}/{{experiment}}.pdf",
    log:
        f"{RES}/logs/figure/{{experiment}}.log",
    shell:
        f"BBRLAB_EXPERIMENT={{wildcards.experiment}} Rscript {{input.script}} {RES}/runs/{{wildcards.experiment}} "
        f"{{output}} {config['warmup_s']} > {{log}} 2>&1 || (tail -20 {{log}}; exit 1)"


rule claims:
    """A paper's claims: reproduced values and verdicts as a table (.tex) and for machines (.csv);
    outside the paper profile each verdict with the paper profile's beside it (reference.smk)."""
    input:
        runs=claims_runs,
        claims=lambda wildcards: PAPERS[wildcards.claims].claims,
        script="analysis/claims.R",
        sourced=lambda wildcards: analysis_inputs("analysis/claims.R", claims_jobs(wildcards.claims)),
        reference=reference_claims_csv,
    output:
        tex=f"{GEN}/claims_{{claims}}.tex",
        csv=f"{GEN}/claims_{{claims}}.csv",
        counts=f"{GEN}/claims_{{claims}}_counts.tex",     # the verdict counts the paper's prose inputs
    log:
        f"{RES}/logs/claims_{{claims}}.log",
    shell:
        f"Rscript {{input.script}} {{input.claims}} {RES}/runs {{output.tex}} {config['warmup_s']} {{input.reference}}"
        " > {log} 2>&1 || (tail -20 {log}; exit 1)"


rule fidelity_table:
    input:
        runs=ALL_RUNS,
        script="analysis/fidelity.R",
        sourced=analysis_inputs("analysis/fidelity.R", PLAN_JOBS),
    output:
        f"{GEN}/fidelity.tex",
    log:
        f"{RES}/logs/fidelity.log",
    shell:
        f"Rscript {{input.script}} {RES}/runs {{output}} > {{log}} 2>&1 || (tail -20 {{log}}; exit 1)"


rule testbed_table:
    input:
        runs=ALL_RUNS,
        script="analysis/testbed_table.R",
        sourced=analysis_inputs("analysis/testbed_table.R", PLAN_JOBS),
    output:
        f"{GEN}/testbed.tex",
    log:
        f"{RES}/logs/testbed.log",
    shell:
        f"Rscript {{input.script}} {RES}/runs {{output}} > {{log}} 2>&1 || (tail -20 {{log}}; exit 1)"


rule point_labels_key:
    """The content stamp of the point labels (point_labels_stamp)."""
    output:
        touch(f"{GEN}/keys/point_labels.{{key}}"),
    wildcard_constraints:
        key="[0-9a-f]{16}",
    log:
        f"{RES}/logs/keys/point_labels.{{key}}.log",
    localrule: True
    shell:
        "true > {log}"


rule point_labels:
    """The sweep points' human labels as CSV (experiment,point,label), readable without runs."""
    input:
        point_labels_stamp(),
    output:
        f"{GEN}/point_labels.csv",
    log:
        f"{RES}/logs/point_labels.log",
    params:
        specs=[spec_path(e) for e in PROFILE_EXPERIMENTS],
    shell:
        f"{PY} labels {{params.specs}} --profile {PROFILE} --out {{output}} > {{log}} 2>&1 || (tail -20 {{log}}; exit 1)"


rule summary_table:
    """One row per paper (paper/papers.csv; its items from config/experiments.csv): the paper
    profile's items, claims per verdict, repetitions and archive (reference.smk), and outside the
    paper profile this profile's verdicts below them; one headline sentence per paper for its part."""
    input:
        papers=bbrexperiments.PAPERS,
        experiments=bbrexperiments.TABLE,
        generated=FIGURES + CLAIMS_CSV + REF_CLAIMS_CSV,
        coverage=f"{GEN}/archive_coverage.csv",
        script="analysis/summary.R",
        sourced=analysis_inputs("analysis/summary.R", PLAN_JOBS),
    output:
        table=f"{GEN}/summary.tex",
        headlines=[f"{GEN}/headline_{k}.tex" for k in PAPERS],
        sizes=f"{GEN}/paper_profile.tex",
        verdicts=f"{GEN}/claim_verdicts.tex",
    log:
        f"{RES}/logs/summary.log",
    params:
        archive=REF_ARCHIVE or "none",
    shell:
        f"Rscript {{input.script}} {GEN} {{output.table}} {{input.papers}} {{input.experiments}}"
        f" --profile {PROFILE} --reference {REF_GEN} --coverage {{input.coverage}} --archive {{params.archive}}"
        " > {log} 2>&1 || (tail -20 {log}; exit 1)"
