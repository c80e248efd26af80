# What every rule file uses: the profile's settings, the experiments table and the runs it
# expands to. Reading this file checks the tables: a listed experiment whose spec, figure
# script, report section or claims file is missing, or a spec or figure script that no row
# lists, stops the plan here, naming the experiment and the file.
import hashlib
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(workflow.basedir) / "mininet"))
from bbrlab import experiments as bbrexperiments
from bbrlab import modules as bbrmodules
from bbrlab import resources as bbrresources
from bbrlab import runkey as bbrrunkey
from bbrlab import spec as bbrspec
from bbrlab import variants as bbrvariants

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
VAGRANT_UP = "build/vagrant/up"            # marker: the VM is up (backend=vagrant, bbrlab/vagrant.py)
PY = f"PYTHONPATH=mininet {sys.executable} -m bbrlab"
GEN = f"{RES}/report/generated"


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
_only = _selected("experiments", _in_profile, f"experiments of profile {PROFILE} in config/experiments.csv")
# The experiments this profile runs, in table order (config `experiments` may narrow them).
PROFILE_EXPERIMENTS = [e for e in _in_profile if _only is None or e in _only]
_papers_in_plan = [k for k in PAPERS if any(EXPERIMENTS[e].paper == k for e in PROFILE_EXPERIMENTS)]
_claims_only = _selected("claims", list(PAPERS), "papers of paper/papers.csv")
# The papers whose claims tables the report shows.
CLAIMS_PAPERS = _claims_only if _claims_only is not None else _papers_in_plan


def spec_path(experiment):
    return EXPERIMENTS[experiment].spec


def figure_script(experiment):
    return EXPERIMENTS[experiment].figure


_expanded = {}


def expand_spec(experiment, profile):
    """The resolved runs of an experiment's spec in a profile (cached); the spec must name the experiment."""
    if (experiment, profile) not in _expanded:
        jobs = bbrspec.expand(bbrspec.load(spec_path(experiment), profile=profile))
        names = sorted({j["name"] for j in jobs})
        if names != [experiment]:
            raise PlanError(f"experiment {experiment}: its spec {spec_path(experiment)} has name"
                            f" {', '.join(names)}; the spec's name must be the experiment's")
        _expanded[(experiment, profile)] = jobs
    return _expanded[(experiment, profile)]


def all_jobs_of(experiment):
    return expand_spec(experiment, PROFILE)


def ns3_refusals(job):
    from bbrlab.backends import ns3_backend
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
    """The stamp file named by a run's content key (bbrlab/runkey.py): a run depends on it, so a
    changed resolved run makes a new stamp and reruns that run only."""
    return f"{tree}/keys/{job['name']}/{job['point']}/rep{job['repetition']}.{bbrrunkey.run_key(job)[:16]}"


def module_files(jobs):
    """Testbed modules of the BBR variants these runs' flows use."""
    return [f"{MODULES}/{m}.ko" for m in bbrmodules.needed(jobs)]


ALL_RUNS = [r for e in PROFILE_EXPERIMENTS for r in runs_of(e)]
# An experiment's figure; on ns-3 only when ns-3 runs all its points (a figure script expects them).
FIGURES = [f"{GEN}/{e}.pdf" for e in PROFILE_EXPERIMENTS
           if figure_script(e) and (not NS3 or len(jobs_of(e)) == len(all_jobs_of(e)))]
CLAIMS = [f"{GEN}/claims_{c}.tex" for c in CLAIMS_PAPERS]
CLAIMS_CSV = [f"{GEN}/claims_{c}.csv" for c in CLAIMS_PAPERS]
