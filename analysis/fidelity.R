#!/usr/bin/env Rscript
# analysis/fidelity.R -- table of every run with its fidelity checks and verdict.
#
# Usage:   Rscript analysis/fidelity.R <runs_root> <out.tex>
# Inputs:  run.json of every run below <runs_root> (directories without run.json
#          are incomplete: not listed, only counted in the caption).
# Outputs: <out.tex>, a complete booktabs longtable (with caption, label
#          tab:fidelity) listing experiment, point, repetition, verdict
#          (valid / invalid / failed), checks passed, and the failed checks or the
#          error of a failed run. Written atomically.

script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "lib", "load.R"), chdir = TRUE)

args <- script_args("fidelity.R <runs_root> <out.tex>", 2)

# "name (subject): measured 7.5 ms, configured 1 +- 1 ms" for each failed check.
failed_checks_text <- function(checks) {
  bad <- Filter(function(ch) !isTRUE(ch$ok), checks)
  num <- function(x) if (is.null(x)) "?" else format(x, digits = 4)
  vapply(bad, function(ch) sprintf(
    "%s (%s): measured %s, configured %s $\\pm$ %s %s",
    tex_escape(ch$name %||% "?"), tex_escape(ch$subject %||% "-"), num(ch$measured),
    num(ch$configured), num(ch$tolerance), tex_escape(ch$unit %||% "")), "")
}

run_row <- function(run) {
  m <- run$meta
  checks <- m$fidelity$checks %||% list()
  n_ok <- sum(vapply(checks, function(ch) isTRUE(ch$ok), TRUE))
  detail <- if (run_verdict(m) == "failed") paste("error:", tex_escape(m$error %||% "(none given)"))
            else paste(failed_checks_text(checks), collapse = "; ")
  tibble(experiment = tex_escape(run$key$experiment), point = tex_escape(run$key$point),
         rep = as.character(run$key$repetition), verdict = run_verdict(m),
         checks = sprintf("%d/%d", n_ok, length(checks)), detail = detail)
}

runs <- read_runs(args[1])
rows <- bind_rows(tibble(experiment = character(), point = character(), rep = character(),
                         verdict = character(), checks = character(), detail = character()),
                  lapply(runs$runs, run_row))
counts <- verdict_counts(runs$index)
n_incomplete <- length(incomplete_run_dirs(args[1]))
caption <- sprintf(paste(
  "\\caption{Fidelity of every run: %d runs, %d valid, %d invalid (a fidelity check failed)",
  "and %d failed; invalid and failed runs are excluded from every mean.%s}\\label{tab:fidelity}"),
  nrow(rows), counts[["valid"]], counts[["invalid"]], counts[["failed"]],
  if (n_incomplete > 0) sprintf(" %d incomplete run director%s (no run.json) ignored.",
                                n_incomplete, if (n_incomplete == 1) "y" else "ies") else "")

write_atomic(tabular_lines(rows, "\\begin{longtable}{@{}lllllp{0.45\\linewidth}@{}}",
                           c("Experiment", "Point", "Rep.", "Verdict", "Checks ok",
                             "Failed checks / error"), caption = caption),
             args[2])
