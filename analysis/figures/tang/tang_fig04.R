#!/usr/bin/env Rscript
# analysis/figures/tang/tang_fig04.R -- Tang, Fig. 4 reproduced: three BBR flows at the
# default configuration (10 Mbit/s, 200-ms RTT, 1.5 BDP): (a) inflight, (b) RTT, (c) bottleneck
# queue length over time, beside one BBR flow alone (the reference of the "growth").
#
# Usage:   Rscript analysis/figures/tang/tang_fig04.R <runs_dir> <out.pdf> [warmup_s]
# Inputs:  runs of experiment "tang_fig04" below <runs_dir>.
# Outputs: <out.pdf> and <out>.png, atomically: rows (a)-(c) per flow, one column per flow
#          count (first valid repetition), three flows first.

script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "..", "..", "lib", "figure.R"), chdir = TRUE)
source(file.path(script_dir, "common.R"))

a <- figure_args(figure_experiment())
runs <- tang_firsts(a$runs, function(r) -nrow(flows_table(r$meta)))
tang_series_figure(figure_experiment(), a$runs, runs,
                   c(inflight = "(a) inflight", rtt = "(b) RTT", queue = "(c) queue"),
                   function(r) sprintf("%s (rep %d)", point_label(r$meta), r$key$repetition),
                   "Fig. 4: BBR flows from 0 s, 10 Mbit/s, 200 ms RTT, 1.5 BDP buffer; first valid repetition per flow count",
                   a$out_pdf, a$warmup_s)
