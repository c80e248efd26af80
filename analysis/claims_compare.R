#!/usr/bin/env Rscript
# analysis/claims_compare.R -- the same claims evaluated on two (or more) run sets,
# side by side, as a Markdown table (e.g. the quick and the paper profile).
#
# Usage:   Rscript analysis/claims_compare.R <out.md> <label>=<claims.csv> [<label>=<claims.csv> ...]
# Inputs:  claims CSVs written by analysis/claims.R (columns id, source, published,
#          unit, kind, op, aggregate, mean, ci_lo, ci_hi, n, n_points, verdict,
#          strength, profile, reps).
# Outputs: <out.md>: one row per claim id of the first file: published value, then per
#          label the reproduced value [95 % interval] (n) and the verdict (strength);
#          a last row counts the verdicts per label. Written atomically.

script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "lib", "load.R"), chdir = TRUE)

args <- script_args("claims_compare.R <out.md> <label>=<claims.csv> ...", 2)
sets <- args[-1]
if (!all(grepl("=", sets, fixed = TRUE))) stop("each input must be <label>=<claims.csv>: ", paste(sets, collapse = " "))
labels <- sub("=.*$", "", sets)
tabs <- lapply(sub("^[^=]*=", "", sets), function(p) read_csv(p, col_types = cols(.default = col_character()),
                                                              na = character(), progress = FALSE))

num <- function(x, digits = 3) ifelse(x == "" | is.na(x), "", formatC(as.numeric(x), digits = digits, format = "g", flag = "#"))
value_cell <- function(r) {
  if (is.null(r) || r$verdict == "not run") return("--")
  v <- num(r$mean)
  if (r$ci_lo != "") v <- sprintf("%s [%s, %s]", v, num(r$ci_lo), num(r$ci_hi))
  pts <- if (r$aggregate != "") sprintf(", %s pts", r$n_points) else ""
  sprintf("%s (n=%s%s)", v, r$n, pts)
}
verdict_cell <- function(r) {
  if (is.null(r)) return("--")
  if (r$strength == "") r$verdict else sprintf("%s (%s)", r$verdict, r$strength)
}
published_cell <- function(r) {
  op <- if (r$kind == "trend") (if (r$op %in% c("<", "<=")) "falls" else "grows")
        else if (r$kind == "bound") r$op else ""
  agg <- if (r$aggregate %in% c("all", "min", "max")) paste0(r$aggregate, " ") else ""
  trimws(sprintf("%s%s %s %s", agg, op, if (r$kind == "trend") "" else r$published, r$unit))
}

base <- tabs[[1]]
header <- c("claim", "published", unlist(lapply(seq_along(tabs), function(k) {
  t <- tabs[[k]]
  prof <- if ("profile" %in% names(t) && nrow(t)) t$profile[1] else ""
  reps <- if ("reps" %in% names(t) && nrow(t)) t$reps[1] else ""
  c(sprintf("%s value [95 %% CI] (profile %s, %s rep.)", labels[k], prof, reps), sprintf("%s verdict", labels[k]))
})))
rows <- vapply(seq_len(nrow(base)), function(i) {
  id <- base$id[i]
  cells <- unlist(lapply(tabs, function(t) {
    r <- if (id %in% t$id) as.list(t[t$id == id, ][1, ]) else NULL
    c(value_cell(r), verdict_cell(r))
  }))
  paste0("| ", paste(c(id, published_cell(as.list(base[i, ])), cells), collapse = " | "), " |")
}, "")
counts <- unlist(lapply(tabs, function(t) {
  v <- table(factor(t$verdict, levels = VERDICTS))
  robust <- sum(t$strength == "robust")
  c("", sprintf("%s; %d robust", paste(sprintf("%d %s", v, names(v)), collapse = ", "), robust))
}))
lines <- c(paste0("| ", paste(header, collapse = " | "), " |"),
           paste0("|", strrep("---|", length(header))),
           rows,
           paste0("| **all** | ", paste(c("", counts), collapse = " | "), " |"))
write_atomic(lines, args[1])
