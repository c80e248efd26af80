#!/usr/bin/env Rscript
# analysis/figures/successors/successors_ma_fig05.R -- Ma et al.'s Fig. 5 with BBR's
# successors: steady-state throughput of a 10-ms RTT flow A and a flow B of 10-200 ms RTT, both
# BBR, BBRv2 or BBRv3 (one panel each).
#
# Usage:   Rscript analysis/figures/successors/successors_ma_fig05.R <runs_dir> <out.pdf> [warmup_s]
# Inputs:  runs of experiment "successors_ma_fig05" below <runs_dir>; flow B's RTT is flow 2's.
# Outputs: <out.pdf> and <out>.png (6.5 x 3.2 in): x RTT of flow B, y steady-state goodput of
#          each flow, mean over valid repetitions (+- sd, n > 1), dots single runs, dashed the
#          fair share; <out>_values.tex (common.R): per congestion control <cc> (bbr, bbrv2,
#          bbrv3), means over valid repetitions: ma05-<cc>-a15 (flow A's % of the bottleneck
#          rate against 15 ms), -a30max (its largest % against >= 30 ms), -alast (its % against
#          the longest RTT run), -dist (mean over B's
#          RTTs above 10 ms of the distance of A's share of the two flows' goodput from 50 %,
#          points), -npts (such RTTs run), and for bbrv2 / bbrv3 -words (common.R's rule on
#          -dist against BBR's). All atomically.

script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "..", "..", "lib", "figure.R"), chdir = TRUE)
source(file.path(script_dir, "common.R"))

E <- figure_experiment()
a <- figure_args(E)
er <- a$runs

vals <- per_run(er$runs, function(r) {
  g <- ss_goodput_table(r, a$warmup_s)
  A <- g$goodput_mbps[g$flow == 1]
  B <- g$goodput_mbps[g$flow == 2]
  tibble(cc = succ_cc(r), rtt_b = g$rtt_ms[g$flow == 2],
         series = c("flow A (10 ms RTT)", "flow B", "A cap", "A share"),
         value = c(A, B, 100 * A / r$meta$bottleneck$rate_mbps, 100 * A / (A + B)))
})

values <- c()
if (nrow(vals) > 0) {
  m <- succ_mean_by(vals, c("cc", "rtt_b", "series"))
  pick <- function(cc, s) m[m$cc == cc & m$series == s, ]
  dist <- function(cc) { x <- pick(cc, "A share"); x <- x[x$rtt_b > 10, ]; if (nrow(x)) mean(abs(x$value - 50)) else NA_real_ }
  for (cc in succ_ccs(er$runs)) {
    k <- succ_key(cc)
    cap <- pick(cc, "A cap")
    values[sprintf("ma05-%s-a15", k)] <- succ_fmt(cap$value[cap$rtt_b == 15][1])
    values[sprintf("ma05-%s-a30max", k)] <- succ_fmt(if (any(cap$rtt_b >= 30)) max(cap$value[cap$rtt_b >= 30]) else NA)
    values[sprintf("ma05-%s-alast", k)] <- succ_fmt(if (nrow(cap)) cap$value[which.max(cap$rtt_b)] else NA)
    values[sprintf("ma05-%s-dist", k)] <- succ_fmt(dist(cc))
    values[sprintf("ma05-%s-npts", k)] <- as.character(sum(pick(cc, "A share")$rtt_b > 10))
    if (cc != "BBR") values[sprintf("ma05-%s-words", k)] <- succ_unfairness_words(dist(cc), dist("BBR"))
  }
} else {
  values["ma05-bbr-n"] <- "0"
}
succ_write_values(values, a$out_pdf)

if (nrow(vals) == 0) {
  p <- no_valid_run_plot(E, er)
  save_figure(p, a$out_pdf, 6.5, 2.5)
} else {
  v <- filter(vals, series %in% c("flow A (10 ms RTT)", "flow B"))
  v$cc <- factor(v$cc, levels = succ_cc_levels(v$cc))
  s <- summarise_valid(v, c("cc", "rtt_b", "series"))
  rate <- er$runs[[1]]$meta$bottleneck$rate_mbps %||% 100
  p <- ggplot(s, aes(rtt_b, mean, colour = series)) +
    geom_hline(yintercept = rate / 2, linetype = "dashed", colour = "grey40", linewidth = 0.3) +
    geom_line(linewidth = 0.4) +
    geom_errorbar(data = filter(s, n > 1), aes(ymin = lo, ymax = hi), width = 0.03, linewidth = 0.35) +
    geom_point(size = 1.5) +
    geom_point(data = v, aes(rtt_b, value), size = 0.6, alpha = 0.5) +
    facet_wrap(~cc, nrow = 1) +
    scale_colour_manual(NULL, values = FLOW_COLOURS) +
    scale_x_continuous("RTT of flow B (ms)", trans = "log10", breaks = sort(unique(v$rtt_b))) +
    scale_y_continuous("Throughput (Mbit/s)", limits = c(0, rate)) +
    labs(caption = sweep_caption(E, er, a$warmup_s, paste0(
      "Ma et al.'s Fig. 5 per congestion control (100 Mbit/s, 2 MB buffer, ", succ_profile_note(er),
      "); steady-state goodput, mean +- sd over valid repetitions (dots: single runs); dashed: fair share"))) +
    theme_paper() + theme(axis.text.x = element_text(size = 6, angle = 90, vjust = 0.5))
  save_figure(p, a$out_pdf, 6.5, 3.2)
}
