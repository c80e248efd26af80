#!/usr/bin/env Rscript
# analysis/figures/yang2019/yang2019_fig04a.R -- Yang et al. (2019) Fig. 4(a) reproduced:
# Jain's fairness index of a 10-ms and a 15-ms RTT flow against the bottleneck rate (10,
# 20, 50 Mbit/s), BBR / BBQ / Adaptive-BBR.
#
# Usage:   Rscript analysis/figures/yang2019/yang2019_fig04a.R <runs_dir> <out.pdf> [warmup_s]
# Inputs:  runs of experiment "yang2019_fig04a" below <runs_dir>.
# Outputs: <out.pdf> and <out>.png, atomically: bars per rate and algorithm, ss_jain() (the
#          standard Jain's index of the steady-state goodputs), as yang_bar_figure() draws it.

script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "..", "..", "lib", "figure.R"), chdir = TRUE)
source(file.path(script_dir, "common.R"))

yang_bar_figure(figure_experiment(),
                function(r, warmup_s) tibble(x = r$meta$bottleneck$rate_mbps, value = ss_jain(r, warmup_s)),
                "Bottleneck bandwidth (Mbit/s)", "Jain's fairness index",
                "Fig. 4(a): 10-ms vs 15-ms RTT flows, 5 MB buffer; Jain's index of steady-state goodputs",
                y_limits = c(0, 1.08), hline = 1)
