"""The experiment, run inside the testbed (UML guest or native host) as root.

    python3 -m bbrlab.guest RUN_DIR

Reads RUN_DIR/job.json (a resolved run spec, see spec.py), builds the
dumbbell, shapes it, measures each path's base RTT, starts the samplers and
the flows on schedule, and leaves everything it measured in RUN_DIR/raw/:

    ping_<i>.txt             ping output of path i before traffic
    sockets_snd<i>.jsonl     sender socket samples     (samplers.py)
    sockets_rcv<i>.jsonl     receiver socket samples
    qdisc.jsonl              bottleneck qdisc samples
    cpu.jsonl                guest CPU samples
    bulk_sender_<i>.json     the traffic tool's own reports (bulk.c; iperf3_... with
    bulk_receiver_<i>.json   traffic_tool: iperf3): bytes, times, congestion control used;
                             a receiver still reading when the run ends says "eof": false;
                             bulk's sender also its longest write and how late it stopped
    capture_enq_<i>.pcap     with `capture: bottleneck`: headers of flow i's packets
    capture_deq.pcap         entering / leaving the bottleneck queue (capture.py, data/capture.py),
    capture.json             and tcpdump's own statistics
    loss.json                with bottleneck.loss_rate: each loss netem's packet and drop counts
    modules.json             each variant module's /sys/module/<name>/parameters/ at the end
                             (its settings and read-only counters such as bbr_fca's alloc_failures)
    timeline.json            time zero, executed events, set-up commands, timings

What the guest does differently by backend it reads from job["guest"] (the backend's
guest_options(), backends/base.py), never from the backend's name. Bench-only
measurements are hooks (bench_hooks.py) that an ordinary run does not execute.

Exit status 0 on success; anything else is a failed run.
"""
import json
import math
import os
import pathlib
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field

from . import bench_hooks, capture, fq, netns, offloads, quickack, samplers, shaping, topology, traffic, vclock
from ..experiment import testbed

OVS_RUN = "/var/run/openvswitch"
LEAD_S = 1.0          # samplers run this long before time zero
TAIL_S = 1.0          # and this long after the last flow stops


def log(msg: str) -> None:
    """Print one line to stdout (the guest's console), prefixed "bbrlab-guest [HH:MM:SS]" with the
    guest's wall clock, and flush it at once."""
    print(f"bbrlab-guest [{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def sh(cmd, node=None, check=True):
    """Run argv in the root namespace or in a Mininet node's namespace."""
    if node is None:
        res = subprocess.run(cmd, capture_output=True, text=True)
        out, rc = res.stdout + res.stderr, res.returncode
    else:
        proc = node.popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        out, _ = proc.communicate()
        rc = proc.returncode
    if check and rc != 0:
        raise RuntimeError(f"command failed ({rc}): {' '.join(cmd)}\n{out}")
    return out


# Why ovs-vswitchd waits for the guest to be 10 s old.
#
# The 6.1 kernel datapath offers per-CPU upcall dispatch
# (OVS_DP_F_DISPATCH_UPCALL_PER_CPU) and Open vSwitch 3.1 uses it: a packet that
# misses the kernel flow table is queued to user space on a netlink socket chosen
# by the CPU it arrived on, and ovs-vswitchd opens one such socket, with one
# handler thread reading it, per CPU it may run on. It counts those CPUs with
# count_cpu_cores(), which caches the count for 10 s and, in OVS 3.1.0 (Debian 12's
# 3.1.0-2+deb12u1), reads it only once `time_msec() - last_updated >= 10000` with
# last_updated starting at 0: time_msec() is CLOCK_MONOTONIC, the time since the
# guest booted, so before the guest is 10 s old the count is the cache's initial 0.
# ovs-vswitchd then logs "Overriding n-handler-threads to 0", creates no upcall
# socket, the datapath drops every miss (`ovs-dpctl show`: lost == missed), no flow
# is ever installed and nothing is forwarded; n-handler-threads cannot override it
# because per-CPU dispatch imposes the CPU count. UML itself shows its one CPU
# correctly (/sys/devices/system/cpu/online "0", sched_getaffinity, /proc/cpuinfo
# and getconf all give 1; past the 10th second the same ovs-vswitchd logs
# "Overriding n-handler-threads to 1" and forwards). On the real clock a slow boot
# can bring the guest past 10 s before Mininet starts OVS; on the virtual clock
# booting takes almost no guest time, so ovs-vswitchd always started within the
# first 10 s. (Its "netlink_socket|ERR|fcntl: Protocol not supported" is unrelated:
# the kernel has no netfilter, so no conntrack netlink.) OVS 3.1.1 fixed it upstream
# ("ovs-thread: Fix cpus not read for the first 10s."). Waiting here costs almost
# nothing on the virtual clock (an idle guest skips ahead) and a few seconds at most
# on the real clock.
OVS_CPU_COUNT_READY_S = 10.5     # CLOCK_MONOTONIC age before ovs-vswitchd counts CPUs; 0.5 s margin


# Why the driver starts at a fixed guest uptime on the virtual clock.
#
# On UML's virtual clock (time-travel=inf-cpu) computation is free but reading the clock is
# not: every read of the guest's clock source costs 256 ns of guest time (arch/um/kernel/
# time.c, timer_read(), so that loops waiting for time to move end). Starting the interpreter
# and importing the package reads the clock a number of times that depends on how the package
# is laid out (measured: the package re-layout into experiment/, host/, guest/, data/ made the
# driver begin 33.5 us, 131 reads, later). Everything after then happened that much later, and
# the kernel mixes the times of its interrupts into its entropy pool, which the early-boot
# reseeds (from 1 s of uptime on) fold into what the flows draw: their ephemeral ports, BBR's
# random PROBE_BW phase. So the same spec and seed gave other tidy data for another layout,
# and 131 extra clock reads at the driver's start alone did the same. Waiting here until a
# fixed uptime, far beyond what the start takes (0.5 to 0.6 ms), starts the experiment at the
# same guest time whatever the start cost (tests/test_determinism.py). Guest work that differs
# after this point (the set-up runs the host's ip, tc, ping and Python) is covered by the flows'
# fixed start with the kernel's generator restarted there (vclock.py, restart_randomness).
VIRTUAL_START_S = 0.1


def wait_for_virtual_start(job: dict, start_s: float = VIRTUAL_START_S, clock=time.monotonic,
                           sleep=time.sleep) -> float:
    """On the virtual clock, sleep until the guest's CLOCK_MONOTONIC reaches start_s (see
    above); returns the uptime at which the driver was ready. On the real clock it returns
    at once (host timing varies there anyway). A start later than start_s is logged: that
    run's timeline then depends on how long the start took."""
    ready = clock()
    if job.get("clock") == "virtual":
        if ready < start_s:
            sleep(start_s - ready)
        else:
            log(f"warning: the driver was ready only at {ready:.4f} s of guest uptime, after the fixed"
                f" {start_s:g}-s start: this run's timeline depends on how long the start took")
    return ready


def wait_for_ovs_cpu_count(ready_s: float = OVS_CPU_COUNT_READY_S, clock=time.monotonic, sleep=time.sleep) -> float:
    """The Open vSwitch 3.1.0 workaround: sleep until the guest's CLOCK_MONOTONIC reaches ready_s,
    before ovs-vswitchd starts, so that it counts the guest's CPU and opens an upcall socket
    (the comment above says why); returns the time slept."""
    wait = max(0.0, ready_s - clock())
    if wait > 0:
        log(f"waiting {wait:.1f} s for the guest's clock to pass {ready_s:g} s before starting ovs-vswitchd")
        sleep(wait)
    return wait


def start_ovs() -> None:
    """ovsdb-server with a fresh database and ovs-vswitchd, on tmpfs directories, the latter only
    once it will count the guest's CPUs (wait_for_ovs_cpu_count)."""
    os.makedirs(OVS_RUN, exist_ok=True)
    db = "/etc/openvswitch/conf.db"
    if not os.path.exists(db):
        sh(["ovsdb-tool", "create", db, "/usr/share/openvswitch/vswitch.ovsschema"])
    sh(["ovsdb-server", db, f"--remote=punix:{OVS_RUN}/db.sock", f"--pidfile={OVS_RUN}/ovsdb-server.pid",
        "--detach", "--log-file=/var/log/openvswitch/ovsdb-server.log"])
    sh(["ovs-vsctl", "--no-wait", "init"])
    wait_for_ovs_cpu_count()
    sh(["ovs-vswitchd", f"unix:{OVS_RUN}/db.sock", f"--pidfile={OVS_RUN}/ovs-vswitchd.pid",
        "--detach", "--log-file=/var/log/openvswitch/ovs-vswitchd.log"])


def record_ovs_state(raw: pathlib.Path) -> None:
    """The datapath's counters (`ovs-dpctl show`: missed upcalls and the lost ones) and
    ovs-vswitchd's log into raw/ovs.txt: the guest's tmpfs log is gone once it powers off."""
    parts = []
    for cmd in (["ovs-dpctl", "show"], ["ovs-appctl", "dpif-netlink/dispatch-mode"],
                ["cat", "/var/log/openvswitch/ovs-vswitchd.log"]):
        parts.append("$ " + " ".join(cmd) + "\n" + sh(cmd, check=False))
    (raw / "ovs.txt").write_text("\n".join(parts))


def host_path(path: str) -> str:
    """A host path as seen from here (the UML guest reaches the host's files under /mnt/host)."""
    return os.environ.get("BBRLAB_HOST_ROOT", "") + path


def load_modules(job: dict) -> None:
    """insmod the run's variant modules (modules.py); a refusal carries the module's own kernel message."""
    for module in job["modules"]:
        name, params = module["name"], [f"{k}={v}" for k, v in module["params"].items()]
        if os.path.exists(f"/sys/module/{name}"):
            sh(["rmmod", name])          # native host: loaded by an earlier run, perhaps with other parameters
        res = subprocess.run(["insmod", host_path(module["path"])] + params, capture_output=True, text=True)
        if res.returncode != 0:
            kernel_log = [line for line in sh(["dmesg"], check=False).splitlines() if f"{name}:" in line]
            raise RuntimeError(f"cannot load module {name} {' '.join(params)}: {res.stderr.strip()}\n"
                               + "\n".join(kernel_log[-3:]))
        log(f"loaded module {module['path']} {' '.join(params)}")


def module_state(job: dict, raw: pathlib.Path, sys_module: str = "/sys/module") -> None:
    """The run's variant modules' parameters as sysfs shows them at the end of the run, into
    raw/modules.json: [{"name", "parameters": {name: value}}]; a module that is not loaded (or a
    parameter that cannot be read) is recorded with parameters null (or value null)."""
    state = []
    for module in job["modules"]:
        directory = pathlib.Path(sys_module) / module["name"] / "parameters"
        params = None
        if directory.is_dir():
            params = {}
            for path in sorted(directory.iterdir()):
                try:
                    params[path.name] = path.read_text().strip()
                except OSError:
                    params[path.name] = None
        state.append({"name": module["name"], "parameters": params})
    (raw / "modules.json").write_text(json.dumps(state, indent=1))


KERNEL_SEED_MESSAGE = re.compile(r"random: seeded from bbrlab\.seed=(\d+), not from the host")
RESTART = pathlib.Path("/sys/module/bbrlab/parameters/restart")


def randomness(kernel_log: str) -> dict:
    """Where this guest's randomness came from: the seed the testbed kernel reports in its boot
    log (kernel/patches/uml-seeded-random.patch; None: the host's randomness, as on a native
    host or an unpatched kernel) and the Python hash seed (None: random)."""
    found = KERNEL_SEED_MESSAGE.search(kernel_log)
    return {"kernel_seed": int(found.group(1)) if found else None,
            "python_hash_seed": os.environ.get("PYTHONHASHSEED")}


def restart_randomness(job: dict, seeding: dict, restart=RESTART) -> bool:
    """In a seeded guest on the virtual clock, restart the kernel's generator from the run's seed
    (kernel/patches/uml-seeded-random.patch, bbrlab.restart): what the flows draw then depends on
    the seed and on what happens from now on, not on the set-up before (vclock.py). Returns whether
    it restarted; a seeded guest whose kernel lacks the parameter is an error (an older kernel)."""
    if job.get("clock") != "virtual" or seeding.get("kernel_seed") is None:
        return False
    if not restart.exists():
        raise RuntimeError(f"the testbed kernel is seeded but has no {restart}: rebuild it (kernel/build-uml.sh)")
    restart.write_text(str(seeding["kernel_seed"]))
    return True


def check_congestion_controls(job: dict) -> list:
    """The congestion controls the testbed kernel offers (tcp_available_congestion_control); raises
    RuntimeError naming every flow's congestion control that is not among them."""
    available = pathlib.Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split()
    missing = sorted({f["cc"] for f in job["flows"]} - set(available))
    if missing:
        raise RuntimeError(f"congestion control not available in the testbed kernel: {', '.join(missing)}"
                           f" (available: {', '.join(available)})")
    return available


def configure(db, job: dict) -> list:
    """Apply offloads, pacing qdisc, per-flow delay and the bottleneck; returns the commands."""
    applied, root = [], []

    def run(cmds, node=None):
        for cmd in cmds:
            if node is None and cmd[0] in BATCHED:
                root.append(cmd)            # run below, one batch per tool
            else:
                sh(cmd, node)
            applied.append({"node": node.name if node else "root", "cmd": cmd})

    def offloads_off(dev, node=None):
        """shaping.offloads_off(dev): in the UML testbed through ioctls (offloads.py, exact on its 6.1
        kernel), elsewhere with ethtool itself; refuses a device that keeps one."""
        if not job["guest"]["offloads_by_ioctl"]:
            run(shaping.offloads_off(dev), node)
            return
        after = netns.in_netns(node.pid if node is not None else None, lambda: offloads.turn_off(dev))
        if any(after.values()):
            raise RuntimeError(f"{dev}: offloads still on after turning them off: {after}")
        for cmd in shaping.offloads_off(dev):
            applied.append({"node": node.name if node else "root", "cmd": cmd, "via": "SIOCETHTOOL"})

    def by_request(node, cmds, via, send):
        """What the commands `cmds` would do in `node`'s namespace, done by send(): the one rtnetlink
        request their process sends, from inside that namespace, instead of the process."""
        netns.in_netns(node.pid, send)
        for cmd in cmds:
            applied.append({"node": node.name, "cmd": cmd, "via": via})

    def pacing_qdisc(sender):
        """shaping.sender_qdisc on the sender's interface: fq by the request `tc` sends (fq.py)."""
        dev = sender.defaultIntf().name
        cmds = shaping.sender_qdisc(dev, job["sender_qdisc"])
        if job["sender_qdisc"] == "fq":
            by_request(sender, cmds, "RTM_NEWQDISC", lambda: fq.replace_root(dev))
        else:
            run(cmds, sender)

    if job["offloads"] == "off":
        for host in db.senders + db.receivers:
            for intf in db.interfaces[host.name]:
                offloads_off(intf, host)
        for sw in db.net.switches:
            for intf in db.interfaces[sw.name]:
                offloads_off(intf)
    for i, flow in enumerate(job["flows"]):
        if flow["access_rate_mbps"]:
            run(shaping.access_link(db.senders[i].defaultIntf().name, flow["access_rate_mbps"],
                                    job["sender_qdisc"], job["mtu_bytes"]), db.senders[i])
        else:
            pacing_qdisc(db.senders[i])
        if not job["delayed_ack"]:
            dev, sender_ip = db.receivers[i].defaultIntf().name, topology.ip_of(db.senders[i])
            by_request(db.receivers[i], shaping.quickack_route(sender_ip, dev), "RTM_NEWROUTE",
                       lambda: quickack.add_route(sender_ip, dev))
        if job["rtt_on"] == "ingress":
            run(shaping.ingress_redirect(db.sender_side_ports[i], shaping.ifb_name(i)))
        node, dev = shaping.delay_device(i, job["rtt_on"], db)
        run(shaping.netem_delay(dev, flow["rtt_ms"]), node if node in db.net.hosts else None)
    run(shaping.bottleneck(db.bottleneck_intf, job["bottleneck"]))
    run_batched(root)
    if job["rtt_on"] == "ingress" and job["offloads"] == "off":
        for i in range(len(job["flows"])):
            offloads_off(shaping.ifb_name(i))
    return applied


# Root-namespace `ip` and `tc` commands of the set-up run as one `ip -batch` and one `tc -batch`
# (all `ip` first: they create the ifb devices the `tc` filters redirect to), not a process each.
BATCHED = ("ip", "tc")


def run_batched(cmds: list) -> None:
    """Run root-namespace ip/tc argv lists, in order within each tool, one batch process per tool;
    a failing line is named with its command."""
    for tool in BATCHED:
        lines = [cmd[1:] for cmd in cmds if cmd[0] == tool]
        if not lines:
            continue
        if any(any(c.isspace() or c in "\"'\\#" for c in arg) for line in lines for arg in line):
            raise ValueError(f"{tool} -batch cannot carry these arguments: {lines}")
        res = subprocess.run([tool, "-batch", "-"], input="\n".join(" ".join(line) for line in lines) + "\n",
                             capture_output=True, text=True)
        if res.returncode != 0:
            raise RuntimeError(f"command failed ({res.returncode}) in `{tool} -batch` of:\n"
                               + "\n".join(f"  {tool} {' '.join(line)}" for line in lines)
                               + f"\n{res.stdout}{res.stderr}")


def netem_seed_supported() -> bool:
    """netem takes a seed from Linux 6.8 on (TCA_NETEM_PRNG_SEED) and tc must know the keyword."""
    release = tuple(int(x) for x in os.uname().release.split("-")[0].split(".")[:2])
    if release < (6, 8):
        return False
    res = subprocess.run(["tc", "qdisc", "add", "netem", "help"], capture_output=True, text=True)
    return "seed" in res.stdout + res.stderr


def apply_loss(db, job: dict) -> tuple:
    """Random loss on the data direction after the bottleneck (sw2's port toward each receiver
    carries only flow i's data), set after the base-RTT pings so they are not lost.
    Returns (commands, whether netem was seeded)."""
    rate = job["bottleneck"]["loss_rate"]
    if not rate:
        return [], None
    seeded = netem_seed_supported()
    applied = []
    for i, _flow in enumerate(job["flows"]):
        for cmd in shaping.netem_loss(db.receiver_side_ports[i], rate, job["seed"] + i if seeded else None):
            sh(cmd)
            applied.append({"node": "root", "cmd": cmd})
    log(f"random loss {rate:g} per packet after the bottleneck ({'seeded' if seeded else 'netem has no seed here'})")
    return applied, seeded


def loss_stats(db, job: dict, raw: pathlib.Path) -> None:
    """Each loss netem's counters (packets sent, dropped) into raw/loss.json."""
    stats = []
    for i, flow in enumerate(job["flows"]):
        dev = db.receiver_side_ports[i]
        text = sh(["tc", "-s", "qdisc", "show", "dev", dev], check=False)
        stats.append({"flow": flow["flow"], "dev": dev, "tc": text})
    (raw / "loss.json").write_text(json.dumps(stats, indent=1))


def sysctl(node, name: str, value=None) -> str:
    """Read (or write) a network sysctl as seen in a Mininet node's namespace (None: the root one),
    through /proc/sys from inside the namespace: no `sysctl` process per call (each guest process
    costs the UML host 50-60 ms of CPU to start, bench/results/host-cost-2026-11-23.md)."""
    path = "/proc/sys/" + name.replace(".", "/")

    def access():
        if value is None:
            return pathlib.Path(path).read_text().strip()
        pathlib.Path(path).write_text(str(value))
        return str(value)
    return netns.in_netns(node.pid if node is not None else None, access)


def tune_tcp_memory(job: dict, db) -> list:
    """Socket buffers large enough for the run's loss recovery (units.socket_buffer_bytes per
    socket, units.tcp_memory_bytes for the guest), after the dumbbell exists. Mininet sets
    tcp_rmem and tcp_wmem to '10240 87380 16777216' in the root namespace when it starts (mininet.util.fixLimits overwrites them), and each host's namespace
    copies them when it is created: a 16-MiB socket maximum, which caps the receivers' advertised
    window at 8 MiB (tcp_adv_win_scale 1). So raise the maxima of tcp_rmem and tcp_wmem in the
    root namespace and in every host's where they are smaller than the run needs, never lower
    them; and where the run needs more socket memory than the base guest holds (the same rule
    that sizes the guest's memory, resources.guest_mem_mb), tcp_mem (global) too."""
    from ..experiment import units
    need = units.socket_buffer_bytes(job)
    applied = []
    for node in [None] + db.senders + db.receivers:
        for name in ("tcp_rmem", "tcp_wmem"):
            low, default, high = (int(x) for x in sysctl(node, f"net.ipv4.{name}").split())
            if high < need:
                sysctl(node, f"net.ipv4.{name}", f"{low} {default} {need}")
                applied.append({"node": node.name if node else "root",
                                "cmd": ["sysctl", "-w", f"net.ipv4.{name}={low} {default} {need}"]})
    budget = units.tcp_memory_bytes(job)
    if budget <= units.TCP_MEMORY_IN_BASE_BYTES:
        return applied
    path = pathlib.Path("/proc/sys/net/ipv4/tcp_mem")
    pages = [int(x) for x in path.read_text().split()]
    need_pages = budget // 4096
    if pages[2] < pages[0] + need_pages:
        new = " ".join(str(p + need_pages) for p in pages)
        path.write_text(new)
        applied.append({"node": "root", "cmd": ["sysctl", f"net.ipv4.tcp_mem={new}"]})
    return applied


def record_socket_limits(db, raw: pathlib.Path) -> None:
    """The receivers' tcp_rmem and tcp_adv_win_scale as the flows will see them (raw/socket_limits.json):
    the ceiling of an advertised window, for fidelity.py's socket_buffers check."""
    out = []
    for i, node in enumerate(db.receivers, 1):
        rmem = [int(x) for x in sysctl(node, "net.ipv4.tcp_rmem").split()]
        scale = int(sysctl(node, "net.ipv4.tcp_adv_win_scale"))
        out.append({"flow": i, "tcp_rmem": rmem, "tcp_adv_win_scale": scale})
    (raw / "socket_limits.json").write_text(json.dumps(out, indent=1))


def measure_base_rtt(db, job: dict, raw: pathlib.Path) -> None:
    """Ping every path (in parallel) before any traffic; output kept for fidelity.py."""
    procs = []
    for i, _flow in enumerate(job["flows"]):
        out = open(raw / f"ping_{i + 1}.txt", "w")
        cmd = ["ping", "-n", "-c", "11", "-i", "0.2", topology.ip_of(db.receivers[i])]
        procs.append((db.senders[i].popen(cmd, stdout=out, stderr=subprocess.STDOUT), out))
    for proc, out in procs:
        proc.wait(timeout=60)
        out.close()


def sampler_grid(job: dict) -> tuple:
    """(tick_s, socket every, queue every): the sampler wakes on one grid of tick_s, the largest
    whole number of milliseconds dividing both intervals, and samples sockets every `socket every`
    and the queue every `queue every` ticks, so each is sampled at exactly the spec's interval
    (0.02 and 0.05 s: a 10-ms grid, every 2nd and every 5th tick)."""
    sock_ms, queue_ms = (round(job[k] * 1000) for k in ("sample_interval_s", "queue_sample_interval_s"))
    tick_ms = math.gcd(sock_ms, queue_ms)
    return tick_ms / 1000, sock_ms // tick_ms, queue_ms // tick_ms


def start_samplers(db, job: dict, raw: pathlib.Path, until: float, start: float):
    """Start the single sampler process, its grid from `start` (epoch s), and wait until its
    readers are open."""
    tick, every, queue_every = sampler_grid(job)
    config = {"until": until, "start": start, "tick_s": tick,
              "sockets": [{"netns_pid": node.pid, "ports": [traffic.port(f["flow"])], "every": every,
                           "out": str(raw / f"sockets_{node.name}.jsonl")}
                          for i, f in enumerate(job["flows"]) for node in (db.senders[i], db.receivers[i])],
              "qdisc": {"dev": db.bottleneck_intf, "out": str(raw / "qdisc.jsonl"), "every": queue_every},
              "cpu": {"out": str(raw / "cpu.jsonl"), "every": max(1, round(0.5 / tick))}}
    (raw / "samplers.json").write_text(json.dumps(config, indent=1))
    proc = samplers.Forked(config)       # `python3 -m bbrlab.guest.samplers samplers.json`, without a new interpreter
    line = proc.stdout.readline().strip()
    if line != "ready":
        raise RuntimeError(f"sampler failed to start (said {line!r}, exit {proc.poll()})")
    return proc


def start_receivers(db, job: dict, raw: pathlib.Path) -> list:
    """Start each flow's receiver and, for bulk, wait until it listens; [(proc, report file)]."""
    name, servers = traffic.tool(job), []
    for i, f in enumerate(job["flows"]):
        path = raw / f"{name}_receiver_{f['flow']}.json"
        if name == "iperf3":
            out = open(path, "w")
            servers.append((db.receivers[i].popen(traffic.server_cmd(f["flow"], name), stdout=out,
                                                  stderr=subprocess.STDOUT), out))
            continue
        proc = db.receivers[i].popen(traffic.server_cmd(f["flow"], name), stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True)
        line = proc.stdout.readline()
        if '"listening"' not in line:
            proc.kill()
            raise RuntimeError(f"receiver of flow {f['flow']} did not start: {line.strip()!r}"
                               f" {proc.stdout.read().strip()!r}")
        servers.append((proc, path))
    return servers


def stop_receivers(servers: list) -> None:
    """Stop receivers still running (a flow that never ended) and keep bulk's reports."""
    for proc, out in servers:
        if proc.poll() is None:
            proc.terminate()            # bulk reports what it received, "eof": false
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
        if isinstance(out, pathlib.Path):
            text = proc.stdout.read()
            tmp = out.with_name(out.name + ".tmp")
            tmp.write_text(text)
            tmp.rename(out)
        else:
            out.close()
        proc.wait()


def start_captures(db, job: dict, raw: pathlib.Path) -> list:
    """tcpdump at the bottleneck queue's entry (one per flow) and exit; waits until each listens."""
    points = [(f"enq_{f['flow']}", *capture.enqueue_point(i, job["rtt_on"], db))
              for i, f in enumerate(job["flows"])]
    points.append(("deq", db.bottleneck_intf, "out"))
    procs = []
    for name, dev, direction in points:
        proc = subprocess.Popen(capture.tcpdump_cmd(dev, direction, str(raw / f"capture_{name}.pcap")),
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        line = proc.stderr.readline()
        if "listening on" not in line:
            raise RuntimeError(f"tcpdump on {dev} did not start: {line.strip()} (exit {proc.poll()})")
        procs.append((name, dev, direction, proc))
    log(f"capturing headers at {', '.join(dev for _n, dev, _d, _p in procs)}")
    return procs


def stop_captures(procs: list, raw: pathlib.Path) -> None:
    """Stop tcpdump (it flushes its file) and keep its statistics in raw/capture.json."""
    stats = []
    for _name, _dev, _dir, proc in procs:
        proc.send_signal(signal.SIGINT)
    for name, dev, direction, proc in procs:
        _out, err = proc.communicate(timeout=60)
        stats.append(dict(capture.capture_stats(err), name=name, dev=dev, direction=direction,
                          exit=proc.returncode, log=err.strip()))
    (raw / "capture.json").write_text(json.dumps(stats, indent=1))


def snapshot(db, raw: pathlib.Path) -> None:
    """Raw netlink replies beside `ss`/`tc` output of the same moment (flow 1's sender and
    the bottleneck), and flow 1's receiver's sockets and socket-memory sysctls: a diagnostic,
    and the source of the parser tests' fixtures."""
    from . import netlink
    from .samplers import in_netns
    out = raw / "snapshot"
    out.mkdir(exist_ok=True)
    sender = db.senders[0]
    reader = in_netns(sender.pid, netlink.TcpSockets)
    (out / "sock_diag.bin").write_bytes(b"".join(reader.raw()))
    (out / "ss.txt").write_text(sh(["ss", "-tinH"], sender))
    receiver = db.receivers[0]
    (out / "ss_receiver.txt").write_text(sh(["ss", "-tinmH"], receiver))
    (out / "sysctl_receiver.txt").write_text(sh(["sysctl", "net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem",
                                                "net.ipv4.tcp_adv_win_scale"], receiver))
    (out / "qdisc.bin").write_bytes(b"".join(netlink.Qdiscs().raw()))
    (out / "tc.txt").write_text(sh(["tc", "-s", "qdisc", "show", "dev", db.bottleneck_intf]))


def run_schedule(db, job: dict, raw: pathlib.Path, t0: float, on_start=None) -> tuple:
    """Run testbed.schedule(job) (plus the snapshot at job["snapshot_at_s"], when set) on time,
    sleeping until t0 + each event's at_s: a flow start launches its sender on snd<i> (report in
    raw/<tool>_sender_<flow>.json) and calls on_start(i) with its 0-based index; an RTT change
    changes the flow's netem delay in place. Returns (the events as executed, each with its actual
    t_s after t0, [(sender process, its open report file)]); the caller waits for the senders and
    closes the files."""
    executed, clients = [], []
    events = testbed.schedule(job)
    if job["snapshot_at_s"] is not None:
        events.append({"at_s": job["snapshot_at_s"], "kind": "snapshot", "flow": 1, "value": None})
        events.sort(key=lambda e: e["at_s"])
    for event in events:
        vclock.sleep_until(t0 + event["at_s"])
        i = event["flow"] - 1
        if event["kind"] == "snapshot":
            snapshot(db, raw)
        elif event["kind"] == "start":
            name = traffic.tool(job)
            out = open(raw / f"{name}_sender_{event['flow']}.json", "w")
            cmd = traffic.client_cmd(job["flows"][i], topology.ip_of(db.receivers[i]), name)
            clients.append((db.senders[i].popen(cmd, stdout=out, stderr=subprocess.PIPE), out))
            if on_start is not None:
                on_start(i)
        else:
            node, dev = shaping.delay_device(i, job["rtt_on"], db)
            sh(shaping.netem_delay(dev, event["value"], change=True)[0],
               node if node in db.net.hosts else None)
        executed.append(dict(event, t_s=round(time.time() - t0, 4)))
        log(f"t={executed[-1]['t_s']:7.2f}s {event['kind']} flow {event['flow']}"
            + (f" rtt {event['value']} ms" if event["value"] is not None else ""))
    return executed, clients


@dataclass
class Run:
    """One run in this testbed, as its phases leave it: the job, where it writes, what it built."""
    job: dict
    raw: pathlib.Path
    hooks: bench_hooks.Hooks
    t_start: float
    timings: dict = field(default_factory=dict)
    db: object = None                   # the dumbbell (topology.build)
    available: list = None              # the kernel's congestion controls
    applied: list = field(default_factory=list)   # set-up commands, for the timeline
    seeding: dict = None
    loss_seeded: object = None
    servers: list = field(default_factory=list)
    sampler: object = None
    captures: list = field(default_factory=list)
    t0: float = None
    until: float = None
    executed: list = field(default_factory=list)
    failed: list = field(default_factory=list)


def start_services(run: Run) -> None:
    """Before the network: note where the guest's randomness came from (read while the boot
    messages are still in the kernel log), load the run's variant modules, check that every
    congestion control the flows use exists, and start Open vSwitch where the guest has the kernel
    to itself (job["guest"]["start_ovs"]; a native host runs its own)."""
    job = run.job
    run.seeding = randomness(sh(["dmesg"], check=False))
    run.hooks.started()
    load_modules(job)
    run.available = check_congestion_controls(job)
    if job["guest"]["start_ovs"] and job["switch"] == "ovs":
        start_ovs()


def build_network(run: Run) -> None:
    """The dumbbell: hosts, switches and links (topology.py), not yet shaped."""
    job = run.job
    log(f"building dumbbell with {len(job['flows'])} flow(s), {job['bottleneck']['rate_mbps']:g} Mbit/s bottleneck")
    run.db = topology.build(len(job["flows"]), job["switch"], job["mtu_bytes"])


def shape_network(run: Run) -> None:
    """Socket buffers for the run's window, offloads, qdiscs, delays and the bottleneck (configure),
    and the receivers' socket limits on record; the end of set-up."""
    run.applied = tune_tcp_memory(run.job, run.db) + configure(run.db, run.job)
    record_socket_limits(run.db, run.raw)
    run.timings["setup_s"] = round(time.time() - run.t_start, 3)
    run.hooks.set_up()


def measure_paths(run: Run) -> None:
    """Each path's base RTT (before any traffic and before the random loss, so no ping is lost)."""
    log(testbed.SET_UP)          # the host times the set-up by this line (host/backends/phases.py)
    measure_base_rtt(run.db, run.job, run.raw)


def start_receivers_and_samplers(run: Run) -> None:
    """At the flows' fixed start (vclock.py) the kernel's generator restarts from the seed; then the
    random loss, the flows' receivers, the sampler (on a grid from that start) and (capture:
    bottleneck) tcpdump; time zero is LEAD_S after that start."""
    job, raw = run.job, run.raw
    start = vclock.flows_phase_start(time.time())
    vclock.sleep_until(start)
    run.seeding["restarted"] = restart_randomness(job, run.seeding)
    if job.get("clock") == "virtual":
        vclock.driver_first()
    log("starting receivers")
    loss_cmds, run.loss_seeded = apply_loss(run.db, job)
    run.applied += loss_cmds
    run.servers = start_receivers(run.db, job, raw)
    log("starting sampler")
    until = start + 60 + LEAD_S + job["duration_s"] + TAIL_S
    run.sampler = start_samplers(run.db, job, raw, until, start)
    run.captures = start_captures(run.db, job, raw) if job["capture"] == "bottleneck" else []
    run.t0 = start + LEAD_S
    run.until = run.t0 + job["duration_s"] + TAIL_S
    if time.time() > run.t0:
        log(f"warning: receivers and samplers took {time.time() - start:.3f} s to start, past time zero"
            f" ({LEAD_S:g} s after the flows' phase began): this run's timeline depends on how long they took")
    log(f"time zero in {run.t0 - time.time():.1f} s; run lasts {job['duration_s']:g} s")
    run.hooks.samplers_started(run.t0, TAIL_S)


def sender_state(pid: int) -> str:
    """What a sender process is doing, for the error of one that does not end: its state, the kernel
    function it sleeps in and its kernel stack (where the guest kernel has them)."""
    proc = pathlib.Path(f"/proc/{pid}")
    parts = []
    for name in ("status", "wchan", "stack"):
        try:
            text = (proc / name).read_text(errors="replace")
        except OSError as e:
            text = f"unreadable ({e.strerror})"
        if name == "status":
            text = next((line for line in text.splitlines() if line.startswith("State:")), "State: ?")
        parts.append(f"{name}: {' | '.join(text.split(chr(10))).strip(' |')}")
    return "; ".join(parts)


def run_flows(run: Run) -> None:
    """The schedule (flow starts, RTT changes, the snapshot) on time, then wait for every sender
    to end; a sender that failed is noted in run.failed."""
    job = run.job
    run.executed, clients = run_schedule(run.db, job, run.raw, run.t0,
                                         lambda i: run.hooks.flow_started(job, run.servers, i))
    for k, (proc, out) in enumerate(clients):
        try:
            proc.wait(timeout=max(5.0, run.until - time.time() + 30))
        except subprocess.TimeoutExpired:
            log(f"flow {k + 1}: its sender has not ended 30 s after the run's end; {sender_state(proc.pid)}")
            raise
        finally:
            out.close()
    run.failed = [f"flow {k + 1}: {p.stderr.read().decode(errors='replace').strip()}"
                  for k, (p, _o) in enumerate(clients) if p.returncode != 0]
    run.hooks.flows_done()


def collect(run: Run) -> None:
    """After the tail: stop the sampler, record the modules' and the loss qdiscs' state, stop the
    captures and the receivers (keeping their reports), and write raw/timeline.json last (its
    presence says the run completed)."""
    job, raw, db = run.job, run.raw, run.db
    time.sleep(max(0.0, run.until - time.time()))
    run.sampler.send_signal(signal.SIGTERM)
    run.sampler.wait(timeout=30)
    module_state(job, raw)
    if job["bottleneck"]["loss_rate"]:
        loss_stats(db, job, raw)
    stop_captures(run.captures, raw)
    stop_receivers(run.servers)
    run.timings["guest_s"] = round(time.time() - run.t_start, 3)
    run.hooks.experiment_done()
    timeline = {"t0": run.t0, "lead_s": LEAD_S, "events": run.executed, "commands": run.applied,
                "bottleneck_intf": db.bottleneck_intf, "congestion_controls": run.available,
                "kernel_release": os.uname().release, "timings": run.timings, "loss_seeded": run.loss_seeded,
                "randomness": run.seeding,
                "flows": [{"flow": f["flow"], "sender_ip": topology.ip_of(db.senders[i]),
                           "receiver_ip": topology.ip_of(db.receivers[i]),
                           "port": traffic.port(f["flow"])} for i, f in enumerate(job["flows"])]}
    tmp = raw / "timeline.json.tmp"
    tmp.write_text(json.dumps(timeline, indent=1))
    tmp.rename(raw / "timeline.json")


def finish_network(run: Run) -> None:
    """However the run ended: where the guest has the kernel to itself (job["guest"]["teardown"]
    false) the guest powers off next and takes the network with it, and Mininet's teardown (an
    `ip link del`, `ifconfig` or `brctl` process per interface and switch) would only cost the
    host CPU; Open vSwitch's state is kept for the record then. On a shared host the network
    is removed."""
    if not run.job["guest"]["teardown"]:
        if run.job["switch"] == "ovs" and run.job["guest"]["start_ovs"]:
            record_ovs_state(run.raw)
    elif run.db is not None:
        run.db.net.stop()


def main(run_dir: str) -> int:
    """Run the experiment of RUN_DIR/job.json (a resolved run, spec.py, with the runner's
    backend, modules and guest keys) in this testbed, into RUN_DIR/raw/ (module docstring).

    The phases, in order: start_services, build_network, shape_network (the end of set-up),
    measure_paths, start_receivers_and_samplers, run_flows, collect; finish_network however it
    ends. The host times boot and set-up by the lines it prints (host/backends/phases.py).
    Returns 0 when every sender ran to its end, 3 when one failed; raises on anything else."""
    run_dir = pathlib.Path(run_dir)
    job = json.loads((run_dir / "job.json").read_text())
    wait_for_virtual_start(job)
    if job.get("clock") == "virtual":
        vclock.no_timer_slack()      # inherited by the sampler, the receivers and the senders
    raw = run_dir / "raw"
    raw.mkdir(exist_ok=True)
    run = Run(job=job, raw=raw, hooks=bench_hooks.for_job(job, raw, log), t_start=time.time())
    start_services(run)
    build_network(run)
    try:
        shape_network(run)
        measure_paths(run)
        start_receivers_and_samplers(run)
        run_flows(run)
        collect(run)
        if run.failed:
            log("sender(s) failed: " + "; ".join(run.failed))
            return 3
        log("done")
        return 0
    finally:
        finish_network(run)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
