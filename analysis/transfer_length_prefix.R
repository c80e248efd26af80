#!/usr/bin/env Rscript
# analysis/transfer_length_prefix.R -- step 2 of the shortened-transfer rule checked on real runs
# (docs/specs.md, "Transfer length"): the rule stands the first T s of a full-length control run
# in for a T-s run with the same seed; this compares, for every run a shortened spec made at a
# control point, every claim reading its experiment on the run as it ran and on the control run
# with the same seed cut at the run's length (analysis/lib/transfer_length.R prefix_checks).
#
# Usage:   Rscript analysis/transfer_length_prefix.R <claims.csv> <controls.csv> <control_runs>
#                  <short_runs> <out.tex>
# Inputs:  claims CSV; controls CSV (experiment, point, why); run.json + tidy/*.csv of the
#          full-length control runs below <control_runs> and of the paper profile's shortened
#          runs of the control points below <short_runs> (either may be empty).
# Outputs: <out.tex>  the report's table: per shortened run, its length, the claims checked,
#                     those whose two values disagree (outside each other's reading) and the
#                     largest relative difference; <out>.csv every comparison. Written atomically.

script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "lib", "load.R"), chdir = TRUE)
source(file.path(script_dir, "lib", "transfer_length.R"))

args <- script_args("transfer_length_prefix.R <claims.csv> <controls.csv> <control_runs> <short_runs> <out.tex>", 5)
claims <- read_claims(args[1])
controls <- read.csv(args[2], stringsAsFactors = FALSE, colClasses = "character")
for (sel in controls$point) parse_selector(sel)
checks <- prefix_checks(claims, controls, read_runs(args[3]), read_runs(args[4]))
out <- args[5]
write_csv_atomic(checks, sub("\\.tex$", ".csv", out))

rel <- function(a, b) ifelse(is.na(a) | is.na(b), NA_real_, ifelse(a == b, 0, abs(a - b) / pmax(abs(a), abs(b))))
lines <- if (nrow(checks) == 0) {
  "\\par\\noindent No shortened run of a control point is held yet.\\par"
} else {
  per_run <- checks %>% mutate(rel = rel(value_run, value_prefix)) %>%
    group_by(experiment, label, repetition, t_s) %>%
    summarise(n = n(), failed = sum(!holds), equal = sum(value_run == value_prefix, na.rm = TRUE),
              max_rel = suppressWarnings(max(rel, na.rm = TRUE)), .groups = "drop") %>%
    arrange(experiment, label, repetition)
  df <- data.frame(
    spec = tex_escape(sub("^utsumi2022_", "", per_run$experiment)),
    run = tex_escape(sprintf("%s, seed %d", per_run$label, per_run$repetition)),
    t = format(per_run$t_s, trim = TRUE), n = per_run$n, equal = per_run$equal, failed = per_run$failed,
    max_rel = ifelse(is.finite(per_run$max_rel), sprintf("%.2g\\,\\%%", 100 * per_run$max_rel), "--"),
    stringsAsFactors = FALSE)
  c(tabular_lines(df, "\\begin{tabular}{llrrrrr}",
                  c("spec", "run", "T (s)", "claims", "equal", "disagree", "largest difference")),
    "\\par\\smallskip",
    "{\\footnotesize Each claim reading the spec, on the paper profile's T-s run and on the control run with the same seed cut at T s: equal values, values outside each other's reading (a bound claim on opposite sides of its bound, or the run's value outside the Verdict band around the prefix's), and the largest relative difference.\\par}")
}
write_atomic(lines, out)
