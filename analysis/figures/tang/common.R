# analysis/figures/tang/common.R -- what the Tang ("BBR Fairness Evaluation Using NS-3")
# figure scripts share (sourced by tang_*.R after analysis/lib/figure.R; not a figure).
#
# tang_firsts(er, order_by)   the FIRST VALID repetition of each sweep point, ordered by
#                             order_by(run) (a number; ties by point name)
# tang_series(run, what)      one run's time series as tibble(t_s, value, series):
#                             "goodput" (Mbit/s, 1-s bins, per flow), "rtt" (smoothed RTT,
#                             ms, per flow), "cwnd" / "inflight" (packets, per flow, and
#                             with several flows their sum, flows_sum_series()),
#                             "queue" (bottleneck backlog, packets)
# tang_series_figure(...)     panels of such series: rows = quantities (the paper's
#                             sub-figures), columns = runs; lines per flow
# tang_bar_figure(...)        a per-run value per x and series: bars = mean over valid
#                             repetitions (+- sd, n > 1), dots = single runs, crosses = the
#                             paper's published values
# tang_cc(run)                "BBR" / "CUBIC" / "BBR vs CUBIC" from the run's flows

TANG_COLOURS <- cc_palette(c(bbr = "#0072B2", cubic = "#D55E00"))

tang_cc <- function(run) {
  ccs <- unique(vapply(run$meta$flows, function(f) as.character(f$cc %||% NA), ""))
  paste(cc_label(ccs), collapse = " vs ")
}

tang_firsts <- function(er, order_by = function(r) 0) {
  points <- unique(er$index$point[er$index$valid])
  firsts <- Filter(Negate(is.null), lapply(points, function(p)
    first_valid_run(er, function(r) r$key$point == p)))
  if (length(firsts) == 0) return(list())
  keys <- vapply(firsts, function(r) r$key$point, "")
  firsts[order(vapply(firsts, order_by, 0), keys)]
}

# Flow labels of a run: the spec's label, numbered when several flows share it.
tang_flow_labels <- function(run) {
  fl <- flows_table(run$meta)
  lab <- fl$label
  dup <- lab %in% lab[duplicated(lab)]
  lab[dup] <- sprintf("%s %d", lab[dup], fl$flow[dup])
  setNames(lab, fl$flow)
}

tang_series <- function(run, what, bin_s = 1) {
  lab <- tang_flow_labels(run)
  if (what == "goodput") {
    if (nrow(run$goodput) == 0) return(tibble(t_s = double(), value = double(), series = character()))
    g <- rebin_goodput(run$goodput, bin_s)
    return(tibble(t_s = g$t_s, value = g$goodput_mbps, series = unname(lab[as.character(g$flow)])))
  }
  if (what == "queue") {
    q <- run$queue[!is.na(run$queue$backlog_pkts) & run$queue$t_s >= 0, ]
    return(tibble(t_s = q$t_s, value = q$backlog_pkts, series = "bottleneck queue"))
  }
  col <- c(rtt = "rtt_ms", cwnd = "cwnd_pkts", inflight = "inflight_pkts")[[what]]
  s <- run$tcp[!is.na(run$tcp[[col]]), ]
  out <- tibble(t_s = s$t_s, value = s[[col]], series = unname(lab[as.character(s$flow)]))
  if (what %in% c("cwnd", "inflight") && length(lab) > 1 && nrow(s) > 0) {
    w <- c(start = min(s$t_s), end = max(s$t_s))
    times <- sort(unique(s$t_s))
    out <- bind_rows(out, tibble(t_s = times, value = flows_sum_series(run, col, w), series = "sum of the flows"))
  }
  out
}

TANG_WHAT <- c(goodput = "Throughput (Mbit/s)", rtt = "RTT (ms)", cwnd = "cwnd (packets)",
               inflight = "Inflight (packets)", queue = "Queue length (packets)")

# runs: list of runs (one column each, titled title_of(run)); what: quantities, one row
# each (named vector: name = quantity, value = the row's title, e.g. "(a) throughput").
# overlay = TRUE: one column, each run's series drawn in it as title_of(run) (single-flow runs
# compared in one panel, as the paper's Fig. 2).
tang_series_figure <- function(experiment, er, runs, what, title_of, caption, out_pdf, warmup_s,
                               width = 6.5, row_height = 1.8, bin_s = 1, overlay = FALSE) {
  if (length(runs) == 0) {
    save_figure(no_valid_run_plot(experiment, er), out_pdf, width, 2.5)
    return(invisible(NULL))
  }
  cols <- vapply(runs, title_of, "")
  rows <- unname(what)
  d <- bind_rows(lapply(seq_along(runs), function(i) bind_rows(lapply(names(what), function(w) {
    x <- tang_series(runs[[i]], w, bin_s) %>%
      mutate(row = sprintf("%s\n%s", what[[w]], TANG_WHAT[[w]]), col = cols[i])
    if (overlay) mutate(x, series = cols[i], col = "") else x
  }))))
  d$row <- factor(d$row, levels = unique(sprintf("%s\n%s", what, TANG_WHAT[names(what)])))
  d$col <- factor(d$col, levels = unique(d$col))
  series <- unique(d$series)
  colours <- setNames(rep(c(FLOW_COLOURS, "grey20"), length.out = length(series)), series)
  for (k in intersect(c("bottleneck queue", "sum of the flows"), series)) colours[[k]] <- "grey20"
  if (all(setdiff(series, c("bottleneck queue", "sum of the flows")) %in% names(TANG_COLOURS)))
    for (k in intersect(names(TANG_COLOURS), series)) colours[[k]] <- TANG_COLOURS[[k]]
  p <- ggplot(d, aes(t_s, value, colour = series)) +
    geom_line(linewidth = 0.35) +
    facet_grid(if (overlay) row ~ . else row ~ col, scales = "free_y", switch = "y") +
    scale_colour_manual(NULL, values = colours) +
    scale_x_continuous("Time (s)", limits = c(0, NA), expand = expansion(mult = c(0, 0.01))) +
    scale_y_continuous(NULL, limits = c(0, NA)) +
    labs(caption = sweep_caption(experiment, er, warmup_s, caption)) +
    theme_paper() + theme(strip.placement = "outside", strip.text.y.left = element_text(angle = 90))
  save_figure(p, out_pdf, width, 1 + row_height * length(what))
}

# fun(run, warmup_s) -> tibble(x, value, series); published: tibble(x, series, value);
# label_of(s): the text over each bar from the summary s (columns x, series, mean, ...).
tang_bar_figure <- function(experiment, fun, x_label, y_label, what, published = NULL,
                            x_levels = NULL, width = 6.5, height = 3.2, label_of = NULL) {
  a <- figure_args(experiment)
  er <- a$runs
  vals <- per_run(er$runs, function(r) fun(r, a$warmup_s))
  if (nrow(vals) == 0) {
    save_figure(no_valid_run_plot(experiment, er), a$out_pdf, width, 2.5)
    return(invisible(NULL))
  }
  levels <- x_levels %||% sort(unique(vals$x))
  levels <- c(levels, setdiff(unique(vals$x), levels))
  vals$x <- factor(vals$x, levels = levels)
  s <- summarise_valid(vals, c("x", "series"))
  dodge <- position_dodge(width = 0.8)
  digits <- if (max(s$mean, na.rm = TRUE) > 50) 0 else 2
  s$label <- if (is.null(label_of)) formatC(s$mean, format = "f", digits = digits) else label_of(s)
  pub <- if (is.null(published)) NULL else mutate(published, x = factor(x, levels = levels))
  series <- unique(c(as.character(s$series), if (!is.null(pub)) as.character(pub$series)))
  fills <- setNames(rep(FLOW_COLOURS, length.out = length(series)), series)
  for (k in names(TANG_COLOURS)) if (k %in% series) fills[[k]] <- TANG_COLOURS[[k]]
  p <- ggplot(s, aes(x, mean, fill = series)) +
    geom_col(position = dodge, width = 0.75) +
    geom_errorbar(data = filter(s, n > 1), aes(ymin = lo, ymax = hi), position = dodge,
                  width = 0.2, linewidth = 0.35) +
    geom_point(data = vals, aes(x, value, group = series), position = dodge, size = 0.8,
               alpha = 0.6, show.legend = FALSE) +
    geom_text(aes(label = label, group = series), position = dodge, vjust = -0.4, size = 2.4,
              lineheight = 0.85) +
    { if (!is.null(pub)) geom_point(data = pub, aes(x, value, group = series), position = dodge,
                                    shape = 4, size = 2.2, stroke = 0.8, colour = "black",
                                    inherit.aes = FALSE) } +
    scale_fill_manual(NULL, values = fills) +
    scale_x_discrete(x_label) +
    scale_y_continuous(y_label, limits = c(0, NA), expand = expansion(mult = c(0, 0.18))) +
    labs(caption = sweep_caption(experiment, er, a$warmup_s, paste0(
      what, "; bars: mean over valid repetitions, +- sd (n > 1), dots: single runs, crosses: the paper's values"))) +
    theme_paper()
  save_figure(p, a$out_pdf, width, height)
}
