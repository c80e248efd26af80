"""The pipeline's `backend=vagrant`: each run on the native backend inside the Vagrant VM.

    snakemake --cores all --config backend=vagrant [vagrant_keep=true]

The Snakefile's `vagrant_up` rule brings the VM up once (`vagrant up`,
provisioned by envs/provision-vm.sh: setup.sh plus the running kernel's
headers; then `vagrant rsync` copies the repository to /vagrant) and leaves
a marker. Each run job then calls `bbrlab vagrant-run`, which

1. runs `bbrlab run SPEC --backend native` inside the VM as root over
   `vagrant ssh` (with a terminal, so that a killed job's ssh hang-up reaches
   the run in the VM, whose tether kills the guest and cleans the host, see
   cleanup.py), under the tether here, so the ssh session dies with the job;
2. copies the finished run directory (or its `.failed` twin) back with tar
   into a hidden directory beside its destination and renames it into place,
   so a run directory on this side is always complete.

Runs in the VM share its network names (sw1, ifbflow1, ...), so the run
rule takes all cores under this backend: one run at a time. When the
pipeline ends the VM is halted, unless `vagrant_keep=true`.

The VM cannot boot on the development machine (no usable hypervisor): the
commands are generated here and tested as text (tests/test_vagrant.py), the
Vagrantfile with `vagrant validate --ignore-provider`, the provisioning
script with its dry run.
"""
import os
import pathlib
import shlex
import shutil
import subprocess
import sys

from ..experiment import spec
from . import backends, resources, runner

VM_REPO = "/vagrant"          # the Vagrantfile's synced folder


def remote_run_command(spec_path: str, profile: str, out_root: str, point: str, rep: int) -> str:
    """The shell command run in the VM (as the vagrant user, root through sudo)."""
    args = ["sudo", "env", "PYTHONPATH=mininet", ".venv/bin/python", "-m", "bbrlab", "run", spec_path,
            "--profile", profile, "--out", out_root, "--point", point, "--rep", str(rep), "--backend", "native"]
    return f"cd {VM_REPO} && " + shlex.join(args)


def ssh_command(remote: str, tty: bool = True) -> list:
    """`vagrant ssh -c`; with a terminal (-tt) the remote command gets SIGHUP when the session drops."""
    return ["vagrant", "ssh", "-c", remote] + (["--", "-tt"] if tty else [])


def fetch_command(remote_parent: str, name: str) -> list:
    """Stream a run directory out of the VM as a tar archive."""
    return ssh_command(f"sudo tar -C {shlex.quote(remote_parent)} -cf - {shlex.quote(name)}", tty=False)


def run_job(spec_path: str, profile: str, point: str, rep: int) -> dict:
    """The resolved run of the spec file (with the profile's overrides) at that point and
    repetition; SpecError when the spec has no such run."""
    jobs = [j for j in spec.expand(spec.load(spec_path, profile=profile))
            if j["point"] == point and j["repetition"] == rep]
    if not jobs:
        raise spec.SpecError(f"{spec_path}: no run matches point={point} repetition={rep}")
    return jobs[0]


def run(spec_path: str, profile: str, out_root: str, point: str, rep: int, timeout_s=None, progress=print) -> int:
    """One run in the VM, its directory brought back; returns the VM-side exit status.
    `out_root` is relative to the repository, here and in the VM."""
    if pathlib.Path(out_root).is_absolute():
        raise ValueError(f"out_root must be relative to the repository: {out_root}")
    if not shutil.which("vagrant"):
        raise backends.BackendError("vagrant is not on the PATH (Debian package vagrant; see Vagrantfile)")
    job = run_job(spec_path, profile, point, rep)
    rel = runner.run_dir_name(out_root, job)
    timeout_s = timeout_s or resources.default_timeout(job) + 300
    remote = remote_run_command(spec_path, profile, out_root, point, rep)
    progress(f"[{job['name']}/{point}/rep{rep}] in the Vagrant VM: {remote}")
    sys.stdout.flush()
    status, _usage, timed_out = backends.tethered(ssh_command(remote), sys.stdout, timeout_s)
    if timed_out:
        progress(f"[{job['name']}/{point}/rep{rep}] the VM run did not finish within {timeout_s:.0f} s")
        return 124
    name = rel.name if status == 0 else rel.name + ".failed"
    bring_back(str(pathlib.PurePosixPath(VM_REPO) / rel.parent), name, rel.parent / name)
    return status


def bring_back(remote_parent: str, name: str, local: pathlib.Path) -> None:
    """tar the VM's run directory into a hidden directory here, then rename it into place."""
    tmp = local.with_name(f".{local.name}.vagrant-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        with subprocess.Popen(fetch_command(remote_parent, name), stdout=subprocess.PIPE) as src:
            subprocess.run(["tar", "-C", str(tmp), "-xf", "-"], stdin=src.stdout, check=True)
        if src.returncode != 0:
            raise backends.BackendError(f"cannot copy {remote_parent}/{name} out of the VM (status {src.returncode})")
        shutil.rmtree(local, ignore_errors=True)
        os.replace(tmp / name, local)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def up_commands() -> list:
    """What the vagrant_up rule runs: boot (provisioning on first boot), then sync the repository."""
    return [["vagrant", "up"], ["vagrant", "rsync"]]


def halt(marker) -> None:
    """End of the pipeline (unless vagrant_keep): halt the VM; the marker goes so the next run boots it."""
    subprocess.run(["vagrant", "halt"])
    pathlib.Path(marker).unlink(missing_ok=True)

