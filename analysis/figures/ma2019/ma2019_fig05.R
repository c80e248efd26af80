#!/usr/bin/env Rscript
# analysis/figures/ma2019/ma2019_fig05.R -- Ma et al. (2019) Fig. 5 reproduced: throughput of
# a 10-ms RTT BBR flow (A) and a BBR flow B of 10-200 ms RTT on 100 Mbit/s.
#
# Usage:   Rscript analysis/figures/ma2019/ma2019_fig05.R <runs_dir> <out.pdf> [warmup_s]
# Inputs:  runs of experiment "ma2019_fig05" below <runs_dir>; flow B's RTT is the
#          run.json RTT of flow 2.
# Outputs: <out.pdf> (6 x 3.4 in) and <out>.png, atomically. x: RTT of flow B (ms);
#          y: steady-state goodput of each flow (Mbit/s, ss_goodput_mbps());
#          points: mean over valid repetitions, bars +- 1 sd, dots single runs.
#          Invalid runs are named in the caption.

script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "..", "..", "lib", "figure.R"), chdir = TRUE)

EXPERIMENT <- figure_experiment()
a <- figure_args(EXPERIMENT)
er <- a$runs

vals <- per_run(er$runs, function(r) {
  g <- ss_goodput_table(r, a$warmup_s)
  tibble(rtt_b = g$rtt_ms[g$flow == 2],
         series = ifelse(g$flow == 1, "flow A (10 ms RTT)", "flow B"), value = g$goodput_mbps)
})

if (nrow(vals) == 0) {
  p <- no_valid_run_plot(EXPERIMENT, er)
} else {
  vals$series <- factor(vals$series, levels = c("flow A (10 ms RTT)", "flow B"))
  s <- summarise_valid(vals, c("rtt_b", "series"))
  rate <- er$runs[[1]]$meta$bottleneck$rate_mbps %||% 100
  p <- ggplot(s, aes(rtt_b, mean, colour = series)) +
    geom_hline(yintercept = rate / 2, linetype = "dashed", colour = "grey40", linewidth = 0.3) +
    geom_line(linewidth = 0.4) +
    geom_errorbar(data = filter(s, n > 1), aes(ymin = lo, ymax = hi), width = 3, linewidth = 0.35) +
    geom_point(size = 1.8) +
    geom_point(data = vals, aes(rtt_b, value), size = 0.7, alpha = 0.5) +
    scale_colour_manual(values = FLOW_COLOURS) +
    scale_x_continuous("RTT of flow B (ms)", breaks = sort(unique(vals$rtt_b))) +
    scale_y_continuous("Throughput (Mbit/s)", limits = c(0, rate)) +
    labs(caption = sweep_caption(EXPERIMENT, er, a$warmup_s, paste(
      "steady-state goodput, mean +- sd over valid repetitions (dots: single runs); dashed: fair share"))) +
    theme_paper() + theme(axis.text.x = element_text(size = 7))
}
save_figure(p, a$out_pdf, 6, 3.4)
