#!/usr/bin/env Rscript
# analysis/figures/ma2019/ma2019_fig01.R -- Ma et al. (2019) Fig. 1 reproduced: goodput over
# time of a 10-ms and a 50-ms RTT BBR flow sharing one bottleneck.
#
# Usage:   Rscript analysis/figures/ma2019/ma2019_fig01.R <runs_dir> <out.pdf> [warmup_s] [bin_s]
# Inputs:  every run below <runs_dir> (the runs root or the experiment's directory);
#          only experiment "ma2019_fig01" is used, and of it the FIRST VALID
#          repetition (lowest point name, then lowest repetition number).
#          warmup_s: steady-state warm-up (default 10 s, as analysis/claims.R);
#          bin_s: plotted goodput bin (default 1 s; the tidy data has 0.1-s bins).
# Outputs: <out.pdf> (6 x 3 in) and the same plot as PNG beside it (<out>.png),
#          both written atomically. The figure notes which repetition it shows,
#          shades the steady-state window and marks each flow's steady-state mean.
#          Without a valid run it draws a placeholder saying so (exit status 0),
#          so that the report still builds and shows the gap.

script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "..", "..", "lib", "figure.R"), chdir = TRUE)
suppressPackageStartupMessages(library(ggplot2))

EXPERIMENT <- figure_experiment()
WIDTH_IN <- 6
HEIGHT_IN <- 3

args <- script_args("ma2019_fig01.R <runs_dir> <out.pdf> [warmup_s] [bin_s]", 2)
out_pdf <- args[2]
warmup_s <- if (length(args) >= 3) as.numeric(args[3]) else DEFAULT_WARMUP_S
bin_s <- if (length(args) >= 4) as.numeric(args[4]) else 1

theme_paper <- function() {
  theme_bw(base_size = 10) +
    theme(legend.position = "top", legend.title = element_blank(),
          legend.margin = margin(0, 0, 0, 0), legend.box.spacing = unit(2, "pt"),
          panel.grid.minor = element_blank(),
          plot.caption = element_text(size = 7, colour = "grey30"))
}

goodput_plot <- function(run, n_valid, n_runs) {
  flows <- flows_table(run$meta)
  labels <- setNames(flows$label, flows$flow)
  w <- steady_window(run, warmup_s)
  means <- ss_goodput_table(run, warmup_s)
  g <- rebin_goodput(run$goodput, bin_s)
  g$flow_label <- factor(labels[as.character(g$flow)], levels = flows$label)
  means$flow_label <- factor(means$label, levels = flows$label)
  rate <- run$meta$bottleneck$rate_mbps %||% max(g$goodput_mbps)
  ggplot(g, aes(t_s, goodput_mbps, colour = flow_label)) + steady_band(w) +
    annotate("text", x = (w[["start"]] + w[["end"]]) / 2, y = rate * 1.06,
             label = "steady state", size = 2.8, colour = "grey30") +
    geom_line(linewidth = 0.5) +
    steady_mean_layers(means, w, "end") +
    scale_colour_manual(values = FLOW_COLOURS) +
    scale_x_continuous("Time (s)", limits = c(0, NA), breaks = scales::breaks_pretty(8),
                       expand = expansion(mult = c(0, 0.01))) +
    scale_y_continuous("Goodput (Mbit/s)", expand = expansion(mult = c(0, 0))) +
    coord_cartesian(ylim = c(0, rate * 1.1)) +  # clips, unlike scale limits, which drop
    labs(caption = sprintf(
      "%s%s, repetition %d (first valid; %d valid of %d runs). %s-s bins; dashed: steady-state mean (warm-up %s s).",
      EXPERIMENT, if (run$key$point == "base") "" else paste0(" (", point_label(run$meta), ")"),
      run$key$repetition, n_valid, n_runs,
      format(bin_s), format(warmup_s))) +
    theme_paper()
}

placeholder_plot <- function(n_runs) {
  ggplot() +
    annotate("text", x = 0, y = 0, size = 4,
             label = sprintf("No valid run of %s (%d runs found).", EXPERIMENT, n_runs)) +
    theme_void()
}

runs <- read_runs(args[1])
idx <- runs$index
sel <- which(idx$experiment == EXPERIMENT)
first_valid <- sel[idx$valid[sel]][1]
p <- if (is.na(first_valid)) placeholder_plot(length(sel)) else
  goodput_plot(runs$runs[[first_valid]], sum(idx$valid[sel]), length(sel))

save_plot_atomic(p, out_pdf, WIDTH_IN, HEIGHT_IN, device = cairo_pdf)
save_plot_atomic(p, sub("(\\.pdf)?$", ".png", out_pdf), WIDTH_IN, HEIGHT_IN, dpi = 200)
