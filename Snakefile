# The pipeline: testbed kernel -> runs -> tidy data -> figures/tables -> report.
#
#   snakemake --cores all                          quick profile (default)
#   snakemake --cores all --config profile=paper   the papers' durations and repetitions
#   snakemake --cores all --config backend=ns3     the same experiments in ns-3, into results/<profile>-ns3/
#   ... --config backend=ns3 ns3_rules=linux       ns-3 with Linux's BBR and rate rules, into results/<profile>-ns3-linux/
#   snakemake --cores all crosscheck               the backend cross-check (workflow/rules/crosscheck.smk)
#   snakemake --cores all control_runs             the transfer-length rule's control runs (workflow/rules/controls.smk)
#
# What runs is config/experiments.csv (one row per experiment: paper, items, profiles, spec,
# figure script, report section; paper/papers.csv per paper); config/<profile>.yaml holds only the
# profile's settings (checked against workflow/schemas/config.schema.yaml). The rules are in
# workflow/rules/. Each run is one job (one testbed boot); runs of all experiments share the
# cores. Results: results/<profile>/runs/<experiment>/<point>/rep<k>/ (see docs/tidy-data.md);
# the report: results/<profile>/report/report.pdf.
import pathlib
import sys

from snakemake.utils import min_version

sys.path.insert(0, str(pathlib.Path(workflow.basedir) / "mininet"))
from bbrlab.experiment import pipeline_config
from bbrlab.experiment import pipeline_scheduler

# One pending re-evaluation timer in Snakemake's scheduler instead of a new chain of scheduling
# rounds per finished job (bbrlab/experiment/pipeline_scheduler.py says why).
pipeline_scheduler.coalesce_reevaluations()

min_version("8.0")

configfile: "config/quick.yaml"
if config.get("profile", "quick") != "quick":
    _profile = config["profile"]
    configfile: f"config/{_profile}.yaml"
    config["profile"] = _profile
pipeline_config.validate(config, "workflow/schemas/config.schema.yaml")


include: "workflow/rules/common.smk"
include: "workflow/rules/kernel.smk"
include: "workflow/rules/runs.smk"
include: "workflow/rules/ns3.smk"
include: "workflow/rules/reference.smk"
include: "workflow/rules/controls.smk"
include: "workflow/rules/derived.smk"
include: "workflow/rules/analysis.smk"
include: "workflow/rules/report.smk"
include: "workflow/rules/crosscheck.smk"


rule all:
    input:
        f"{RES}/report/report.pdf",
        f"{RES}/report/generated/point_labels.csv",
        [f"{RES}/refused.csv"] if NS3 else [],
    default_target: True
