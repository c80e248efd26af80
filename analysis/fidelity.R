#!/usr/bin/env Rscript
# analysis/fidelity.R -- table of every run with its fidelity checks and verdict.
#
# Usage:   Rscript analysis/fidelity.R <runs_root> <out.tex>
# Inputs:  run.json of every run below <runs_root> (directories without run.json
#          are incomplete: not listed, only counted in the caption).
# Outputs: <out.tex>, a complete booktabs table in footnote size that breaks across
#          pages and fits the text width (tabularx of the report's ltablex, with
#          caption and label tab:fidelity) listing experiment, sweep point (its
#          human label, point_label()), repetition, verdict (valid / invalid /
#          failed), checks passed, and the failed checks or the error of a failed
#          run (without the console log's path). Written atomically.

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

# A failed run's error, short: the console log's path (in the run's directory) and
# anything beyond 200 characters are left out.
error_text <- function(error) {
  error <- sub(";? *console log: .*$", "", error %||% "(none given)")
  if (nchar(error) > 200) error <- paste0(substr(error, 1, 197), "...")
  error
}

# A point's label for a narrow column: a number stays with its unit, and a raw
# point name (runs written before point labels) may break after its underscores.
point_cell <- function(meta) {
  label <- tex_escape(point_label(meta))
  label <- gsub("([0-9]) (\\\\%|ms|s|MB|kB|B|Mbit/s|Gbit/s|BDP|pkts)\\b", "\\1~\\2", label)
  gsub("\\_", "\\_\\allowbreak{}", label, fixed = TRUE)
}

# Sort key putting numbers in numeric order ("5 vs 10 ms" before "20 vs 50 ms").
natural_key <- function(x) {
  nums <- gregexpr("[0-9]+(\\.[0-9]+)?", x)
  regmatches(x, nums) <- lapply(regmatches(x, nums), function(n) sprintf("%020.6f", as.numeric(n)))
  x
}

run_row <- function(run) {
  m <- run$meta
  checks <- m$fidelity$checks %||% list()
  n_ok <- sum(vapply(checks, function(ch) isTRUE(ch$ok), TRUE))
  detail <- if (run_verdict(m) == "failed") paste("error:", tex_escape(error_text(m$error)))
            else paste(failed_checks_text(checks), collapse = "; ")
  tibble(experiment = tex_escape(run$key$experiment), point = point_cell(m),
         rep = as.character(run$key$repetition), verdict = run_verdict(m),
         checks = sprintf("%d/%d", n_ok, length(checks)), detail = detail)
}

runs <- read_runs(args[1])
rows <- bind_rows(tibble(experiment = character(), point = character(), rep = character(),
                         verdict = character(), checks = character(), detail = character()),
                  lapply(runs$runs, run_row))
ord <- order(runs$index$experiment, natural_key(runs$index$point_label), runs$index$repetition)
rows <- rows[ord, ]
counts <- verdict_counts(runs$index)
n_incomplete <- length(incomplete_run_dirs(args[1]))
caption <- sprintf(paste(
  "\\caption{Fidelity of every run: %d runs, %d valid, %d invalid (a fidelity check failed)",
  "and %d failed; invalid and failed runs are excluded from every mean.%s}\\label{tab:fidelity}"),
  nrow(rows), counts[["valid"]], counts[["invalid"]], counts[["failed"]],
  if (n_incomplete > 0) sprintf(" %d incomplete run director%s (no run.json) ignored.",
                                n_incomplete, if (n_incomplete == 1) "y" else "ies") else "")

# tabularx breaks across pages in the report (ltablex); a longtable's caption and
# repeated header, the point and the detail wrap inside the text width.
header <- c("Experiment", "Point", "Rep.", "Verdict", "Checks", "Failed checks / error")
head <- c("\\toprule", paste0(paste(header, collapse = " & "), " \\\\"), "\\midrule")
write_atomic(c(
  "\\begingroup\\footnotesize\\setlength{\\tabcolsep}{4pt}",
  paste0("\\begin{tabularx}{\\linewidth}{@{}l>{\\raggedright\\arraybackslash}p{0.26\\linewidth}",
         "rlr>{\\raggedright\\arraybackslash}X@{}}"),
  paste0(caption, " \\\\"), head, "\\endfirsthead", head, "\\endhead",
  tabular_rows(rows), "\\bottomrule", "\\end{tabularx}", "\\endgroup"), args[2])
