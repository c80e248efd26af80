"""Inside the testbed: the third stage of the data path.

`python3 -m bbrlab.guest RUN_DIR` (the UML guest's init, guest_init.c, or the native
backend) runs driver.py: it reads RUN_DIR/job.json, builds the dumbbell (topology,
veth, ifconfig, netns), shapes it (shaping, fq), starts the samplers and the flows (traffic,
bulk.c) and writes what it measured to RUN_DIR/raw/ for data/.

    bench_hooks.py  Optional measurement hooks of the bench scripts (bench/), kept out of the
                    guest's production path.
    bulk.c          Bulk TCP sender and receiver: the flows' two ends, as few system calls as
                    the transfer allows.
    capture.py      Where and how the guest captures packet headers at the bottleneck
                    (`capture: bottleneck`).
    driver.py       The experiment, run inside the testbed (UML guest or native host) as root.
    fq.py           The sender's pacing qdisc by the one rtnetlink request `tc qdisc replace
                    dev D root fq` sends.
    guest_init.c    PID 1 of the User-Mode Linux testbed guest.
    ifconfig.py     What Mininet's `ifconfig DEV ADDR/LEN up` and `ifconfig lo up` do, by the
                    same ioctls.
    netlink.py      Minimal netlink readers for the samplers: TCP sockets (sock_diag) and
                    queueing-discipline statistics (rtnetlink).
    netns.py        Run a call inside another process's network namespace and come back.
    offloads.py     Segmentation offloads (TSO, GSO, GRO) off and read back, without an
                    `ethtool` process.
    procacct.py     Per-process event counts of the testbed guest, for the host-cost profile.
    quickack.py     A receiver's quickack host route by the one rtnetlink request `ip route add`
                    sends.
    rcvlowat.py     SO_RCVLOWAT on the iperf3 receivers' data sockets: a measured host-cost
                    saving, not used.
    rtnl.py         One rtnetlink request and the kernel's acknowledgement of it (fq.py,
                    quickack.py, veth.py).
    samplers.py     The sampler: one process that samples every flow's sockets, the bottleneck
                    queue and the guest CPU on a fixed time grid.
    shaping.py      Traffic control on the dumbbell: bottleneck rate and buffer, AQM, per-flow
                    propagation delay, sender pacing qdisc, access links, random loss, receivers
                    without delayed ACKs, segmentation offloads.
    topology.py     The dumbbell, on the Mininet API.
    traffic.py      Bulk TCP flows: the commands of their two ends.
    veth.py         A veth pair by the one rtnetlink request `ip link add ... type veth peer
                    ...` sends.
"""
