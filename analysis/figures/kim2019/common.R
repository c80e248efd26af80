# analysis/figures/kim2019/common.R -- what the Kim et al. (2019) figure scripts share
# (sourced by kim2019_fig0*.R after analysis/lib/figure.R; not a figure itself).
#
# kim_goodput_figure(experiment, title): the paper's Figs. 2-7 plot each flow's
# throughput (Mbit/s) against time (s). Here: one panel per sweep point (rate,
# with or without 6.1's ACK-aggregation allowance, alpha), each from the point's
# FIRST VALID repetition, goodput in bin_s-second bins (default 1 s), the
# steady-state window shaded and each flow's steady-state mean dashed, panels in
# the spec's point order, the caption naming the runs and the excluded ones.

kim_goodput_figure <- function(experiment, what, width = 6.5, panel_height = 2.1) {
  a <- figure_args(experiment)
  bin_s <- if (is.na(a$bin_s)) 1 else a$bin_s
  er <- a$runs
  points <- unique(er$index$point[er$index$valid])
  # within a rate, the module's defaults (module_params=none) before the alternatives
  rate <- suppressWarnings(as.numeric(sub(".*rate_mbps=([0-9.]+).*", "\\1", points)))
  points <- points[order(rate %|NA|% 0, !grepl("module_params=none", points), points)]
  firsts <- lapply(points, function(p) first_valid_run(er, function(r) r$key$point == p))
  firsts <- Filter(Negate(is.null), firsts)
  if (length(firsts) == 0) {
    save_figure(no_valid_run_plot(experiment, er), a$out_pdf, width, 2.5)
    return(invisible(NULL))
  }
  # panel order: by rate, the module's defaults first, then the point names
  panel_of <- function(r) sprintf("%s (rep %d)", point_label(r$meta), r$key$repetition)
  flows <- flows_table(firsts[[1]]$meta)
  if (anyDuplicated(flows$label)) flows$label <- sprintf("flow %d: %s", flows$flow, flows$label)
  fr <- goodput_panel_frames(firsts, panel_of, flows, flows$label, bin_s, a$warmup_s)
  g <- fr$g
  p <- ggplot(g, aes(t_s, goodput_mbps, colour = flow_label)) + goodput_panel_layers(fr) +
    facet_wrap(~panel, ncol = 1, scales = "free_y") +
    scale_colour_manual(values = FLOW_COLOURS) +
    scale_x_continuous("Time (s)", limits = c(0, NA), breaks = scales::breaks_pretty(8),
                       expand = expansion(mult = c(0, 0.01))) +
    scale_y_continuous("Throughput (Mbit/s)", limits = c(0, NA)) +
    labs(caption = sweep_caption(experiment, er, a$warmup_s, paste0(
      what, "; first valid repetition of each point, goodput in ", format(bin_s),
      "-s bins; shaded: steady state, dashed: each flow's steady-state mean"))) +
    theme_paper()
  save_figure(p, a$out_pdf, width, 0.9 + panel_height * length(firsts))
}
