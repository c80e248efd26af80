"""A real one-node SLURM cluster on this machine, for the cluster tests (test_cluster.py).

Debian's munge, slurmctld and slurmd (envs/debian-packages.txt) run as
ordinary child processes of the test with their own key, sockets, ports,
state and spool under a temporary directory; nothing of the system's
/etc/slurm or /etc/munge is used or changed. Clients find the cluster through
SLURM_CONF (see `env`). `stop()` cancels what is left in the queue, stops the
daemons and kills any job step they left behind.

Accounting: Debian 12's SLURM (22.05) keeps job accounting only in slurmdbd,
which needs a MySQL/MariaDB server; this cluster has none, so `sacct` answers
"accounting storage is disabled". The SLURM executor plugin then asks
`squeue` instead (its --slurm-status-command squeue), which needs finished
jobs to stay visible for a while: MinJobAge=600 below (the plugin's minimum
is 120 s).
"""
import os
import pwd
import shutil
import socket
import subprocess
import time

DAEMONS = ("munged", "slurmctld", "slurmd")
PARTITION = "bbrlab"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def missing_tools() -> list:
    return [t for t in ("mungekey", "munged", "slurmctld", "slurmd", "sbatch", "squeue", "sinfo", "scancel")
            if not shutil.which(t)]


class SlurmCluster:
    def __init__(self, root, cpus=None, mem_mb=None):
        self.root = os.path.abspath(root)
        self.node = socket.gethostname().split(".")[0]
        self.cpus = cpus or os.cpu_count()
        meminfo = open("/proc/meminfo").read().split()
        total_mb = int(meminfo[meminfo.index("MemTotal:") + 1]) // 1024
        self.mem_mb = mem_mb or int(total_mb * 0.8)
        self.procs = {}
        self.conf = os.path.join(self.root, "slurm.conf")
        self.munge_socket = os.path.join(self.root, "munge", "munge.socket")
        self.env = dict(os.environ, SLURM_CONF=self.conf)
        self._steps_before = set()

    def _write_config(self):
        for d in ("munge", "state", "spool", "log"):
            os.makedirs(os.path.join(self.root, d), exist_ok=True)
        os.chmod(os.path.join(self.root, "munge"), 0o755)      # munged wants its socket directory searchable
        key = os.path.join(self.root, "munge", "munge.key")
        subprocess.run(["mungekey", "--create", "--force", "--keyfile", key], check=True, capture_output=True)
        r = self.root
        conf = f"""\
ClusterName=bbrlabtest
SlurmctldHost={self.node}(127.0.0.1)
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
SlurmUser={pwd.getpwuid(os.geteuid()).pw_name}
AuthType=auth/munge
AuthInfo=socket={self.munge_socket}
CryptoType=crypto/munge
StateSaveLocation={r}/state
SlurmdSpoolDir={r}/spool
SlurmctldPidFile={r}/slurmctld.pid
SlurmdPidFile={r}/slurmd.pid
SlurmctldLogFile={r}/log/slurmctld.log
SlurmdLogFile={r}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
MinJobAge=600
KillWait=10
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
NodeName={self.node} NodeAddr=127.0.0.1 CPUs={self.cpus} RealMemory={self.mem_mb} State=UNKNOWN
PartitionName={PARTITION} Nodes={self.node} Default=YES MaxTime=INFINITE State=UP
"""
        with open(self.conf, "w") as f:
            f.write(conf)

    def _start(self, name, cmd):
        log = open(os.path.join(self.root, "log", f"{name}.out"), "wb")
        self.procs[name] = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                            env=self.env)
        log.close()

    def slurm(self, *args, check=False):
        return subprocess.run(list(args), capture_output=True, text=True, env=self.env, check=check, timeout=60)

    def start(self, timeout_s=60):
        self._steps_before = set(self._pids("slurmstepd"))
        self._write_config()
        m = os.path.join(self.root, "munge")
        self._start("munged", ["munged", "--foreground", f"--key-file={m}/munge.key", f"--socket={self.munge_socket}",
                               f"--pid-file={m}/munged.pid", f"--seed-file={m}/munged.seed",
                               f"--log-file={m}/munged.log"])
        self._wait(lambda: os.path.exists(self.munge_socket), timeout_s, "munged")
        self._start("slurmctld", ["slurmctld", "-D", "-i", "-f", self.conf])
        self._start("slurmd", ["slurmd", "-D", "-N", self.node, "-f", self.conf])
        self._wait(lambda: self.slurm("sinfo", "--noheader", "--format=%T").stdout.strip() == "idle",
                   timeout_s, "an idle node")
        return self

    def _wait(self, cond, timeout_s, what):
        end = time.time() + timeout_s
        while time.time() < end:
            for name, proc in self.procs.items():
                if proc.poll() is not None:
                    raise RuntimeError(f"{name} exited with {proc.returncode} while waiting for {what}:\n"
                                       + self.logs())
            if cond():
                return
            time.sleep(0.3)
        raise RuntimeError(f"SLURM test cluster: no {what} after {timeout_s} s:\n" + self.logs())

    def logs(self) -> str:
        out = []
        for name in os.listdir(os.path.join(self.root, "log")):
            text = open(os.path.join(self.root, "log", name), errors="replace").read()
            out.append(f"--- {name} ---\n" + "\n".join(text.splitlines()[-15:]))
        return "\n".join(out)

    def jobs(self) -> list:
        """(job id, state) of every job the controller still knows, finished ones included."""
        res = self.slurm("squeue", "--states=all", "--noheader", "--format=%i|%T")
        return [tuple(line.split("|")) for line in res.stdout.split()]

    @staticmethod
    def _pids(name) -> list:
        res = subprocess.run(["pgrep", "-x", name], capture_output=True, text=True)
        return [int(p) for p in res.stdout.split()]

    def stop(self):
        if "slurmctld" in self.procs and self.procs["slurmctld"].poll() is None:
            self.slurm("scancel", "--full", "--user", str(os.getuid()))
            end = time.time() + 30
            while time.time() < end and any(state in ("RUNNING", "PENDING", "COMPLETING", "CONFIGURING")
                                            for _job, state in self.jobs()):
                time.sleep(0.5)
        for name in reversed(DAEMONS):
            proc = self.procs.get(name)
            if proc and proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        for pid in set(self._pids("slurmstepd")) - self._steps_before:
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass
