#!/usr/bin/env Rscript
# analysis/figures/utsumi2022/utsumi2022_fig08_12.R -- Utsumi & Hasegawa, Figs. 8 and 12 reproduced:
# Jain's fairness index of m CUBIC flows and one BBR-type flow, 64-BDP buffer, 100 Mbit/s, 20 ms one way (Fig. 8) and
# 40 ms one way (Fig. 12), over m, for the original BBR, BBR-FCA, BBRv2 (the bbr2_v2alpha
# module, utsumi2022_fig06_10.yaml) and BBRv2+ (the bbr2plus module, quick profile
# only); BBR-CWS is not run.
#
# Usage:   Rscript analysis/figures/utsumi2022/utsumi2022_fig08_12.R <runs_dir> <out.pdf> [warmup_s]
# Inputs:  runs of experiment "utsumi2022_fig08_12" below <runs_dir>.
# Outputs: <out.pdf> and <out>.png, atomically: Jain's index over the whole transfer per m,
#          one line per algorithm, one panel per delay.

script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "..", "..", "lib", "figure.R"), chdir = TRUE)
source(file.path(script_dir, "common.R"))

u22_jain_over_m_figure(figure_experiment(), c("8", "12"), "one BBR-type flow")
