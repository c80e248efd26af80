"""From raw traces to a verdict: the last stage of the data path.

tidy.py turns a run's raw/ into tidy/*.csv (the schema is docs/tidy-data.md), capture.py
reads header captures into per-flow backlog, fidelity.py judges the run and writes its
verdict into run.json. The R analysis (analysis/) reads only what these write.

    archive.py   The results archive: finished runs kept in the repository.
    capture.py   Per-flow bottleneck backlog from packet-header captures on both sides of the
                 queue.
    columnar.py  A lossless column-major text encoding of a tidy CSV (the archive's storage).
    fidelity.py  Fidelity monitor: is this run a faithful emulation of its spec?
    tidy.py      raw/ -> tidy/*.csv, following docs/tidy-data.md.
"""
