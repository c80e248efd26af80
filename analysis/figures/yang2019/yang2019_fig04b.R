#!/usr/bin/env Rscript
# analysis/figures/yang2019/yang2019_fig04b.R -- Yang et al. (2019) Fig. 4(b) reproduced:
# Jain's fairness index of a 10-ms RTT flow against a flow of 15, 20, 30 or 50 ms on 20
# Mbit/s, BBR / BBQ / Adaptive-BBR.
#
# Usage:   Rscript analysis/figures/yang2019/yang2019_fig04b.R <runs_dir> <out.pdf> [warmup_s]
# Inputs:  runs of experiment "yang2019_fig04b" below <runs_dir>.
# Outputs: <out.pdf> and <out>.png, atomically: bars per RTT and algorithm, ss_jain(), as
#          yang_bar_figure() draws it.

script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "..", "..", "lib", "figure.R"), chdir = TRUE)
source(file.path(script_dir, "common.R"))

yang_bar_figure(figure_experiment(),
                function(r, warmup_s) tibble(x = max(flows_table(r$meta)$rtt_ms), value = ss_jain(r, warmup_s)),
                "RTT of the competing flow (ms; the other flow: 10 ms)", "Jain's fairness index",
                "Fig. 4(b): 10-ms flow vs one flow of 15-50 ms, 20 Mbit/s, 5 MB buffer; Jain's index of steady-state goodputs",
                y_limits = c(0, 1.08), hline = 1)
