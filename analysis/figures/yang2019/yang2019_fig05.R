#!/usr/bin/env Rscript
# analysis/figures/yang2019/yang2019_fig05.R -- Yang et al. (2019) Fig. 5 reproduced: the RTT
# of a 5-ms RTT flow competing with a 20-ms flow on 20 Mbit/s (5 MB buffer), BBR (a), BBQ
# (b), Adaptive-BBR (c), and Adaptive-BBR's first 12 s (d).
#
# Usage:   Rscript analysis/figures/yang2019/yang2019_fig05.R <runs_dir> <out.pdf> [warmup_s]
# Inputs:  runs of experiment "yang2019_fig05" below <runs_dir>.
# Outputs: <out.pdf> and <out>.png, atomically. One panel per algorithm (its first valid
#          repetition): the 5-ms flow's smoothed RTT (tcp.csv rtt_ms, solid), 5 ms plus the
#          bottleneck's queueing delay (queue.csv qdelay_ms, dashed grey), the steady-state
#          mean RTT (dotted, number: ss_rtt_ms()); a panel zooms on Adaptive-BBR's first 12 s;
#          below, (e): Adaptive-BBR's pacing gains and backlog estimates Q against the real backlog.

script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "..", "..", "lib", "figure.R"), chdir = TRUE)
source(file.path(script_dir, "common.R"))

EXPERIMENT <- figure_experiment()

# (e) What Adaptive-BBR's decision sees (first valid repetition): each flow's pacing gain
# (tcp.csv bbr_pacing_gain, Eq. 5's output) and its backlog estimate Q = inflight -
# min_rtt x delivery rate in packets, from the sampled socket state (inflight_pkts,
# bbr_min_rtt_ms, delivery_rate_mbps, mss_bytes: the module computes Q per ACK from its
# own rate sample, so this is a proxy), against the bottleneck's real backlog in packets.
# Drawn from AFTER_STARTUP_S on, so that the start-up's queue does not set the scale.
AFTER_STARTUP_S <- 3
adaptive_trace_plot <- function(r) {
  fl <- flows_table(r$meta)
  s <- r$tcp[!is.na(r$tcp$bbr_pacing_gain), ]
  if (nrow(s) == 0) return(NULL)
  lab <- function(f) fl$label[match(f, fl$flow)]
  q_est <- s$inflight_pkts - s$bbr_min_rtt_ms / 1e3 * s$delivery_rate_mbps * 1e6 / 8 / s$mss_bytes
  d <- bind_rows(
    tibble(t_s = s$t_s, v = s$bbr_pacing_gain, series = lab(s$flow), what = "pacing gain"),
    tibble(t_s = s$t_s, v = q_est, series = lab(s$flow), what = "Q estimate / backlog (packets)"),
    tibble(t_s = r$queue$t_s, v = r$queue$backlog_pkts, series = "bottleneck backlog",
           what = "Q estimate / backlog (packets)")) %>%
    filter(t_s >= AFTER_STARTUP_S, !is.na(v))
  alpha <- as.numeric(r$meta$spec$flows[[1]]$module_params$alpha_pkts %||% 3)
  ggplot(d, aes(t_s, v, colour = series)) +
    geom_hline(data = tibble(what = c("pacing gain", "Q estimate / backlog (packets)"), y = c(1, alpha)),
               aes(yintercept = y), linetype = "dashed", colour = "grey40", linewidth = 0.3) +
    geom_line(linewidth = 0.35) +
    facet_wrap(~what, ncol = 1, scales = "free_y") +
    scale_colour_manual(NULL, values = c(setNames(FLOW_COLOURS[seq_len(nrow(fl))], fl$label),
                                         "bottleneck backlog" = "grey30")) +
    scale_x_continuous("Time (s)", expand = expansion(mult = c(0, 0.01))) +
    scale_y_continuous(NULL) +
    labs(title = sprintf("(e) Adaptive-BBR's inputs from %g s on (rep %d)", AFTER_STARTUP_S, r$key$repetition),
         caption = wrap_caption(paste(
           "Pacing gain: Eq. 5's output per flow (dashed: 1). Q estimate: inflight - min_rtt x delivery rate from",
           "the sampled socket state, packets (a proxy of the module's per-ACK value, whose inflight leaves out",
           "the segments fq still holds, about 4 here: yang2019_qoffset; dashed: alpha);",
           "grey: the bottleneck's real backlog, packets."), 110)) +
    theme_paper()
}
a <- figure_args(EXPERIMENT)
er <- a$runs
points <- unique(er$index$point[er$index$valid])
firsts <- Filter(Negate(is.null), lapply(points, function(p) first_valid_run(er, function(r) r$key$point == p)))

if (length(firsts) == 0) {
  save_figure(no_valid_run_plot(EXPERIMENT, er), a$out_pdf, 6.5, 2.5)
} else {
  firsts <- yang_point_order(firsts)
  letters_of <- setNames(sprintf("(%s) %s", letters[seq_along(YANG_ALGOS)], YANG_ALGOS), YANG_ALGOS)
  panel_of <- function(r) sprintf("%s (rep %d)", letters_of[[yang_algorithm(r)]] %||% yang_algorithm(r), r$key$repetition)
  series <- function(r, panel, until = Inf) {
    base <- flows_table(r$meta)$rtt_ms[1]
    s <- r$tcp[r$tcp$flow == 1 & !is.na(r$tcp$rtt_ms) & r$tcp$t_s <= until, ]
    q <- r$queue[!is.na(r$queue$qdelay_ms) & r$queue$t_s >= 0 & r$queue$t_s <= min(until, run_end_s(r)), ]
    bind_rows(tibble(t_s = s$t_s, ms = s$rtt_ms, what = "RTT of the 5-ms flow"),
              tibble(t_s = q$t_s, ms = base + q$qdelay_ms, what = "5 ms + bottleneck queueing delay")) %>%
      mutate(panel = panel)
  }
  panels <- c(vapply(firsts, panel_of, ""))
  d <- bind_rows(lapply(firsts, function(r) series(r, panel_of(r))))
  means <- bind_rows(lapply(firsts, function(r) {
    w <- steady_window(r, a$warmup_s)
    tibble(panel = panel_of(r), start = w[["start"]], end = w[["end"]], ms = ss_rtt_ms(r, 1, a$warmup_s))
  }))
  ab <- Filter(function(r) yang_algorithm(r) == "Adaptive-BBR", firsts)
  if (length(ab)) {
    zoom <- sprintf("(d) Adaptive-BBR, first 12 s (rep %d)", ab[[1]]$key$repetition)
    panels <- c(panels, zoom)
    d <- bind_rows(d, series(ab[[1]], zoom, until = 12))
  }
  d$panel <- factor(d$panel, levels = panels)
  means$panel <- factor(means$panel, levels = panels)
  p <- ggplot(d, aes(t_s, ms, colour = what, linetype = what)) +
    geom_line(linewidth = 0.4) +
    geom_segment(data = means, aes(x = start, xend = end, y = ms, yend = ms), inherit.aes = FALSE,
                 linetype = "dotted", colour = "black", linewidth = 0.4) +
    geom_text(data = means, aes(x = end, y = ms, label = sprintf("mean %.1f ms", ms)), inherit.aes = FALSE,
              hjust = 1.05, vjust = -0.5, size = 2.5) +
    facet_wrap(~panel, ncol = 1, scales = "free") +
    scale_colour_manual(NULL, values = c("RTT of the 5-ms flow" = FLOW_COLOURS[1],
                                         "5 ms + bottleneck queueing delay" = "grey45")) +
    scale_linetype_manual(NULL, values = c("RTT of the 5-ms flow" = "solid",
                                           "5 ms + bottleneck queueing delay" = "dashed")) +
    scale_x_continuous("Time (s)", limits = c(0, NA), expand = expansion(mult = c(0, 0.01))) +
    scale_y_continuous("RTT (ms)", limits = c(0, NA)) +
    labs(caption = sweep_caption(EXPERIMENT, er, a$warmup_s, paste(
      "Fig. 5: 5-ms vs 20-ms RTT flows, 20 Mbit/s, 5 MB buffer; first valid repetition per algorithm;",
      "solid: the sender's smoothed RTT of the 5-ms flow; dashed: its base RTT plus the bottleneck queue's delay;",
      "dotted: steady-state mean RTT"))) +
    theme_paper()
  trace <- if (length(ab)) adaptive_trace_plot(ab[[1]]) else NULL
  if (is.null(trace)) {
    save_figure(p, a$out_pdf, 6.5, 0.9 + 1.8 * length(panels))
  } else {
    h <- 0.9 + 1.8 * length(panels)
    save_figure(list(p, trace), a$out_pdf, 6.5, h + 3.6, heights = c(h, 3.6))
  }
}
