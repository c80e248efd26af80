#!/usr/bin/env Rscript
# analysis/figures/yang2019/yang2019_fig03.R -- Yang et al. (2019) Fig. 3 reproduced: a 5-ms
# and a 20-ms RTT flow on 20 Mbit/s (5 MB buffer), BBR / BBQ / Adaptive-BBR; throughput of
# each flow over time (Fig. 3(a)-(c)), and the same with 1448-byte segments (packet size).
#
# Usage:   Rscript analysis/figures/yang2019/yang2019_fig03.R <runs_dir> <out.pdf> [warmup_s] [bin_s]
# Inputs:  runs of experiment "yang2019_fig03" below <runs_dir>.
# Outputs: <out.pdf> and <out>.png, atomically: one panel per sweep point (its first valid
#          repetition), 1000-byte segments first, as yang_goodput_figure() in common.R draws it.

script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "..", "..", "lib", "figure.R"), chdir = TRUE)
source(file.path(script_dir, "common.R"))

yang_goodput_figure(figure_experiment(), "Fig. 3: 5-ms vs 20-ms RTT flows, 20 Mbit/s, 5 MB buffer")
