#!/usr/bin/env Rscript
# analysis/figures/successors/successors_ma_fig01.R -- Ma et al.'s Fig. 1 with BBR's
# successors: goodput over time of a 10-ms and a 50-ms RTT flow sharing one bottleneck, both
# flows BBR, BBRv2 or BBRv3 (one panel each, as the paper's single panel).
#
# Usage:   Rscript analysis/figures/successors/successors_ma_fig01.R <runs_dir> <out.pdf> [warmup_s] [bin_s]
# Inputs:  runs of experiment "successors_ma_fig01" below <runs_dir> (the pipeline names it).
# Outputs: <out.pdf> and <out>.png (6.5 x 6 in): per congestion control the first valid
#          repetition, goodput in bin_s bins (default 1 s), steady state shaded, dashed:
#          each flow's steady-state mean; <out>_values.tex (common.R): per congestion control
#          <cc> (bbr, bbrv2, bbrv3) over valid repetitions: ma01-<cc>-short / -long (mean
#          steady-state goodput of the 10-ms / 50-ms flow, Mbit/s), -share (the 10-ms flow's
#          % of the two flows' goodput), -n (valid runs), and for bbrv2 / bbrv3 -words (the
#          wording rule of common.R against BBR). All atomically.

script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "..", "..", "lib", "figure.R"), chdir = TRUE)
source(file.path(script_dir, "common.R"))

E <- figure_experiment()
a <- figure_args(E)
er <- a$runs
bin_s <- if (is.na(a$bin_s)) 1 else a$bin_s

vals <- per_run(er$runs, function(r) {
  g <- ss_goodput_table(r, a$warmup_s)
  short <- g$goodput_mbps[g$rtt_ms == min(g$rtt_ms)]
  long <- g$goodput_mbps[g$rtt_ms == max(g$rtt_ms)]
  tibble(cc = succ_cc(r), what = c("short", "long", "share"),
         value = c(short, long, 100 * short / (short + long)))
})
m <- succ_mean_by(vals, c("cc", "what"))
get <- function(cc, what) { v <- m$value[m$cc == cc & m$what == what]; if (length(v)) v else NA_real_ }
values <- c()
for (cc in succ_ccs(er$runs)) {
  k <- succ_key(cc)
  values[sprintf("ma01-%s-short", k)] <- succ_fmt(get(cc, "short"))
  values[sprintf("ma01-%s-long", k)] <- succ_fmt(get(cc, "long"))
  values[sprintf("ma01-%s-share", k)] <- succ_fmt(get(cc, "share"))
  n <- m$n[m$cc == cc & m$what == "share"]
  values[sprintf("ma01-%s-n", k)] <- as.character(if (length(n)) n else 0)
  if (cc != "BBR")
    values[sprintf("ma01-%s-words", k)] <- succ_unfairness_words(abs(get(cc, "share") - 50), abs(get("BBR", "share") - 50))
}
succ_write_values(values, a$out_pdf)

ts <- succ_timeseries(er, succ_cc, bin_s, a$warmup_s)
if (nrow(ts$g) == 0) {
  save_figure(no_valid_run_plot(E, er), a$out_pdf, 6.5, 2.5)
} else {
  levels <- unique(ts$g$panel[order(match(sub(" \\(rep.*", "", ts$g$panel), succ_cc_levels(sub(" \\(rep.*", "", ts$g$panel))))])
  ts$g$panel <- factor(ts$g$panel, levels = levels)
  ts$means$panel <- factor(ts$means$panel, levels = levels)
  flows <- unique(ts$g$flow_label)
  rate <- er$runs[[1]]$meta$bottleneck$rate_mbps %||% max(ts$g$goodput_mbps)
  band <- distinct(ts$means, panel, start, end)
  p <- ggplot(ts$g, aes(t_s, goodput_mbps, colour = flow_label)) +
    geom_rect(data = band, aes(xmin = start, xmax = end, ymin = -Inf, ymax = Inf), inherit.aes = FALSE,
              fill = "grey92") +
    geom_line(linewidth = 0.45) +
    geom_segment(data = ts$means, aes(x = start, xend = end, y = goodput_mbps, yend = goodput_mbps,
                                      colour = flow_label), linetype = "dashed", linewidth = 0.4) +
    facet_wrap(~panel, ncol = 1) +
    scale_colour_manual(NULL, values = setNames(FLOW_COLOURS[seq_along(flows)], flows)) +
    scale_x_continuous("Time (s)", limits = c(0, NA), expand = expansion(mult = c(0, 0.01))) +
    scale_y_continuous("Goodput (Mbit/s)", limits = c(0, rate * 1.05)) +
    labs(caption = sweep_caption(E, er, a$warmup_s, paste0(
      "Ma et al.'s Fig. 1 (10-ms flow from 0 s, 50-ms flow from 5 s, 100 Mbit/s, 2 MB buffer) per congestion ",
      "control, first valid repetition; ", format(bin_s), "-s bins; shaded: steady state, dashed: steady-state means"))) +
    theme_paper()
  save_figure(p, a$out_pdf, 6.5, 6)
}
