#!/usr/bin/env Rscript
# analysis/figures/ma2019/ma2019_fig16.R -- Ma et al. (2019) Fig. 16 reproduced: per-flow
# bandwidth share of each 10-ms RTT flow when N of them compete with one 50-ms RTT
# flow, BBQ vs BBR, 100 Mbit/s.
#
# Usage:   Rscript analysis/figures/ma2019/ma2019_fig16.R <runs_dir> <out.pdf> [warmup_s]
# Inputs:  runs of experiment "ma2019_fig16" below <runs_dir>; N = number of flows
#          with the shortest RTT, the algorithm the flows' congestion control.
# Outputs: <out.pdf> (6 x 3.4 in) and <out>.png, atomically. y: mean per-flow
#          steady-state share of the 10-ms flows (ss_share_rtt_pct(), %); mean over
#          valid repetitions +- sd, dots single runs; numbers BBQ / BBR; dashed:
#          the fair share 100/(N+1).

script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "..", "..", "lib", "figure.R"), chdir = TRUE)

EXPERIMENT <- figure_experiment()
a <- figure_args(EXPERIMENT)
er <- a$runs
vals <- values_by_algorithm(er, function(r) {
  f <- flows_table(r$meta)
  tibble(x = sum(f$rtt_ms == min(f$rtt_ms)), value = short_flow_share(r, a$warmup_s))
})
if (nrow(vals) == 0) {
  p <- no_valid_run_plot(EXPERIMENT, er)
} else {
  ns <- sort(unique(vals$x))
  p <- algorithm_comparison_plot(
    vals, scale_x_continuous("Number of 10-ms RTT flows", breaks = ns),
    "Per-flow share of each 10-ms flow (%)",
    sweep_caption(EXPERIMENT, er, a$warmup_s,
                  paste("y: the 10-ms flows' mean share per run;", COMPARISON_WHAT, "100/(N+1)")),
    fair = tibble(x = seq(min(ns), max(ns), length.out = 50)) %>% mutate(fair = 100 / (x + 1)))
}
save_figure(p, a$out_pdf, 6, 3.4)
