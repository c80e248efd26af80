"""The Vagrant path (Vagrantfile, envs/provision-vm.sh, backend=vagrant, bbrlab/host/vagrant.py).

No VM can boot here (no usable hypervisor), so what is checked is everything
short of the boot: the Vagrantfile by Vagrant itself (provider-less), the
provisioning script's decisions against the real Debian archive (dry run), the
pipeline's plan with backend=vagrant (Snakemake's dry run) and the commands
sent to the VM."""
import os
import shlex
import shutil
import subprocess
import sys

import pytest

from bbrlab.host import vagrant
from conftest import REPO


def test_vagrantfile_validates(tmp_path):
    if not shutil.which("vagrant"):
        pytest.fail("vagrant not installed: run ./setup.sh (envs/debian-packages.txt)")
    res = subprocess.run(["vagrant", "validate", "--ignore-provider"], cwd=REPO, capture_output=True, text=True,
                         env=dict(os.environ, VAGRANT_DOTFILE_PATH=str(tmp_path / ".vagrant")))
    assert res.returncode == 0, res.stdout + res.stderr
    assert "Vagrantfile validated successfully" in res.stdout
    text = (REPO / "Vagrantfile").read_text()
    assert 'config.vm.box = "debian/bookworm64"' in text
    assert 'provider "virtualbox"' in text and 'provider "libvirt"' in text
    assert "envs/provision-vm.sh" in text


def provision(release):
    return subprocess.run([str(REPO / "envs" / "provision-vm.sh"), "--dry-run"], capture_output=True, text=True,
                          env=dict(os.environ, KERNEL_RELEASE=release))


def test_provisioning_installs_the_running_kernels_headers_then_setup():
    """With the release of Debian 12's current kernel (the one linux-headers-amd64 depends on)."""
    depends = subprocess.run(["apt-cache", "depends", "linux-headers-amd64"], capture_output=True, text=True).stdout
    packages = [w for w in depends.split() if w.startswith("linux-headers-6")]
    if not packages:
        pytest.skip("the apt lists do not know linux-headers-amd64 (run apt-get update)")
    release = packages[0][len("linux-headers-"):]
    res = provision(release)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert f"provision: env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends " \
           f"linux-headers-{release}" in lines
    assert lines[-1] == "provision: ./setup.sh"


def test_provisioning_falls_back_to_the_current_kernel_when_the_boxs_headers_are_gone():
    res = provision("6.1.0-0-amd64")
    assert res.returncode == 0, res.stderr
    assert "installing the current kernel and its headers" in res.stdout
    assert "--no-install-recommends linux-image-amd64 linux-headers-amd64" in res.stdout
    assert res.stdout.splitlines()[-1] == "provision: ./setup.sh"


def test_pipeline_plan_with_backend_vagrant():
    # --forcerun: plan the run even when this checkout already has its result
    res = subprocess.run([sys.executable, "-m", "snakemake", "-n", "-p", "--forcerun", "run",
                          "--config", "backend=vagrant", "--",
                          "results/quick/runs/ma2019_fig01/base/rep1/run.json"],
                         cwd=REPO, capture_output=True, text=True)
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-3000:]
    assert "rule vagrant_up:" in out and "vagrant up && vagrant rsync" in out
    assert ("-m bbrlab vagrant-run mininet/specs/ma2019/ma2019_fig01.yaml --profile quick --out results/quick/runs "
            "--point base --rep 1") in out
    assert "--backend" not in out.split("vagrant-run", 1)[1].split("\n")[0]     # the VM side picks native
    assert "build/kernel/linux" not in out                                      # no UML kernel needed


def test_commands_sent_to_the_vm():
    remote = vagrant.remote_run_command("mininet/specs/ma2019/ma2019_fig05.yaml", "paper", "results/paper/runs",
                                        "f2_rtt_ms=10", 2)
    assert remote == ("cd /vagrant && sudo env PYTHONPATH=mininet .venv/bin/python -m bbrlab run "
                      "mininet/specs/ma2019/ma2019_fig05.yaml --profile paper --out results/paper/runs "
                      "--point f2_rtt_ms=10 --rep 2 --backend native")
    # a terminal, so the run in the VM gets SIGHUP when the job (and with it the ssh session) is killed
    assert vagrant.ssh_command(remote) == ["vagrant", "ssh", "-c", remote, "--", "-tt"]
    odd = vagrant.remote_run_command("s.yaml", "quick", "r", "a b;rm -rf x", 1)
    assert shlex.split(odd.split("&& ", 1)[1])[-5] == "a b;rm -rf x"            # quoted for the remote shell
    fetch = vagrant.fetch_command("/vagrant/results/quick/runs/e/p", "rep1")
    assert fetch == ["vagrant", "ssh", "-c", "sudo tar -C /vagrant/results/quick/runs/e/p -cf - rep1"]
    with pytest.raises(ValueError, match="relative"):
        vagrant.run("s.yaml", "quick", "/abs/runs", "base", 1)
