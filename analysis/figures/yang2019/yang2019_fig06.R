#!/usr/bin/env Rscript
# analysis/figures/yang2019/yang2019_fig06.R -- Yang et al. (2019) Fig. 6 reproduced
# (responsiveness): on 20 Mbit/s a 15-ms RTT flow joins a 10-ms flow at 3 s and leaves at
# 63 s; BBR (Fig. 6(a)) and Adaptive-BBR (Fig. 6(b)); throughput of each flow over time.
#
# Usage:   Rscript analysis/figures/yang2019/yang2019_fig06.R <runs_dir> <out.pdf> [warmup_s] [bin_s]
# Inputs:  runs of experiment "yang2019_fig06" below <runs_dir>.
# Outputs: <out.pdf> and <out>.png, atomically: one panel per algorithm (its first valid
#          repetition), as yang_goodput_figure() in common.R draws it.

script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "..", "..", "lib", "figure.R"), chdir = TRUE)
source(file.path(script_dir, "common.R"))

yang_goodput_figure(figure_experiment(), "Fig. 6: a 15-ms flow joins a 10-ms flow at 3 s and leaves at 63 s, 20 Mbit/s")
