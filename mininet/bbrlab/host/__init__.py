"""The host side of a run: the second stage of the data path.

runner.py turns a resolved run spec (experiment/) into a run directory, builds what the
testbed needs (variant modules, the guest's C programs), and backends/ boot the testbed
(uml, native; ns3 simulates) and start guest/ in it; afterwards the runner hands raw/ to
data/. Clusters, the Vagrant VM, clean-up and the backend cross-check live here too.

    backends/          Testbed backends: where the guest side (bbrlab.guest) runs.
    cleanup.py         Remove what a native run leaves on the host (`bbrlab clean`, like
                       Mininet's `mn -c`).
    cluster.py         Pre-flight checks for cluster execution: find what cannot work before any
                       job is submitted.
    crosscheck.py      Backend cross-check: which backends this host can run, asked before
                       anything runs.
    guest_programs.py  The project's C programs that run in the testbed, compiled on the host
                       into build/bin/.
    modules.py         The kernel modules a run loads (host side: builds or finds them).
    progress.py        Progress of a long run, read from the host without touching the testbed.
    resources.py       What one run asks of a cluster node: CPUs, memory and a time limit.
    runner.py          Host side of one run: prepare, execute on a backend, tidy, check,
                       publish.
    stamped_build.py   Compile a program once, on the host, and again only when what it is built
                       from changes.
    vagrant.py         The pipeline's `backend=vagrant`: each run on the native backend inside
                       the Vagrant VM.
"""
