#!/usr/bin/env Rscript
# analysis/claims.R -- reproduced value, interval and verdict of every claim in a claims file.
#
# Usage:   Rscript analysis/claims.R <claims.csv> <runs_root> <out.tex> [warmup_s] [reference.csv]
# Inputs:  claims CSV (format: claims/README.md); run.json + tidy/*.csv of every run
#          below <runs_root>; warmup_s of the steady-state rule (default 10 s);
#          reference.csv: the same claims as this script wrote them from the paper
#          profile's runs (workflow/rules/reference.smk), for another profile's table.
# Outputs: <out.tex>  longtable fragment (one row per claim) with a note giving the
#                     profile, the repetitions, the steady-state rule and the tolerance;
#          <out>.csv  the same rows for machines (<out.tex> with .csv instead of .tex),
#                     plus the columns profile and reps (the most repetitions of a point the claim reads);
#          <out>_counts.tex  the verdict counts as a sentence for the report's prose
#                     ("Of the 41 claims: 34 reproduced, ..."), so that no count
#                     in the report is written by hand.
#          With reference.csv, each verdict cell also gives the paper profile's verdict
#          and a paragraph after the table lists the claims on which the two disagree
#          (analysis/lib/reference.R).
#          All written atomically; a malformed claims file writes none.
#
# The verdict rule is analysis/lib/verdict.R's (stated in paper/sections/verdict_rule.tex).

script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "lib", "load.R"), chdir = TRUE)

args <- script_args("claims.R <claims.csv> <runs_root> <out.tex> [warmup_s]", 3)
warmup_s <- if (length(args) >= 4) as.numeric(args[4]) else DEFAULT_WARMUP_S

claims <- read_claims(args[1])
# only the runs of the experiments the claims name (a claim reads no other)
runs <- read_runs(args[2], experiments = unique(c(claims$experiment, claims$ref_experiment)))
res <- evaluate_claims(claims, runs, warmup_s)
reference <- if (length(args) >= 5) read_reference(args[5], res$id) else NULL

# Which profile and how many repetitions per point the claims' experiments ran.
exp_index <- runs$index[runs$index$experiment %in% c(claims$experiment, claims$ref_experiment), ]
profile <- paste(sort(unique(na.omit(exp_index$profile))), collapse = "+")
# Per claim: the most repetitions any point it reads has (added seeds give some points more).
point_reps <- tapply(exp_index$repetition, paste(exp_index$experiment, exp_index$point, sep = "/"), max)
res$profile <- profile
res$reps <- vapply(strsplit(res$points_read, ";", fixed = TRUE), function(pts) {
  r <- point_reps[pts[pts %in% names(point_reps)]]
  if (length(r)) as.integer(max(r)) else NA_integer_
}, 0L)
reps_phrase <- function(r) {
  r <- r[!is.na(r)]
  if (length(r) == 0) NA_character_
  else if (min(r) == max(r)) sprintf("%d repetition(s) per point", r[1])
  else sprintf("%d repetition(s) per point, %d where the added-repetitions rule gave seeds", min(r), max(r))
}
reps <- reps_phrase(res$reps)

# Decimals shown: those of the published value, at least one.
decimals <- function(v) pmax(1, nchar(sub("^[^.]*\\.?", "", v)))
dec <- ifelse(claims$kind == "trend", 2, decimals(claims$value))
fmt <- function(x, d) ifelse(is.na(x), "--", formatC(x, format = "f", digits = d))
op_tex <- c("<" = "$<$", "<=" = "$\\le$", ">" = "$>$", ">=" = "$\\ge$")
agg_tex <- c(all = "every point: ", min = "min.\\ ", max = "max.\\ ")

published_cell <- function(i) {
  c <- claims[i, ]
  unit <- tex_escape(c$unit)
  if (c$kind == "trend")
    return(sprintf("%s with %s\\newline ($\\tau %s %s%.1f$)",
                   if (c$op %in% c("<", "<=")) "falls" else "grows", tex_escape(c$by),
                   if (c$op %in% c("<", "<=")) "\\le" else "\\ge",
                   if (c$op %in% c("<", "<=")) "-" else "", TREND_TAU))
  v <- sprintf("%s~%s", tex_escape(c$value), unit)
  if (c$kind == "bound") v <- paste(op_tex[[c$op]], v)
  if (c$aggregate != "") v <- paste0(agg_tex[[c$aggregate]], v)
  v
}

reproduced_cell <- function(i) {
  r <- res[i, ]
  if (r$n == 0) return("--")
  d <- dec[i]
  if (r$kind == "trend")
    return(sprintf("$\\tau = %.2f$\\newline %s", r$mean, tex_escape(r$direction_points)))
  v <- fmt(r$mean, d)
  if (!is.na(r$ci_lo)) v <- sprintf("%s [%s, %s]", v, fmt(r$ci_lo, d), fmt(r$ci_hi, d))
  if (r$aggregate != "" && r$n_points > 0)
    v <- sprintf("%s\\newline {\\scriptsize at %s}", v,
                 gsub("\\_", "\\_\\allowbreak{}", tex_escape(gsub("__", ", ", r$at, fixed = TRUE)), fixed = TRUE))
  v
}

n_cell <- function(i) {
  r <- res[i, ]
  s <- sprintf("%d/%d", r$n, r$n_runs)
  if (r$aggregate != "") s <- sprintf("%s\\newline %d pts", s, r$n_points)
  s
}

claim_cell <- function(i) {
  r <- res[i, ]
  s <- sprintf("\\textbf{%s} ``%s''", tex_escape(r$source), tex_escape(r$text))
  if (r$reading != "") s <- sprintf("%s\\newline {\\itshape\\scriptsize Read as: %s}", s, tex_escape(r$reading))
  if (r$direction != "" && r$n > 0)
    s <- sprintf("%s\\newline {\\scriptsize Direction %s: %s}", s,
                 if (isTRUE(r$direction_holds)) "holds" else "fails",
                 tex_escape(r$direction))
  if (r$note != "") s <- sprintf("%s\\newline {\\scriptsize Note: %s}", s, tex_escape(r$note))
  s
}

verdict_cell <- function(i) {
  r <- res[i, ]
  s <- if (r$strength == "") tex_escape(r$verdict)
       else sprintf("%s\\newline {\\scriptsize (%s)}", tex_escape(r$verdict), r$strength)
  if (!is.null(reference)) s <- paste0(s, reference_cell(reference, r$id, r$verdict))
  s
}

idx <- seq_len(nrow(res))
rows <- tibble(claim = vapply(idx, claim_cell, ""), published = vapply(idx, published_cell, ""),
               reproduced = vapply(idx, reproduced_cell, ""), n = vapply(idx, n_cell, ""),
               verdict = vapply(idx, verdict_cell, ""))

note <- sprintf(paste(
  "Profile \\texttt{%s}, %s.",
  "Reproduced: mean over the valid runs with its 95\\,\\%% interval in brackets (none for",
  "$n<2$); relative claims: the ratio of two means, shown as the paper states it.",
  "For claims over several sweep points, the value shown is the deciding point's",
  "(named under it); n = valid/all runs (the smallest n of the points), pts = points",
  "evaluated. %s unless the claim names its own window.",
  "Verdict rule: Section~\\ref{sec:verdict} (tolerance %s\\,\\%% of the published value's",
  "distance from its scale's reference: 0, the nearer end of a share, 1 for Jain's index;",
  "robust = the same verdict everywhere inside the intervals)."),
  tex_escape(if (profile == "") "none" else profile), if (is.na(reps)) "-- repetition(s) per point" else reps,
  tex_escape(steady_rule_text(warmup_s)), format(100 * TOLERANCE))

out_tex <- args[3]
write_atomic(c(tabular_lines(rows, paste0("\\begin{longtable}{@{}",
                                  ">{\\raggedright\\arraybackslash}p{0.40\\linewidth}",
                                  ">{\\raggedright\\arraybackslash}p{0.13\\linewidth}",
                                  ">{\\raggedright\\arraybackslash}p{0.16\\linewidth}",
                                  ">{\\raggedright\\arraybackslash}p{0.07\\linewidth}",
                                  ">{\\raggedright\\arraybackslash}p{0.12\\linewidth}@{}}"),
                           c("Claim", "Published", "Reproduced", "n", "Verdict"),
                           note = note),
             if (!is.null(reference)) disagreement_lines(reference, res, profile) else NULL), out_tex)
write_csv_atomic(res, sub("(\\.tex)?$", ".csv", out_tex))

# The verdict counts as one sentence (the report's prose \input's it).
counts_sentence <- function(res, profile) {
  k <- function(v) sum(res$verdict == v)
  sprintf(paste0("Of the %d claims: %d reproduced, %d qualitatively reproduced, %d not ",
                 "reproduced, %d not run (profile \\texttt{%s})"),
          nrow(res), k("reproduced"), k("qualitatively reproduced"), k("not reproduced"),
          k("not run"), tex_escape(if (profile == "") "none" else profile))
}
write_atomic(paste0("% generated by analysis/claims.R from ", basename(args[1]), "\n",
                    counts_sentence(res, profile), "%\n"),
             sub("(\\.tex)?$", "_counts.tex", out_tex))
