# analysis/figures/utsumi2022/common.R -- what the Utsumi & Hasegawa (BBR-FCA, IFIP 2022)
# figure scripts share (sourced by utsumi2022_*.R after analysis/lib/figure.R; not a figure).
#
# U22_WINDOW                  every value is over the whole transfer ("0..end"), as the
#                             claims (claims/utsumi2022.csv) and the paper's 6000-s transfers
# u22_window(run, warmup_s)   that window for one run
# u22_cc(run)                 "BBR" / "BBR-FCA" / "BBRv2" / "BBRv2+" (the labels of the run's non-CUBIC
#                             flows, cc_label()), "CUBIC" if none
# u22_cc_levels(er)           those labels over an experiment's runs, in the registry's order
#                             (cc_labels()): the order of series and panels
# u22_params_note(er)         "BBR-FCA: bbr_fca with ...": the module parameters
#                             the runs gave each congestion control (run.json spec), for captions
# u22_delay(run)              "20 ms one way" / "40 ms one way" (half the base RTT)
# u22_buffer_bdp(run)         the bottleneck buffer in BDPs of rate x flow 1's base RTT
# u22_profile_note(er)        "profile quick, 20-s runs": which profile (run.json profile) and
#                             run length produced the figure, and u22_params_note(), for its caption
# u22_sweep_figure(...)       per-run values (x, value, series, panel) -> lines over x per
#                             series, one panel per `panel`; mean over valid repetitions,
#                             +- sd (n > 1), dots: single runs

U22_WINDOW <- "0..end"
U22_COLOURS <- c(cc_palette(c(bbr = "#0072B2", bbr_fca = "#009E73", cubic = "#D55E00", bbr2_v2alpha = "#AA3377",
                               bbr2plus = "#332288")),
                 "BBR-type flow" = "#0072B2", measured = "grey20",
                 "model (Eqs. 4-8)" = "#CC79A7", "bbr_fca module's estimate" = "#E69F00")

u22_window <- function(run, warmup_s) claim_window(run, U22_WINDOW, warmup_s)

u22_cc <- function(run) {
  ccs <- unique(vapply(run$meta$flows, function(f) as.character(f$cc %||% NA), ""))
  other <- setdiff(ccs, "cubic")
  if (length(other) == 0) return("CUBIC")
  paste(cc_label(other), collapse = "+")
}

u22_cc_levels <- function(er) {
  ccs <- unique(unlist(lapply(er$runs, function(r) vapply(r$meta$flows, function(f) as.character(f$cc %||% NA), ""))))
  ccs <- setdiff(ccs[!is.na(ccs)], "cubic")
  known <- intersect(names(cc_labels()), ccs)
  cc_label(c(known, setdiff(ccs, known)))
}

u22_params_note <- function(er) {
  notes <- unique(unlist(lapply(er$runs, function(r) vapply(r$meta$spec$flows %||% list(), function(f) {
    p <- f$module_params
    if (length(p) == 0) return(NA_character_)
    p <- p[order(names(p))]
    sprintf("%s: %s with %s", cc_label(f$cc), f$cc, paste(sprintf("%s=%s", names(p), unlist(p)), collapse = ", "))
  }, ""))))
  paste(notes[!is.na(notes)], collapse = "; ")
}

u22_rtt_ms <- function(run) flows_table(run$meta)$rtt_ms[1]

u22_delay <- function(run) sprintf("%g ms one way", u22_rtt_ms(run) / 2)

u22_buffer_bdp <- function(run) {
  b <- run$meta$bottleneck
  signif(b$buffer_bytes / (b$rate_mbps * 1e6 / 8 * u22_rtt_ms(run) / 1e3), 3)
}

u22_profile_note <- function(er) {
  if (length(er$runs) == 0) return("no runs")
  prof <- unique(vapply(er$runs, function(r) as.character(r$meta$profile %||% "?"), ""))
  dur <- unique(vapply(er$runs, function(r) as.numeric(r$meta$spec$duration_s %||% NA), 0))
  params <- u22_params_note(er)
  sprintf("profile %s, %s-s runs%s", paste(prof, collapse = "/"), paste(format(sort(dur)), collapse = "/"),
          if (nzchar(params)) paste0("; ", params) else "")
}

# fun(run, warmup_s) -> tibble(x, value, series, panel) or NULL. panel_levels orders the
# panels; x_log2: buffer axes (1-128 BDP).
u22_sweep_figure <- function(experiment, a, fun, x_label, y_label, what, panel_levels = NULL,
                             x_log2 = FALSE, y_limits = c(0, NA), hline = NULL, width = 6.5,
                             height = 3.4, ncol = 2, save = TRUE, scales = "fixed") {
  er <- a$runs
  vals <- per_run(er$runs, function(r) fun(r, a$warmup_s))
  if (nrow(vals) > 0) vals <- vals[!is.na(vals$value), ]
  if (nrow(vals) == 0) {
    p <- no_valid_run_plot(experiment, er)
    if (save) save_figure(p, a$out_pdf, width, 2.5)
    return(invisible(p))
  }
  vals$panel <- factor(vals$panel, levels = unique(c(panel_levels, unique(vals$panel))))
  s <- summarise_valid(vals, c("x", "series", "panel"))
  series <- unique(c(intersect(c("CUBIC", u22_cc_levels(er)), as.character(s$series)), as.character(s$series)))
  s$series <- factor(s$series, levels = series)
  vals$series <- factor(vals$series, levels = series)
  cols <- setNames(rep(FLOW_COLOURS, length.out = length(series)), series)
  for (k in intersect(names(U22_COLOURS), series)) cols[[k]] <- U22_COLOURS[[k]]
  p <- ggplot(s, aes(x, mean, colour = series, group = series)) +
    { if (!is.null(hline)) geom_hline(yintercept = hline, linetype = "dotted", colour = "grey50") } +
    geom_line(linewidth = 0.4) + geom_point(size = 1.3) +
    geom_errorbar(data = dplyr::filter(s, n > 1), aes(ymin = lo, ymax = hi), width = 0.1, linewidth = 0.3) +
    geom_point(data = vals, aes(x, value), size = 0.7, alpha = 0.5, inherit.aes = FALSE) +
    facet_wrap(~panel, ncol = ncol, drop = TRUE, scales = scales) +
    scale_colour_manual(NULL, values = cols) +
    { if (x_log2) scale_x_continuous(x_label, trans = "log2", breaks = 2^(0:7))
      else scale_x_continuous(x_label, breaks = function(l) seq(ceiling(l[1]), floor(l[2]))) } +
    scale_y_continuous(y_label, limits = y_limits) +
    labs(caption = sweep_caption(experiment, er, a$warmup_s, paste0(
      u22_profile_note(er), "; ", what, "; whole transfer (0 s to the end); lines: mean over valid repetitions, +- sd (n > 1), dots: single runs"))) +
    theme_paper()
  if (save) save_figure(p, a$out_pdf, width, height)
  invisible(p)
}

# Figs. 8/12 and 9/13: Jain's index of all flows' goodput over m (the number of CUBIC
# flows), one line per BBR-type algorithm, one panel per delay. figs: the figure numbers
# at 20 and 40 ms one way ("8", "12"); bbr_flows: "one BBR-type flow" / "m BBR-type flows".
u22_jain_over_m_figure <- function(experiment, figs, bbr_flows) {
  a <- figure_args(experiment)
  m_of <- function(r) sum(flows_table(r$meta)$cc == "cubic")
  panels <- sprintf("Fig. %s: %s one way", figs, c("20 ms", "40 ms"))
  u22_sweep_figure(experiment, a, function(r, warmup_s) {
    tibble(x = m_of(r), value = ss_jain(r, window = u22_window(r, warmup_s)), series = u22_cc(r),
           panel = sprintf("Fig. %s: %s", if (u22_rtt_ms(r) == 40) figs[1] else figs[2], u22_delay(r)))
  }, "m", "Jain's fairness index",
  sprintf("Figs. %s and %s: m CUBIC flows and %s, 100 Mbit/s, 64 BDP; Jain's index over all flows' goodput",
          figs[1], figs[2], bbr_flows),
  panel_levels = panels, y_limits = c(0, 1.05), hline = 1)
}
