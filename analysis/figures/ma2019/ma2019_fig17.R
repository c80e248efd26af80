#!/usr/bin/env Rscript
# analysis/figures/ma2019/ma2019_fig17.R -- Ma et al. (2019) Fig. 17 reproduced: bandwidth share
# of the shorter-RTT flow for RTT pairs from 5 to 300 ms, BBQ (alpha = 3 ms) vs BBR.
#
# Usage:   Rscript analysis/figures/ma2019/ma2019_fig17.R <runs_dir> <out.pdf> [warmup_s]
# Inputs:  runs of experiment "ma2019_fig17" below <runs_dir>; a run's group is named
#          after its two flows' RTTs ("20-50"), its algorithm the flows' congestion control.
# Outputs: <out.pdf> (6 x 3.4 in) and <out>.png, atomically. Bars: mean steady-state
#          share of the shorter-RTT flow (%) over valid repetitions, +- sd; dots:
#          single runs; numbers: mean(BBQ) / mean(BBR) per group; dashed: fair share.

script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "..", "..", "lib", "figure.R"), chdir = TRUE)

EXPERIMENT <- figure_experiment()
a <- figure_args(EXPERIMENT)
er <- a$runs
vals <- values_by_algorithm(er, function(r) {
  f <- flows_table(r$meta)
  tibble(short = min(f$rtt_ms), group = sprintf("%g-%g", min(f$rtt_ms), max(f$rtt_ms)),
         value = short_flow_share(r, a$warmup_s))
})
if (nrow(vals) == 0) {
  p <- no_valid_run_plot(EXPERIMENT, er)
} else {
  groups <- unique(vals$group[order(vals$short)])
  vals <- mutate(vals, group = factor(group, levels = groups))
  s <- summarise_valid(vals, c("group", "algorithm"))
  ratio <- improvement_table(s, "group")
  dodge <- position_dodge(width = 0.8)
  p <- ggplot(s, aes(group, mean, fill = algorithm)) +
    geom_col(position = dodge, width = 0.75) +
    geom_errorbar(data = filter(s, n > 1), aes(ymin = lo, ymax = hi), position = dodge,
                  width = 0.25, linewidth = 0.35) +
    geom_point(data = vals, aes(group, value, group = algorithm), position = dodge,
               size = 0.7, alpha = 0.6, show.legend = FALSE) +
    geom_hline(yintercept = 50, linetype = "dashed", colour = "grey40", linewidth = 0.3) +
    { if (nrow(ratio)) geom_text(data = ratio, aes(group, 97, label = sprintf("%.2fx", BBQ / BBR)),
                                 inherit.aes = FALSE, size = 2.4, colour = "grey25") } +
    scale_fill_manual(values = ALGO_COLOURS) +
    scale_x_discrete("RTTs of the two flows (ms)") +
    scale_y_continuous("Share of the shorter-RTT flow (%)", limits = c(0, 100)) +
    labs(caption = sweep_caption(EXPERIMENT, er, a$warmup_s, COMPARISON_WHAT)) +
    theme_paper()
}
save_figure(p, a$out_pdf, 6, 3.4)
