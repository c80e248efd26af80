#!/usr/bin/env Rscript
# analysis/figures/utsumi2022/utsumi2022_fig08_12.R -- Utsumi & Hasegawa, Figs. 8 and 12 reproduced:
# Jain's fairness index of m CUBIC flows and one BBR-type flow, 64-BDP buffer, 100 Mbit/s, 20 ms one way (Fig. 8) and
# 40 ms one way (Fig. 12), over m, for the original BBR and BBR-FCA (BBR-CWS, BBRv2 and
# BBRv2+ are not implemented in this package).
#
# Usage:   Rscript analysis/figures/utsumi2022/utsumi2022_fig08_12.R <runs_dir> <out.pdf> [warmup_s]
# Inputs:  runs of experiment "utsumi2022_fig08_12" below <runs_dir>.
# Outputs: <out.pdf> and <out>.png, atomically: Jain's index over the whole transfer per m,
#          one line per algorithm, one panel per delay.

script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "..", "..", "lib", "figure.R"), chdir = TRUE)
source(file.path(script_dir, "common.R"))

E <- "utsumi2022_fig08_12"
a <- figure_args(E)
m_of <- function(r) {
  fl <- flows_table(r$meta)
  sum(fl$cc == "cubic")
}
u22_sweep_figure(E, a, function(r, warmup_s) {
  tibble(x = m_of(r), value = ss_jain(r, window = u22_window(r, warmup_s)), series = u22_cc(r),
         panel = sprintf("Fig. %s: %s", if (u22_rtt_ms(r) == 40) "8" else "12", u22_delay(r)))
}, "m", "Jain's fairness index",
"Figs. 8 and 12: m CUBIC flows and one BBR-type flow, 100 Mbit/s, 64 BDP; Jain's index over all flows' goodput",
panel_levels = c("Fig. 8: 20 ms one way", "Fig. 12: 40 ms one way"), y_limits = c(0, 1.05), hline = 1)
