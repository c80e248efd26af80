#!/usr/bin/env Rscript
# analysis/figures/successors/successors_tang_fig05.R -- Tang's Fig. 5 with BBR's successors:
# one BBR, BBRv2 or BBRv3 flow against one CUBIC flow at 0.8, 1.5, 3 and 6 BDP buffers,
# 10 Mbit/s, 200-ms RTT (and 100 ms in the paper profile).
#
# Usage:   Rscript analysis/figures/successors/successors_tang_fig05.R <runs_dir> <out.pdf> [warmup_s] [bin_s]
# Inputs:  runs of experiment "successors_tang_fig05" below <runs_dir>.
# Outputs: <out.pdf> and <out>.png, atomically. Top: throughput over time (bin_s bins,
#          default 2 s) of the first valid repetition at 200-ms RTT, rows = congestion control,
#          columns = buffer (the paper's panels); bottom: the BBR-type flow's steady-state share
#          of the two flows' goodput over the buffer, per congestion control and RTT (mean over
#          valid repetitions, +- sd, dots single runs). <out>_values.tex (common.R): per
#          congestion control <cc> (bbr, bbrv2, bbrv3), 200-ms RTT: tang5-<cc>-b<buffer> (the
#          BBR-type flow's share, %, buffer 08, 15, 3, 6 BDP), -dist (mean over the buffers of
#          its distance from 50 %, points), -range (largest minus smallest share over the
#          buffers, points), and for bbrv2 / bbrv3 -words (common.R's rule on -dist).

script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "..", "..", "lib", "figure.R"), chdir = TRUE)
source(file.path(script_dir, "common.R"))

E <- figure_experiment()
a <- figure_args(E)
er <- a$runs
bin_s <- if (is.na(a$bin_s)) 2 else a$bin_s
rtt_of <- function(r) flows_table(r$meta)$rtt_ms[1]

vals <- per_run(er$runs, function(r) {
  g <- ss_goodput_table(r, a$warmup_s)
  tibble(cc = succ_cc(r), rtt = rtt_of(r), bdp = succ_buffer_bdp(r),
         value = 100 * g$goodput_mbps[g$flow == 1] / sum(g$goodput_mbps))
})

values <- c()
BUF_KEYS <- c("0.8" = "b08", "1.5" = "b15", "3" = "b3", "6" = "b6")
m <- succ_mean_by(vals, c("cc", "rtt", "bdp"))
for (cc in succ_ccs(er$runs)) {
  k <- succ_key(cc)
  x <- if (nrow(m)) m[m$cc == cc & m$rtt == 200, ] else tibble(bdp = double(), value = double())
  for (b in names(BUF_KEYS)) {
    v <- x$value[abs(x$bdp - as.numeric(b)) < 0.05]
    values[sprintf("tang5-%s-%s", k, BUF_KEYS[[b]])] <- succ_fmt(if (length(v)) v[1] else NA)
  }
  values[sprintf("tang5-%s-dist", k)] <- succ_fmt(if (nrow(x)) mean(abs(x$value - 50)) else NA)
  values[sprintf("tang5-%s-range", k)] <- succ_fmt(if (nrow(x)) max(x$value) - min(x$value) else NA)
}
dist_of <- function(cc) { x <- if (nrow(m)) m[m$cc == cc & m$rtt == 200, ] else m; if (nrow(x)) mean(abs(x$value - 50)) else NA_real_ }
for (cc in succ_successors(er$runs))
  values[sprintf("tang5-%s-words", succ_key(cc))] <- succ_unfairness_words(dist_of(cc), dist_of("BBR"))
succ_write_values(values, a$out_pdf)

if (nrow(vals) == 0) {
  save_figure(no_valid_run_plot(E, er), a$out_pdf, 6.5, 2.5)
} else {
  cc_levels <- succ_cc_levels(vals$cc)
  er200 <- list(runs = Filter(function(r) rtt_of(r) == 200, er$runs), index = er$index)
  er200$index <- er$index[vapply(er$runs, function(r) rtt_of(r) == 200, TRUE), ]
  ts <- succ_timeseries(er200, function(r) sprintf("%s|%s BDP", succ_cc(r), format(succ_buffer_bdp(r))),
                        bin_s, a$warmup_s)
  split_panel <- function(d) {
    parts <- strsplit(sub(" \\(rep [0-9]+\\)$", "", as.character(d$panel)), "|", fixed = TRUE)
    d$row <- factor(vapply(parts, `[`, "", 1), levels = cc_levels)
    bdps <- vapply(parts, `[`, "", 2)
    d$col <- factor(bdps, levels = unique(bdps[order(as.numeric(sub(" BDP", "", bdps)))]))
    d
  }
  g <- split_panel(ts$g)
  mm <- split_panel(ts$means)
  g$flow_label <- ifelse(g$flow_label == "CUBIC", "CUBIC", "BBR-type flow")
  mm$flow_label <- ifelse(mm$flow_label == "CUBIC", "CUBIC", "BBR-type flow")
  cols <- c("BBR-type flow" = "#0072B2", CUBIC = SUCC_COLOURS[["CUBIC"]])
  top <- ggplot(g, aes(t_s, goodput_mbps, colour = flow_label)) +
    geom_line(linewidth = 0.35) +
    geom_segment(data = mm, aes(x = start, xend = end, y = goodput_mbps, yend = goodput_mbps, colour = flow_label),
                 linetype = "dashed", linewidth = 0.35) +
    facet_grid(row ~ col) +
    scale_colour_manual(NULL, values = cols) +
    scale_x_continuous("Time (s)", limits = c(0, NA), expand = expansion(mult = c(0, 0.02))) +
    scale_y_continuous("Throughput (Mbit/s)", limits = c(0, NA)) +
    labs(title = "Tang's Fig. 5 per congestion control (200-ms RTT; columns: buffer)") +
    theme_paper()
  v <- vals
  v$cc <- factor(v$cc, levels = cc_levels)
  v$panel <- sprintf("%g-ms RTT", v$rtt)
  s <- summarise_valid(v, c("cc", "bdp", "panel"))
  bottom <- ggplot(s, aes(bdp, mean, colour = cc, group = cc)) +
    geom_hline(yintercept = 50, linetype = "dotted", colour = "grey50") +
    geom_line(linewidth = 0.4) + geom_point(size = 1.4) +
    geom_errorbar(data = filter(s, n > 1), aes(ymin = lo, ymax = hi), width = 0.05, linewidth = 0.3) +
    geom_point(data = v, aes(bdp, value), size = 0.6, alpha = 0.5, inherit.aes = FALSE) +
    facet_wrap(~panel, nrow = 1) +
    scale_colour_manual(NULL, values = SUCC_COLOURS) +
    scale_x_continuous("Buffer (BDP)", trans = "log2", breaks = c(0.8, 1.5, 3, 6), labels = function(b) as.character(b)) +
    scale_y_continuous("BBR-type flow's share (%)", limits = c(0, 100)) +
    labs(caption = sweep_caption(E, er, a$warmup_s, paste0(
      succ_profile_note(er), "; top: first valid repetition, ", format(bin_s),
      "-s bins, dashed: steady-state means; bottom: steady-state share of the two flows' goodput, mean +- sd over valid repetitions (dots: single runs)"))) +
    theme_paper()
  save_figure(list(top, bottom), a$out_pdf, 6.5, 7.5, heights = c(1.7, 1))
}
