#!/usr/bin/env Rscript
# analysis/figures/yang2019/yang2019_fig04c.R -- Yang et al. (2019) Fig. 4(c) reproduced: the
# share (% of all flows' throughput) of one 10-ms RTT flow against N = 1-5 flows of 15 ms (quick: 1, 3, 5)
# on 20 Mbit/s, BBR / BBQ / Adaptive-BBR.
#
# Usage:   Rscript analysis/figures/yang2019/yang2019_fig04c.R <runs_dir> <out.pdf> [warmup_s]
# Inputs:  runs of experiment "yang2019_fig04c" below <runs_dir>.
# Outputs: <out.pdf> and <out>.png, atomically: bars per N and algorithm, ss_share_pct() of
#          flow 1; dashed ticks: the fair share 100 / (N + 1), as yang_bar_figure() draws it.

script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "..", "..", "lib", "figure.R"), chdir = TRUE)
source(file.path(script_dir, "common.R"))

yang_bar_figure(figure_experiment(),
                function(r, warmup_s) tibble(x = nrow(flows_table(r$meta)) - 1, value = ss_share_pct(r, 1, warmup_s)),
                "Number of 15-ms RTT flows", "Share of the 10-ms RTT flow (%)",
                "Fig. 4(c): one 10-ms flow vs N flows of 15 ms, 20 Mbit/s, 5 MB buffer; steady-state share; dashed: fair share",
                y_limits = c(0, 100), fair = function(n) 100 / (n + 1))
