#!/usr/bin/env Rscript
# analysis/figures/tang/tang_fig06.R -- Tang, Fig. 6 reproduced: one BBR flow against one
# CUBIC flow at 10 ms one way (20-ms RTT), 10 Mbit/s, 1.5 BDP buffer (and 3 BDP in the paper
# profile): (a) throughput, (b) cwnd over time.
#
# Usage:   Rscript analysis/figures/tang/tang_fig06.R <runs_dir> <out.pdf> [warmup_s] [bin_s]
# Inputs:  runs of experiment "tang_fig06" below <runs_dir>.
# Outputs: <out.pdf> and <out>.png, atomically: rows (a) throughput (1-s bins) and (b) cwnd
#          per flow; one column per buffer (first valid repetition), 1.5 BDP first.

script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "..", "..", "lib", "figure.R"), chdir = TRUE)
source(file.path(script_dir, "common.R"))

a <- figure_args(figure_experiment())
runs <- tang_firsts(a$runs, function(r) r$meta$bottleneck$buffer_bytes %||% 0)
tang_series_figure(figure_experiment(), a$runs, runs,
                   c(goodput = "(a) throughput", cwnd = "(b) cwnd"),
                   function(r) sprintf("%s (rep %d)", point_label(r$meta), r$key$repetition),
                   "Fig. 6: one BBR vs one CUBIC flow from 0 s, 10 Mbit/s, 20 ms RTT; first valid repetition per buffer",
                   a$out_pdf, a$warmup_s, row_height = 2, bin_s = if (is.na(a$bin_s)) 1 else a$bin_s)
