#!/usr/bin/env Rscript
# analysis/figures/ma2019/ma2019_fig07.R -- Ma et al. (2019) Fig. 7 reproduced: goodput of two
# 5-ms RTT BBR flows that alternately "cheat" by inflating their RTT to 2x the other's.
#
# Usage:   Rscript analysis/figures/ma2019/ma2019_fig07.R <runs_dir> <out.pdf> [warmup_s] [bin_s]
# Inputs:  runs of experiment "ma2019_fig07" below <runs_dir>; the FIRST VALID
#          repetition is drawn; the cheats are the spec's `changes` (run.json).
#          bin_s: goodput bin (default 1 s).
# Outputs: <out.pdf> (6 x 3.2 in) and <out>.png, atomically: goodput over time,
#          each cheat marked by a dotted line annotated with the cheater's new RTT.

script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "..", "..", "lib", "figure.R"), chdir = TRUE)

EXPERIMENT <- figure_experiment()
a <- figure_args(EXPERIMENT)
bin_s <- if (is.na(a$bin_s)) 1 else a$bin_s
er <- a$runs
run <- first_valid_run(er)

if (is.null(run)) {
  p <- no_valid_run_plot(EXPERIMENT, er)
} else {
  flows <- flows_table(run$meta)
  g <- rebin_goodput(run$goodput, bin_s) %>%
    mutate(flow_label = factor(flows$label[match(flow, flows$flow)], levels = flows$label))
  ch <- bind_rows(tibble(at_s = double(), flow = integer(), rtt_ms = double()),
                  lapply(run$meta$spec$changes %||% list(), function(c)
                    tibble(at_s = as.numeric(c$at_s), flow = as.integer(c$flow),
                           rtt_ms = as.numeric(c$rtt_ms)))) %>%
    mutate(flow_label = factor(flows$label[match(flow, flows$flow)], levels = flows$label),
           text = sprintf("%g ms", rtt_ms))
  rate <- run$meta$bottleneck$rate_mbps %||% 100
  p <- ggplot(g, aes(t_s, goodput_mbps, colour = flow_label)) +
    geom_vline(data = ch, aes(xintercept = at_s, colour = flow_label), linetype = "dotted",
               linewidth = 0.4, show.legend = FALSE) +
    geom_label(data = ch, aes(x = at_s, y = rate * 1.04, label = text, colour = flow_label),
               inherit.aes = FALSE, size = 2.6, hjust = -0.05, label.size = 0,
               label.padding = unit(1, "pt"), fill = "white", show.legend = FALSE) +
    geom_line(linewidth = 0.5) +
    scale_colour_manual(values = FLOW_COLOURS) +
    scale_x_continuous("Time (s)", limits = c(0, NA), breaks = scales::breaks_pretty(8),
                       expand = expansion(mult = c(0, 0.01))) +
    scale_y_continuous("Goodput (Mbit/s)") +
    coord_cartesian(ylim = c(0, rate * 1.1)) +
    labs(caption = wrap_caption(sprintf(paste(
      "%s, repetition %d (first valid; %s). %s-s bins. Both flows' true RTT is %s ms; at each",
      "dotted line one flow cheats, its RTT becoming the annotated value (2x the other's). %s"),
      EXPERIMENT, run$key$repetition, runs_note(er), format(bin_s),
      paste(unique(format(flows$rtt_ms)), collapse = "/"), excluded_note(er)), 110)) +
    theme_paper()
}
save_figure(p, a$out_pdf, 6, 3.2)
