#!/usr/bin/env Rscript
# analysis/figures/ma2019/ma2019_fig12.R -- Ma et al. (2019) Fig. 12 reproduced: queueing delay
# and pacing-gain cycling of a 10-ms and a 50-ms RTT flow under the first-cut
# "drain after probing" variant (congestion control bbq_drain).
#
# Usage:   Rscript analysis/figures/ma2019/ma2019_fig12.R <runs_dir> <out.pdf> [warmup_s] [window_s]
# Inputs:  runs of experiment "ma2019_fig12" below <runs_dir>; the FIRST VALID
#          repetition is drawn, over window_s seconds (default 2) starting 5 s into
#          its steady state (warm-up warmup_s after the last flow starts).
# Outputs: <out.pdf> (6.5 x 5 in) and <out>.png, atomically.
#          (a) bottleneck queueing delay (ms, queue.csv);
#          (b) each flow's BBR pacing gain (1.25 probe, 0.75 drain, 1 cruise), with
#              the % of its steady-state samples at 0.75 (gain_time_pct()) in the legend.

script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "..", "..", "lib", "figure.R"), chdir = TRUE)

EXPERIMENT <- figure_experiment()
a <- figure_args(EXPERIMENT)
window_s <- if (is.na(a$bin_s)) 2 else a$bin_s
er <- a$runs
run <- first_valid_run(er)

if (is.null(run)) {
  plots <- list(no_valid_run_plot(EXPERIMENT, er))
  heights <- 1
} else {
  flows <- flows_table(run$meta)
  w <- steady_window(run, a$warmup_s)
  from <- min(w[["start"]] + 5, w[["end"]] - window_s)
  win <- c(from, from + window_s)
  drain <- vapply(flows$flow, function(f) gain_time_pct(run, f, 0.75, a$warmup_s), 0)
  labels <- sprintf("%s (%.0f %% of time draining)", flows$label, drain)
  lab <- function(flow) factor(labels[match(flow, flows$flow)], levels = labels)
  xs <- scale_x_continuous("Time (s)", limits = win, expand = expansion(mult = 0.005))
  q <- run$queue[run$queue$t_s >= win[1] & run$queue$t_s <= win[2], ]
  pa <- ggplot(q, aes(t_s, qdelay_ms)) + geom_line(linewidth = 0.4, colour = "grey20") + xs +
    scale_y_continuous("Queueing delay (ms)", limits = c(0, NA)) +
    labs(title = "Queueing delay") + theme_paper()
  tcp <- run$tcp[run$tcp$t_s >= win[1] & run$tcp$t_s <= win[2] & !is.na(run$tcp$bbr_pacing_gain), ] %>%
    mutate(flow_label = lab(flow))
  pb <- ggplot(tcp, aes(t_s, bbr_pacing_gain, colour = flow_label)) +
    geom_step(linewidth = 0.45) + xs + facet_wrap(~flow_label, ncol = 1) +
    scale_colour_manual(values = FLOW_COLOURS, guide = "none") +
    scale_y_continuous("Pacing gain", breaks = c(0.75, 1, 1.25), limits = c(0.7, 1.3)) +
    labs(title = "Gain cycling",
         caption = wrap_caption(sprintf(paste(
           "%s (%s), repetition %d (first valid; %s). Socket samples every %s s; time in the",
           "drain phase = share of steady-state samples with pacing gain 0.75 (warm-up %s s). %s"),
           EXPERIMENT, paste(unique(flows$cc), collapse = "/"), run$key$repetition, runs_note(er),
           format(run$meta$spec$sample_interval_s %||% 0.1), format(a$warmup_s),
           excluded_note(er)), 115)) +
    theme_paper() + theme(strip.text = element_text(size = 8, hjust = 0))
  plots <- list(pa, pb)
  heights <- c(1, 1.5)
}
save_figure(plots, a$out_pdf, 6.5, 5, heights)
