#!/usr/bin/env Rscript
# analysis/figures/ma2019/ma2019_fig06.R -- Ma et al. (2019) Fig. 6 reproduced: per-flow
# bandwidth share of one 50-ms RTT BBR flow and of each of N 10-ms RTT BBR flows.
#
# Usage:   Rscript analysis/figures/ma2019/ma2019_fig06.R <runs_dir> <out.pdf> [warmup_s]
# Inputs:  runs of experiment "ma2019_fig06" below <runs_dir>; N = number of flows
#          with the shortest RTT in run.json.
# Outputs: <out.pdf> (6 x 3.4 in) and <out>.png, atomically. x: number of 10-ms
#          flows; y: per-flow share of the steady-state goodput (%): the 50-ms flow,
#          and each 10-ms flow (mean over them, ss_share_rtt_pct(); the bar spans
#          the smallest to the largest 10-ms flow, over all valid repetitions);
#          points are means over valid repetitions; dashed: fair share 100/(N+1).

script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "..", "..", "lib", "figure.R"), chdir = TRUE)

EXPERIMENT <- figure_experiment()
a <- figure_args(EXPERIMENT)
er <- a$runs

flow_shares <- per_run(er$runs, function(r) {
  g <- ss_goodput_table(r, a$warmup_s)
  short <- min(g$rtt_ms)
  tibble(n_short = sum(g$rtt_ms == short),
         series = ifelse(g$rtt_ms == short, sprintf("each %g-ms flow", short),
                         sprintf("the %g-ms flow", g$rtt_ms)),
         value = 100 * g$goodput_mbps / sum(g$goodput_mbps))
})

if (nrow(flow_shares) == 0) {
  p <- no_valid_run_plot(EXPERIMENT, er)
} else {
  # per run: the mean over its short flows (so every run weighs the same), and their range
  per_run_mean <- flow_shares %>%
    group_by(experiment, point, repetition, valid, n_short, series) %>%
    summarise(value = mean(value), .groups = "drop")
  s <- summarise_valid(per_run_mean, c("n_short", "series"))
  span <- flow_shares %>% group_by(n_short, series) %>%
    summarise(lo = min(value), hi = max(value), .groups = "drop")
  ns <- sort(unique(s$n_short))
  fair <- tibble(n_short = seq(min(ns), max(ns), length.out = 60)) %>% mutate(fair = 100 / (n_short + 1))
  series <- unique(flow_shares$series[order(!startsWith(flow_shares$series, "each"))])
  s$series <- factor(s$series, levels = series)
  span$series <- factor(span$series, levels = series)
  p <- ggplot(s, aes(n_short, mean, colour = series)) +
    geom_line(data = fair, aes(n_short, fair), inherit.aes = FALSE, linetype = "dashed",
              colour = "grey40", linewidth = 0.3) +
    geom_errorbar(data = span, aes(x = n_short, ymin = lo, ymax = hi, colour = series),
                  inherit.aes = FALSE, width = 0.3, linewidth = 0.35) +
    geom_line(linewidth = 0.4) + geom_point(size = 1.8) +
    scale_colour_manual(values = FLOW_COLOURS) +
    scale_x_continuous("Number of 10-ms RTT flows", breaks = ns) +
    scale_y_continuous("Per-flow bandwidth share (%)", limits = c(0, 100)) +
    labs(caption = sweep_caption(EXPERIMENT, er, a$warmup_s, paste(
      "means over valid repetitions (for the short flows: of their per-run mean);",
      "bars: smallest to largest short flow; dashed: fair share 100/(N+1)"))) +
    theme_paper()
}
save_figure(p, a$out_pdf, 6, 3.4)
