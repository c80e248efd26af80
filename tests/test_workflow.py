"""The pipeline's wiring, by dry runs (`snakemake -n`) in a copy of the repository's pipeline
files: the two things a newcomer does first (add an experiment, add a variant), the checks
that stop a plan whose table and tree disagree, and the content keys that decide what reruns.

No testbed boots. 'Up to date' is simulated: every planned output is created empty, then
`snakemake --touch --forceall` stamps them in the plan's order and records each job's
provenance, as a real run does (a content key acts through Snakemake's default rerun trigger
"set of input files has changed"; with `--rerun-triggers mtime` it would not).
"""
from __future__ import annotations

import csv
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

from bbrlab.data import archive as bbrarchive
from bbrlab.experiment import experiments, runkey, spec
from conftest import REPO

PIPELINE = ("Snakefile", "workflow", "config", "mininet", "analysis", "paper", "claims", "kernel", "envs",
            "profiles", "Vagrantfile")
# A small plan: three experiments of Ma et al. and one of Kim et al. (built-in BBR, BBQ, BBQ's
# drain and BBR-E), their papers' claims.
SMALL = ["--config", "experiments=[ma2019_fig03,ma2019_fig12,ma2019_fig13,kim2019_fig02]",
         "claims=[ma2019,kim2019]"]


def copy_pipeline(root):
    box = root / "box"
    box.mkdir()
    for name in PIPELINE:
        src = REPO / name
        if src.is_dir():
            shutil.copytree(src, box / name, ignore=shutil.ignore_patterns("__pycache__", "build", "*.o"))
        else:
            shutil.copy2(src, box / name)
    return box


def snakemake(box, *args, python=sys.executable):
    return subprocess.run([str(python), "-m", "snakemake", "--nolock", "--cores", "1", *args], cwd=box,
                          capture_output=True, text=True, timeout=600)


def plan(box, *args) -> dict:
    """{rule: [first output of each planned job]} of a dry run (which must succeed)."""
    res = snakemake(box, "-n", *args)
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-3000:]
    jobs = {}
    for rule, output in re.findall(r"^(?:local)?rule (\w+):\n(?:    .*\n)*?    output: ([^,\n]+)", out, re.M):
        jobs.setdefault(rule, []).append(output)
    return jobs


def refused(box, *args) -> str:
    """The error of a dry run that must fail at parse time."""
    res = snakemake(box, "-n", *args)
    out = res.stdout + res.stderr
    assert res.returncode != 0, out[-3000:]
    assert "Job stats" not in out
    return out


def make_up_to_date(box, *args, python=sys.executable):
    """Every output of the plan present and newer than its inputs, as after a complete run of
    Snakemake started with `python`."""
    res = snakemake(box, "-n", *args, python=python)
    for line in re.findall(r"^    output: (.+)$", res.stdout + res.stderr, re.M):
        for path in line.split(", "):
            (box / path).parent.mkdir(parents=True, exist_ok=True)
            (box / path).touch()
    res = snakemake(box, "--touch", "--forceall", *args, python=python)   # and each job's provenance
    assert res.returncode == 0, (res.stdout + res.stderr)[-3000:]
    assert plan(box, *args) == {}


@pytest.fixture
def box(tmp_path):
    return copy_pipeline(tmp_path)


# ---- a newcomer adds an experiment -----------------------------------------------------------

NEW = "ma2019_fig99"


def add_experiment(box, name=NEW):
    """The files a newcomer writes for a new experiment of an existing paper: spec, figure script,
    claims row, table row (and the report section's line showing the figure)."""
    spec_file = box / "mininet" / "specs" / "ma2019" / f"{name}.yaml"
    spec_file.write_text((box / "mininet" / "specs" / "ma2019" / "ma2019_fig01.yaml").read_text()
                         .replace("name: ma2019_fig01", f"name: {name}"))
    script = box / "analysis" / "figures" / "ma2019" / f"{name}.R"
    shutil.copy(box / "analysis" / "figures" / "ma2019" / "ma2019_fig01.R", script)
    claims = box / "claims" / "ma2019.csv"
    first = claims.read_text().splitlines()[1]
    with claims.open("a") as fh:
        fh.write(first.replace("ma2019-fig01-long", f"ma2019-{name}").replace(",ma2019_fig01,", f",{name},") + "\n")
    with (box / "config" / "experiments.csv").open("a") as fh:
        fh.write(f"{name},ma2019,Fig. 99,quick paper,mininet/specs/ma2019/{name}.yaml,"
                 f"analysis/figures/ma2019/{name}.R,paper/sections/ma2019.tex\n")
    return spec_file, script, claims


def test_a_new_experiment_is_planned_with_its_runs_figure_and_claims(box):
    before = len(plan(box)["run"])
    add_experiment(box)
    jobs = plan(box, "--config", f"experiments=[ma2019_fig01,{NEW}]", "claims=[ma2019]")
    runs = [r for r in jobs["run"] if f"/runs/{NEW}/" in r]
    assert runs == [f"results/quick/runs/{NEW}/base/rep1/run.json"]
    assert f"results/quick/report/generated/{NEW}.pdf" in jobs["figure"]
    assert jobs["claims"] == ["results/quick/report/generated/claims_ma2019.tex"]
    # and in the default plan: one more run and one more figure than the repository's
    assert len(plan(box)["run"]) == before + 1


@pytest.mark.parametrize("which", ["spec", "figure script", "claims file"])
def test_a_missing_file_of_a_listed_experiment_stops_the_plan(box, which):
    spec_file, script, claims = add_experiment(box)
    missing = {"spec": spec_file, "figure script": script, "claims file": claims}[which]
    missing.unlink()
    err = refused(box)
    assert str(missing.relative_to(box)) in err and NEW in err


@pytest.mark.parametrize("which", ["spec", "figure script"])
def test_a_file_the_table_does_not_list_stops_the_plan(box, which):
    spec_file, script, _ = add_experiment(box)
    table = box / "config" / "experiments.csv"
    table.write_text("".join(line for line in table.read_text().splitlines(keepends=True)
                             if not line.startswith(f"{NEW},")))
    if which == "figure script":
        spec_file.unlink()
    err = refused(box)
    listed = {"spec": spec_file, "figure script": script}[which]
    assert f"{listed.relative_to(box)} is not listed in config/experiments.csv" in err


def test_a_spec_of_another_name_stops_the_plan(box):
    spec_file, _, _ = add_experiment(box)
    spec_file.write_text(spec_file.read_text().replace(f"name: {NEW}", "name: ma2019_fig98"))
    err = refused(box)
    assert NEW in err and "ma2019_fig98" in err


def test_every_spec_names_its_rows_paper_and_another_stops_the_plan(tmp_path):
    """One paper key: a spec's `paper:` (its paper's key) agrees with its row's paper in the
    experiments table, for every shipped spec; a spec naming another paper is refused, naming both."""
    experiments_table, papers = experiments.load(REPO)
    assert experiments.problems(REPO, experiments_table, papers) == []
    named = [e for e in experiments_table.values() if e.paper and "paper:" in (REPO / e.spec).read_text()]
    assert len(named) > 30
    box = copy_pipeline(tmp_path)
    spec_file = box / "mininet" / "specs" / "ma2019" / "ma2019_fig01.yaml"
    text = spec_file.read_text()
    assert "paper: ma2019\n" in text
    spec_file.write_text(text.replace("paper: ma2019\n", "paper: kim2019\n"))
    err = refused(box)
    assert "ma2019_fig01" in err and "paper: kim2019" in err and "is ma2019" in err


# ---- a newcomer adds a variant ---------------------------------------------------------------

def test_a_new_variant_is_built_alone_and_reruns_nothing(box):
    make_up_to_date(box, *SMALL)
    variants = box / "kernel" / "variants"
    shutil.copy(variants / "bbq_drain.patch", variants / "zz_drain.patch")
    (variants / "zz_drain_math.h").write_text("/* the new variant's helpers */\n")
    registry = box / "mininet" / "bbrlab" / "experiment" / "variants.yaml"
    registry.write_text(registry.read_text().replace(
        "\nvariants:\n", "\nvariants:\n  zz_drain:\n    label: ZZ drain\n    params: {}\n", 1))
    assert plan(box, *SMALL) == {}                      # no other module, no run
    jobs = plan(box, *SMALL, "--", "build/modules/zz_drain.ko")
    assert jobs["variant_module"] == ["build/modules/zz_drain.ko"]
    assert set(jobs) <= {"variant_module", "variant_params"}
    # a spec may name it at once
    s = spec.load(box / "mininet" / "specs" / "ma2019" / "ma2019_fig12.yaml", profile="quick")
    assert s["flows"][0]["cc"] == "bbq_drain"


def test_a_changed_variant_parameter_rebuilds_that_module_and_its_runs_only(box):
    make_up_to_date(box, *SMALL)
    registry = box / "mininet" / "bbrlab" / "experiment" / "variants.yaml"
    text = registry.read_text()
    assert "alpha_us: {default: 3000," in text
    registry.write_text(text.replace("alpha_us: {default: 3000,", "alpha_us: {default: 3001,"))
    jobs = plan(box, *SMALL)
    assert jobs["variant_module"] == ["build/modules/bbq.ko"]
    assert sorted(jobs["run"]) == ["results/quick/runs/ma2019_fig13/f1_cc=bbq__f2_cc=bbq/rep1/run.json"]


# ---- what an edit to a spec reruns -----------------------------------------------------------

FIG03 = "mininet/specs/ma2019/ma2019_fig03.yaml"


def edit(box, path, old, new):
    text = (box / path).read_text()
    assert old in text
    (box / path).write_text(text.replace(old, new, 1))


def test_a_comment_or_description_in_a_spec_reruns_nothing(box):
    make_up_to_date(box, *SMALL)
    (box / FIG03).write_text("# a newcomer's note\n" + (box / FIG03).read_text())
    assert plan(box, *SMALL) == {}
    text = (box / FIG03).read_text()
    (box / FIG03).write_text(re.sub(r"^description: .*$", "description: said another way", text, flags=re.M))
    assert plan(box, *SMALL) == {}


def test_a_changed_sweep_value_reruns_that_point_only(box):
    make_up_to_date(box, *SMALL)
    edit(box, FIG03, "bottleneck.rate_mbps: [10, 100, 400]", "bottleneck.rate_mbps: [10, 100, 200]")
    jobs = plan(box, *SMALL)
    assert jobs["run"] == ["results/quick/runs/ma2019_fig03/rate_mbps=200/rep1/run.json"]
    # downstream: that figure and the claims that name the experiment, not Kim et al.'s
    assert jobs["figure"] == ["results/quick/report/generated/ma2019_fig03.pdf"]
    assert jobs["claims"] == ["results/quick/report/generated/claims_ma2019.tex"]


def test_a_changed_parameter_reruns_that_specs_runs_only(box):
    make_up_to_date(box, *SMALL)
    edit(box, FIG03, "    duration_s: 30\n", "    duration_s: 31\n")
    jobs = plan(box, *SMALL)
    assert sorted(jobs["run"]) == sorted(f"results/quick/runs/ma2019_fig03/rate_mbps={r}/rep1/run.json"
                                         for r in (10, 100, 400))
    assert "variant_module" not in jobs and "kernel" not in jobs


# ---- the run key -----------------------------------------------------------------------------

def fig03_jobs(path=REPO / FIG03):
    return spec.expand(spec.load(path, profile="quick"))


def test_run_key_ignores_documentation_and_sees_everything_else():
    job = fig03_jobs()[0]
    key = runkey.run_key(job)
    assert re.fullmatch(r"[0-9a-f]{64}", key)
    for field, value in (("description", "other words"), ("point_label", "another label"),
                         ("items", "Fig. 99"), ("paper", "x"), ("run_key", "0"), ("repetitions", 9)):
        assert runkey.run_key(dict(job, **{field: value})) == key, field
    for field, value in (("seed", job["seed"] + 1), ("duration_s", job["duration_s"] + 1),
                         ("profile", "paper"), ("clock", "real")):
        assert runkey.run_key(dict(job, **{field: value})) != key, field
    flows = [dict(job["flows"][0], label="another label")] + job["flows"][1:]
    assert runkey.run_key(dict(job, flows=flows)) != key
    # the fields the runner adds before it records the key in run.json
    assert runkey.run_key(dict(job, backend="uml", modules=[{"name": "bbq"}])) == key
    # the order of the keys does not matter
    assert runkey.run_key(dict(reversed(list(job.items())))) == key


def test_a_modules_key_ignores_comments_and_sees_code(tmp_path):
    """A corrected comment in a variant's patch or header leaves its archived runs current; a
    changed token of code (a gain, an operator) does not."""
    src = REPO / "kernel" / "variants"
    vdir = tmp_path / "variants"
    shutil.copytree(src, vdir)
    key = runkey.module_source_key("bbq", vdir)
    header = vdir / "bbq_math.h"
    text = header.read_text()
    assert "/*" in text and "return" in text
    header.write_text(text.replace("/*", "/* a corrected explanation,\n * over two lines.\n */\n/*", 1)
                      .replace("\t", "    ", 3))
    assert runkey.module_source_key("bbq", vdir) == key
    patch = vdir / "bbq.patch"
    ptext = patch.read_text()
    patch.write_text(ptext.replace("+/*", "+/* one more comment line\n+ */\n+/*", 1))
    assert runkey.module_source_key("bbq", vdir) == key
    header.write_text(text.replace("return", "return 1 +", 1))
    assert runkey.module_source_key("bbq", vdir) != key
    header.write_text(text)
    code_line = "+\tif (bbr->pacing_gain > BBR_UNIT)\t/* BBQ: rho elapsed, or BBR's exit */"
    assert code_line in ptext
    patch.write_text(ptext.replace(code_line, code_line.replace(" > ", " >= ", 1), 1))
    assert runkey.module_source_key("bbq", vdir) != key


def test_points_and_repetitions_have_their_own_keys():
    keys = [runkey.run_key(j) for e in experiments.of_profile(experiments.load(REPO)[0], "paper")
            for j in spec.expand(spec.load(REPO / e.spec, profile="paper"))]
    assert len(keys) == len(set(keys))


# ---- figure scripts take their experiment from the pipeline ---------------------------------

@pytest.mark.skipif(not (shutil.which("Rscript") and shutil.which("pdftotext")), reason="needs R and pdftotext")
def test_a_figure_script_draws_the_experiment_the_pipeline_names(tmp_path):
    """The figure rule passes the experiment (BBRLAB_EXPERIMENT); a script run by hand falls
    back to its file name. A renamed copy of Fig. 1's script shows both."""
    import os
    sys.path.insert(0, str(REPO / "tests" / "analysis"))
    import synth_runs
    tree = synth_runs.make_fig01_tree(tmp_path / "results")
    analysis = tmp_path / "analysis"
    shutil.copytree(REPO / "analysis", analysis)
    registry = tmp_path / "mininet" / "bbrlab" / "experiment"      # the labels come from the registry
    registry.mkdir(parents=True)
    shutil.copy(REPO / "mininet" / "bbrlab" / "experiment" / "variants.yaml", registry)
    script = analysis / "figures" / "ma2019" / "renamed.R"
    shutil.copy(analysis / "figures" / "ma2019" / "ma2019_fig01.R", script)

    def text(env):
        out = tmp_path / f"{env or 'none'}.pdf"
        res = subprocess.run(["Rscript", str(script), str(tree), str(out), "10"], capture_output=True, text=True,
                             env={k: v for k, v in dict(os.environ, BBRLAB_EXPERIMENT=env).items() if v})
        assert res.returncode == 0, res.stderr[-2000:]
        return subprocess.run(["pdftotext", str(out), "-"], capture_output=True, text=True).stdout

    assert "No valid run" not in text("ma2019_fig01")
    assert "No valid run of renamed" in text("")


# ---- what an edit to the analysis replans ----------------------------------------------------

GEN = "results/quick/report/generated"


def test_an_edit_to_a_library_file_the_claims_source_replans_the_claims_tables(box):
    make_up_to_date(box, *SMALL)
    # verdict.R is reached only through load.R's loop over its library files
    (box / "analysis" / "lib" / "verdict.R").write_text((box / "analysis" / "lib" / "verdict.R").read_text()
                                                        + "\n# a changed reading\n")
    jobs = plan(box, *SMALL)
    assert sorted(jobs["claims"]) == [f"{GEN}/claims_kim2019.tex", f"{GEN}/claims_ma2019.tex"]
    assert "run" not in jobs and "variant_module" not in jobs


def test_an_edit_to_a_papers_common_R_replans_that_papers_figures_only(box):
    make_up_to_date(box, *SMALL)
    common = box / "analysis" / "figures" / "kim2019" / "common.R"
    common.write_text(common.read_text() + "\n# a changed helper\n")
    jobs = plan(box, *SMALL)
    assert jobs["figure"] == [f"{GEN}/kim2019_fig02.pdf"]            # not Ma et al.'s three
    assert "claims" not in jobs and "run" not in jobs


def test_a_new_source_line_is_a_new_input_at_once(box):
    make_up_to_date(box, *SMALL)
    common = box / "analysis" / "figures" / "kim2019" / "common.R"
    extra = box / "analysis" / "lib" / "kim_extra.R"
    extra.write_text("KIM_EXTRA <- 1\n")
    common.write_text(common.read_text() + '\nsource(file.path(script_dir, "..", "..", "lib", "kim_extra.R"))\n')
    make_up_to_date(box, *SMALL)
    extra.write_text("KIM_EXTRA <- 2\n")
    jobs = plan(box, *SMALL)
    assert jobs["figure"] == [f"{GEN}/kim2019_fig02.pdf"]


def test_a_source_call_whose_file_cannot_be_told_stops_the_plan(box):
    common = box / "analysis" / "figures" / "kim2019" / "common.R"
    common.write_text(common.read_text() + '\nsource(paste0(script_dir, "/extra.R"))\n')
    err = refused(box, *SMALL)
    assert "figures/kim2019/common.R" in err and "paste0" in err


def test_an_edited_label_replans_the_outputs_drawn_from_its_runs_only(box):
    make_up_to_date(box, *SMALL)
    registry = box / "mininet" / "bbrlab" / "experiment" / "variants.yaml"
    text = registry.read_text()
    assert text.count("    label: BBQ\n") == 1
    registry.write_text(text.replace("    label: BBQ\n", "    label: BBQ (Ma)\n"))
    jobs = plan(box, *SMALL)
    # BBQ flows run in Ma et al.'s Fig. 13 (mininet/specs/ma2019/ma2019_fig13.yaml), not in their
    # Fig. 12 (BBQ drain) nor Fig. 3 (BBR), nor in Kim et al.'s Fig. 2 (BBR, BBR-E)
    assert jobs["figure"] == [f"{GEN}/ma2019_fig13.pdf"]
    assert jobs["claims"] == [f"{GEN}/claims_ma2019.tex"]
    assert "run" not in jobs and "variant_module" not in jobs


# ---- what a replaced archive entry replans --------------------------------------------------

def archive_copy(box, archive, experiments=None):
    """The shipped archive `archive` (data/paper, data/paper-controls) in the box: its manifest rows
    of `experiments` (all when None) and their tarballs."""
    src, dst = REPO / archive, box / archive
    lines = (src / "manifest.csv").read_text().splitlines(keepends=True)
    kept = [line for line in lines[1:] if experiments is None or line.split(",", 1)[0] in experiments]
    for line in kept:
        experiment, point, rep = line.split(",")[:3]
        tarball = bbrarchive.entry_path(archive, experiment, point, rep)
        (box / tarball).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / tarball, box / tarball)
    (dst / "manifest.csv").write_text(lines[0] + "".join(kept))


def replace_entry(box, archive, experiment):
    """The first manifest row of `experiment` as after a rerun archived again: the same run key, the
    tarball's checksum another one."""
    manifest = box / archive / "manifest.csv"
    with manifest.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    row = next(r for r in rows if r["experiment"] == experiment)
    row["sha256"] = "f" * 64 if row["sha256"] != "f" * 64 else "e" * 64
    with manifest.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def test_a_replaced_archive_entry_is_restored_again_and_what_reads_it_redone(box):
    """The quick report shows the paper profile's verdicts from the shipped archive (rule
    reference_run unpacks it) and the transfer-length tables from its control runs (rule
    transfer_length_runs). An entry rerun and archived again keeps its run key; its tarball, an
    `ancient` input, says nothing in a clone: the restore must still be redone."""
    archive_copy(box, "data/paper", {"ma2019_fig12"})
    archive_copy(box, "data/paper-controls")
    make_up_to_date(box, *SMALL)
    replace_entry(box, "data/paper", "ma2019_fig12")
    jobs = plan(box, *SMALL)
    assert jobs["reference_run"] == ["results/quick/reference/paper/restored/ma2019_fig12.txt"]
    assert jobs["reference_claims"] == [f"{GEN}/reference/claims_ma2019.tex"]
    assert "run" not in jobs and "transfer_length_runs" not in jobs
    make_up_to_date(box, *SMALL)
    replace_entry(box, "data/paper-controls", "utsumi2022_fig04")
    jobs = plan(box, *SMALL)
    assert jobs["transfer_length_runs"] == ["results/quick/reference/paper/controls/restored.txt"]
    assert "reference_run" not in jobs and "run" not in jobs


# ---- what the quick report derives from the paper archive, stored (workflow/rules/derived.smk) --

DERIVED_RULES = ("reference_claims", "repetition_rounds", "transfer_length", "transfer_length_prefix")


def store_derived(box, *args):
    res = snakemake(box, "derived_store", *args)
    assert res.returncode == 0, (res.stdout + res.stderr)[-3000:]


def test_a_stored_derived_result_is_used_until_an_input_changes(box):
    """The paper profile's verdicts, the rounds table and the transfer-length tables are taken from
    data/paper-derived while their key (the inputs' contents, the archive entries, the parameters,
    the R installation) is stored; a replaced archive entry or an edit to a file the scripts
    source computes them again from the runs, and config derived=false computes everything."""
    archive_copy(box, "data/paper", {"ma2019_fig12"})
    archive_copy(box, "data/paper-controls")
    make_up_to_date(box, *SMALL)
    store_derived(box, *SMALL)
    jobs = plan(box, *SMALL)
    assert not set(DERIVED_RULES) & set(jobs), jobs.keys()
    assert "reference_run" not in jobs and "transfer_length_runs" not in jobs
    target = f"{GEN}/reference/claims_ma2019.tex"
    (box / target).unlink()
    assert plan(box, *SMALL, "--", target) == {"reference_claims_derived": [target]}
    assert plan(box, *SMALL, "derived=false", "--", target) == {"reference_claims": [target]}
    replace_entry(box, "data/paper-controls", "utsumi2022_fig04")         # an archive entry is a key
    jobs = plan(box, *SMALL)
    assert {"transfer_length", "transfer_length_prefix"} <= jobs.keys()
    assert "transfer_length_derived" not in jobs and "reference_claims" not in jobs
    (box / "analysis" / "lib" / "verdict.R").write_text((box / "analysis" / "lib" / "verdict.R").read_text()
                                                        + "\n# a changed reading\n")
    jobs = plan(box, *SMALL)
    assert jobs["reference_claims"] == [f"{GEN}/reference/claims_ma2019.tex"]
    assert "reference_claims_derived" not in jobs and "repetition_rounds" in jobs


def test_the_shipped_derived_results_are_current(tmp_path):
    """Every derived result the quick report needs is stored under its current key: a fresh
    clone's first command computes none of them from the runs (after archiving runs or changing
    the analysis: `snakemake --cores all derived_store`, then commit data/paper-derived)."""
    box = copy_pipeline(tmp_path)
    (box / "data").mkdir()
    for name in ("paper", "paper-controls", "paper-derived"):
        (box / "data" / name).symlink_to(REPO / "data" / name)
    jobs = plan(box)
    stale = set(DERIVED_RULES) & set(jobs)
    assert not stale, (f"data/paper-derived lacks the current key of {sorted(stale)}: run "
                       "`.venv/bin/snakemake --cores all derived_store` and commit data/paper-derived")
    assert {f"{r}_derived" for r in DERIVED_RULES} <= jobs.keys()


# ---- the same plan however Snakemake is started --------------------------------------------------

def test_the_interpreter_is_named_the_same_by_any_of_its_names_and_relative_to_the_checkout(tmp_path):
    from bbrlab.experiment import pipeline_config
    checkout = tmp_path / "repo"
    (checkout / ".venv" / "bin").mkdir(parents=True)
    real = checkout / ".venv" / "bin" / "python3"
    real.symlink_to(sys.executable)
    for name in ("python", "python3.11"):
        (checkout / ".venv" / "bin" / name).symlink_to("python3")
    for name in ("python", "python3", "python3.11"):
        assert pipeline_config.interpreter(checkout / ".venv" / "bin" / name, checkout) == ".venv/bin/python3"
    # outside the checkout: absolute; a name that is another interpreter: kept
    assert pipeline_config.interpreter(real, tmp_path / "elsewhere") == str(real)
    other = checkout / ".venv" / "bin" / "pypy3"
    other.write_text("")
    assert pipeline_config.interpreter(other, checkout) == ".venv/bin/pypy3"


def test_snakemake_started_by_another_name_of_its_python_reruns_nothing(box):
    """Up to date when started as `python3 -m snakemake`, still up to date as `python -m snakemake`:
    the rules' code (a rerun trigger) does not carry the name Snakemake was started with."""
    bindir = pathlib.Path(sys.executable).parent
    names = [bindir / n for n in ("python3", "python") if (bindir / n).exists()
             and (bindir / n).resolve() == pathlib.Path(sys.executable).resolve()]
    if len(names) < 2:
        pytest.skip(f"{bindir} has not both python3 and python for this interpreter")
    make_up_to_date(box, *SMALL, python=names[0])
    for exe in names:
        res = snakemake(box, "-n", *SMALL, python=exe)
        assert res.returncode == 0 and "Nothing to be done" in res.stdout + res.stderr, (exe, (res.stdout + res.stderr)[-2000:])
