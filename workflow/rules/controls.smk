# The shortened-transfer rule (docs/specs.md, "Transfer length"): its control runs and its evidence.
#
# A control run (bbrlab/experiment/controls.py) is the paper profile's run of a control point
# (mininet/specs/utsumi2022/transfer_length_controls.csv) at the spec's own duration_s, the
# paper's transfer, seeds 1-3. While a spec runs the paper's length in the paper profile its
# control runs are its own runs (the same keys), held in the paper profile's archive; once the
# rule has shortened it, they are held in the controls archive, data/paper-controls, with their
# keys unchanged. Either way the evidence table is computed from what the archives hold, in every
# profile, without booting anything:
#
#     snakemake --cores all control_runs        run the control runs neither archive holds
#                                              (into results/paper-controls/runs/)
#     bbrlab archive add results/paper-controls/runs --to data/paper-controls
#                                              (--to data/paper for a spec that runs 6000 s)
CONTROL_JOBS = [j for _row, j in bbrcontrols.jobs(workflow.basedir)]
CONTROL_TREE = bbrcontrols.TREE
TRANSFER_CONTROLS = bbrcontrols.TABLE
TRANSFER_CANDIDATES_S = [600, 1200, 2000]   # docs/specs.md "Transfer length"
CONTROL_ARCHIVES = [a for a in (bbrcontrols.ARCHIVE, f"data/{REFERENCE}")
                    if pathlib.Path(a, "manifest.csv").is_file()]
_CONTROL_ROWS = {a: bbrarchive.read_manifest(a) for a in CONTROL_ARCHIVES}


def control_held(job):
    """(manifest row, archive) of the first archive holding this control run current, else None."""
    for where in CONTROL_ARCHIVES:
        row = archived(job, _CONTROL_ROWS[where])
        if row is not None:
            return row, where
    return None


_CONTROL_HELD = [(j, *held) for j in CONTROL_JOBS for held in [control_held(j)] if held is not None]
# The paper profile's runs of the control points that are shorter than the paper's transfer (a
# shortened spec's), held in the reference archive: step 2's check (analysis/transfer_length_prefix.R).
_SHORT_HELD = [(j, row, REF_ARCHIVE) for c in CONTROL_JOBS if REF_ARCHIVE
               for j in expand_spec(c["name"], REFERENCE)
               if j["point"] == c["point"] and j["repetition"] == c["repetition"] and j["duration_s"] < c["duration_s"]
               for row in [archived(j, _REF_ROWS)] if row is not None]


def held_entries(held):
    """<archive>:<checksum> of each (job, manifest row, archive) held: what names their restore."""
    return [f"{where}:{row['sha256']}" for _j, row, where in held]


def control_job(wildcards):
    return find_job([j for j in CONTROL_JOBS if j["name"] == wildcards.experiment], wildcards)


def control_run_inputs(wildcards):
    job = control_job(wildcards)
    held = control_held(job)
    if held is not None:     # restored, not booted
        return {"key": key_stamp(CONTROL_TREE, job), "entry": entry_stamp(CONTROL_TREE, job, held[0]), "archived": ancient(
            str(bbrarchive.entry_path(held[1], job["name"], job["point"], job["repetition"])))}
    return {"key": key_stamp(CONTROL_TREE, job), "kernel": [KERNEL_STAMP] if BACKEND == "uml" else [],
            "modules": module_files([job]) if BACKEND == "uml" else []}


if BACKEND in ("uml", "native"):

    rule control_run:
        """One control run: the paper profile's run of a control point at the paper's length."""
        input:
            unpack(control_run_inputs),
        output:
            f"{CONTROL_TREE}/runs/{{experiment}}/{{point}}/rep{{rep}}/run.json",
        log:
            f"{CONTROL_TREE}/logs/{{experiment}}/{{point}}/rep{{rep}}.log",
        params:
            spec=lambda wildcards: spec_path(wildcards.experiment),
        threads: 1 if BACKEND == "uml" else workflow.cores
        priority: lambda wildcards: int(bbrresources.expected_cpu_s(control_job(wildcards)))
        resources:
            mem_mb=lambda wildcards: bbrresources.mem_mb(control_job(wildcards), BACKEND),
            runtime=lambda wildcards, attempt: bbrresources.runtime_min(control_job(wildcards), attempt),
        shell:
            f"{PY} run {{params.spec}} --profile {bbrcontrols.PROFILE} --full-length --out {CONTROL_TREE}/runs "
            f"--point {{wildcards.point}} --rep {{wildcards.rep}} --backend {BACKEND} "
            + (f"--kernel {KERNEL} " if BACKEND == "uml" else "")
            + "".join(f"--archive {a} " for a in CONTROL_ARCHIVES)
            + "2>&1 | tee {log}; exit ${{PIPESTATUS[0]}}"

    rule control_runs:
        """Every control run (held ones restored, the others run)."""
        input:
            [f"{CONTROL_TREE}/runs/{j['name']}/{j['point']}/rep{j['repetition']}/run.json" for j in CONTROL_JOBS],


rule transfer_length_runs:
    """The control runs the archives hold current, and the shortened paper-profile runs of their
    points, unpacked (never booted); the stamps list each run and its checksum. Its input is named
    by those checksums (reference.smk entries_stamp), so a newly archived or replaced run
    rewrites them."""
    input:
        entries=entries_stamp(f"{REF_TREE}/controls/entries", "held", held_entries(_CONTROL_HELD + _SHORT_HELD)),
    output:
        controls=f"{REF_TREE}/controls/restored.txt",
        short=f"{REF_TREE}/controls/restored_short.txt",
    log:
        f"{RES}/logs/reference/transfer_length_runs.log",
    params:
        groups=lambda wildcards, output: [
            restore_group(held, pathlib.Path(REF_TREE, "controls", name), stamp, clear=True)
            for name, held, stamp in (("runs", _CONTROL_HELD, output.controls), ("short", _SHORT_HELD, output.short))],
    localrule: True
    script:
        "../scripts/restore_runs.py"


def transfer_length_files(script):
    """What transfer_length (`script` analysis/transfer_length.R) and transfer_length_prefix
    (analysis/transfer_length_prefix.R) read besides the runs (derived.smk keys their stored results
    by these)."""
    return {"claims": "claims/utsumi2022.csv", "controls": TRANSFER_CONTROLS, "script": script,
            "sourced": analysis_inputs(script, CONTROL_JOBS)}


rule transfer_length:
    """The evidence table of the shortened-transfer rule (analysis/transfer_length.R)."""
    input:
        runs=rules.transfer_length_runs.output.controls,
        **transfer_length_files("analysis/transfer_length.R"),
    output:
        tex=f"{GEN}/transfer_length_utsumi2022.tex",
        csv=f"{GEN}/transfer_length_utsumi2022.csv",
        summary=f"{GEN}/transfer_length_utsumi2022_summary.csv",
    log:
        f"{RES}/logs/transfer_length_utsumi2022.log",
    params:
        candidates=" ".join(str(t) for t in TRANSFER_CANDIDATES_S),
    shell:
        f"Rscript {{input.script}} {{input.claims}} {{input.controls}} {REF_TREE}/controls/runs {{output.tex}}"
        f" {bbrcontrols.SEEDS} {{params.candidates}} > {{log}} 2>&1 || (tail -20 {{log}}; exit 1)"


rule transfer_length_prefix:
    """Step 2 of the rule on real runs: the shortened runs against their controls' first T s
    (analysis/transfer_length_prefix.R)."""
    input:
        runs=rules.transfer_length_runs.output,
        **transfer_length_files("analysis/transfer_length_prefix.R"),
    output:
        tex=f"{GEN}/transfer_length_prefix_utsumi2022.tex",
        csv=f"{GEN}/transfer_length_prefix_utsumi2022.csv",
    log:
        f"{RES}/logs/transfer_length_prefix_utsumi2022.log",
    shell:
        f"Rscript {{input.script}} {{input.claims}} {{input.controls}} {REF_TREE}/controls/runs"
        f" {REF_TREE}/controls/short {{output.tex}} > {{log}} 2>&1 || (tail -20 {{log}}; exit 1)"
