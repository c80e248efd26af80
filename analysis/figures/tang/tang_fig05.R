#!/usr/bin/env Rscript
# analysis/figures/tang/tang_fig05.R -- Tang, Fig. 5 reproduced: one BBR flow against one
# CUBIC flow at 1.5 (a), 0.8 (b), 3 (c) and 6 (d) BDP buffers, 10 Mbit/s, 200-ms RTT (and, in
# the paper profile, 100- and 20-ms RTT); throughput of each flow over time.
#
# Usage:   Rscript analysis/figures/tang/tang_fig05.R <runs_dir> <out.pdf> [warmup_s] [bin_s]
# Inputs:  runs of experiment "tang_fig05" below <runs_dir>.
# Outputs: <out.pdf> and <out>.png, atomically: one panel per sweep point (first valid
#          repetition) in the paper's order (1.5, 0.8, 3, 6 BDP) per RTT, 200 ms first, then
#          100 ms, then 20 ms; goodput in 1-s bins, the steady state shaded, each flow's
#          steady-state mean dashed.

script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "..", "..", "lib", "figure.R"), chdir = TRUE)
source(file.path(script_dir, "common.R"))

a <- figure_args(figure_experiment())
er <- a$runs
bdp_of <- function(r) r$meta$bottleneck$buffer_bytes / (r$meta$bottleneck$rate_mbps * 1e6 / 8 * flows_table(r$meta)$rtt_ms[1] / 1e3)
PAPER_ORDER <- c(1.5, 0.8, 3, 6)
RTT_ORDER <- c(200, 100, 20)
runs <- tang_firsts(er, function(r) 100 * (match(flows_table(r$meta)$rtt_ms[1], RTT_ORDER) %|NA|% 9) +
                      (match(round(bdp_of(r), 1), PAPER_ORDER) %|NA|% 9))
if (length(runs) == 0) {
  save_figure(no_valid_run_plot(figure_experiment(), er), a$out_pdf, 6.5, 2.5)
} else {
  letters <- c("(a)", "(b)", "(c)", "(d)")
  panel_of <- function(r) {
    k <- match(round(bdp_of(r), 1), PAPER_ORDER)
    sprintf("%s %s (rep %d)", if (is.na(k)) "" else letters[k], point_label(r$meta), r$key$repetition)
  }
  flows <- flows_table(runs[[1]]$meta)
  bin_s <- if (is.na(a$bin_s)) 1 else a$bin_s
  fr <- goodput_panel_frames(runs, panel_of, flows, unique(flows$label), bin_s, a$warmup_s)
  p <- ggplot(fr$g, aes(t_s, goodput_mbps, colour = flow_label)) + goodput_panel_layers(fr) +
    facet_wrap(~panel, ncol = 2) +
    scale_colour_manual(NULL, values = TANG_COLOURS) +
    scale_x_continuous("Time (s)", limits = c(0, NA), expand = expansion(mult = c(0, 0.01))) +
    scale_y_continuous("Throughput (Mbit/s)", limits = c(0, NA)) +
    labs(caption = sweep_caption(figure_experiment(), er, a$warmup_s, paste0(
      "Fig. 5: one BBR vs one CUBIC flow from 0 s, 10 Mbit/s; first valid repetition per point, goodput in ",
      format(bin_s), "-s bins; shaded: steady state, dashed: steady-state means"))) +
    theme_paper()
  save_figure(p, a$out_pdf, 6.5, 1.2 + 1.9 * ceiling(length(runs) / 2))
}
