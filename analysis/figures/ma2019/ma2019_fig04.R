#!/usr/bin/env Rscript
# analysis/figures/ma2019/ma2019_fig04.R -- Ma et al. (2019) Fig. 4 and Table I reproduced:
# bandwidth share and retransmissions of a 10-ms and a 50-ms RTT BBR flow through a
# RED bottleneck with Table I's parameter sets.
#
# Usage:   Rscript analysis/figures/ma2019/ma2019_fig04.R <runs_dir> <out.pdf> [warmup_s]
# Inputs:  runs of experiment "ma2019_fig04" below <runs_dir>; a run's RED set is read
#          from its spec (bottleneck.aqm max_bytes, probability) and named as in
#          Table I (RED 1: 0.5 MB / 2 %, RED 2: 0.5 MB / 10 %, RED 3: 0.33 MB / 2 %);
#          other sets are named by their parameters.
# Outputs: <out.pdf> (6 x 5.6 in) and <out>.png, atomically.
#          (a) Fig. 4: steady-state bandwidth share of each flow per RED set (%, bars:
#              mean over valid repetitions, error bars +- 1 sd).
#          (b) Table I: retransmitted packets of each flow over a 120-s flow life
#              (retrans_pkts(per_s = 120): the count until the steady state plus the
#              steady-state rate for the rest of 120 s), so that shorter runs compare
#              with the paper's 120-s flows; bars: mean, error bars +- 1 sd; black
#              diamonds: the values published in Table I.

script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "..", "..", "lib", "figure.R"), chdir = TRUE)

EXPERIMENT <- figure_experiment()
# Table I of the paper: retransmissions (pkts) of the 50-ms and the 10-ms flow.
TABLE_I <- tibble(scheme = rep(c("RED 1", "RED 2", "RED 3"), 2),
                  rtt_ms = rep(c(50, 10), each = 3),
                  published = c(10178, 20583, 17193, 2871, 6014, 5301))
a <- figure_args(EXPERIMENT)
er <- a$runs

scheme_of <- function(r) {
  aqm <- r$meta$spec$bottleneck$aqm
  mx <- as.numeric(aqm$max_bytes %||% NA)
  pr <- as.numeric(aqm$probability %||% NA)
  if (isTRUE(all.equal(c(mx, pr), c(500000, 0.02)))) return("RED 1")
  if (isTRUE(all.equal(c(mx, pr), c(500000, 0.10)))) return("RED 2")
  if (isTRUE(all.equal(c(mx, pr), c(330000, 0.02)))) return("RED 3")
  sprintf("max %.2f MB, %g %%\n(not in paper)", mx / 1e6, 100 * pr)
}

vals <- per_run(er$runs, function(r) {
  g <- ss_goodput_table(r, a$warmup_s)
  tibble(scheme = scheme_of(r), rtt_ms = g$rtt_ms, label = g$label,
         share = 100 * g$goodput_mbps / sum(g$goodput_mbps),
         retrans = vapply(g$flow, function(f) retrans_pkts(r, f, per_s = 120), 0))
})

if (nrow(vals) == 0) {
  plots <- list(no_valid_run_plot(EXPERIMENT, er))
  heights <- 1
} else {
  lev <- unique(vals$label[order(vals$rtt_ms)])
  schemes <- sort(unique(vals$scheme))
  vals <- mutate(vals, label = factor(label, levels = lev), scheme = factor(scheme, levels = schemes))
  dodge <- position_dodge(width = 0.8)
  share <- summarise_valid(vals, c("scheme", "label", "rtt_ms"), "share")
  pa <- ggplot(share, aes(scheme, mean, fill = label)) +
    geom_col(position = dodge, width = 0.75) +
    geom_errorbar(data = function(d) filter(d, n > 1), aes(ymin = lo, ymax = hi), position = dodge,
                  width = 0.25, linewidth = 0.35) +
    geom_hline(yintercept = 50, linetype = "dashed", colour = "grey40", linewidth = 0.3) +
    scale_fill_manual(values = FLOW_COLOURS) +
    scale_y_continuous("Bandwidth share (%)", limits = c(0, 100)) + xlab(NULL) +
    labs(title = "Fig. 4: bandwidth share") + theme_paper()
  rt <- summarise_valid(vals, c("scheme", "label", "rtt_ms"), "retrans") %>%
    left_join(TABLE_I, by = c("scheme", "rtt_ms"))
  pb <- ggplot(rt, aes(scheme, mean, fill = label)) +
    geom_col(position = dodge, width = 0.75) +
    geom_errorbar(data = function(d) filter(d, n > 1), aes(ymin = lo, ymax = hi), position = dodge,
                  width = 0.25, linewidth = 0.35) +
    geom_point(aes(y = published, shape = "published (Table I)"), position = dodge,
               size = 2.2, colour = "black", na.rm = TRUE) +
    scale_shape_manual(values = c("published (Table I)" = 18)) +
    scale_fill_manual(values = FLOW_COLOURS, guide = "none") +
    scale_y_continuous("Retransmissions (pkts per 120 s)", limits = c(0, NA)) + xlab(NULL) +
    labs(title = "Table I: retransmissions per flow",
         caption = wrap_caption(sprintf(paste(
           "%s: %s; mean +- sd over valid repetitions. Steady state from %s s after the last start.",
           "Retransmissions: count until the steady state + steady-state rate over the rest of a 120-s life. %s"),
           EXPERIMENT, runs_note(er), format(a$warmup_s), excluded_note(er)), 110)) +
    theme_paper()
  plots <- list(pa, pb)
  heights <- c(1, 1.1)
}
save_figure(plots, a$out_pdf, 6, 5.6, heights)
