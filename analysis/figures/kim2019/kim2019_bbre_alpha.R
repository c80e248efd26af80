#!/usr/bin/env Rscript
# analysis/figures/kim2019/kim2019_bbre_alpha.R -- BBR-E (Kim et al.) sensitivity to its
# threshold alpha, which the paper does not give: the 10-ms RTT flow's share of
# a 10 Mbit/s bottleneck against a 100-ms RTT flow, plain BBR and BBR-E with
# alpha = 1.25, 1.5 (the module default), 2 and 3, and the paper's Algorithm 1
# (queue-buildup suppression) at alpha = 1.5.
#
# Usage:   Rscript analysis/figures/kim2019/kim2019_bbre_alpha.R <runs_dir> <out.pdf> [warmup_s]
# Inputs:  runs of experiment "kim2019_bbre_alpha" below <runs_dir>; the algorithm
#          and alpha of a run are read from its run.json spec (flow 1).
# Outputs: <out.pdf> (6 x 3.2 in) and <out>.png, atomically. Bars: mean steady-state
#          share of the 10-ms flow over valid repetitions (ss_share_pct()), dots single
#          runs; dashed: fair share. Invalid runs are named in the caption.

script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "..", "..", "lib", "figure.R"), chdir = TRUE)

EXPERIMENT <- figure_experiment()
a <- figure_args(EXPERIMENT)
er <- a$runs

config_label <- function(run) {
  flow <- run$meta$spec$flows[[1]]
  if (flow$cc != "bbr_e") return(cc_label(flow$cc))
  alpha <- (flow$module_params$alpha_pct %||% 150) / 100
  if ((flow$module_params$algorithm %||% 2) == 1) return(sprintf("Algorithm 1\nalpha = %g", alpha))
  sprintf("%s\nalpha = %g%s", cc_label("bbr_e"), alpha, if (alpha == 1.5) "\n(default)" else "")
}

vals <- per_run(er$runs, function(r) tibble(config = config_label(r), value = ss_share_pct(r, 1, a$warmup_s)))

if (nrow(vals) == 0) {
  p <- no_valid_run_plot(EXPERIMENT, er)
} else {
  levels <- unique(c("BBR", sort(setdiff(unique(vals$config), "BBR"))))
  vals$config <- factor(vals$config, levels = levels)
  s <- summarise_valid(vals, "config")
  p <- ggplot(s, aes(config, mean)) +
    geom_col(fill = FLOW_COLOURS[1], width = 0.6) +
    geom_errorbar(data = filter(s, n > 1), aes(ymin = lo, ymax = hi), width = 0.2, linewidth = 0.35) +
    geom_point(data = vals, aes(config, value), size = 0.9, alpha = 0.6) +
    geom_text(aes(label = sprintf("%.1f %%", mean)), vjust = -0.6, size = 3) +
    geom_hline(yintercept = 50, linetype = "dashed", colour = "grey40", linewidth = 0.3) +
    scale_x_discrete(NULL) +
    scale_y_continuous("Share of the 10-ms RTT flow (%)", limits = c(0, 100)) +
    labs(caption = sweep_caption(EXPERIMENT, er, a$warmup_s, paste(
      "10-ms vs 100-ms RTT flows, 10 Mbit/s, 1.5 MB buffer; steady-state share, mean +- sd over valid",
      "repetitions (dots: single runs); dashed: fair share"))) +
    theme_paper()
}
save_figure(p, a$out_pdf, 6, 3.2)
