#!/usr/bin/env Rscript
# analysis/figures/successors/successors_nsperf_coexist.R -- Google's nsperf "coexist" case:
# the throughput of one BBR, BBRv2 or BBRv3 flow (and of the CUBIC flow it shares the link
# with) over the bottleneck buffer, 50 Mbit/s, 30-ms RTT, as nsperf's graph_tests.sh draws it.
#
# Usage:   Rscript analysis/figures/successors/successors_nsperf_coexist.R <runs_dir> <out.pdf> [warmup_s]
# Inputs:  runs of experiment "successors_nsperf_coexist" below <runs_dir>.
# Outputs: <out.pdf> and <out>.png (6.5 x 3.2 in), atomically: left the BBR-type flow's
#          steady-state goodput over the buffer (log axis), one line per congestion control
#          (nsperf's graph); right the CUBIC flow's in the same runs; mean over valid
#          repetitions (+- sd, n > 1), dots single runs, dotted: half the link.
#          <out>_values.tex (common.R), per congestion control <cc> (bbr, bbrv2, bbrv3):
#          co-<cc>-b<buffer> (the BBR-type flow's goodput, Mbit/s, buffer 01 = 0.1 BDP, 1, 2,
#          4, 8, 16), -min / -max (over the buffers run), -range (max - min, Mbit/s),
#          -rangepct (range in % of the link), and for bbrv2 / bbrv3 -rangeratio (its range
#          over BBR's) and -rangewords: "far less" (ratio at most 0.5), "less" (at most 0.9),
#          "not less" (otherwise): how buffer-dependent its goodput is beside BBR's.

script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "..", "..", "lib", "figure.R"), chdir = TRUE)
source(file.path(script_dir, "common.R"))

E <- figure_experiment()
a <- figure_args(E)
er <- a$runs

vals <- per_run(er$runs, function(r) {
  g <- ss_goodput_table(r, a$warmup_s)
  tibble(cc = succ_cc(r), bdp = succ_buffer_bdp(r), series = c("CUBIC", "BBR-type flow"),
         value = c(g$goodput_mbps[g$flow == 1], g$goodput_mbps[g$flow == 2]))
})
rate <- if (length(er$runs)) er$runs[[1]]$meta$bottleneck$rate_mbps %||% 50 else 50

values <- c()
bb <- if (nrow(vals)) succ_mean_by(filter(vals, series == "BBR-type flow"), c("cc", "bdp")) else tibble()
range_of <- function(cc) { x <- if (nrow(bb)) bb[bb$cc == cc, ] else bb; if (nrow(x) > 1) max(x$value) - min(x$value) else NA_real_ }
for (cc in succ_ccs(er$runs)) {
  k <- succ_key(cc)
  x <- if (nrow(bb)) bb[bb$cc == cc, ] else tibble(bdp = double(), value = double())
  for (i in seq_len(nrow(x))) values[sprintf("co-%s-b%s", k, gsub("[^0-9]", "", format(x$bdp[i])))] <- succ_fmt(x$value[i])
  values[sprintf("co-%s-min", k)] <- succ_fmt(if (nrow(x)) min(x$value) else NA)
  values[sprintf("co-%s-max", k)] <- succ_fmt(if (nrow(x)) max(x$value) else NA)
  values[sprintf("co-%s-range", k)] <- succ_fmt(range_of(cc))
  values[sprintf("co-%s-rangepct", k)] <- succ_fmt(100 * range_of(cc) / rate, 0)
  if (cc != "BBR") {
    ratio <- range_of(cc) / range_of("BBR")
    values[sprintf("co-%s-rangeratio", k)] <- succ_fmt(ratio, 2)
    values[sprintf("co-%s-rangewords", k)] <- if (is.na(ratio)) "--" else if (ratio <= 0.5) "far less" else
      if (ratio <= 0.9) "less" else "not less"
  }
}
values["co-bufs"] <- if (nrow(bb)) paste(sort(unique(bb$bdp)), collapse = ", ") else "--"
succ_write_values(values, a$out_pdf)

if (nrow(vals) == 0) {
  save_figure(no_valid_run_plot(E, er), a$out_pdf, 6.5, 2.5)
} else {
  vals$cc <- factor(vals$cc, levels = succ_cc_levels(vals$cc))
  vals$panel <- factor(ifelse(vals$series == "CUBIC", "the CUBIC flow", "the BBR-type flow"),
                       levels = c("the BBR-type flow", "the CUBIC flow"))
  s <- summarise_valid(vals, c("cc", "bdp", "panel"))
  p <- ggplot(s, aes(bdp, mean, colour = cc, group = cc)) +
    geom_hline(yintercept = rate / 2, linetype = "dotted", colour = "grey50") +
    geom_line(linewidth = 0.4) + geom_point(size = 1.5) +
    geom_errorbar(data = filter(s, n > 1), aes(ymin = lo, ymax = hi), width = 0.05, linewidth = 0.3) +
    geom_point(data = vals, aes(bdp, value), size = 0.6, alpha = 0.5, inherit.aes = FALSE) +
    facet_wrap(~panel, nrow = 1) +
    scale_colour_manual(NULL, values = SUCC_COLOURS) +
    scale_x_continuous("Buffer size (multiple of BDP)", trans = "log10", breaks = sort(unique(vals$bdp)),
                       labels = function(b) as.character(b)) +
    scale_y_continuous("Throughput (Mbit/s)", limits = c(0, rate)) +
    labs(caption = sweep_caption(E, er, a$warmup_s, paste0(
      "nsperf's coexistence case: one CUBIC flow, one BBR-type flow 2 s later, 50 Mbit/s, 30-ms RTT (",
      succ_profile_note(er), "); steady-state goodput, mean +- sd over valid repetitions (dots: single runs); dotted: half the link"))) +
    theme_paper()
  save_figure(p, a$out_pdf, 6.5, 3.2)
}
