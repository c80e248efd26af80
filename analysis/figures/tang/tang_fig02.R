#!/usr/bin/env Rscript
# analysis/figures/tang/tang_fig02.R -- Tang, Fig. 2 reproduced: one BBR flow alone and one
# CUBIC flow alone at the default configuration (10 Mbit/s, 200-ms RTT, 1.5 BDP): (a)
# throughput, (b) RTT, (c) bottleneck queue length over time.
#
# Usage:   Rscript analysis/figures/tang/tang_fig02.R <runs_dir> <out.pdf> [warmup_s] [bin_s]
# Inputs:  runs of experiment "tang_fig02" below <runs_dir>.
# Outputs: <out.pdf> and <out>.png, atomically: rows (a)-(c), BBR and CUBIC (each its first
#          valid repetition) overlaid; throughput in 1-s bins (bin_s), RTT = the sender's smoothed
#          RTT, queue = the bottleneck qdisc's backlog in packets.

script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "..", "..", "lib", "figure.R"), chdir = TRUE)
source(file.path(script_dir, "common.R"))

a <- figure_args(figure_experiment())
runs <- tang_firsts(a$runs, function(r) match(tang_cc(r), c("BBR", "CUBIC")) %|NA|% 9)
tang_series_figure(figure_experiment(), a$runs, runs,
                   c(goodput = "(a) throughput", rtt = "(b) RTT", queue = "(c) queue"),
                   function(r) tang_cc(r),
                   "Fig. 2: one flow alone, 10 Mbit/s, 200 ms RTT, 1.5 BDP buffer; first valid repetition per algorithm, overlaid",
                   a$out_pdf, a$warmup_s, bin_s = if (is.na(a$bin_s)) 1 else a$bin_s, overlay = TRUE)
