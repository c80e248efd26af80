#!/usr/bin/env Rscript
# analysis/figures/ma2019/ma2019_fig13.R -- Ma et al. (2019) Fig. 13 reproduced: BBQ
# micro-benchmark (10-ms and 50-ms RTT flows, the 10-ms flow leaving before the end)
# and the queueing delay of BBQ vs BBR.
#
# Usage:   Rscript analysis/figures/ma2019/ma2019_fig13.R <runs_dir> <out.pdf> [warmup_s] [bin_s]
# Inputs:  runs of experiment "ma2019_fig13" below <runs_dir>; the first valid BBQ
#          run and the first valid BBR run (algorithm = the flows' congestion control).
#          bin_s: goodput and queueing-delay bin (default 1 s).
# Outputs: <out.pdf> (6 x 5.4 in) and <out>.png, atomically.
#          (a) goodput of the two BBQ flows over time; shaded with dashed means:
#              the claims' window, from the end of the first ProbeRTT both flows
#              share (the paper's "synchronization of ProbeRTT at 31 s") until the
#              10-ms flow leaves (claim_window(, "probe_rtt_sync..end")), or the
#              steady state when the run has no such ProbeRTT; the 10-ms flow's
#              departure and the 50-ms flow's ramp-up time (rampup_s()) marked;
#          (b) bottleneck queueing delay over time with BBQ and with BBR, each
#              algorithm's steady-state mean (ss_qdelay_ms()) in the legend.

script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "..", "..", "lib", "figure.R"), chdir = TRUE)

EXPERIMENT <- figure_experiment()
a <- figure_args(EXPERIMENT)
bin_s <- if (is.na(a$bin_s)) 1 else a$bin_s
er <- a$runs
bbq <- first_valid_run(er, function(r) algorithm_of(r) == "BBQ")
bbr <- first_valid_run(er, function(r) algorithm_of(r) == "BBR")

# The claims' window (see the header), else the steady state.
goodput_window <- function(run) {
  w <- claim_window(run, "probe_rtt_sync..end", a$warmup_s)
  if (anyNA(w)) steady_window(run, a$warmup_s) else w
}

goodput_panel <- function(run) {
  flows <- flows_table(run$meta)
  w <- goodput_window(run)
  means <- ss_goodput_table(run, a$warmup_s, window = w) %>%
    mutate(flow_label = factor(label, levels = flows$label))
  g <- rebin_goodput(run$goodput, bin_s) %>%
    mutate(flow_label = factor(flows$label[match(flow, flows$flow)], levels = flows$label))
  long <- flows$flow[which.max(flows$rtt_ms)]
  ramp <- tryCatch(rampup_s(run, long), error = function(e) NA_real_)
  leave <- min(flows$stop_s, na.rm = TRUE)
  rate <- run$meta$bottleneck$rate_mbps %||% 100
  ggplot(g, aes(t_s, goodput_mbps, colour = flow_label)) + steady_band(w) +
    geom_vline(xintercept = leave, linetype = "dotted", linewidth = 0.4) +
    annotate("text", x = leave, y = rate * 1.05, hjust = 1.02, size = 2.6,
             label = sprintf("10-ms flow leaves; ramp-up %s s",
                             if (!is.finite(ramp)) "none" else sprintf("%.1f", ramp))) +
    geom_line(linewidth = 0.5) +
    steady_mean_layers(means, w, "start") +
    scale_colour_manual(values = FLOW_COLOURS) +
    scale_x_continuous("Time (s)", limits = c(0, NA), expand = expansion(mult = c(0, 0.01))) +
    scale_y_continuous("Goodput (Mbit/s)") + coord_cartesian(ylim = c(0, rate * 1.1)) +
    labs(title = sprintf("%s: goodput", algorithm_of(run))) + theme_paper()
}

qdelay_panel <- function(runs) {
  q <- bind_rows(lapply(runs, function(r) {
    lab <- sprintf("%s (mean %.1f ms)", algorithm_of(r), ss_qdelay_ms(r, a$warmup_s))
    r$queue %>% filter(t_s > 0) %>% mutate(bin = ceiling(t_s / bin_s - 1e-9) * bin_s) %>%
      group_by(bin) %>% summarise(qdelay_ms = mean(qdelay_ms), .groups = "drop") %>%
      mutate(series = lab, algorithm = algorithm_of(r))
  }))
  cols <- setNames(ALGO_COLOURS[unique(q$algorithm)], unique(q$series))
  ggplot(q, aes(bin - bin_s / 2, qdelay_ms, colour = series)) + geom_line(linewidth = 0.5) +
    scale_colour_manual(values = cols) +
    scale_x_continuous("Time (s)", limits = c(0, NA), expand = expansion(mult = c(0, 0.01))) +
    scale_y_continuous("Queueing delay (ms)", limits = c(0, NA)) +
    labs(title = "Queueing delay", caption = wrap_caption(sprintf(paste(
      "%s: %s; BBQ repetition %s, BBR repetition %s (first valid of each). %s-s bins;",
      "goodput shaded with dashed means: %s; delay means: steady state (warm-up %s s);",
      "ramp-up: time until the 50-ms flow's 300-ms mean goodput reaches 90 %% of the link. %s"),
      EXPERIMENT, runs_note(er), if (is.null(bbq)) "--" else bbq$key$repetition,
      if (is.null(bbr)) "--" else bbr$key$repetition, format(bin_s), window_note(runs[[1]]),
      format(a$warmup_s), excluded_note(er)), 110)) +
    theme_paper()
}

window_note <- function(run) {
  w <- claim_window(run, "probe_rtt_sync..end", a$warmup_s)
  if (anyNA(w)) return("the steady state (no ProbeRTT shared by both flows)")
  sprintf("%.1f-%.1f s, after the first ProbeRTT both flows share", w[["start"]], w[["end"]])
}

if (is.null(bbq) && is.null(bbr)) {
  plots <- list(no_valid_run_plot(EXPERIMENT, er))
  heights <- 1
} else {
  plots <- list(goodput_panel(if (is.null(bbq)) bbr else bbq),
                qdelay_panel(Filter(Negate(is.null), list(bbq, bbr))))
  heights <- c(1, 1)
}
save_figure(plots, a$out_pdf, 6, 5.4, heights)
