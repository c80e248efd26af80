"""bbrlab: emulated-network experiments on BBR fairness.

Data flows through the modules in this order:

    spec.py      experiment spec (YAML) -> validated, expanded run specs
    units.py     rate / buffer / BDP arithmetic shared by all of them
    backends/    boot the testbed (uml, native) and run guest.py in it
    guest.py     inside the testbed: topology.py + shaping.py + traffic.py,
                 samplers.py writing raw/ files
    tidy.py      raw/ -> tidy/*.csv (schema in docs/tidy-data.md)
    fidelity.py  raw/ + tidy/ -> fidelity verdict in run.json
    cli.py       `python3 -m bbrlab ...`
"""
