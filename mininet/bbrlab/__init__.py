"""bbrlab: emulated-network experiments on BBR fairness.

The subpackages follow the data path, in this order:

    experiment/  what an experiment is: spec (YAML) -> validated, expanded run specs
                 (spec.py, spec_schema.yaml), units, point labels, the variant registry
    host/        the host side of a run: runner.py, backends/ that boot the testbed
                 (uml, native, ns3) and start guest/ in it, variant modules, the guest's
                 C programs, clusters, the Vagrant VM, clean-up
    guest/       inside the testbed: `python3 -m bbrlab.guest RUN_DIR` builds the dumbbell,
                 shapes it, runs samplers and flows, writes raw/
    data/        raw/ -> tidy/*.csv (schema in docs/tidy-data.md), header captures, the
                 fidelity verdict in run.json
    cli.py       `python3 -m bbrlab ...`
"""
