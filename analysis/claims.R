#!/usr/bin/env Rscript
# analysis/claims.R -- reproduced value and verdict of every claim in a claims file.
#
# Usage:   Rscript analysis/claims.R <claims.csv> <runs_root> <out.tex> [warmup_s]
# Inputs:  claims CSV (format: claims/README.md); run.json + tidy/*.csv of every run
#          below <runs_root>; warmup_s of the steady-state rule (default 10 s).
# Outputs: <out.tex>  booktabs tabularx fragment (one row per claim) with a note
#                     giving n, the steady-state window and the tolerance used;
#          <out>.csv  the same rows for machines (<out.tex> with .csv instead of .tex).
#          Both written atomically.
#
# Verdict (rule in analysis/lib/verdict.R, stated in paper/report.tex): over the valid
# repetitions, "reproduced" if the mean is within 15 % of the published value (or
# satisfies a published bound) and the claim's direction, if any, holds;
# "qualitatively reproduced" if only the direction holds; "not reproduced"
# otherwise; "not run" without valid runs.

script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "lib", "load.R"), chdir = TRUE)

args <- script_args("claims.R <claims.csv> <runs_root> <out.tex> [warmup_s]", 3)
warmup_s <- if (length(args) >= 4) as.numeric(args[4]) else DEFAULT_WARMUP_S

claims <- read_claims(args[1])
res <- evaluate_claims(claims, read_runs(args[2]), warmup_s)

# Decimals shown: those of the published value, at least one.
decimals <- function(v) pmax(1, nchar(sub("^[^.]*\\.?", "", v)))
dec <- decimals(claims$value)
fmt <- function(x) mapply(fmt_num, x, dec)
published <- ifelse(res$kind == "bound", paste(res$op, claims$value), claims$value)

rows <- tibble(
  claim = sprintf("%s: ``%s''", tex_escape(res$source), tex_escape(res$text)),
  published = sprintf("%s~%s", tex_escape(published), tex_escape(res$unit)),
  reproduced = ifelse(res$n > 1, sprintf("%s $\\pm$ %s", fmt(res$mean), fmt(res$sd)), fmt(res$mean)),
  range = ifelse(res$n > 1, sprintf("%s--%s", fmt(res$min), fmt(res$max)), "--"),
  n = sprintf("%d/%d", res$n, res$n_runs),
  diff = ifelse(is.na(res$rel_diff_pct), "--", sprintf("$%+.0f$\\,\\%%", res$rel_diff_pct)),
  verdict = tex_escape(res$verdict))

note <- sprintf(paste(
  "Reproduced: mean $\\pm$ sd over the valid repetitions; range = min--max; n = valid/all runs",
  "of the experiment; $\\Delta$ = (mean $-$ published)/published.",
  "%s. Verdict rule: Section~\\ref{sec:verdict} (tolerance %s\\,\\%%)."),
  tex_escape(steady_rule_text(warmup_s)), format(100 * TOLERANCE))

out_tex <- args[3]
write_atomic(tabular_lines(rows, paste0("\\begin{tabularx}{\\linewidth}{@{}",
                                  ">{\\raggedright\\arraybackslash}X",
                                  "lllrr>{\\raggedright\\arraybackslash}p{2cm}@{}}"),
                           c("Claim", "Published", "Reproduced", "Range", "n", "$\\Delta$", "Verdict"),
                           note = note), out_tex)
write_csv_atomic(res, sub("(\\.tex)?$", ".csv", out_tex))
