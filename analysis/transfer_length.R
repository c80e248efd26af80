#!/usr/bin/env Rscript
# analysis/transfer_length.R -- the evidence of the shortened-transfer rule (docs/specs.md,
# "Transfer length"): for each experiment with control points, does every claim that reads
# it measure the same over the first T s of the full-length control runs as over all of them?
#
# Usage:   Rscript analysis/transfer_length.R <claims.csv> <controls.csv> <runs_root> <out.tex>
#                  [reps] [T ...]
# Inputs:  claims CSV (claims/README.md); controls CSV (experiment, point, why: point selectors
#          of the slowest-converging points, e.g. mininet/specs/utsumi2022/
#          transfer_length_controls.csv); run.json + tidy/*.csv of the runs below <runs_root>
#          (full-length runs of the control points; other runs are ignored); reps: seeds
#          each control point needs (default 3); T: candidate durations (default 600 1200 2000).
# Outputs: <out.tex>          the report's table: per experiment, its control points with runs,
#                             and per candidate T the checks that failed, the chosen T; then
#                             the failing checks (at most 12 rows);
#          <out>.csv          every check (analysis/lib/transfer_length.R control_checks);
#          <out>_summary.csv  per experiment and T (accepted_durations).
#          All written atomically.
# The reading of the rule is analysis/lib/transfer_length.R's header.

script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "lib", "load.R"), chdir = TRUE)
source(file.path(script_dir, "lib", "transfer_length.R"))

args <- script_args("transfer_length.R <claims.csv> <controls.csv> <runs_root> <out.tex> [reps] [T ...]", 4)
reps <- if (length(args) >= 5) as.integer(args[5]) else 3L
candidates <- if (length(args) >= 6) as.numeric(args[-(1:5)]) else c(600, 1200, 2000)
if (is.na(reps) || reps < 1 || anyNA(candidates) || any(candidates <= 0))
  stop("transfer_length.R: reps must be a positive integer and every T a positive number of seconds")

claims <- read_claims(args[1])
controls <- read.csv(args[2], stringsAsFactors = FALSE, colClasses = "character")
missing_cols <- setdiff(c("experiment", "point", "why"), names(controls))
if (length(missing_cols)) stop(sprintf("%s: missing column(s) %s", args[2], paste(missing_cols, collapse = ", ")))
for (sel in controls$point) parse_selector(sel)   # a malformed selector stops here, before reading runs
unknown <- setdiff(controls$experiment, claims$experiment)
if (length(unknown)) stop(sprintf("%s: no claim of %s reads experiment(s) %s", args[2], args[1],
                                  paste(unknown, collapse = ", ")))

runs <- read_runs(args[3])
checks <- control_checks(claims, controls, runs, candidates)
coverage <- control_coverage(controls, runs, candidates)
summary <- accepted_durations(checks, coverage, candidates, reps)

out <- args[4]
write_csv_atomic(checks, sub("\\.tex$", ".csv", out))
write_csv_atomic(summary, sub("\\.tex$", "_summary.csv", out))

# ---- the report's table ----------------------------------------------------------------
esc_exp <- function(e) tex_escape(sub("^utsumi2022_", "", e))
t_cells <- function(e) {
  s <- summary[summary$experiment == e, ]
  vapply(seq_len(nrow(s)), function(i) {
    if (s$checks[i] == 0) "--" else sprintf("%d/%d", s$failed[i], s$checks[i])
  }, "")
}
rows <- do.call(rbind, lapply(unique(controls$experiment), function(e) {
  cov <- coverage[coverage$experiment == e, ]
  s <- summary[summary$experiment == e, ]
  longest <- s[s$t_s == max(s$t_s), ]
  chosen <- if (all(cov$runs == 0)) "6000 s: no control run yet"
    else if (nrow(longest) && longest$failed[1] > 0) "6000 s: no candidate holds"   # more seeds only add checks
    else if (any(cov$runs < reps)) sprintf("6000 s: %d of %d points have %d seeds",
                                          sum(cov$runs >= reps), nrow(cov), reps)
    else if (is.na(s$chosen_s[1])) "6000 s: no candidate holds"
    else sprintf("%s s", format(s$chosen_s[1], trim = TRUE))
  c(esc_exp(e), sprintf("%d (%d runs)", nrow(cov), sum(cov$runs)), t_cells(e), chosen)
}))
header <- c("spec", "control points", sprintf("%s s", format(sort(candidates), trim = TRUE)), "duration")
table <- tabular_lines(as.data.frame(rows, stringsAsFactors = FALSE),
                       sprintf("\\begin{tabular}{ll%sp{0.3\\linewidth}}", strrep("r", length(candidates))), header)

failing <- checks[!checks$holds, ]
SHOWN <- 12    # rows of failing checks in the report (the table must fit a page)
fail_lines <- if (nrow(failing) == 0) character() else {
  shown <- head(failing[order(failing$experiment, failing$t_s, failing$claim), ], SHOWN)
  f <- data.frame(
    claim = tex_escape(sub("^utsumi2022-", "", shown$claim)),
    point = tex_escape(sprintf("%s, seed %d", shown$label, shown$repetition)),
    t = format(shown$t_s, trim = TRUE), full = fmt_num(shown$value_full, 3), short = fmt_num(shown$value_t, 3),
    test = ifelse(shown$test == "band", sprintf("[%s, %s]", fmt_num(shown$band_lo, 3), fmt_num(shown$band_hi, 3)),
                  "same side of the bound"),
    stringsAsFactors = FALSE)
  c("", paste0("\\par\\medskip\\noindent Checks that failed",
               if (nrow(failing) > SHOWN) sprintf(" (the first %d of %d; all in the CSV beside this table)", SHOWN, nrow(failing)),
               ":\\par\\smallskip"),
    tabular_lines(f, "\\begin{tabular}{p{0.22\\linewidth}p{0.3\\linewidth}rrrl}",
                  c("claim", "control run", "T (s)", "full", "over T", "must lie in")))
}
note <- sprintf(paste(
  "A cell at T s is failed/all checks: every claim reading the spec, evaluated on every",
  "valid full-length control run over its first T s; a duration is chosen when every control point has",
  "%d seeds and every check at it and at every longer candidate holds."), reps)
write_atomic(c(table, "", "\\par\\smallskip", sprintf("{\\footnotesize %s\\par}", note), fail_lines), out)
