#!/usr/bin/env Rscript
# analysis/figures/ma2019/ma2019_fig15.R -- Ma et al. (2019) Fig. 15 reproduced: bandwidth share
# of a 10-ms RTT flow against a flow of 10-200 ms RTT, BBQ vs BBR, 100 Mbit/s.
#
# Usage:   Rscript analysis/figures/ma2019/ma2019_fig15.R <runs_dir> <out.pdf> [warmup_s]
# Inputs:  runs of experiment "ma2019_fig15" below <runs_dir>; x is the RTT of the
#          other flow (flow 2 in run.json), the algorithm the flows' congestion control.
# Outputs: <out.pdf> (6 x 3.4 in) and <out>.png, atomically. y: steady-state share
#          of the 10-ms flow (%); mean over valid repetitions +- sd, dots single
#          runs; above each x the improvement factor mean(BBQ) / mean(BBR).

script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "..", "..", "lib", "figure.R"), chdir = TRUE)

EXPERIMENT <- figure_experiment()
a <- figure_args(EXPERIMENT)
er <- a$runs
vals <- values_by_algorithm(er, function(r) {
  f <- flows_table(r$meta)
  tibble(x = f$rtt_ms[f$flow == 2], value = ss_share_pct(r, 1, a$warmup_s))
})
p <- if (nrow(vals) == 0) no_valid_run_plot(EXPERIMENT, er) else
  algorithm_comparison_plot(
    vals, scale_x_continuous("RTT of the competing flow (ms)", breaks = sort(unique(vals$x))),
    "Share of the 10-ms RTT flow (%)",
    sweep_caption(EXPERIMENT, er, a$warmup_s, COMPARISON_WHAT),
    fair = tibble(x = range(vals$x), fair = 50))
p <- p + theme(axis.text.x = element_text(size = 7))
save_figure(p, a$out_pdf, 6, 3.4)
