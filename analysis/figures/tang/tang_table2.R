#!/usr/bin/env Rscript
# analysis/figures/tang/tang_table2.R -- Tang, Table II reproduced: the whole-run average
# throughput of one BBR flow and of one CUBIC flow alone at random packet loss 0.0001, 0.001,
# 0.01 (and, in the paper profile, 0.1405: 0.0001 per byte), beside the published values.
#
# Usage:   Rscript analysis/figures/tang/tang_table2.R <runs_dir> <out.pdf> [warmup_s]
# Inputs:  runs of experiment "tang_table2" below <runs_dir>.
# Outputs: <out.pdf> and <out>.png, atomically: bars per loss rate and algorithm
#          (ss_goodput_mbps over 0 s to the end), crosses: Table II.

script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "..", "..", "lib", "figure.R"), chdir = TRUE)
source(file.path(script_dir, "common.R"))

PUBLISHED <- tibble(x = rep(c("0.0001", "0.001", "0.01"), 2), series = rep(c("BBR", "CUBIC"), each = 3),
                    value = c(9.12, 9.08, 1.09, 9.22, 3.93, 0.92))
tang_bar_figure(figure_experiment(),
                function(r, warmup_s) tibble(x = format(as.numeric(r$meta$bottleneck$loss_rate %||% 0), scientific = FALSE,
                                                        drop0trailing = TRUE),
                                             value = ss_goodput_mbps(r, 1, window = c(start = 0, end = run_end_s(r))),
                                             series = tang_cc(r)),
                "Random packet loss rate (per packet)", "Average throughput (Mbit/s)",
                "Table II: one flow alone, 10 Mbit/s, 200 ms RTT, 1.5 BDP; goodput averaged over the whole run",
                published = PUBLISHED, x_levels = c("0.0001", "0.001", "0.01"))
