#!/usr/bin/env Rscript
# analysis/figures/tang/tang_fig03.R -- Tang, Fig. 3 reproduced: two BBR flows on 10 Mbit/s
# with a 1.5-BDP buffer: (a) throughput at the default 100 ms one way (200-ms RTT), (b) cwnd
# and (c) RTT at 10 ms (20-ms RTT); all three quantities are drawn for both delays.
#
# Usage:   Rscript analysis/figures/tang/tang_fig03.R <runs_dir> <out.pdf> [warmup_s] [bin_s]
# Inputs:  runs of experiment "tang_fig03" below <runs_dir>.
# Outputs: <out.pdf> and <out>.png, atomically: rows throughput (1-s bins), cwnd, RTT; one
#          column per sweep point (first valid repetition): both flows from 0 s first, 200-ms RTT
#          before 20 ms; the paper profile adds the second flow joining at 5 s.

script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "..", "..", "lib", "figure.R"), chdir = TRUE)
source(file.path(script_dir, "common.R"))

a <- figure_args(figure_experiment())
runs <- tang_firsts(a$runs, function(r) 1000 * flows_table(r$meta)$start_s[2] - flows_table(r$meta)$rtt_ms[1])
tang_series_figure(figure_experiment(), a$runs, runs,
                   c(goodput = "(a) throughput", cwnd = "(b) cwnd", rtt = "(c) RTT"),
                   function(r) sprintf("%s (rep %d)", point_label(r$meta), r$key$repetition),
                   "Fig. 3: two BBR flows, 10 Mbit/s, 1.5 BDP buffer; first valid repetition per point",
                   a$out_pdf, a$warmup_s, row_height = 2, bin_s = if (is.na(a$bin_s)) 1 else a$bin_s)
