#!/usr/bin/env Rscript
# analysis/figures/utsumi2022/utsumi2022_fig14.R -- Utsumi & Hasegawa, Fig. 14 reproduced: m BBR,
# BBR-FCA, BBRv2 or BBRv2+ flows alone, 40-ms RTT, 64-BDP buffer: the mean smoothed RTT of flow 1 and
# the total goodput, over m; BBRv2 is the bbr2_v2alpha module, BBRv2+ the bbr2plus module; BBR-CWS
# is not run.
#
# Usage:   Rscript analysis/figures/utsumi2022/utsumi2022_fig14.R <runs_dir> <out.pdf> [warmup_s]
# Inputs:  runs of experiment "utsumi2022_fig14" below <runs_dir>.
# Outputs: <out.pdf> and <out>.png, atomically: two panels over m, one line per algorithm.

script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "..", "..", "lib", "figure.R"), chdir = TRUE)
source(file.path(script_dir, "common.R"))

E <- figure_experiment()
a <- figure_args(E)
u22_sweep_figure(E, a, function(r, warmup_s) {
  w <- u22_window(r, warmup_s)
  tibble(x = nrow(flows_table(r$meta)), value = c(ss_rtt_ms(r, 1, window = w), ss_total_mbps(r, window = w)),
         series = u22_cc(r), panel = c("Average RTT of flow 1 (ms)", "Total throughput (Mbit/s)"))
}, "m (number of flows)", NULL,
sprintf("Fig. 14: m %s flows alone, 100 Mbit/s, 40-ms RTT, 64 BDP", paste(u22_cc_levels(a$runs), collapse = " / ")),
panel_levels = c("Average RTT of flow 1 (ms)", "Total throughput (Mbit/s)"), height = 3.2, scales = "free_y") |> invisible()
