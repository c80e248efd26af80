#!/usr/bin/env Rscript
# analysis/figures/ma2019/ma2019_fig03.R -- Ma et al. (2019) Fig. 3 reproduced: steady-state
# bandwidth share of a 10-ms and a 50-ms RTT BBR flow vs the bottleneck rate.
#
# Usage:   Rscript analysis/figures/ma2019/ma2019_fig03.R <runs_dir> <out.pdf> [warmup_s]
# Inputs:  runs of experiment "ma2019_fig03" below <runs_dir> (any number of rates
#          and repetitions); the rate of a run is its run.json bottleneck.rate_mbps.
# Outputs: <out.pdf> (6 x 3.4 in) and <out>.png, atomically. x: bottleneck rate
#          (Mbit/s, log scale); y: each flow's share of the total steady-state
#          goodput (%, ss_share_pct()); points: mean over the valid repetitions,
#          bars: +- 1 sd, small dots: single repetitions; dashed: the 50 % fair
#          share. Runs failing a fidelity check are left out and named in the
#          caption; rates with no valid run are marked "not reproducible" on the axis.

script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "..", "..", "lib", "figure.R"), chdir = TRUE)

EXPERIMENT <- figure_experiment()
a <- figure_args(EXPERIMENT)
er <- a$runs

rate_of <- function(r) as.numeric(r$meta$bottleneck$rate_mbps)
vals <- per_run(er$runs, function(r) {
  g <- ss_goodput_table(r, a$warmup_s)
  tibble(rate_mbps = rate_of(r), label = g$label, rtt_ms = g$rtt_ms,
         value = 100 * g$goodput_mbps / sum(g$goodput_mbps))
})
all_rates <- sort(unique(vapply(er$runs, rate_of, 0)))

if (nrow(vals) == 0) {
  p <- no_valid_run_plot(EXPERIMENT, er)
} else {
  labels <- unique(vals$label[order(vals$rtt_ms)])
  vals$label <- factor(vals$label, levels = labels)
  s <- summarise_valid(vals, c("rate_mbps", "label"))
  missing <- setdiff(all_rates, s$rate_mbps[s$n > 0])
  p <- ggplot(s, aes(rate_mbps, mean, colour = label)) +
    geom_hline(yintercept = 50, linetype = "dashed", colour = "grey40", linewidth = 0.3) +
    geom_line(linewidth = 0.4) +
    geom_errorbar(data = filter(s, n > 1), aes(ymin = lo, ymax = hi), width = 0.04, linewidth = 0.35) +
    geom_point(size = 1.8) +
    geom_point(data = vals, aes(rate_mbps, value), size = 0.7, alpha = 0.5) +
    { if (length(missing)) annotate("text", x = missing, y = 50, angle = 90, size = 2.4,
                                    label = "not reproducible", colour = "grey30") } +
    scale_colour_manual(values = FLOW_COLOURS) +
    scale_x_log10("Bottleneck bandwidth (Mbit/s)", breaks = all_rates) +
    scale_y_continuous("Bandwidth share (%)", limits = c(0, 100), breaks = seq(0, 100, 25)) +
    labs(caption = sweep_caption(EXPERIMENT, er, a$warmup_s,
                                 "mean +- sd over valid repetitions (dots: single runs); dashed: fair share")) +
    theme_paper()
}
save_figure(p, a$out_pdf, 6, 3.4)
