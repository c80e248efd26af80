#!/usr/bin/env Rscript
# analysis/not_run.R -- the paper-profile experiments the results archive does not hold whole,
# and why (the report's table beside the summary).
#
# Usage:   Rscript analysis/not_run.R <archive_coverage.csv> <reasons.csv> <out.tex>
# Inputs:  archive_coverage.csv (workflow/rules/reference.smk): per paper-profile experiment its
#          runs and how many the archive holds current, stale or not at all, and the experiment
#          seconds not held; reasons.csv (config/paper_not_run.csv): experiment, reason.
# Outputs: <out.tex>: a tabular with a row per experiment not held whole (runs held of planned,
#          experiment hours not held, the reason; "no reason given" when the table has none),
#          or a sentence saying every experiment is held. Stops, naming them, on reasons for
#          experiments the coverage does not list. Written atomically.

script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "lib", "output.R"))

args <- script_args("not_run.R <archive_coverage.csv> <reasons.csv> <out.tex>", 3)
cov <- read.csv(args[1], stringsAsFactors = FALSE, colClasses = c(experiment = "character"))
reasons <- read.csv(args[2], stringsAsFactors = FALSE, colClasses = "character")
if (!identical(names(reasons), c("experiment", "reason")))
  stop(sprintf("%s: columns must be experiment,reason", args[2]))
unknown <- setdiff(reasons$experiment, cov$experiment)
if (length(unknown)) stop(sprintf("%s: not experiments of the paper profile: %s", args[2], paste(unknown, collapse = ", ")))

lacking <- cov[cov$current < cov$runs, ]
lines <- if (nrow(lacking) == 0) {
  "\\par\\noindent Every paper-profile experiment is held whole by the archive.\\par"
} else {
  why <- reasons$reason[match(lacking$experiment, reasons$experiment)]
  df <- data.frame(
    experiment = sprintf("\\texttt{%s}", tex_escape(lacking$experiment)),
    held = sprintf("%d / %d", as.integer(lacking$current), as.integer(lacking$runs)),
    hours = sprintf("%.0f", lacking$missing_experiment_s / 3600),
    reason = ifelse(is.na(why), "no reason given", tex_escape(why)),
    stringsAsFactors = FALSE)
  tabular_lines(df, "\\begin{tabular}{p{0.25\\linewidth}rrp{0.5\\linewidth}}",
                c("experiment", "runs held", "h not held", "why"))
}
write_atomic(lines, args[3])
