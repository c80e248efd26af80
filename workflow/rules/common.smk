# Shared by the workflow/rules files: the profile's settings, the experiments table and the runs it
# expands to. Reading this file checks the tables: a listed experiment whose spec, figure
# script, report section or claims file is missing, or a spec or figure script that no row
# lists, stops the plan here, naming the experiment and the file.
import hashlib
import json
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(workflow.basedir) / "mininet"))
from bbrlab.data import archive as bbrarchive
from bbrlab.experiment import controls as bbrcontrols
from bbrlab.experiment import experiments as bbrexperiments
from bbrlab.experiment import pipeline_config as bbrpipeline
from bbrlab.host import modules as bbrmodules
from bbrlab.host import resources as bbrresources
from bbrlab.experiment import repetitions as bbrrepetitions
from bbrlab.experiment import rsources as bbrrsources
from bbrlab.experiment import runkey as bbrrunkey
from bbrlab.experiment import spec as bbrspec
from bbrlab.experiment import variants as bbrvariants

PROFILE = config["profile"]
BACKEND = config["backend"]                 # --config backend=native on a real host / the Vagrant VM
NS3 = BACKEND == "ns3"                      # simulated: a results tree of its own, no kernel, no modules
# ns-3's rules (backends/ns3_backend.py): "ns3" as ns-3 papers ran it; "linux": `cc: bbr` is the
# project's port of Linux's BBR and every BBR takes Linux's rate-sample rules. Each has its own tree.
NS3_RULES = config["ns3_rules"]
if NS3_RULES != "ns3" and not NS3:
    raise ValueError(f"config ns3_rules={NS3_RULES} is for backend=ns3 (backend is {BACKEND})")
NS3_TREE = {"ns3": "ns3", "linux": "ns3-linux"}
RES = f"results/{PROFILE}-{NS3_TREE[NS3_RULES]}" if NS3 else f"results/{PROFILE}"
KERNEL = "build/kernel/linux"
MODULES = "build/modules"
VAGRANT_UP = "build/vagrant/up"            # marker: the VM is up (backend=vagrant, bbrlab/host/vagrant.py)
# named the same however Snakemake was started and wherever the checkout is (pipeline_config.interpreter)
PY = f"PYTHONPATH=mininet {bbrpipeline.interpreter(sys.executable, workflow.basedir)} -m bbrlab"
GEN = f"{RES}/report/generated"
# The results archive (bbrlab/data/archive.py): runs it holds with this checkout's keys are restored
# from it instead of booted (no kernel, no module needed for them); stale ones rerun.
_archive = config["archive"]
if _archive == "auto":
    _archive = f"data/{PROFILE}" if BACKEND == "uml" and pathlib.Path(f"data/{PROFILE}/manifest.csv").is_file() else None
elif _archive == "none":
    _archive = None
elif not pathlib.Path(_archive, "manifest.csv").is_file():
    raise ValueError(f"config archive={_archive}: no results archive there (no {_archive}/manifest.csv)")
ARCHIVE = _archive
_ARCHIVE_ROWS = bbrarchive.read_manifest(ARCHIVE) if ARCHIVE else {}
_MODULE_KEYS = {}


def archived(job, rows=None):
    """The archive's row for this run when it holds it with this checkout's keys, else None
    (rows: another archive's manifest rows; default the profile's archive)."""
    return bbrarchive.held_row(_ARCHIVE_ROWS if rows is None else rows, job, _MODULE_KEYS)


class PlanError(ValueError):
    """The experiments table and the tree disagree; nothing is planned."""


EXPERIMENTS, PAPERS = bbrexperiments.load(workflow.basedir)
_problems = bbrexperiments.problems(workflow.basedir, EXPERIMENTS, PAPERS)
if _problems:
    raise PlanError("the experiments table and the tree disagree, nothing planned:\n  - "
                    + "\n  - ".join(_problems))


def _selected(key, known, what):
    """config[key] when given (each one of `known`), else None."""
    chosen = config.get(key)
    if chosen is None:
        return None
    unknown = [c for c in chosen if c not in known]
    if unknown:
        raise PlanError(f"config {key}: {', '.join(unknown)} not {what} (known: {', '.join(known)})")
    return chosen


_in_profile = [e.name for e in bbrexperiments.of_profile(EXPERIMENTS, PROFILE)]


def spec_path(experiment):
    return EXPERIMENTS[experiment].spec


def figure_script(experiment):
    return EXPERIMENTS[experiment].figure


_expanded = {}


def expand_spec(experiment, profile):
    """The resolved runs of an experiment's spec in a profile (cached); the spec must name the experiment."""
    if (experiment, profile) not in _expanded:
        jobs = bbrrepetitions.runs(spec_path(experiment), profile=profile)
        names = sorted({j["name"] for j in jobs})
        if names != [experiment]:
            raise PlanError(f"experiment {experiment}: its spec {spec_path(experiment)} has name"
                            f" {', '.join(names)}; the spec's name must be the experiment's")
        _expanded[(experiment, profile)] = jobs
    return _expanded[(experiment, profile)]


_only = _selected("experiments", _in_profile, f"experiments of profile {PROFILE} in config/experiments.csv")
# The experiments this profile runs, in table order (config `experiments` may narrow them; config
# archived_only=true to those the archive holds whole with this checkout's keys: nothing boots).
PROFILE_EXPERIMENTS = [e for e in _in_profile if _only is None or e in _only]
if config.get("archived_only", False):
    if not ARCHIVE:
        raise PlanError(f"config archived_only=true: profile {PROFILE} has no results archive "
                        f"(no data/{PROFILE}/manifest.csv, or archive=none)")
    PROFILE_EXPERIMENTS = [e for e in PROFILE_EXPERIMENTS
                           if all(archived(j) is not None for j in expand_spec(e, PROFILE))]
_papers_in_plan = [k for k in PAPERS if any(EXPERIMENTS[e].paper == k for e in PROFILE_EXPERIMENTS)]
_claims_only = _selected("claims", list(PAPERS), "papers of paper/papers.csv")
# The papers whose claims tables the report shows.
CLAIMS_PAPERS = _claims_only if _claims_only is not None else _papers_in_plan


def all_jobs_of(experiment):
    return expand_spec(experiment, PROFILE)


def ns3_refusals(job):
    from bbrlab.host.backends import ns3_backend
    return ns3_backend.refusals(job)


def jobs_of(experiment):
    """The experiment's runs this backend runs: on ns-3, those it accepts (the others are
    skipped and listed in results/<profile>-ns3/refused.csv, rule ns3_refused)."""
    jobs = all_jobs_of(experiment)
    return [j for j in jobs if not ns3_refusals(j)] if NS3 else jobs


def runs_of(experiment):
    return [f"{RES}/runs/{experiment}/{j['point']}/rep{j['repetition']}/run.json" for j in jobs_of(experiment)]


def find_job(jobs, wildcards):
    return next(j for j in jobs if j["point"] == wildcards.point and str(j["repetition"]) == wildcards.rep)


def run_job(wildcards):
    return find_job(jobs_of(wildcards.experiment), wildcards)


def key_stamp(tree, job):
    """The stamp file named by a run's content key (bbrlab/experiment/runkey.py): a run depends on it, so a
    changed resolved run makes a new stamp and reruns that run only."""
    return _stamp(tree, job, bbrrunkey.run_key(job))


def _stamp(tree, job, digest):
    """results/<tree>/keys/<experiment>/<point>/rep<k>.<first 16 hex digits of digest> (rule run_key)."""
    return f"{tree}/keys/{job['name']}/{job['point']}/rep{job['repetition']}.{digest[:16]}"


def entry_stamp(tree, job, row):
    """The stamp named by the checksum of the archive entry a run is restored from (manifest sha256): a
    restored run depends on it, so an entry replaced after its copy was restored (a stale run rerun
    and archived again, with new module keys but the same run key) is restored again. The tarball
    itself is an `ancient` input: in a clone its modification time says nothing."""
    return _stamp(tree, job, row["sha256"])


def module_files(jobs):
    """Testbed modules of the BBR variants these runs' flows use."""
    return [f"{MODULES}/{m}.ko" for m in bbrmodules.needed(jobs)]


ALL_RUNS = [r for e in PROFILE_EXPERIMENTS for r in runs_of(e)]
PLAN_JOBS = [j for e in PROFILE_EXPERIMENTS for j in jobs_of(e)]
# An experiment's figure; on ns-3 only when ns-3 runs all its points (a figure script expects them).
FIGURES = [f"{GEN}/{e}.pdf" for e in PROFILE_EXPERIMENTS
           if figure_script(e) and (not NS3 or len(jobs_of(e)) == len(all_jobs_of(e)))]
CLAIMS = [f"{GEN}/claims_{c}.tex" for c in CLAIMS_PAPERS]
CLAIMS_CSV = [f"{GEN}/claims_{c}.csv" for c in CLAIMS_PAPERS]
CLAIMS_COUNTS = [f"{GEN}/claims_{c}_counts.tex" for c in CLAIMS_PAPERS]


# ---- the testbed kernel and the variants' modules (kernel.smk) ----

KERNEL_INPUTS = ["kernel/build-uml.sh", "kernel/uml.config", *sorted(
    str(p) for p in pathlib.Path("kernel/patches").glob("*.patch"))]
_kernel_digest = hashlib.sha256(b"".join(pathlib.Path(p).read_bytes() for p in KERNEL_INPUTS)).hexdigest()
KERNEL_STAMP = f"build/kernel/ready-{_kernel_digest[:16]}"


def variant_headers(wildcards):
    """The kernel/variants/*.h files the variant's patch includes (bbrlab/experiment/runkey.py)."""
    return [str(p.relative_to(pathlib.Path.cwd())) if p.is_absolute() else str(p)
            for p in bbrrunkey.variant_headers(wildcards.variant, "kernel/variants")]


def variant_params_stamp(wildcards):
    """A stamp named by the content of the variant's parameters in mininet/bbrlab/experiment/variants.yaml:
    an edit to another variant's entry (or a new variant) leaves this module alone."""
    params = json.dumps(bbrvariants.parameters(wildcards.variant), sort_keys=True)
    return f"{MODULES}/keys/{wildcards.variant}.params-{hashlib.sha256(params.encode()).hexdigest()[:16]}"


# ---- runs (runs.smk) ----

def run_inputs(wildcards):
    job = run_job(wildcards)
    row = archived(job) if ARCHIVE else None
    if row is not None:      # restored, not booted: the archived tarball instead of kernel and modules
        return {"key": key_stamp(RES, job), "entry": entry_stamp(RES, job, row), "archived": ancient(
            str(bbrarchive.entry_path(ARCHIVE, job["name"], job["point"], job["repetition"])))}
    return {
        "key": key_stamp(RES, job),
        "kernel": [KERNEL_STAMP] if BACKEND == "uml" else [],
        # the testbed modules of the variants this run's flows use (native: built by hand, see modules.py)
        "modules": module_files([job]) if BACKEND == "uml" else [],
        "vm": [ancient(VAGRANT_UP)] if BACKEND == "vagrant" else [],
    }


def vagrant_done():
    """backend=vagrant: halt the VM when the pipeline ends, unless --config vagrant_keep=true."""
    if BACKEND == "vagrant" and not config.get("vagrant_keep", False) and pathlib.Path(VAGRANT_UP).exists():
        from bbrlab.host import vagrant as bbrvagrant
        bbrvagrant.halt(VAGRANT_UP)


# ---- analysis (analysis.smk) ----

_R_SOURCES = {}
# The analysis file that reads the variant registry's labels (cc_labels(), mininet/bbrlab/experiment/variants.yaml).
REGISTRY_READER = "analysis/lib/variants.R"


def r_sources(script):
    """Every file an R script sources, recursively (bbrlab/experiment/rsources.py: read from its
    source() calls, so a new source() line is a new input at once); a call whose file cannot be
    told stops the plan, naming it."""
    if script not in _R_SOURCES:
        try:
            _R_SOURCES[script] = bbrrsources.sources(script, workflow.basedir)
        except ValueError as e:
            raise PlanError(f"analysis script {script}: {e}") from None
    return _R_SOURCES[script]


def cc_labels_stamp(tree, jobs):
    """A stamp named by the registry labels of the congestion controls these runs use, in the
    registry's order (the order cc_labels() gives the figures' series): an edited label of one
    of them replans the outputs drawn from them, a new variant or another's label none."""
    registry = bbrvariants.labels()
    used = {f["cc"] for j in jobs for f in j["flows"]}
    rows = [(cc, registry[cc]) for cc in registry if cc in used] + [(cc, None) for cc in sorted(used - set(registry))]
    return f"{tree}/keys/cc_labels.{hashlib.sha256(repr(rows).encode()).hexdigest()[:16]}"


def analysis_inputs(script, jobs, tree=None):
    """What an R script's output depends on besides its data: every file it sources and, when it
    sources the registry's reader, the labels stamp of its runs (cc_labels_stamp)."""
    sourced = r_sources(script)
    return sourced + ([cc_labels_stamp(tree or RES, jobs)] if REGISTRY_READER in sourced else [])

def claims_runs(wildcards):
    """The runs of the experiments a paper's claims name (experiment, ref_experiment), of those in the plan."""
    named = bbrexperiments.claims_experiments(PAPERS[wildcards.claims].claims)
    return [r for e in PROFILE_EXPERIMENTS if e in named for r in runs_of(e)]


def claims_jobs(claims):
    """The resolved runs behind claims_runs."""
    named = bbrexperiments.claims_experiments(PAPERS[claims].claims)
    return [j for e in PROFILE_EXPERIMENTS if e in named for j in jobs_of(e)]


def point_labels_stamp():
    """A stamp named by the content of the table: every run's (experiment, point, label), so an edit
    to a spec that changes no label (a comment, a parameter) leaves the table alone."""
    rows = sorted({(j["name"], j["point"], j["point_label"]) for e in PROFILE_EXPERIMENTS for j in all_jobs_of(e)})
    return f"{GEN}/keys/point_labels.{hashlib.sha256(repr(rows).encode()).hexdigest()[:16]}"


# ---- the backend cross-check (crosscheck.smk) ----

XC = "results/crosscheck"
CROSSCHECK = [e.name for e in bbrexperiments.of_profile(EXPERIMENTS, "crosscheck")]


def crosscheck_jobs(experiment):
    return expand_spec(experiment, "crosscheck")


def crosscheck_runs(backend):
    return [f"{XC}/{backend}/runs/{e}/{j['point']}/rep{j['repetition']}/run.json"
            for e in CROSSCHECK for j in crosscheck_jobs(e)]


def crosscheck_job(wildcards):
    return find_job(crosscheck_jobs(wildcards.experiment), wildcards)


def crosscheck_inputs(wildcards):
    job = crosscheck_job(wildcards)
    uml = wildcards.backend == "uml"
    return {
        "key": key_stamp(f"{XC}/{wildcards.backend}", job),
        "kernel": [KERNEL_STAMP] if uml else [],
        "modules": module_files([job]) if uml else [],
    }
