# The paper profile's results archive as every report's reference: the summary table's headline
# and, beside each claim's verdict of another profile, the verdict of the paper profile.
#
# The reference is the archive the repository ships, data/paper (in the paper profile: the
# profile's own archive when config archive names one). Nothing here boots a testbed: an
# experiment counts as run in the paper profile when the archive holds every one of its
# paper-profile runs with this checkout's keys (common.smk archived()); in a profile other than
# paper those runs are unpacked into results/<profile>/reference/paper/runs/ (rule
# reference_run) and the claims evaluated on them (rule reference_claims, the paper profile's
# warm-up). An experiment the archive holds only in part, or stale, is not run in the paper
# profile as far as the report is concerned; generated/archive_coverage.csv says how much of it
# the archive holds and why the rest is missing.
import csv as _csv
import hashlib
import types as _types

import yaml as _yaml

REFERENCE = "paper"
if PROFILE == REFERENCE and ARCHIVE:
    REF_ARCHIVE = ARCHIVE
elif pathlib.Path(f"data/{REFERENCE}/manifest.csv").is_file():
    REF_ARCHIVE = f"data/{REFERENCE}"
else:
    REF_ARCHIVE = None
_REF_ROWS = bbrarchive.read_manifest(REF_ARCHIVE) if REF_ARCHIVE else {}
REF_WARMUP_S = _yaml.safe_load(pathlib.Path(f"config/{REFERENCE}.yaml").read_text())["warmup_s"]
REF_TREE = f"{RES}/reference/{REFERENCE}"
COVERAGE_COLUMNS = ["experiment", "paper", "points", "runs", "current", "stale", "missing", "experiment_s",
                    "missing_experiment_s", "host_cpu_s", "revisions", "first_archived", "last_archived"]


def _coverage():
    """One row per experiment of the reference profile (COVERAGE_COLUMNS): its points and runs, how many the
    reference archive holds current / stale / not at all, their experiment time (all, not held),
    the host CPU-seconds the current ones took, the revisions that ran them and when they were
    archived (first, last)."""
    rows = []
    for e in bbrexperiments.of_profile(EXPERIMENTS, REFERENCE):
        jobs = expand_spec(e.name, REFERENCE)
        held = [archived(j, _REF_ROWS) for j in jobs] if REF_ARCHIVE else [None] * len(jobs)
        listed = [(j["name"], j["point"], int(j["repetition"])) in _REF_ROWS for j in jobs]
        cur = [r for r in held if r is not None]
        stamps = sorted(r["archived_at"] for r in cur)
        rows.append([e.name, e.paper, len({j["point"] for j in jobs}), len(jobs), len(cur), sum(listed) - len(cur), len(jobs) - sum(listed),
                     round(sum(float(j["duration_s"]) for j in jobs)),
                     round(sum(float(j["duration_s"]) for j, r in zip(jobs, held) if r is None)),
                     round(sum(float(r["host_cpu_s"] or 0) for r in cur), 1),
                     " ".join(sorted({r["git_revision"][:7] for r in cur})),
                     stamps[0] if stamps else "", stamps[-1] if stamps else ""])
    return rows


COVERAGE = _coverage()
# The experiments run in the paper profile, as far as the reports are concerned: all their runs held.
REF_EXPERIMENTS = [r[0] for r in COVERAGE if r[3] > 0 and r[4] == r[3]]


def restore_group(held, root, stamp, clear=False):
    """One group of workflow/scripts/restore_runs.py: (job, manifest row, archive) triples to unpack
    below root/<experiment>/<point>/rep<k>, listed with their checksums in the stamp."""
    return {"root": str(root), "stamp": str(stamp), "clear": clear,
            "entries": [[str(where), j["name"], j["point"], int(j["repetition"]), row["sha256"]] for j, row, where in held]}


def reference_stamp(experiment):
    """The stamp of an experiment's paper-profile runs unpacked into REF_TREE (rule reference_run)."""
    return f"{REF_TREE}/restored/{experiment}.txt"


def entries_stamp(directory, name, checksums):
    """<directory>/<name>.<first 16 hex digits of a digest of the archive entries' `checksums`> (rule
    entries_stamp): a restore depends on it, so an entry replaced in the archive (rerun and
    archived again, with the same run key and a new tarball) is restored again, and what reads the
    restored runs is redone. The tarballs themselves are `ancient` inputs (in a clone their
    modification times say nothing), and a params function that takes `output` is not compared
    with the last run's (Snakemake evaluates it only when the job runs)."""
    digest = hashlib.sha256("\n".join(sorted(checksums)).encode()).hexdigest()
    return f"{directory}/{name}.{digest[:16]}"


def reference_entries_stamp(experiment):
    return entries_stamp(f"{REF_TREE}/entries", experiment,
                         [_REF_ROWS[(j["name"], j["point"], int(j["repetition"]))]["sha256"]
                          for j in expand_spec(experiment, REFERENCE)])


rule entries_stamp:
    """The stamp named by the checksums of the archive entries a restore unpacks (entries_stamp)."""
    output:
        touch("results/{tree}/entries/{name}.{digest}"),
    wildcard_constraints:
        tree="[^/]+/reference/[^/]+(/controls)?",
        name="[^/.]+",
        digest="[0-9a-f]{16}",
    localrule: True
    shell:
        "true"


def _reference_claims_runs(key):
    named = bbrexperiments.claims_experiments(PAPERS[key].claims)
    return [reference_stamp(e) for e in REF_EXPERIMENTS if e in named]


# Where each report finds the paper profile's claims CSVs: its own in the paper profile, else the
# reference's (only for papers with at least one experiment run in the paper profile).
if PROFILE == REFERENCE:
    REF_GEN = GEN
    REF_PAPERS = []
else:
    REF_GEN = f"{GEN}/reference"
    REF_PAPERS = [k for k in CLAIMS_PAPERS if _reference_claims_runs(k)]
REF_CLAIMS_CSV = [f"{REF_GEN}/claims_{k}.csv" for k in REF_PAPERS]
# The experiments those papers' claims name: the only ones unpacked into REF_TREE (the claims and
# the rounds table read no other).
REF_NAMED = [e for e in REF_EXPERIMENTS if any(reference_stamp(e) in _reference_claims_runs(k) for k in REF_PAPERS)]
REF_JOBS = [j for e in REF_NAMED for j in expand_spec(e, REFERENCE)]


def reference_claims_csv(wildcards):
    """The paper profile's claims CSV of this paper for another profile's claims table, or none."""
    return [f"{REF_GEN}/claims_{wildcards.claims}.csv"] if wildcards.claims in REF_PAPERS else []


rule archive_coverage:
    """How much of each paper-profile experiment the reference archive holds (COVERAGE_COLUMNS);
    rewritten when that changes (the rows are the rule's params)."""
    output:
        f"{GEN}/archive_coverage.csv",
    log:
        f"{RES}/logs/archive_coverage.log",
    params:
        rows=COVERAGE,
        columns=COVERAGE_COLUMNS,
    localrule: True
    script:
        "../scripts/write_rows.py"


rule not_run_table:
    """The paper-profile experiments the reference archive does not hold whole, and why
    (config/paper_not_run.csv; analysis/not_run.R)."""
    input:
        coverage=f"{GEN}/archive_coverage.csv",
        reasons="config/paper_not_run.csv",
        script="analysis/not_run.R",
        sourced=analysis_inputs("analysis/not_run.R", []),
    output:
        f"{GEN}/not_run.tex",
    log:
        f"{RES}/logs/not_run.log",
    shell:
        "Rscript {input.script} {input.coverage} {input.reasons} {output} > {log} 2>&1 || (tail -20 {log}; exit 1)"


def reference_claims_files(key):
    """What reference_claims reads for paper `key` besides the runs (derived.smk keys its stored
    results by these)."""
    return {"claims": PAPERS[key].claims, "script": "analysis/claims.R",
            "sourced": analysis_inputs("analysis/claims.R", REF_JOBS)}


if PROFILE != REFERENCE:

    rule reference_run:
        """An experiment's paper-profile runs unpacked from the reference archive, all in one job
        (never booted: only experiments the archive holds whole with this checkout's keys are
        planned); the stamp lists each run and its checksum."""
        input:
            entries=lambda wildcards: reference_entries_stamp(wildcards.experiment),
            tarballs=lambda wildcards: [ancient(str(bbrarchive.entry_path(REF_ARCHIVE, j["name"], j["point"], j["repetition"])))
                                        for j in expand_spec(wildcards.experiment, REFERENCE)],
        output:
            f"{REF_TREE}/restored/{{experiment}}.txt",
        log:
            f"{RES}/logs/reference/{{experiment}}.log",
        params:
            groups=lambda wildcards, output: [restore_group(
                [(j, _REF_ROWS[(j["name"], j["point"], int(j["repetition"]))], REF_ARCHIVE)
                 for j in expand_spec(wildcards.experiment, REFERENCE)], pathlib.Path(REF_TREE, "runs"), output[0])],
        localrule: True
        script:
            "../scripts/restore_runs.py"

    rule reference_claims:
        """A paper's claims evaluated on the paper-profile runs of the reference archive. claims.R
        lists every run below REF_TREE/runs, so the job waits for every restore into that tree (a
        restore replacing a run directory while it read them failed it)."""
        input:
            unpack(lambda wildcards: reference_claims_files(wildcards.claims)),
            runs=[reference_stamp(e) for e in REF_NAMED],
        output:
            tex=f"{REF_GEN}/claims_{{claims}}.tex",
            csv=f"{REF_GEN}/claims_{{claims}}.csv",
            counts=f"{REF_GEN}/claims_{{claims}}_counts.tex",
        log:
            f"{RES}/logs/reference/claims_{{claims}}.log",
        shell:
            f"Rscript {{input.script}} {{input.claims}} {REF_TREE}/runs {{output.tex}} {REF_WARMUP_S} > {{log}} 2>&1"
            " || (tail -20 {log}; exit 1)"


# ---- what each round of added repetitions settled (docs/paper-profile.md) ----
if PROFILE == REFERENCE:
    _ROUNDS_TREE, _ROUNDS_WARMUP, _ROUNDS_PAPERS = f"{RES}/runs", config["warmup_s"], list(CLAIMS_PAPERS)
else:
    _ROUNDS_TREE, _ROUNDS_WARMUP, _ROUNDS_PAPERS = f"{REF_TREE}/runs", REF_WARMUP_S, list(REF_PAPERS)


def _rounds_runs(wildcards):
    """The paper-profile runs the rounds table evaluates: the profile's own in the paper profile,
    else the reference archive's unpacked experiments."""
    if PROFILE == REFERENCE:
        return [r for k in _ROUNDS_PAPERS for r in claims_runs(_types.SimpleNamespace(claims=k))]
    return sorted({s for k in _ROUNDS_PAPERS for s in _reference_claims_runs(k)})


def repetition_rounds_files():
    """What repetition_rounds reads besides the runs (derived.smk keys its stored results by these)."""
    return {"table": "config/added_repetitions.csv", "papers": "paper/papers.csv",
            "claims": [PAPERS[k].claims for k in _ROUNDS_PAPERS], "script": "analysis/repetition_rounds.R",
            "sourced": analysis_inputs("analysis/repetition_rounds.R", REF_JOBS if PROFILE != REFERENCE else PLAN_JOBS)}


rule repetition_rounds:
    """Per paper and round of added repetitions: the claims it marked, settled and changed
    (analysis/repetition_rounds.R), on the paper profile's runs."""
    input:
        runs=_rounds_runs,
        **repetition_rounds_files(),
    output:
        tex=f"{GEN}/repetition_rounds.tex",
        csv=f"{GEN}/repetition_rounds.csv",
    log:
        f"{RES}/logs/repetition_rounds.log",
    shell:
        f"Rscript {{input.script}} {_ROUNDS_TREE} {{input.table}} {{output.tex}} {_ROUNDS_WARMUP} {{input.papers}}"
        " {input.claims} > {log} 2>&1 || (tail -20 {log}; exit 1)"
