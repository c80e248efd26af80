#!/usr/bin/env Rscript
# analysis/figures/utsumi2022/utsumi2022_fig07_11.R -- Utsumi & Hasegawa, Figs. 7 and 11 reproduced:
# Jain's fairness index of one CUBIC flow and m BBR-type flows, 64-BDP buffer, 100 Mbit/s, 20 ms one way (Fig. 7) and
# 40 ms one way (Fig. 11), over m, for the original BBR, BBR-FCA, BBRv2 (the bbr2_v2alpha
# module, utsumi2022_fig06_10.yaml) and BBRv2+ (the bbr2plus module, quick profile
# only); BBR-CWS is not run.
#
# Usage:   Rscript analysis/figures/utsumi2022/utsumi2022_fig07_11.R <runs_dir> <out.pdf> [warmup_s]
# Inputs:  runs of experiment "utsumi2022_fig07_11" below <runs_dir>.
# Outputs: <out.pdf> and <out>.png, atomically: Jain's index over the whole transfer per m,
#          one line per algorithm, one panel per delay.

script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "..", "..", "lib", "figure.R"), chdir = TRUE)
source(file.path(script_dir, "common.R"))

E <- figure_experiment()
a <- figure_args(E)
m_of <- function(r) {
  fl <- flows_table(r$meta)
  sum(fl$cc != "cubic")
}
u22_sweep_figure(E, a, function(r, warmup_s) {
  tibble(x = m_of(r), value = ss_jain(r, window = u22_window(r, warmup_s)), series = u22_cc(r),
         panel = sprintf("Fig. %s: %s", if (u22_rtt_ms(r) == 40) "7" else "11", u22_delay(r)))
}, "m", "Jain's fairness index",
"Figs. 7 and 11: one CUBIC flow and m BBR-type flows, 100 Mbit/s, 64 BDP; Jain's index over all flows' goodput",
panel_levels = c("Fig. 7: 20 ms one way", "Fig. 11: 40 ms one way"), y_limits = c(0, 1.05), hline = 1)
