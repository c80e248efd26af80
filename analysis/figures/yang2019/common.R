# analysis/figures/yang2019/common.R -- what the Yang et al. (2019, Adaptive-BBR) figure
# scripts share (sourced by yang2019_fig*.R after analysis/lib/figure.R; not a figure).
#
# yang_algorithm(run)        "BBR", "BBQ" or "Adaptive-BBR" from the run's flow 1 (its
#                            label in variants.yaml; an unknown cc as it is)
# yang_goodput_figure(...)   Figs. 3 and 6: each flow's throughput (Mbit/s) against
#                            time (s), one panel per sweep point (its FIRST VALID
#                            repetition) in the order BBR, BBQ, Adaptive-BBR, goodput in
#                            1-s bins, the steady state shaded, each flow's
#                            steady-state mean dashed
# yang_bar_figure(...)       Fig. 4: a per-run value (Jain's index, a share) per x
#                            and algorithm: bars = mean over valid repetitions, error
#                            bars +- sd (n > 1), dots = single runs

# The algorithms Yang et al. compare, in the figures' order, and their colours, keyed by
# their labels (variants.yaml).
YANG_COLOURS <- cc_palette(c(bbr = "#0072B2", bbq = "#D55E00", adaptive_bbr = "#009E73"))
YANG_ALGOS <- names(YANG_COLOURS)

yang_algorithm <- function(run) {
  cc <- as.character(run$meta$flows[[1]]$cc %||% NA)
  labels <- cc_labels()
  if (!is.na(cc) && cc %in% names(labels)) unname(labels[cc]) else cc
}

yang_point_order <- function(runs) {
  keys <- vapply(runs, function(r) r$key$point, "")
  alg <- match(vapply(runs, yang_algorithm, ""), YANG_ALGOS)
  mtu <- vapply(runs, function(r) as.numeric(r$meta$spec$mtu_bytes %||% 1500), 0)
  runs[order(mtu != 1052, alg %|NA|% 99, keys)]
}

yang_goodput_figure <- function(experiment, what, width = 6.5, panel_height = 1.9) {
  a <- figure_args(experiment)
  bin_s <- if (is.na(a$bin_s)) 1 else a$bin_s
  er <- a$runs
  points <- unique(er$index$point[er$index$valid])
  firsts <- Filter(Negate(is.null), lapply(points, function(p)
    first_valid_run(er, function(r) r$key$point == p)))
  if (length(firsts) == 0) {
    save_figure(no_valid_run_plot(experiment, er), a$out_pdf, width, 2.5)
    return(invisible(NULL))
  }
  firsts <- yang_point_order(firsts)
  panel_of <- function(r) sprintf("%s (rep %d)", point_label(r$meta), r$key$repetition)
  flows <- flows_table(firsts[[1]]$meta)
  fr <- goodput_panel_frames(firsts, panel_of, flows, unique(flows$label), bin_s, a$warmup_s)
  g <- fr$g; means <- fr$means
  p <- ggplot(g, aes(t_s, goodput_mbps, colour = flow_label)) + goodput_panel_layers(fr) +
    geom_text(data = means, aes(x = end, y = goodput_mbps, colour = flow_label,
                                label = sprintf("%.1f", goodput_mbps)),
              inherit.aes = FALSE, hjust = 1.1, vjust = -0.4, size = 2.5, show.legend = FALSE) +
    facet_wrap(~panel, ncol = 1) +
    scale_colour_manual(NULL, values = FLOW_COLOURS) +
    scale_x_continuous("Time (s)", limits = c(0, NA), breaks = scales::breaks_pretty(8),
                       expand = expansion(mult = c(0, 0.01))) +
    scale_y_continuous("Throughput (Mbit/s)", limits = c(0, NA)) +
    labs(caption = sweep_caption(experiment, er, a$warmup_s, paste0(
      what, "; first valid repetition of each point, goodput in ", format(bin_s),
      "-s bins; shaded: steady state, dashed (number): each flow's steady-state mean"))) +
    theme_paper()
  save_figure(p, a$out_pdf, width, 0.9 + panel_height * length(firsts))
}

# fun(run) -> tibble(x, value) of one valid run; x is the sweep variable (a factor's label).
# fair: optional function(x) -> the fair value at x, drawn as a dashed tick per x.
yang_bar_figure <- function(experiment, fun, x_label, y_label, what, y_limits = NULL,
                            hline = NULL, fair = NULL, width = 6.5, height = 3.2) {
  a <- figure_args(experiment)
  er <- a$runs
  vals <- per_run(er$runs, function(r) mutate(fun(r, a$warmup_s), algorithm = yang_algorithm(r)))
  if (nrow(vals) == 0) {
    save_figure(no_valid_run_plot(experiment, er), a$out_pdf, width, 2.5)
    return(invisible(NULL))
  }
  vals$x <- factor(vals$x, levels = sort(unique(vals$x)))
  vals$algorithm <- factor(vals$algorithm, levels = intersect(YANG_ALGOS, unique(vals$algorithm)))
  s <- summarise_valid(vals, c("x", "algorithm"))
  digits <- if (max(s$mean, na.rm = TRUE) > 1.5) 1 else 2
  ticks <- if (is.null(fair)) NULL else
    tibble(x = factor(levels(vals$x), levels = levels(vals$x)), fair = fair(as.numeric(levels(vals$x))))
  dodge <- position_dodge(width = 0.8)
  p <- ggplot(s, aes(x, mean, fill = algorithm)) +
    geom_col(position = dodge, width = 0.75) +
    geom_errorbar(data = filter(s, n > 1), aes(ymin = lo, ymax = hi), position = dodge,
                  width = 0.2, linewidth = 0.35) +
    geom_point(data = vals, aes(x, value, group = algorithm), position = dodge, size = 0.8,
               alpha = 0.6, show.legend = FALSE) +
    geom_text(aes(label = formatC(mean, format = "f", digits = digits),
                  group = algorithm), position = dodge, vjust = -0.5, size = 2.4) +
    { if (!is.null(ticks)) geom_errorbar(data = ticks, aes(x, ymin = fair, ymax = fair), inherit.aes = FALSE,
                                         width = 0.9, linetype = "dashed", colour = "grey30", linewidth = 0.35) } +
    { if (!is.null(hline)) geom_hline(yintercept = hline, linetype = "dashed", colour = "grey40", linewidth = 0.3) } +
    scale_fill_manual(NULL, values = YANG_COLOURS) +
    scale_x_discrete(x_label) +
    scale_y_continuous(y_label, limits = y_limits, expand = expansion(mult = c(0, 0.08))) +
    labs(caption = sweep_caption(experiment, er, a$warmup_s, paste0(
      what, "; bars: mean over valid repetitions, +- sd (n > 1), dots: single runs"))) +
    theme_paper()
  save_figure(p, a$out_pdf, width, height)
}
