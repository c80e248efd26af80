#!/usr/bin/env Rscript
# analysis/figures/tang/tang_table3.R -- Tang, Table III reproduced: the total cwnd of 1, 2,
# 3, 5 and 8 BBR flows at 90 s (median of the summed cwnd over 85-95 s, ss_total_cwnd_pkts),
# beside the published values, with the increase over one flow (the table's second row).
#
# Usage:   Rscript analysis/figures/tang/tang_table3.R <runs_dir> <out.pdf> [warmup_s]
# Inputs:  runs of experiment "tang_table3" below <runs_dir>.
# Outputs: <out.pdf> and <out>.png, atomically: bars per number of flows labelled with the mean
#          and its increase over one flow, crosses: Table III's totals.

script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "..", "..", "lib", "figure.R"), chdir = TRUE)
source(file.path(script_dir, "common.R"))

WINDOW <- c(start = 85, end = 95)
PUBLISHED <- tibble(x = c("1", "2", "3", "5", "8"), series = "BBR (sum over flows)",
                    value = c(342, 360, 395, 415, 444))
tang_bar_figure(figure_experiment(),
                function(r, warmup_s) {
                  if (run_end_s(r) < WINDOW[["end"]]) return(NULL)
                  tibble(x = as.character(nrow(flows_table(r$meta))),
                         value = ss_total_cwnd_pkts(r, window = WINDOW), series = "BBR (sum over flows)")
                },
                "Number of BBR flows", "Total cwnd at 90 s (packets)",
                "Table III: N BBR flows from 0 s, 10 Mbit/s, 200 ms RTT, 1.5 BDP; median of the summed cwnd over 85-95 s",
                published = PUBLISHED, x_levels = c("1", "2", "3", "5", "8"),
                label_of = function(s) {
                  one <- s$mean[s$x == "1"]
                  inc <- if (length(one) == 1) sprintf("\n(%+.0f %%)", 100 * (s$mean / one - 1)) else ""
                  sprintf("%.0f%s", s$mean, inc)
                }, height = 3.4)
