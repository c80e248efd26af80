#!/usr/bin/env Rscript
# analysis/figures/utsumi2022/utsumi2022_fig04.R -- Utsumi & Hasegawa, Fig. 4 reproduced: two
# CUBIC flows, 40-ms RTT, over the buffer (1-128 BDP): CUBIC 1's measured sending rate
# (goodput plus retransmissions) and the Sec. IV model (Eqs. 4-8) fed from CUBIC 2's loss
# episodes and smoothed RTT (cubic_model_mbps, analysis/lib/metrics.R). The Poojary models are
# not drawn (not implemented).
#
# Usage:   Rscript analysis/figures/utsumi2022/utsumi2022_fig04.R <runs_dir> <out.pdf> [warmup_s]
# Inputs:  runs of experiment "utsumi2022_fig04" below <runs_dir>.
# Outputs: <out.pdf> and <out>.png, atomically.

script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "..", "..", "lib", "figure.R"), chdir = TRUE)
source(file.path(script_dir, "common.R"))

a <- figure_args(figure_experiment())
u22_sweep_figure(figure_experiment(), a, function(r, warmup_s) {
  w <- u22_window(r, warmup_s)
  tibble(x = u22_buffer_bdp(r),
         value = c(cubic_sending_mbps(r, 1, window = w), cubic_model_mbps(r, 2, window = w)),
         series = c("measured", "model (Eqs. 4-8)"), panel = "two CUBIC flows, 20 ms one way")
}, "Buffer size (BDP)", "Sending rate of CUBIC 1 (Mbit/s)",
"Fig. 4: two CUBIC flows, 100 Mbit/s, 40-ms RTT; model inputs from CUBIC 2's loss episodes (retrans_total) and smoothed RTT",
x_log2 = TRUE, ncol = 1, height = 3.2)
