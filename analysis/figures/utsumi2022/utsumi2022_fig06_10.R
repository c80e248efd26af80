#!/usr/bin/env Rscript
# analysis/figures/utsumi2022/utsumi2022_fig06_10.R -- Utsumi & Hasegawa, Figs. 6 and 10 (and
# Fig. 5) reproduced from one experiment: one CUBIC flow against one BBR, BBR-FCA, BBRv2 or BBRv2+ flow
# over the buffer (1-128 BDP). Top: each flow's share of the two flows' goodput, per delay (Fig. 6:
# 20 ms one way, Fig. 10: 40 ms) and algorithm (one panel each, in the registry's order). Bottom (Fig. 5, 20 ms one way): the CUBIC
# flow's measured sending rate, the Sec. IV model fed from the BBR-type flow's loss episodes
# and smoothed RTT, and, in the BBR-FCA runs, the module's own estimate (tcp.csv
# variant_estimate_mbps while its control is in force).
#
# Usage:   Rscript analysis/figures/utsumi2022/utsumi2022_fig06_10.R <runs_dir> <out.pdf> [warmup_s]
# Inputs:  runs of experiment "utsumi2022_fig06_10" below <runs_dir>.
# Outputs: <out.pdf> and <out>.png, atomically.

script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "..", "..", "lib", "figure.R"), chdir = TRUE)
source(file.path(script_dir, "common.R"))

E <- figure_experiment()
a <- figure_args(E)
fig_of <- function(r) if (u22_rtt_ms(r) == 40) "Fig. 6" else if (u22_rtt_ms(r) == 80) "Fig. 10" else "other"
top <- u22_sweep_figure(E, a, function(r, warmup_s) {
  w <- u22_window(r, warmup_s)
  tibble(x = u22_buffer_bdp(r),
         value = c(ss_share_pct(r, 1, window = w), ss_share_pct(r, 2, window = w)),
         series = c("CUBIC", "BBR-type flow"),
         panel = sprintf("%s: vs %s, %g ms", fig_of(r), u22_cc(r), u22_rtt_ms(r) / 2))
}, "Buffer size (BDP)", "Throughput share (%)",
sprintf("Figs. 6 and 10: one CUBIC vs one %s flow, 100 Mbit/s, delays one way; share of the two flows' goodput", paste(u22_cc_levels(a$runs), collapse = " / ")),
panel_levels = c(sprintf("Fig. 6: vs %s, 20 ms", u22_cc_levels(a$runs)),
                 sprintf("Fig. 10: vs %s, 40 ms", u22_cc_levels(a$runs))),
x_log2 = TRUE, y_limits = c(0, 100), hline = 50, save = FALSE, ncol = max(2, length(u22_cc_levels(a$runs))))
bottom <- u22_sweep_figure(E, a, function(r, warmup_s) {
  if (u22_rtt_ms(r) != 40) return(NULL)
  w <- u22_window(r, warmup_s)
  est <- fca_estimate_mbps(r, 2, window = w)
  # Fig. 5 is the original BBR's; a variant's panel only where its module estimates (BBR-FCA)
  if (u22_cc(r) != cc_label("bbr") && is.na(est)) return(NULL)
  tibble(x = u22_buffer_bdp(r),
         value = c(cubic_sending_mbps(r, 1, window = w), cubic_model_mbps(r, 2, window = w), est),
         series = c("measured", "model (Eqs. 4-8)", "bbr_fca module's estimate"),
         panel = sprintf("Fig. 5: %s flow's estimate, 20 ms", u22_cc(r)))
}, "Buffer size (BDP)", "CUBIC sending rate (Mbit/s)",
"Fig. 5 (and its BBR-FCA counterpart): the CUBIC flow's measured rate and the model fed from the BBR-type flow's loss episodes",
panel_levels = c("Fig. 5: BBR flow's estimate, 20 ms"),
x_log2 = TRUE, save = FALSE)
save_figure(list(top, bottom), a$out_pdf, 6.5, 8.5, heights = c(1.35, 1))
