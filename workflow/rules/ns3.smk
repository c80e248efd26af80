# backend=ns3: the runs ns-3 refuses, listed; the kernel report's published / ns-3 / kernel tables.

# The ns-3 tree's runs that ns-3 refuses: (experiment, point, repetition, why), listed, not run.
NS3_REFUSED = sorted((j["name"], j["point"], j["repetition"], "; ".join(why))
                     for e in PROFILE_EXPERIMENTS for j in all_jobs_of(e) if (why := ns3_refusals(j))) if NS3 else []
# Published / ns-3 / kernel columns for these papers' claims (--config compare_ns3=[tang]): the kernel
# report's generated/ns3_compare_<paper>.tex from both trees' claims CSVs; run backend=ns3 first.
# With compare_ns3_linux=true the table gains a column from ns-3 under Linux's rules (ns3_rules=linux,
# results/<profile>-ns3-linux/; run that first too).
NS3_COMPARE_LINUX = bool(config.get("compare_ns3_linux", False))
NS3_COMPARE = [] if NS3 else [f"{GEN}/ns3_compare_{c}.tex" for c in config.get("compare_ns3") or []]


rule ns3_refused:
    """backend=ns3: the configured runs ns-3 cannot run (variant congestion controls, captures, ...),
    one line each with the reason; they are skipped, not failed."""
    output:
        f"{RES}/refused.csv",
    log:
        f"{RES}/logs/refused.log",
    params:
        rows=NS3_REFUSED,
    script:
        "../scripts/write_refused.py"


rule ns3_compare:
    """Per claim: published value, ns-3 value and verdict, kernel value and verdict, with the claims
    whose ns-3 and kernel verdicts differ marked (analysis/ns3_compare.R); with compare_ns3_linux=true
    also ns-3 under Linux's rules. The ns-3 trees' claims come from `snakemake --config backend=ns3
    [ns3_rules=linux]` (not built from here: a missing one stops this rule)."""
    input:
        kernel=f"{GEN}/claims_{{claims}}.csv",
        ns3=f"results/{PROFILE}-ns3/report/generated/claims_{{claims}}.csv",
        ns3_linux=[f"results/{PROFILE}-ns3-linux/report/generated/claims_{{claims}}.csv"] if NS3_COMPARE_LINUX else [],
        script="analysis/ns3_compare.R",
        sourced=analysis_inputs("analysis/ns3_compare.R", PLAN_JOBS),
    output:
        f"{GEN}/ns3_compare_{{claims}}.tex",
    log:
        f"{RES}/logs/ns3_compare_{{claims}}.log",
    shell:
        "Rscript {input.script} {input.kernel} {input.ns3} {output} {input.ns3_linux} > {log} 2>&1"
        " || (tail -20 {log}; exit 1)"
