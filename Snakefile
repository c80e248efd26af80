# The pipeline: testbed kernel -> runs -> tidy data -> figures/tables -> report.
#
#   snakemake --cores all                          quick profile (default)
#   snakemake --cores all --config profile=paper   the papers' durations and repetitions
#   snakemake --cores all --config backend=ns3     the same experiments in ns-3, into results/<profile>-ns3/
#   ... --config backend=ns3 ns3_rules=linux       ns-3 with Linux's BBR and rate rules, into results/<profile>-ns3-linux/
#
# Each run is one job (one testbed boot); runs of all experiments share the
# cores. Results: results/<profile>/runs/<experiment>/<point>/rep<k>/ (see
# docs/tidy-data.md); the report: results/<profile>/report/report.pdf.
import hashlib
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(workflow.basedir) / "mininet"))
from bbrlab import modules as bbrmodules
from bbrlab import resources as bbrresources
from bbrlab import spec as bbrspec

configfile: "config/quick.yaml"
PROFILE = config.get("profile", "quick")
if PROFILE != "quick":
    configfile: f"config/{PROFILE}.yaml"
    config["profile"] = PROFILE

BACKEND = config.get("backend", "uml")      # --config backend=native on a real host / the Vagrant VM
NS3 = BACKEND == "ns3"                      # simulated: a results tree of its own, no kernel, no modules
# ns-3's rules (backends/ns3_backend.py): "ns3" as ns-3 papers ran it; "linux": `cc: bbr` is the
# project's port of Linux's BBR and every BBR takes Linux's rate-sample rules. Each has its own tree.
NS3_RULES = config.get("ns3_rules", "ns3")
if NS3_RULES not in ("ns3", "linux"):
    raise ValueError(f"config ns3_rules={NS3_RULES!r}: choose ns3 or linux")
if NS3_RULES != "ns3" and not NS3:
    raise ValueError(f"config ns3_rules={NS3_RULES} is for backend=ns3 (backend is {BACKEND})")
NS3_TREE = {"ns3": "ns3", "linux": "ns3-linux"}
RES = f"results/{PROFILE}-{NS3_TREE[NS3_RULES]}" if NS3 else f"results/{PROFILE}"
KERNEL = "build/kernel/linux"
KERNEL_INPUTS = ["kernel/build-uml.sh", "kernel/uml.config"] + sorted(str(p) for p in pathlib.Path("kernel/patches").glob("*.patch"))
KERNEL_STAMP = "build/kernel/ready-" + hashlib.sha256(
    b"".join(pathlib.Path(p).read_bytes() for p in KERNEL_INPUTS)).hexdigest()[:16]
MODULES = "build/modules"
VAGRANT_UP = "build/vagrant/up"            # marker: the VM is up (backend=vagrant, bbrlab/vagrant.py)
PY = f"PYTHONPATH=mininet {sys.executable} -m bbrlab"


def paper_of(experiment):
    """A paper's key: the experiment name up to its first underscore (ma2019_fig13 -> ma2019)."""
    return experiment.split("_", 1)[0]


def spec_path(experiment):
    return f"mininet/specs/{paper_of(experiment)}/{experiment}.yaml"


def figure_script(experiment):
    return f"analysis/figures/{paper_of(experiment)}/{experiment}.R"


def all_jobs_of(experiment):
    return bbrspec.expand(bbrspec.load(spec_path(experiment), profile=PROFILE))


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


def modules_of(wildcards):
    """Testbed modules of the BBR variants the experiment's flows use (native: built by hand, see modules.py)."""
    if BACKEND != "uml":
        return []
    return [f"{MODULES}/{m}.ko" for m in bbrmodules.needed(jobs_of(wildcards.experiment))]


ALL_RUNS = [r for e in config["experiments"] for r in runs_of(e)]
# On ns-3, an experiment's figure only when ns-3 runs all its points (a figure script expects them).
FIGURES = [f"{RES}/report/generated/{e}.pdf" for e in config["experiments"]
           if pathlib.Path(figure_script(e)).exists() and (not NS3 or len(jobs_of(e)) == len(all_jobs_of(e)))]
CLAIMS = [f"{RES}/report/generated/claims_{c}.tex" for c in config["claims"]]
# The ns-3 tree's runs that ns-3 refuses: (experiment, point, repetition, why), listed, not run.
NS3_REFUSED = sorted((j["name"], j["point"], j["repetition"], "; ".join(why))
                     for e in config["experiments"] for j in all_jobs_of(e) if (why := ns3_refusals(j))) if NS3 else []
# Published / ns-3 / kernel columns for these claims files (--config compare_ns3=[tang]): the kernel
# report's generated/ns3_compare_<claims>.tex from both trees' claims CSVs; run backend=ns3 first.
# With compare_ns3_linux=true the table gains a column from ns-3 under Linux's rules (ns3_rules=linux,
# results/<profile>-ns3-linux/; run that first too).
NS3_COMPARE_LINUX = bool(config.get("compare_ns3_linux", False))
NS3_COMPARE = [] if NS3 else [f"{RES}/report/generated/ns3_compare_{c}.tex" for c in config.get("compare_ns3") or []]


rule all:
    input:
        f"{RES}/report/report.pdf", f"{RES}/report/generated/point_labels.csv",
        [f"{RES}/refused.csv"] if NS3 else [],


def run_job(wildcards):
    return next(j for j in jobs_of(wildcards.experiment)
                if j["point"] == wildcards.point and str(j["repetition"]) == wildcards.rep)


onstart:
    # Cluster execution (profiles/slurm, profiles/cluster-generic): the runs are the cluster's
    # jobs; builds, R scripts and the report are short and stay where Snakemake runs.
    workflow.localrules(*(r.name for r in workflow.rules if r.name != "run"))
    # Stop before the first submission when the cluster cannot take the jobs (bbrlab/cluster.py).
    from bbrlab import cluster as bbrcluster
    from snakemake.exceptions import WorkflowError
    needrun = list(workflow.dag.needrun_jobs())
    problems = bbrcluster.preflight(workflow, needrun)
    if problems:
        raise WorkflowError("cluster check failed, nothing submitted:\n  - " + "\n  - ".join(problems))
    # The backend cross-check: stop before the first job when a backend whose runs must still
    # run cannot run on this host, naming the side and why (bbrlab/crosscheck.py).
    crosscheck_backends = sorted({j.wildcards["backend"] for j in needrun if j.rule.name == "crosscheck_run"})
    if crosscheck_backends:
        from bbrlab import crosscheck as bbrcrosscheck
        refusal = bbrcrosscheck.refusal(crosscheck_backends, kernel=KERNEL)
        if refusal:
            raise WorkflowError(refusal)


rule kernel:
    """User-Mode Linux testbed kernel (kernel/build-uml.sh skips an up-to-date build).

    Its output is a stamp named after the content of its inputs, not the kernel
    binary: Snakemake deletes a rule's output before re-running it, and a fresh
    checkout's newer file times would re-run the rule and remove a kernel that
    running guests (or another checkout sharing build/) are using. The stamp's
    name changes only when the inputs' content does; the script then rebuilds."""
    input: [ancient(p) for p in KERNEL_INPUTS]
    output: touch(KERNEL_STAMP)
    threads: workflow.cores
    log: "build/kernel.log"
    shell: "JOBS={threads} kernel/build-uml.sh build/kernel > {log} 2>&1 || (tail -30 {log}; exit 1)"


rule variant_module:
    """A BBR variant as a loadable module for the testbed kernel (kernel/build-variants.sh)."""
    input:
        KERNEL_STAMP,
        "kernel/build-variants.sh",
        "kernel/variants/{variant}.patch",
        sorted(str(p) for p in pathlib.Path("kernel/variants").glob("*.h")),
        "mininet/bbrlab/variants.yaml",     # the module's parameters (<variant>_params.h)
    output: f"{MODULES}/{{variant}}.ko"
    wildcard_constraints: variant="[a-z0-9_]+"
    log: f"{MODULES}/{{variant}}.log"
    shell: "kernel/build-variants.sh {wildcards.variant} > {log} 2>&1 || (tail -30 {log}; exit 1)"


rule run:
    """One testbed boot: one repetition of one point of one experiment."""
    input:
        spec=lambda wildcards: spec_path(wildcards.experiment),
        kernel=[KERNEL_STAMP] if BACKEND == "uml" else [],
        modules=modules_of,
        vm=[ancient(VAGRANT_UP)] if BACKEND == "vagrant" else [],
    output: f"{RES}/runs/{{experiment}}/{{point}}/rep{{rep}}/run.json"
    log: f"{RES}/logs/{{experiment}}/{{point}}/rep{{rep}}.log"
    threads: 1 if BACKEND in ("uml", "ns3") else workflow.cores   # native, vagrant: one dumbbell per host at a time
    priority: lambda wildcards: int(bbrresources.expected_cpu_s(run_job(wildcards)))   # longest runs first
    resources:      # what a cluster job reserves (bbrlab/resources.py)
        mem_mb=lambda wildcards: bbrresources.mem_mb(run_job(wildcards), BACKEND),
        runtime=lambda wildcards, attempt: bbrresources.runtime_min(run_job(wildcards), attempt),
    shell:
        f"{PY} {'vagrant-run' if BACKEND == 'vagrant' else 'run'} {{input.spec}} --profile {PROFILE} "
        f"--out {RES}/runs --point {{wildcards.point}} --rep {{wildcards.rep}} "
        + (f"--backend {BACKEND} " if BACKEND != "vagrant" else "")
        + (f"--kernel {KERNEL} " if BACKEND == "uml" else "")
        + (f"--ns3-rules {NS3_RULES} " if NS3 and NS3_RULES != "ns3" else "")
        + "2>&1 | tee {log}; exit ${{PIPESTATUS[0]}}"


rule ns3_refused:
    """backend=ns3: the configured runs ns-3 cannot run (variant congestion controls, captures, ...),
    one line each with the reason; they are skipped, not failed."""
    output: f"{RES}/refused.csv"
    params: rows=NS3_REFUSED
    run:
        import csv
        with open(output[0], "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["experiment", "point", "repetition", "reason"])
            w.writerows(params.rows)


rule vagrant_up:
    """backend=vagrant: the VM booted (provisioned on its first boot) and the repository synced into it."""
    input: "Vagrantfile", "envs/provision-vm.sh"
    output: touch(VAGRANT_UP)
    shell: "vagrant up && vagrant rsync"


def vagrant_done():
    """backend=vagrant: halt the VM when the pipeline ends, unless --config vagrant_keep=true."""
    if BACKEND == "vagrant" and not config.get("vagrant_keep", False) and pathlib.Path(VAGRANT_UP).exists():
        from bbrlab import vagrant as bbrvagrant
        bbrvagrant.halt(VAGRANT_UP)


onsuccess:
    vagrant_done()


onerror:
    vagrant_done()


# Backend cross-check (README "Native backend"): `snakemake --cores all crosscheck` runs the
# specs of config key `crosscheck` (mininet/specs/crosscheck/) on the uml backend (their own
# clock, virtual) and on the native backend (real clock, as root) into separate trees and
# prints per-metric differences (analysis/crosscheck.R). Not part of `all`. The onstart
# hook above refuses before anything runs when a side cannot run on this host.
XC = "results/crosscheck"


def crosscheck_jobs(experiment):
    return bbrspec.expand(bbrspec.load(spec_path(experiment), profile="crosscheck"))


def crosscheck_runs(backend):
    return [f"{XC}/{backend}/runs/{e}/{j['point']}/rep{j['repetition']}/run.json"
            for e in config.get("crosscheck", []) for j in crosscheck_jobs(e)]


def crosscheck_job(wildcards):
    return next(j for j in crosscheck_jobs(wildcards.experiment)
                if j["point"] == wildcards.point and str(j["repetition"]) == wildcards.rep)


rule crosscheck_run:
    """One run of a cross-check spec on one backend (uml: its own clock; native: the real clock)."""
    input:
        spec=lambda wildcards: spec_path(wildcards.experiment),
        kernel=lambda wildcards: [KERNEL_STAMP] if wildcards.backend == "uml" else [],
        modules=lambda wildcards: [f"{MODULES}/{m}.ko" for m in bbrmodules.needed(
            crosscheck_jobs(wildcards.experiment))] if wildcards.backend == "uml" else [],
    output: f"{XC}/{{backend}}/runs/{{experiment}}/{{point}}/rep{{rep}}/run.json"
    wildcard_constraints: backend="uml|native"
    log: f"{XC}/{{backend}}/logs/{{experiment}}/{{point}}/rep{{rep}}.log"
    threads: lambda wildcards: 1 if wildcards.backend == "uml" else workflow.cores   # native: alone on the host
    resources:
        mem_mb=lambda wildcards: bbrresources.mem_mb(crosscheck_job(wildcards), wildcards.backend),
        runtime=lambda wildcards, attempt: bbrresources.runtime_min(crosscheck_job(wildcards), attempt),
    params:
        backend_args=lambda wildcards: f"--kernel {KERNEL}" if wildcards.backend == "uml" else "--clock real",
    shell:
        f"{PY} run {{input.spec}} --profile crosscheck --out {XC}/{{wildcards.backend}}/runs "
        "--point {wildcards.point} --rep {wildcards.rep} --backend {wildcards.backend} {params.backend_args} "
        "2>&1 | tee {log}; exit ${{PIPESTATUS[0]}}"


rule crosscheck:
    """Both backends' runs of the cross-check specs, compared metric by metric (printed, and kept)."""
    input:
        uml=crosscheck_runs("uml"),
        native=crosscheck_runs("native"),
        script="analysis/crosscheck.R",
    output:
        csv=f"{XC}/comparison.csv",
        md=f"{XC}/comparison.md",
    shell: f"Rscript {{input.script}} {XC}/uml/runs {XC}/native/runs {{output.csv}} {config['warmup_s']} uml,native"


def experiment_runs(wildcards):
    return runs_of(wildcards.experiment)


rule figure:
    input:
        runs=experiment_runs,
        script=lambda wildcards: figure_script(wildcards.experiment),
    output: f"{RES}/report/generated/{{experiment}}.pdf"
    shell: f"Rscript {{input.script}} {RES}/runs/{{wildcards.experiment}} {{output}} {config['warmup_s']}"


rule claims:
    input:
        runs=ALL_RUNS,
        claims="claims/{claims}.csv",
    output: f"{RES}/report/generated/claims_{{claims}}.tex"
    shell: f"Rscript analysis/claims.R {{input.claims}} {RES}/runs {{output}} {config['warmup_s']}"


rule fidelity_table:
    input: ALL_RUNS
    output: f"{RES}/report/generated/fidelity.tex"
    shell: f"Rscript analysis/fidelity.R {RES}/runs {{output}}"


rule testbed_table:
    input: ALL_RUNS
    output: f"{RES}/report/generated/testbed.tex"
    shell: f"Rscript analysis/testbed_table.R {RES}/runs {{output}}"


rule point_labels:
    """The sweep points' human labels as CSV (experiment,point,label), readable without runs."""
    input: [spec_path(e) for e in config["experiments"]]
    output: f"{RES}/report/generated/point_labels.csv"
    shell: f"{PY} labels {{input}} --profile {PROFILE} --out {{output}}"


rule summary_table:
    """One row per paper (paper/papers.csv): regenerated items, claims per verdict."""
    input:
        papers="paper/papers.csv",
        generated=FIGURES + CLAIMS,
    output: f"{RES}/report/generated/summary.tex"
    shell: f"Rscript analysis/summary.R {RES}/report/generated {{output}} {{input.papers}}"


rule ns3_compare:
    """Per claim: published value, ns-3 value and verdict, kernel value and verdict, with the claims
    whose ns-3 and kernel verdicts differ marked (analysis/ns3_compare.R); with compare_ns3_linux=true
    also ns-3 under Linux's rules. The ns-3 trees' claims come from `snakemake --config backend=ns3
    [ns3_rules=linux]` (not built from here: a missing one stops this rule)."""
    input:
        kernel=f"{RES}/report/generated/claims_{{claims}}.tex",
        ns3=f"results/{PROFILE}-ns3/report/generated/claims_{{claims}}.csv",
        ns3_linux=[f"results/{PROFILE}-ns3-linux/report/generated/claims_{{claims}}.csv"] if NS3_COMPARE_LINUX else [],
        script="analysis/ns3_compare.R",
    output: f"{RES}/report/generated/ns3_compare_{{claims}}.tex"
    shell: f"Rscript {{input.script}} {RES}/report/generated/claims_{{wildcards.claims}}.csv {{input.ns3}} {{output}} {{input.ns3_linux}}"


rule report:
    """latexmk on paper/report.tex and its parts paper/sections/, copied beside generated/."""
    input:
        tex="paper/report.tex",
        sections=sorted(str(p) for p in pathlib.Path("paper/sections").glob("*.tex")),
        generated=FIGURES + CLAIMS + NS3_COMPARE + [f"{RES}/report/generated/{t}.tex" for t in ("fidelity", "testbed", "summary")],
    output: f"{RES}/report/report.pdf"
    log: f"{RES}/logs/report.log"
    shell:
        f"cp {{input.tex}} {RES}/report/report.tex && rm -rf {RES}/report/sections && "
        f"cp -r paper/sections {RES}/report/sections && cd {RES}/report && "
        "latexmk -pdf -interaction=nonstopmode -halt-on-error report.tex > ../logs/report.log 2>&1 "
        "|| (tail -40 ../logs/report.log; exit 1)"
