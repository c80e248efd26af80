#!/usr/bin/env Rscript
# analysis/figures/successors/successors_utsumi_fig06.R -- Utsumi & Hasegawa's Fig. 6 with
# BBR's successors: the throughput share of one CUBIC flow and one BBR, BBRv2 or BBRv3 flow
# over the bottleneck buffer (1-128 BDP), 100 Mbit/s, 20 ms one way.
#
# Usage:   Rscript analysis/figures/successors/successors_utsumi_fig06.R <runs_dir> <out.pdf> [warmup_s]
# Inputs:  runs of experiment "successors_utsumi_fig06" below <runs_dir>.
# Outputs: <out.pdf> and <out>.png (6.5 x 3 in), atomically: one panel per congestion control
#          (the paper's panels: CUBIC vs BBR, here also vs BBRv2 and BBRv3), each flow's share
#          of the two flows' goodput over the buffer (log2 axis), over the whole transfer (0 s
#          to the end, the window of the seed's claims), mean over valid repetitions (+- sd,
#          n > 1), dots single runs. <out>_values.tex (common.R): per congestion control <cc>
#          (bbr, bbrv2, bbrv3): u6-<cc>-b<buffer> (the BBR-type flow's share, %, per buffer
#          run), -dist (mean over the buffers of its distance from 50 %, points), -worst (the
#          largest distance, points), -bufs (the buffers run), and for bbrv2 / bbrv3 -words
#          (common.R's rule on -dist).

script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "..", "..", "lib", "figure.R"), chdir = TRUE)
source(file.path(script_dir, "common.R"))

E <- figure_experiment()
a <- figure_args(E)
er <- a$runs
WINDOW <- "0..end"

vals <- per_run(er$runs, function(r) {
  w <- claim_window(r, WINDOW, a$warmup_s)
  tibble(cc = succ_cc(r), bdp = succ_buffer_bdp(r), series = c("CUBIC", "BBR-type flow"),
         value = c(ss_share_pct(r, 1, window = w), ss_share_pct(r, 2, window = w)))
})

values <- c()
bb <- if (nrow(vals)) succ_mean_by(filter(vals, series == "BBR-type flow"), c("cc", "bdp")) else tibble()
dist_of <- function(cc) { x <- if (nrow(bb)) bb[bb$cc == cc, ] else bb; if (nrow(x)) mean(abs(x$value - 50)) else NA_real_ }
for (cc in succ_ccs(er$runs)) {
  k <- succ_key(cc)
  x <- if (nrow(bb)) bb[bb$cc == cc, ] else tibble(bdp = double(), value = double())
  for (i in seq_len(nrow(x))) values[sprintf("u6-%s-b%s", k, gsub("[^0-9]", "", format(x$bdp[i])))] <- succ_fmt(x$value[i])
  values[sprintf("u6-%s-dist", k)] <- succ_fmt(dist_of(cc))
  values[sprintf("u6-%s-worst", k)] <- succ_fmt(if (nrow(x)) max(abs(x$value - 50)) else NA)
  values[sprintf("u6-%s-bufs", k)] <- if (nrow(x)) paste(sort(x$bdp), collapse = ", ") else "--"
  if (cc != "BBR") values[sprintf("u6-%s-words", k)] <- succ_unfairness_words(dist_of(cc), dist_of("BBR"))
}
succ_write_values(values, a$out_pdf)

if (nrow(vals) == 0) {
  save_figure(no_valid_run_plot(E, er), a$out_pdf, 6.5, 2.5)
} else {
  vals$panel <- factor(sprintf("CUBIC vs %s", vals$cc), levels = sprintf("CUBIC vs %s", succ_cc_levels(vals$cc)))
  s <- summarise_valid(vals, c("panel", "bdp", "series"))
  cols <- c("BBR-type flow" = "#0072B2", CUBIC = SUCC_COLOURS[["CUBIC"]])
  p <- ggplot(s, aes(bdp, mean, colour = series, group = series)) +
    geom_hline(yintercept = 50, linetype = "dotted", colour = "grey50") +
    geom_line(linewidth = 0.4) + geom_point(size = 1.3) +
    geom_errorbar(data = filter(s, n > 1), aes(ymin = lo, ymax = hi), width = 0.1, linewidth = 0.3) +
    geom_point(data = vals, aes(bdp, value), size = 0.6, alpha = 0.5, inherit.aes = FALSE) +
    facet_wrap(~panel, nrow = 1) +
    scale_colour_manual(NULL, values = cols) +
    scale_x_continuous("Buffer size (BDP)", trans = "log2", breaks = 2^(0:7)) +
    scale_y_continuous("Throughput share (%)", limits = c(0, 100)) +
    labs(caption = sweep_caption(E, er, a$warmup_s, paste0(
      "Utsumi & Hasegawa's Fig. 6 per congestion control (100 Mbit/s, 40-ms RTT, ", succ_profile_note(er),
      "); share of the two flows' goodput over the whole transfer, mean +- sd over valid repetitions (dots: single runs)"))) +
    theme_paper()
  save_figure(p, a$out_pdf, 6.5, 3)
}
