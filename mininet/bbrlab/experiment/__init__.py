"""What an experiment is: the first stage of the data path.

A spec (YAML, mininet/specs/) is checked against spec_schema.yaml and expanded into
resolved run specs, one per sweep point and repetition; units, point labels and the
variant registry (variants.yaml) belong to that description. Nothing here boots or
measures anything: host/ takes a resolved run spec from here. The testbed facts the later
stages share (flow ports, ifb names, the phase lines, where the guest programs are, which
backends simulate) live here too (testbed.py), so that those stages need not import each other.

    cost.py             What a run is expected to cost in host CPU-seconds, from its spec alone.
    experiments.py      The experiments table (config/experiments.csv) and the papers table
                        (paper/papers.csv).
    labels.py           Human labels of sweep points ("BBQ, 20 vs 50 ms", "10 Mbit/s", "RED max
                        0.33 MB, p 2 %").
    pipeline_config.py  The pipeline's configuration (config/<profile>.yaml plus --config)
                        checked against its schema.
    pipeline_progress.py  One short line per finished job of the pipeline: its phase, the runs
                        done and left, the time.
    rsources.py         The R files an analysis script sources (what its rule depends on).
    runkey.py           The content key of one resolved run: what the pipeline reruns a run for.
    spec.py             Experiment specs: load, validate, expand.
    spec_schema.yaml    JSON Schema (draft 2020-12) of an experiment spec, written as YAML.
    testbed.py          Facts of the testbed that the host, the guest and the data stages share.
    units.py            Rate, size and bandwidth-delay-product arithmetic.
    variants.py         The congestion controls a spec may name and what the project knows of
                        each (variants.yaml).
    variants.yaml       The congestion controls a spec may name: one source of truth for their
                        names, labels, module parameters, ranges and defaults, and what the tidy
                        data, the fidelity checks and the ns-3 backend need to know of each
                        (read by mininet/bbrlab/experiment/variants.py, and by
                        analysis/lib/variants.R for the labels).
    yamltext.py         YAML as every reader here loads it (libyaml's C parser where PyYAML has it).
"""
