#!/usr/bin/env Rscript
# analysis/figures/kim2019/kim2019_fig05.R -- Kim et al. (2019) Fig. 5 reproduced:
# a 10-ms and a 100-ms RTT BBR-E flow, 1.5 MB buffer; throughput of each flow over time.
#
# Usage:   Rscript analysis/figures/kim2019/kim2019_fig05.R <runs_dir> <out.pdf> [warmup_s] [bin_s]
# Inputs:  runs of experiment "kim2019_fig05" below <runs_dir>.
# Outputs: <out.pdf> and <out>.png, atomically: one panel per sweep point (its first valid
#          repetition), as kim_goodput_figure() in common.R draws it.

script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "..", "..", "lib", "figure.R"), chdir = TRUE)
source(file.path(script_dir, "common.R"))

kim_goodput_figure(figure_experiment(), "Fig. 5: a 10-ms and a 100-ms RTT BBR-E flow, 1.5 MB buffer")
