# analysis/lib/plot.R -- shared pieces of the figure scripts (analysis/figures/<paper>/*.R).
#
# What:    figure_args()     the figure CLI: <runs_dir> <out.pdf> [warmup_s] [bin_s]
#          save_figure()     one ggplot, or several stacked in one figure, written
#                            atomically as <out.pdf> (cairo) and <out>.png
#          theme_paper(), colour scales, rebin_goodput(), placeholder_plot()
#          experiment_runs() the runs of one experiment with their verdicts
#          per_run()         a per-run table of values (valid runs evaluated only)
#          summarise_valid() mean / sd / min / max over valid runs, per group
#          excluded_note()   "excluded: <point label> rep k (<failed checks>)" for captions
#          algorithm_of()    "BBR", "BBQ", ... from a run's flows (all flows share it):
#                            the label of variants.yaml (cc_label(), variants.R)
# Inputs:  run objects (analysis/lib/tidy.R), ggplot objects.
# Outputs: ggplot objects, files.
# Needs load.R loaded first (variants.R, tidy.R, metrics.R, output.R); figure scripts source
# figure.R, which loads both.

suppressPackageStartupMessages({
  library(ggplot2)
  library(grid)
})

FLOW_COLOURS <- c("#D55E00", "#0072B2", "#009E73", "#CC79A7", "#E69F00", "#56B4E9")
# Colours of the algorithms Ma et al.'s comparison figures draw, keyed by their labels.
ALGO_COLOURS <- c(cc_palette(c(bbr = "#0072B2", bbq = "#D55E00", bbq_drain = "#009E73")), mixed = "grey60")

# The experiment a figure script draws: BBRLAB_EXPERIMENT, which the pipeline sets from
# config/experiments.csv, else (a script run by hand) the script's file name without .R.
figure_experiment <- function() {
  env <- Sys.getenv("BBRLAB_EXPERIMENT", "")
  if (nzchar(env)) return(env)
  file <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  if (length(file) != 1) stop("figure_experiment(): BBRLAB_EXPERIMENT is not set and no script file")
  sub("\\.R$", "", basename(file))
}

# Parsed command line of a figure script (same CLI as ma2019_fig01.R); runs: experiment_runs()
# of the experiment (figure_experiment()).
figure_args <- function(experiment = figure_experiment()) {
  args <- script_args(sprintf("%s.R <runs_dir> <out.pdf> [warmup_s] [bin_s]", experiment), 2)
  list(experiment = experiment, runs_dir = args[1], out_pdf = args[2],
       warmup_s = if (length(args) >= 3) as.numeric(args[3]) else DEFAULT_WARMUP_S,
       bin_s = if (length(args) >= 4) as.numeric(args[4]) else NA_real_,
       runs = experiment_runs(args[1], experiment))
}

theme_paper <- function(base_size = 10) {
  theme_bw(base_size = base_size) +
    theme(legend.position = "top", legend.title = element_blank(),
          legend.margin = margin(0, 0, 0, 0), legend.box.spacing = unit(2, "pt"),
          panel.grid.minor = element_blank(),
          plot.title = element_text(size = base_size, face = "bold"),
          plot.caption = element_text(size = 7, colour = "grey30", hjust = 0))
}

# Wraps a caption to lines of about `width` characters.
wrap_caption <- function(text, width = 120) paste(strwrap(text, width), collapse = "\n")

# Writes one plot, or a list of plots stacked top to bottom with relative
# `heights`, as <out.pdf> and <out>.png (both atomically).
save_figure <- function(plots, out_pdf, width, height, heights = NULL) {
  if (inherits(plots, "ggplot")) plots <- list(plots)
  heights <- heights %||% rep(1, length(plots))
  draw <- function() {
    grid.newpage()
    pushViewport(viewport(layout = grid.layout(length(plots), 1,
                                               heights = unit(heights, "null"))))
    for (i in seq_along(plots))
      print(plots[[i]], vp = viewport(layout.pos.row = i, layout.pos.col = 1))
  }
  atomic(out_pdf, function(tmp) {
    grDevices::cairo_pdf(tmp, width = width, height = height)
    on.exit(grDevices::dev.off())
    draw()
  })
  atomic(sub("(\\.pdf)?$", ".png", out_pdf), function(tmp) {
    grDevices::png(tmp, width = width, height = height, units = "in", res = 200, type = "cairo")
    on.exit(grDevices::dev.off())
    draw()
  })
}

placeholder_plot <- function(text) {
  ggplot() + annotate("text", x = 0, y = 0, size = 4, label = text) + theme_void()
}

# Goodput re-binned to bin_s (bytes over elapsed time, so partial bins stay exact).
rebin_goodput <- function(goodput, bin_s) {
  goodput %>%
    mutate(bin_end = ceiling(t_s / bin_s - 1e-9) * bin_s) %>%
    group_by(flow, bin_end) %>%
    summarise(t_s = first(bin_end) - bin_s / 2,
              goodput_mbps = sum(bytes) * 8 / sum(interval_s) / 1e6, .groups = "drop")
}

# Runs of one experiment below runs_dir: list(runs, index) (index: read_runs()$index rows).
experiment_runs <- function(runs_dir, experiment) {
  all <- read_runs(runs_dir)
  keep <- all$index$experiment == experiment
  list(runs = all$runs[keep], index = all$index[keep, ])
}

first_valid_run <- function(er, filter = function(run) TRUE) {
  for (r in er$runs) if (r$key$valid && filter(r)) return(r)
  NULL
}

# fun(run) -> a tibble (any rows) of values; evaluated on valid runs only; each row
# gets the run key (experiment, point, repetition, valid).
per_run <- function(runs, fun) {
  bind_rows(lapply(runs, function(r) {
    if (!r$key$valid) return(NULL)
    v <- fun(r)
    if (is.null(v) || nrow(v) == 0) return(NULL)
    bind_cols(r$key[rep(1, nrow(v)), ], v)
  }))
}

# Mean, sd, n, min, max of `value` per group (valid rows only: aggregate_valid()).
summarise_valid <- function(tab, by, value = "value") {
  if (nrow(tab) == 0) return(tibble())
  aggregate_valid(tab, value, by) %>%
    mutate(lo = ifelse(is.na(sd), mean, mean - sd), hi = ifelse(is.na(sd), mean, mean + sd))
}

# Caption text naming the runs left out (invalid: failed fidelity checks; failed).
excluded_note <- function(er) {
  bad <- which(!er$index$valid)
  if (length(bad) == 0) return("No run excluded.")
  items <- vapply(bad, function(i) {
    r <- er$runs[[i]]
    checks <- Filter(function(ch) !isTRUE(ch$ok), r$meta$fidelity$checks %||% list())
    why <- if (er$index$verdict[i] == "failed") "run failed" else
      paste(unique(vapply(checks, function(ch) ch$name %||% "?", "")), collapse = ", ")
    sprintf("%s rep %d (%s)", point_label(r$meta), r$key$repetition, why)
  }, "")
  paste0("Excluded (", length(bad), " of ", nrow(er$index), " runs): ",
         paste(items, collapse = "; "), ".")
}

runs_note <- function(er) {
  sprintf("%d valid of %d runs", sum(er$index$valid), nrow(er$index))
}

# The congestion control of a run as a label: cc_label() of the flows' common cc,
# else "mixed".
algorithm_of <- function(run) {
  ccs <- unique(vapply(run$meta$flows, function(f) as.character(f$cc %||% NA), ""))
  if (length(ccs) != 1) return("mixed")
  cc_label(ccs)
}

no_valid_run_plot <- function(experiment, er) {
  placeholder_plot(sprintf("No valid run of %s (%d runs found).", experiment, length(er$runs)))
}

# The caption of a figure over a sweep: runs, what is drawn, warm-up, exclusions.
sweep_caption <- function(experiment, er, warmup_s, what, width = 110) {
  wrap_caption(sprintf("%s: %s; %s; warm-up %s s. %s", experiment, runs_note(er), what,
                       format(warmup_s), excluded_note(er)), width)
}

# Steady-state share (%) of the flow with the shortest configured RTT (mean per
# flow when several share it), the y of Figs. 14-17.
short_flow_share <- function(run, warmup_s) {
  g <- ss_goodput_table(run, warmup_s)
  ss_share_rtt_pct(run, min(g$rtt_ms), warmup_s)
}

# Per-run values by algorithm: fun(run) -> tibble(x, value); adds `algorithm`.
values_by_algorithm <- function(er, fun) {
  per_run(er$runs, function(r) mutate(fun(r), algorithm = algorithm_of(r)))
}

# mean(BBQ) / mean(BBR) per value of `key` where both exist, from summarise_valid()
# output with columns algorithm and mean: columns key..., BBR, BBQ.
improvement_table <- function(s, key) {
  wide <- s %>% filter(algorithm %in% c("BBR", "BBQ"), n > 0) %>%
    select(all_of(key), algorithm, mean) %>%
    tidyr::pivot_wider(names_from = algorithm, values_from = mean)
  if (!all(c("BBR", "BBQ") %in% names(wide))) return(wide[0, ])
  filter(wide, !is.na(BBR), !is.na(BBQ))
}

# What the captions of Figs. 14-17 say about the drawing.
COMPARISON_WHAT <- "mean +- sd over valid repetitions (dots: single runs); numbers: BBQ / BBR; dashed: fair share"

# The BBQ-vs-BBR comparison plot of Figs. 14-16: mean (points, lines) +- sd (bars,
# n > 1 only) per x and algorithm, single runs as dots, and the improvement factor
# mean(BBQ) / mean(BBR) written above each x where both exist. Runs whose flows mix
# algorithms (not in the paper) are drawn in grey.
algorithm_comparison_plot <- function(vals, x_scale, y_label, caption, fair = NULL) {
  s <- summarise_valid(vals, c("x", "algorithm"))
  ratio <- improvement_table(s, "x")
  ggplot(s, aes(x, mean, colour = algorithm)) +
    { if (!is.null(fair)) geom_line(data = fair, aes(x, fair), inherit.aes = FALSE,
                                    linetype = "dashed", colour = "grey40", linewidth = 0.3) } +
    geom_line(linewidth = 0.4) +
    geom_errorbar(data = filter(s, n > 1), aes(ymin = lo, ymax = hi), width = 0, linewidth = 0.35) +
    geom_point(size = 1.8) +
    geom_point(data = vals, aes(x, value), size = 0.7, alpha = 0.5) +
    { if (nrow(ratio)) geom_text(data = ratio, aes(x, 97, label = sprintf("%.2fx", BBQ / BBR)),
                                 inherit.aes = FALSE, size = 2.4, colour = "grey25") } +
    scale_colour_manual(values = ALGO_COLOURS) + x_scale +
    scale_y_continuous(y_label, limits = c(0, 100)) +
    labs(caption = caption) + theme_paper()
}

# A steady-state window w (steady_window()) on a goodput-vs-time plot: steady_band()
# shades it (add it before the lines); steady_mean_layers() draws each flow's mean
# (`means`: columns goodput_mbps, flow_label) as a dashed segment across it,
# labelled "mean x.y" at the window's `label_at` end.
steady_band <- function(w) {
  annotate("rect", xmin = w[["start"]], xmax = w[["end"]], ymin = -Inf, ymax = Inf,
           fill = "grey50", alpha = 0.12)
}

steady_mean_layers <- function(means, w, label_at = c("end", "start")) {
  label_at <- match.arg(label_at)
  x <- w[[label_at]]
  list(
    geom_segment(data = means, aes(x = w[["start"]], xend = w[["end"]], y = goodput_mbps,
                                   yend = goodput_mbps, colour = flow_label),
                 inherit.aes = FALSE, linetype = "dashed", linewidth = 0.4),
    geom_label(data = means, aes(x = x, y = goodput_mbps, colour = flow_label,
                                 label = sprintf("mean %.1f", goodput_mbps)),
               inherit.aes = FALSE, hjust = if (label_at == "end") 1.05 else -0.05,
               vjust = -0.25, size = 2.6, label.size = 0, label.padding = unit(1, "pt"),
               fill = "white", show.legend = FALSE))
}

# Goodput over time of several runs, one facet panel per run (panel_of(run) names
# it; panels in the runs' order): list(g = goodput rebinned to bin_s, windows =
# each run's steady state, means = the flows' steady-state means), with
# flow_label = flows$label as a factor of `levels`.
goodput_panel_frames <- function(runs, panel_of, flows, levels, bin_s, warmup_s) {
  panels <- vapply(runs, panel_of, "")
  lab <- function(f) factor(flows$label[match(f, flows$flow)], levels = levels)
  in_panels <- function(tab) mutate(tab, panel = factor(panel, levels = panels))
  g <- bind_rows(lapply(runs, function(r) rebin_goodput(r$goodput, bin_s) %>% mutate(panel = panel_of(r))))
  windows <- bind_rows(lapply(runs, function(r) {
    w <- steady_window(r, warmup_s)
    tibble(panel = panel_of(r), start = w[["start"]], end = w[["end"]])
  }))
  means <- bind_rows(lapply(runs, function(r) {
    w <- steady_window(r, warmup_s)
    ss_goodput_table(r, warmup_s) %>%
      transmute(flow_label = lab(flow), goodput_mbps, start = w[["start"]], end = w[["end"]],
                panel = panel_of(r))
  }))
  list(g = in_panels(mutate(g, flow_label = lab(flow))), windows = in_panels(windows),
       means = in_panels(means))
}

# The layers over goodput_panel_frames(): shaded steady state, the goodput lines,
# the flows' steady-state means dashed.
goodput_panel_layers <- function(fr) {
  list(geom_rect(data = fr$windows, aes(xmin = start, xmax = end, ymin = -Inf, ymax = Inf),
                 inherit.aes = FALSE, fill = "grey50", alpha = 0.12),
       geom_line(linewidth = 0.45),
       geom_segment(data = fr$means, aes(x = start, xend = end, y = goodput_mbps, yend = goodput_mbps,
                                         colour = flow_label),
                    inherit.aes = FALSE, linetype = "dashed", linewidth = 0.35))
}
