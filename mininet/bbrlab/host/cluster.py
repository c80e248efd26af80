"""Pre-flight checks for cluster execution: find what cannot work before any job is submitted.

The Snakefile calls `preflight` when Snakemake runs with the `slurm` or
`cluster-generic` executor (profiles/slurm, profiles/cluster-generic), after
the DAG is built and before the first submission. Every problem found is
named with its reason and a fix; the pipeline then stops without having
submitted anything.

The checks ask the scheduler's own commands, the way the executor will:

- the commands the executor calls are on the PATH (for cluster-generic:
  every program its submit, status and cancel command lines start);
- the SLURM controller answers (`sinfo`);
- every partition the jobs ask for (`slurm_partition` resource) exists and
  is up; without one, the cluster has a default partition;
- a run's memory fits on a node of its partition;
- the job-status command works: `sacct` needs SLURM's accounting
  (slurmdbd); without it, the executor's `--slurm-status-command squeue`
  needs MinJobAge of at least 120 s (else the plugin falls back to sacct).
"""
import os
import shlex
import shutil
import subprocess

SLURM_TOOLS = ("sbatch", "squeue", "sinfo", "scancel", "scontrol")
MIN_JOB_AGE_FOR_SQUEUE_S = 120      # the SLURM executor plugin's own threshold


def _run(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as err:
        return subprocess.CompletedProcess(cmd, 255, "", str(err))


def parse_mem_mb(text: str):
    """sinfo's %m: "8000", "8000+" (nodes differ; the smallest first) -> 8000."""
    text = text.strip().rstrip("+")
    return int(text) if text.isdigit() else None


def slurm_partitions(run=_run):
    """{name: {"default": bool, "up": bool, "mem_mb": int|None}} from sinfo, or an error string."""
    res = run(["sinfo", "--noheader", "--format=%P|%a|%m"])
    if res.returncode != 0:
        return (res.stderr or res.stdout).strip() or f"sinfo exited with status {res.returncode}"
    parts = {}
    for line in res.stdout.splitlines():
        fields = line.strip().split("|")
        if len(fields) != 3 or not fields[0]:
            continue
        name, avail, mem = fields
        default = name.endswith("*")
        name = name.rstrip("*")
        entry = parts.setdefault(name, {"default": False, "up": False, "mem_mb": None})
        entry["default"] |= default
        entry["up"] |= avail == "up"
        mem_mb = parse_mem_mb(mem)
        if mem_mb is not None:
            entry["mem_mb"] = max(entry["mem_mb"] or 0, mem_mb)
    return parts


def min_job_age_s(run=_run):
    """Slurm's MinJobAge in seconds from `scontrol show config` (through `run`); None when scontrol
    fails or the value is missing or not a whole number."""
    res = run(["scontrol", "show", "config"])
    if res.returncode != 0:
        return None
    for line in res.stdout.splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "MinJobAge":
            digits = value.strip().split()[0] if value.strip() else ""
            return int(digits) if digits.isdigit() else None
    return None


def slurm_problems(partitions, mem_mb_by_partition=None, status_command=None, run=_run, which=shutil.which) -> list:
    """Problems that would stop SLURM jobs of these partitions (None: the default partition)."""
    missing = [t for t in SLURM_TOOLS if not which(t)]
    if missing:
        return [f"SLURM command(s) not on the PATH: {', '.join(missing)} (run on a SLURM submit host, "
                "or load the cluster's SLURM environment module)"]
    known = slurm_partitions(run)
    if isinstance(known, str):
        return [f"the SLURM controller does not answer: sinfo: {known}"]
    problems = []
    for name in sorted(partitions, key=str):
        if name is None:
            if not any(p["default"] for p in known.values()):
                problems.append("the cluster has no default partition: set one with "
                                "--default-resources slurm_partition=NAME (partitions: "
                                f"{', '.join(sorted(known)) or 'none'})")
            continue
        if name not in known:
            problems.append(f"partition '{name}' does not exist on this cluster "
                            f"(partitions: {', '.join(sorted(known)) or 'none'})")
        elif not known[name]["up"]:
            problems.append(f"partition '{name}' is not up (sinfo)")
    for name, need in sorted((mem_mb_by_partition or {}).items(), key=lambda kv: str(kv[0])):
        part = next((p for n, p in known.items() if (n == name if name else p["default"])), None)
        if part and part["mem_mb"] and need > part["mem_mb"]:
            problems.append(f"runs need up to {need} MB of memory but the nodes of partition "
                            f"'{name or 'default'}' have at most {part['mem_mb']} MB")
    if status_command in (None, "sacct") and which("sacct"):
        res = run(["sacct", "-X", "--noheader", "--parsable2", "--format=JobIdRaw", "--starttime", "now-1hours"])
        if res.returncode != 0:
            detail = (res.stderr or res.stdout).strip()
            age = min_job_age_s(run)
            fix = ("pass --slurm-status-command squeue (MinJobAge is "
                   f"{age} s here, enough)" if age is not None and age >= MIN_JOB_AGE_FOR_SQUEUE_S else
                   "enable accounting (slurmdbd), or set MinJobAge >= "
                   f"{MIN_JOB_AGE_FOR_SQUEUE_S} in slurm.conf and pass --slurm-status-command squeue")
            problems.append(f"the executor's job-status command 'sacct' fails here ({detail}): {fix}")
    elif status_command == "squeue":
        age = min_job_age_s(run)
        if age is None or age < MIN_JOB_AGE_FOR_SQUEUE_S:
            problems.append(f"--slurm-status-command squeue needs MinJobAge >= {MIN_JOB_AGE_FOR_SQUEUE_S} s "
                            f"in slurm.conf (it is {age}); finished jobs vanish from squeue sooner")
    return problems


def programs_of(command: str) -> list:
    """The programs a shell command line starts: the first word of each part between
    &&, ||, ;, | and &, leading VAR=value assignments skipped."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    programs, expect = [], True
    for token in lexer:
        if token and set(token) <= set(";&|"):
            expect = True
        elif expect and "=" in token and not token.startswith(("=", "/", ".")) and token.split("=")[0].isidentifier():
            continue
        elif expect:
            programs.append(token)
            expect = False
    return programs


def command_problems(name: str, command, which=shutil.which, cwd=None) -> list:
    """A cluster-generic command (submit, status, cancel): every program it starts must be found."""
    if not command:
        return [] if name != "submit" else ["no submit command: set cluster-generic-submit-cmd in the profile"]
    problems = []
    for program in programs_of(command):
        if "/" in program:
            path = os.path.join(cwd or os.getcwd(), program)
            if not os.access(path, os.X_OK):
                problems.append(f"the {name} command's program '{program}' is not an executable file ({command})")
        elif not which(program):
            problems.append(f"the {name} command's program '{program}' is not on the PATH ({command})")
    return problems


def preflight(workflow, jobs) -> list:
    """Problems of the executor Snakemake was started with, for the jobs it will submit."""
    plugin = workflow.executor_plugin
    name = plugin.name if plugin is not None else None
    remote = [j for j in jobs if not j.is_local]
    if name == "slurm":
        partitions, mem = set(), {}
        for job in remote:
            part = job.resources.get("slurm_partition") or None
            partitions.add(part)
            mem[part] = max(mem.get(part, 0), int(job.resources.get("mem_mb", 0) or 0))
        if not remote:
            return []
        settings = workflow.executor_settings
        return slurm_problems(partitions, mem, getattr(settings, "status_command", None))
    if name == "cluster-generic":
        settings = workflow.executor_settings
        return (command_problems("submit", settings.submit_cmd) + command_problems("status", settings.status_cmd)
                + command_problems("cancel", settings.cancel_cmd))
    return []
