#!/usr/bin/env Rscript
# analysis/figures/ma2019/ma2019_fig14.R -- Ma et al. (2019) Fig. 14 reproduced: bandwidth share
# of a 10-ms RTT flow against a 50-ms RTT flow, BBQ vs BBR, vs the bottleneck rate.
#
# Usage:   Rscript analysis/figures/ma2019/ma2019_fig14.R <runs_dir> <out.pdf> [warmup_s]
# Inputs:  runs of experiment "ma2019_fig14" below <runs_dir>; a run's algorithm is
#          its flows' congestion control (run.json), its rate bottleneck.rate_mbps.
# Outputs: <out.pdf> (6 x 3.4 in) and <out>.png, atomically. x: bottleneck rate
#          (Mbit/s, log scale); y: steady-state share of the 10-ms flow (%);
#          mean over valid repetitions +- sd, dots single runs; above each rate
#          the improvement factor mean(BBQ) / mean(BBR); dashed: fair share.

script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "..", "..", "lib", "figure.R"), chdir = TRUE)

EXPERIMENT <- figure_experiment()
a <- figure_args(EXPERIMENT)
er <- a$runs
vals <- values_by_algorithm(er, function(r) tibble(x = as.numeric(r$meta$bottleneck$rate_mbps),
                                                     value = short_flow_share(r, a$warmup_s)))
p <- if (nrow(vals) == 0) no_valid_run_plot(EXPERIMENT, er) else
  algorithm_comparison_plot(
    vals, scale_x_log10("Bottleneck bandwidth (Mbit/s)", breaks = sort(unique(vals$x))),
    "Share of the 10-ms RTT flow (%)",
    sweep_caption(EXPERIMENT, er, a$warmup_s, COMPARISON_WHAT),
    fair = tibble(x = range(vals$x), fair = 50))
save_figure(p, a$out_pdf, 6, 3.4)
