#!/usr/bin/env Rscript
# analysis/figures/successors/successors_nsperf_shallow.R -- Google's nsperf "shallow" case:
# the retransmit rate of N flows of CUBIC, BBR, BBRv2 or BBRv3 through a buffer of 2 % (and
# 10 %) of the BDP, over N, as nsperf's graph_tests.sh draws it; below, the flows' total
# goodput (that a low retransmit rate is not bought with an idle link).
#
# Usage:   Rscript analysis/figures/successors/successors_nsperf_shallow.R <runs_dir> <out.pdf> [warmup_s]
# Inputs:  runs of experiment "successors_nsperf_shallow" below <runs_dir>.
# Outputs: <out.pdf> and <out>.png (6.5 x 5 in), atomically: columns = buffer; top: retransmit
#          rate (%) = retransmitted segments / segments sent (delivered + retransmitted), all
#          flows over their whole lives (nsperf counts the whole run), bottom: the flows'
#          steady-state goodput in % of the bottleneck rate; lines per congestion control, mean
#          over valid repetitions (+- sd, n > 1), dots single runs (one flow count, as in
#          the quick profile: bars per congestion control). <out>_values.tex (common.R),
#          per congestion control <cc> (cubic, bbr, bbrv2, bbrv3), buffer <b> (002 = 0.02 BDP,
#          01 = 0.1 BDP) and flow count <n>: sh-<cc>-b<b>-n<n>-retx (%), -util (%), and for
#          bbrv2 / bbrv3 -ratio (its retransmit rate over BBR's) and -words: "far below"
#          (ratio at most 0.25, the package's mechanism test's bound), "below" (at most 0.75),
#          "not far below" (otherwise).

script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "..", "..", "lib", "figure.R"), chdir = TRUE)
source(file.path(script_dir, "common.R"))

E <- figure_experiment()
a <- figure_args(E)
er <- a$runs

retx_pct <- function(r) {
  t <- r$tcp[!is.na(r$tcp$retrans_total) & !is.na(r$tcp$bytes_acked), ]
  if (nrow(t) == 0) return(NA_real_)
  last <- t[order(t$t_s), ] %>% group_by(flow) %>% slice_tail(n = 1) %>% ungroup()
  retx <- sum(last$retrans_total)
  delivered <- sum(last$bytes_acked / last$mss_bytes)
  100 * retx / (delivered + retx)
}

vals <- per_run(er$runs, function(r) {
  tibble(cc = succ_cc(r), bdp = succ_buffer_bdp(r), nflows = nrow(flows_table(r$meta)),
         what = c("retx", "util"),
         value = c(retx_pct(r), 100 * ss_total_mbps(r, a$warmup_s) / r$meta$bottleneck$rate_mbps))
})

values <- c()
if (nrow(vals) > 0) {
  m <- succ_mean_by(vals, c("cc", "bdp", "nflows", "what"))
  bkey <- function(b) gsub("[^0-9]", "", format(b))
  for (i in seq_len(nrow(m)))
    values[sprintf("sh-%s-b%s-n%d-%s", succ_key(m$cc[i]), bkey(m$bdp[i]), m$nflows[i], m$what[i])] <- succ_fmt(m$value[i], 2)
  r <- m[m$what == "retx", ]
  for (i in which(r$cc %in% succ_successors(er$runs))) {
    base <- r$value[r$cc == "BBR" & r$bdp == r$bdp[i] & r$nflows == r$nflows[i]]
    ratio <- if (length(base) && base > 0) r$value[i] / base else NA_real_
    k <- sprintf("sh-%s-b%s-n%d", succ_key(r$cc[i]), bkey(r$bdp[i]), r$nflows[i])
    values[paste0(k, "-ratio")] <- succ_fmt(ratio, 2)
    values[paste0(k, "-words")] <- if (is.na(ratio)) "--" else if (ratio <= 0.25) "far below" else
      if (ratio <= 0.75) "below" else "not far below"
  }
} else {
  values["sh-none"] <- "0"
}
succ_write_values(values, a$out_pdf)

if (nrow(vals) == 0) {
  save_figure(no_valid_run_plot(E, er), a$out_pdf, 6.5, 2.5)
} else {
  vals$cc <- factor(vals$cc, levels = succ_cc_levels(c("CUBIC", vals$cc)))
  vals$col <- sprintf("buffer %g BDP", vals$bdp)
  vals$row <- ifelse(vals$what == "retx", "Retransmit rate (%)", "Goodput (% of link)")
  vals$row <- factor(vals$row, levels = c("Retransmit rate (%)", "Goodput (% of link)"))
  s <- summarise_valid(vals, c("cc", "col", "row", "nflows"))
  caption <- sweep_caption(E, er, a$warmup_s, paste0(
    "nsperf's shallow-buffer case at 100 Mbit/s, 100-ms RTT (", succ_profile_note(er),
    "); retransmit rate over the flows' whole lives, goodput in the steady state; mean +- sd over valid repetitions (dots: single runs)"))
  # one flow count (the quick profile): bars per congestion control instead of lines over N
  p <- if (length(unique(s$nflows)) == 1) ggplot(s, aes(cc, mean, fill = cc)) +
    geom_col(width = 0.7) +
    geom_errorbar(data = filter(s, n > 1), aes(ymin = lo, ymax = hi), width = 0.2, linewidth = 0.3) +
    geom_point(data = vals, aes(cc, value), size = 0.6, alpha = 0.5, inherit.aes = FALSE) +
    geom_text(aes(label = formatC(mean, format = "f", digits = 2)), vjust = -0.3, size = 2.6) +
    facet_grid(row ~ col, scales = "free_y", switch = "y") +
    scale_fill_manual(NULL, values = SUCC_COLOURS, guide = "none") +
    scale_x_discrete(sprintf("Congestion control (%d flows)", s$nflows[1])) +
    scale_y_continuous(NULL, limits = c(0, NA), expand = expansion(mult = c(0, 0.15))) +
    labs(caption = caption) + theme_paper() + theme(strip.placement = "outside") else
    ggplot(s, aes(nflows, mean, colour = cc, group = cc)) +
    geom_line(linewidth = 0.4) + geom_point(size = 1.5) +
    geom_errorbar(data = filter(s, n > 1), aes(ymin = lo, ymax = hi), width = 0.05, linewidth = 0.3) +
    geom_point(data = vals, aes(nflows, value), size = 0.6, alpha = 0.5, inherit.aes = FALSE) +
    facet_grid(row ~ col, scales = "free_y", switch = "y") +
    scale_colour_manual(NULL, values = SUCC_COLOURS) +
    scale_x_continuous("Number of flows", trans = "log10", breaks = sort(unique(vals$nflows))) +
    scale_y_continuous(NULL, limits = c(0, NA)) +
    labs(caption = caption) +
    theme_paper() + theme(strip.placement = "outside")
  save_figure(p, a$out_pdf, 6.5, 5)
}
