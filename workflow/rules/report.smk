# The report: latexmk on paper/report.tex and its parts, beside the generated tables and figures.


rule report:
    """latexmk on paper/report.tex and its parts paper/sections/, copied beside generated/."""
    input:
        tex="paper/report.tex",
        sections=sorted(str(p) for p in pathlib.Path("paper/sections").glob("*.tex")),
        generated=FIGURES + CLAIMS + CLAIMS_COUNTS + NS3_COMPARE + [f"{GEN}/{t}.tex" for t in ("fidelity", "testbed", "summary")]
            + [f"{GEN}/headline_{k}.tex" for k in PAPERS] + [f"{GEN}/paper_profile.tex", f"{GEN}/claim_verdicts.tex", f"{GEN}/transfer_length_utsumi2022.tex", f"{GEN}/transfer_length_prefix_utsumi2022.tex", f"{GEN}/not_run.tex",
                                                                          f"{GEN}/repetition_rounds.tex"],
    output:
        f"{RES}/report/report.pdf",
    log:
        f"{RES}/logs/report.log",
    shell:
        "log=$(realpath {log}) && "
        f"cp {{input.tex}} {RES}/report/report.tex && rm -rf {RES}/report/sections && "
        f"cp -r paper/sections {RES}/report/sections && cd {RES}/report && "
        'latexmk -pdf -interaction=nonstopmode -halt-on-error report.tex > "$log" 2>&1 '
        '|| (tail -40 "$log"; exit 1)'
