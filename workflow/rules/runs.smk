# The runs: one testbed boot each, depending on the run's content key and the modules it loads
# (not on the spec file's text), and the cluster and cross-check checks before the first job.


rule run_key:
    """The stamp named by a run's content key (common.smk key_stamp, bbrlab/experiment/runkey.py)."""
    output:
        touch("results/{tree}/keys/{experiment}/{point}/rep{rep}.{key}"),
    wildcard_constraints:
        tree="[^/]+(/uml|/native)?",
        experiment="[^/]+",
        point="[^/]+",
        rep="[0-9]+",
        key="[0-9a-f]{16}",
    log:
        "results/{tree}/logs/keys/{experiment}/{point}/rep{rep}.{key}.log",
    localrule: True
    shell:
        "true > {log}"


rule run:
    """One testbed boot: one repetition of one point of one experiment."""
    input:
        unpack(run_inputs),
    output:
        f"{RES}/runs/{{experiment}}/{{point}}/rep{{rep}}/run.json",
    log:
        f"{RES}/logs/{{experiment}}/{{point}}/rep{{rep}}.log",
    params:
        spec=lambda wildcards: spec_path(wildcards.experiment),
    threads: 1 if BACKEND in ("uml", "ns3") else workflow.cores   # native, vagrant: one dumbbell per host at a time
    priority: lambda wildcards: int(bbrresources.expected_cpu_s(run_job(wildcards)))   # longest runs first
    resources:      # what a cluster job reserves (bbrlab/host/resources.py)
        mem_mb=lambda wildcards: bbrresources.mem_mb(run_job(wildcards), BACKEND),
        runtime=lambda wildcards, attempt: bbrresources.runtime_min(run_job(wildcards), attempt),
    shell:
        f"{PY} {'vagrant-run' if BACKEND == 'vagrant' else 'run'} {{params.spec}} --profile {PROFILE} "
        f"--out {RES}/runs --point {{wildcards.point}} --rep {{wildcards.rep}} "
        + (f"--backend {BACKEND} " if BACKEND != "vagrant" else "")
        + (f"--kernel {KERNEL} " if BACKEND == "uml" else "")
        + (f"--ns3-rules {NS3_RULES} " if NS3 and NS3_RULES != "ns3" else "")
        + (f"--archive {ARCHIVE} " if ARCHIVE else "")
        + "2>&1 | tee {log}; exit ${{PIPESTATUS[0]}}"


rule vagrant_up:
    """backend=vagrant: the VM booted (provisioned on its first boot) and the repository synced into it."""
    input:
        "Vagrantfile",
        "envs/provision-vm.sh",
    output:
        touch(VAGRANT_UP),
    log:
        "build/vagrant/up.log",
    shell:
        "(vagrant up && vagrant rsync) 2>&1 | tee {log}; exit ${{PIPESTATUS[0]}}"


onstart:
    # Cluster execution (profiles/slurm, profiles/cluster-generic): the runs are the cluster's
    # jobs; builds, R scripts and the report are short and stay where Snakemake runs.
    workflow.localrules(*(r.name for r in workflow.rules if r.name not in ("run", "control_run")))
    # Stop before the first submission when the cluster cannot take the jobs (bbrlab/host/cluster.py).
    from bbrlab.host import cluster as bbrcluster
    from snakemake.exceptions import WorkflowError
    needrun = list(workflow.dag.needrun_jobs())
    problems = bbrcluster.preflight(workflow, needrun)
    if problems:
        raise WorkflowError("cluster check failed, nothing submitted:\n  - " + "\n  - ".join(problems))
    # The backend cross-check: stop before the first job when a backend whose runs must still
    # run cannot run on this host, naming the side and why (bbrlab/host/crosscheck.py).
    crosscheck_backends = sorted({j.wildcards["backend"] for j in needrun if j.rule.name == "crosscheck_run"})
    if crosscheck_backends:
        from bbrlab.host import crosscheck as bbrcrosscheck
        refusal = bbrcrosscheck.refusal(crosscheck_backends, kernel=KERNEL)
        if refusal:
            raise WorkflowError(refusal)
    # One progress line per finished job (phase, runs done and left, time); Snakemake's rule
    # headers go to its log file only (config progress=false: Snakemake's console as it is).
    if config.get("progress", True):
        from bbrlab.experiment import pipeline_progress as bbrprogress
        logfiles = bbrprogress.quiet_console(log)
        if logfiles:
            print(f"pipeline: {len(needrun)} jobs to run; one line per finished job below, Snakemake's"
                  f" full log in {', '.join(logfiles)}", file=sys.stderr, flush=True)
        _PROGRESS.append(bbrprogress.Watcher(bbrprogress.plan_of(needrun),
                                             emit=lambda s: print(s, file=sys.stderr, flush=True)).start())


_PROGRESS = []


onsuccess:
    for watcher in _PROGRESS:
        watcher.stop()
    vagrant_done()


onerror:
    for watcher in _PROGRESS:
        watcher.stop()
    vagrant_done()
