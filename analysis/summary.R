#!/usr/bin/env Rscript
# analysis/summary.R -- the report's summary table (one headline row per paper, from the paper
# profile) and one headline sentence per paper for its part of the report.
#
# Usage:   Rscript analysis/summary.R <generated_dir> <out.tex> [papers.csv] [experiments.csv]
#            [--profile P] [--reference DIR] [--coverage CSV] [--archive DIR]
# Inputs:  <papers.csv> (default paper/papers.csv): key, citation, title, seed;
#          <experiments.csv> (default config/experiments.csv): per experiment its paper
#          key and items, the paper's evaluation figures and tables it regenerates,
#          "; "-separated ("Fig. 4; Table I");
#          <generated_dir>/<experiment>.pdf: this report's figures (an item counts as
#          regenerated when its experiment's figure is there);
#          <generated_dir>/claims_<key>.csv: this report's claims of paper <key> as
#          analysis/claims.R writes them. Columns used: verdict (reproduced,
#          qualitatively reproduced, not reproduced, not run), strength (robust,
#          marginal or empty), profile, reps (repetitions per point). A missing
#          column, or a missing claims file, shows as "--".
#          --profile P: this report's profile (default: read from its claims files).
#          --reference DIR: where the paper profile's claims_<key>.csv are (the pipeline:
#          generated/reference/ outside the paper profile; default <generated_dir>, i.e. this
#          report is the paper profile's). A paper without a file there was not run in the
#          paper profile.
#          --coverage CSV: generated/archive_coverage.csv (workflow/rules/reference.smk): per
#          paper-profile experiment its runs, and how many the archive --archive DIR holds
#          with this checkout's keys (current), stale or not at all (missing), their
#          experiment seconds, the revisions that ran the current ones and when they were
#          archived (first_archived, last_archived). Gives the archive column, the items of
#          the paper-profile row outside the paper profile, and the reason a paper was not
#          run in the paper profile.
# Outputs: <out.tex>, a booktabs tabular (for a table float): per paper of papers.csv (then
#          any paper that only has a claims file) a row of the paper profile (items, claims per
#          verdict split robust / marginal, repetitions, the archive's revisions and dates, or
#          "not run in the paper profile" and why) and, when this report is another profile's,
#          a row of this report's own verdicts labelled with its profile; rows of totals; a note.
#          <dir of out.tex>/headline_<key>.tex for every paper of papers.csv: the same as a
#          sentence, which the paper's part of the report inputs (no count in the prose is
#          written by hand).
#          <dir of out.tex>/paper_profile.tex (with --coverage): macros \def'd per paper key and
#          for "all", read in the prose by report.tex's \paperprofile{<key>}{<what>}: points,
#          runs, hours (experiment hours of all its paper-profile runs), archived (runs the
#          archive holds current), cpuhours (host CPU-hours those took; -- when none).
#          <dir of out.tex>/claim_verdicts.tex: per claim of the paper profile's claims tables a
#          macro, read in the prose by report.tex's \claimverdict{<claim id>}: its verdict and,
#          unless not run, its strength ("not reproduced, marginal"), so that no verdict the prose
#          names is written by hand.
#          All written atomically.

script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "lib", "load.R"), chdir = TRUE)

usage <- paste("summary.R <generated_dir> <out.tex> [papers.csv] [experiments.csv]",
               "[--profile P] [--reference DIR] [--coverage CSV] [--archive DIR]")
all_args <- script_args(usage, 2)
OPTIONS <- c("--profile", "--reference", "--coverage", "--archive")
opts <- list()
args <- character()
i <- 1
while (i <= length(all_args)) {
  a <- all_args[i]
  if (startsWith(a, "--")) {
    if (!a %in% OPTIONS || i == length(all_args)) stop("summary.R: bad option ", a, "; usage: ", usage)
    opts[[sub("^--", "", a)]] <- all_args[i + 1]
    i <- i + 2
  } else {
    args <- c(args, a)
    i <- i + 1
  }
}
gen_dir <- args[1]
papers_csv <- if (length(args) >= 3) args[3] else file.path(script_dir, "..", "paper", "papers.csv")
experiments_csv <- if (length(args) >= 4) args[4] else file.path(script_dir, "..", "config", "experiments.csv")
ref_dir <- if (is.null(opts$reference)) gen_dir else opts$reference
# This report is the paper profile's own when its reference is itself.
own_is_ref <- normalizePath(ref_dir, mustWork = FALSE) == normalizePath(gen_dir, mustWork = FALSE)
archive_dir <- if (is.null(opts$archive) || opts$archive == "none") NA_character_ else opts$archive

VERDICTS <- c("reproduced", "qualitatively reproduced", "not reproduced", "not run")
REFERENCE <- "paper"

read_chr_csv <- function(path) {
  read_csv(path, col_types = cols(.default = col_character()), na = character(),
           progress = FALSE, show_col_types = FALSE)
}

# tibble(item = "Fig. 3", experiment = "ma2019_fig03") of the items a paper's experiments
# regenerate (experiments.csv rows of that paper, in table order).
items_of <- function(key) {
  rows <- experiments[experiments$paper == key, ]
  bind_rows(tibble(item = character(), experiment = character()),
            lapply(seq_len(nrow(rows)), function(i) {
              parts <- trimws(strsplit(rows$items[i], ";", fixed = TRUE)[[1]])
              parts <- parts[parts != ""]
              tibble(item = as.character(parts), experiment = rep(rows$experiment[i], length(parts)))
            }))
}

claims_in <- function(dir) {
  files <- list.files(dir, pattern = "^claims_.+\\.csv$", full.names = TRUE)
  setNames(lapply(files, read_chr_csv), sub("^claims_(.+)\\.csv$", "\\1", basename(files)))
}

papers <- read_chr_csv(papers_csv)
for (col in c("key", "citation", "title", "seed"))
  if (!col %in% names(papers)) stop(papers_csv, ": no column ", col)
experiments <- read_chr_csv(experiments_csv)
for (col in c("experiment", "paper", "items"))
  if (!col %in% names(experiments)) stop(experiments_csv, ": no column ", col)

COVERAGE_COLUMNS <- c("experiment", "paper", "points", "runs", "current", "stale", "missing", "experiment_s",
                      "missing_experiment_s", "host_cpu_s", "revisions", "first_archived", "last_archived")
coverage <- NULL
if (!is.null(opts$coverage)) {
  coverage <- read_chr_csv(opts$coverage)
  absent <- setdiff(COVERAGE_COLUMNS, names(coverage))
  if (length(absent)) stop(opts$coverage, ": no column ", paste(absent, collapse = ", "))
  for (col in c("points", "runs", "current", "stale", "missing", "experiment_s", "missing_experiment_s", "host_cpu_s"))
    coverage[[col]] <- as.numeric(coverage[[col]])
}

own_claims <- claims_in(gen_dir)
ref_claims <- if (own_is_ref) own_claims else claims_in(ref_dir)
extra <- setdiff(union(names(own_claims), names(ref_claims)), papers$key)
if (length(extra) > 0)
  papers <- bind_rows(papers, tibble(key = extra, citation = extra, title = "", seed = ""))

# This report's profile: --profile, else the profiles its claims files name.
own_profile <- if (!is.null(opts$profile)) opts$profile else {
  p <- unique(unlist(lapply(own_claims, function(t) if ("profile" %in% names(t)) t$profile)))
  p <- sort(p[!is.na(p) & p != ""])
  if (length(p)) paste(p, collapse = "+") else "this"
}

# The label of the headline rows: the paper profile's (this report's own profile when it is its).
ref_label <- if (own_is_ref) tex_escape(own_profile) else REFERENCE

# "3" or "3 (2/1)": claims with this verdict, split robust / marginal when known.
verdict_cell <- function(claims, verdict) {
  if (is.null(claims) || !"verdict" %in% names(claims)) return("--")
  sel <- claims$verdict == verdict
  n <- sum(sel)
  if (n == 0 || verdict == "not run") return(as.character(n))
  if (!"strength" %in% names(claims)) return(sprintf("%d (--)", n))
  s <- claims$strength[sel]
  sprintf("%d (%d/%d)", n, sum(s == "robust"), sum(s == "marginal"))
}

# Distinct non-empty values of a column, joined; "--" when none or no column.
values_cell <- function(claims, col, join = ", ") {
  if (is.null(claims) || !col %in% names(claims)) return("--")
  v <- unique(claims[[col]][!is.na(claims[[col]]) & claims[[col]] != ""])
  if (length(v) == 0) return("--")
  if (col == "reps" && all(grepl("^[0-9]+$", v))) {
    v <- as.integer(v)
    return(if (min(v) == max(v)) as.character(v[1]) else sprintf("%d--%d", min(v), max(v)))
  }
  tex_escape(paste(sort(v), collapse = join))
}

figure_exists <- function(experiment) {
  !is.na(experiment) & file.exists(file.path(gen_dir, paste0(experiment, ".pdf")))
}

# Experiments the archive holds whole (every paper-profile run current).
archived_whole <- function(experiment) {
  if (is.null(coverage)) return(rep(FALSE, length(experiment)))
  experiment %in% coverage$experiment[coverage$runs > 0 & coverage$current == coverage$runs]
}

# Items of the paper-profile row: this report's figures when it is the paper profile's, else
# the experiments the archive holds whole.
ref_done <- function(experiment) if (own_is_ref) figure_exists(experiment) else archived_whole(experiment)

cov_of <- function(key) if (is.null(coverage)) NULL else coverage[coverage$paper == key, ]

# "rev 2d2d175, 2026-11-26" (or a range of dates; more than two revisions are counted unless
# `all_revisions`) of the archived runs.
archive_cell <- function(cov, all_revisions = FALSE) {
  if (is.null(cov)) return("--")
  if (sum(cov$current) == 0) return(if (own_is_ref) "not archived" else "--")
  revs <- sort(unique(unlist(strsplit(cov$revisions[cov$current > 0], " ", fixed = TRUE))))
  days <- substr(c(cov$first_archived, cov$last_archived), 1, 10)
  days <- sort(unique(days[days != ""]))
  when <- if (length(days) > 1) sprintf("%s--%s", days[1], days[length(days)]) else days
  if (length(revs) > 2 && !all_revisions) return(sprintf("%d revisions, %s", length(revs), when))
  sprintf("rev.\\ %s, %s", paste(tex_escape(revs), collapse = ", "), when)
}

hours <- function(s) sprintf("%.1f", s / 3600)

# Why a paper has no paper-profile verdicts (or which of its experiments the archive lacks).
not_run_reason <- function(cov) {
  if (is.null(cov) || nrow(cov) == 0) return("it has no experiment in the paper profile")
  if (is.na(archive_dir)) return("this checkout has no paper-profile archive (data/paper)")
  if (sum(cov$current) == sum(cov$runs))
    return("the archive holds all its runs, but its claims are not in this report's plan (config claims, experiments)")
  sprintf(paste0("the archive \\texttt{%s} holds %d of its %d paper-profile runs with this checkout's ",
                 "keys (%d stale, %d never archived; %s hours of experiment time not held)"),
          tex_escape(archive_dir), as.integer(sum(cov$current)), as.integer(sum(cov$runs)),
          as.integer(sum(cov$stale)), as.integer(sum(cov$missing)), hours(sum(cov$missing_experiment_s)))
}

# "30 reproduced (25 robust, 5 marginal), ..., 0 not run" of a claims table.
counts_text <- function(claims) {
  parts <- vapply(VERDICTS, function(v) {
    sel <- claims$verdict == v
    n <- sum(sel)
    if (v == "not run" || n == 0 || !"strength" %in% names(claims)) return(sprintf("%d %s", n, v))
    s <- claims$strength[sel]
    sprintf("%d %s (%d robust, %d marginal)", n, v, sum(s == "robust"), sum(s == "marginal"))
  }, "")
  sprintf("of its %d claims, %s", nrow(claims), paste(parts, collapse = ", "))
}

reps_text <- function(claims) {
  r <- values_cell(claims, "reps")
  if (r == "--") "" else sprintf("; %s repetition%s per point", r, if (r == "1") "" else "s")
}

headline <- function(p, items, cov) {
  ref <- ref_claims[[p$key]]
  own <- own_claims[[p$key]]
  done <- ref_done(items$experiment)
  s <- if (!is.null(ref)) {
    lacking <- if (!is.null(cov)) cov$experiment[!archived_whole(cov$experiment)] else character()
    sprintf(paste0("\\emph{Paper profile} (%s): %s%s; %d of its %d items regenerated.%s"),
            if (is.null(cov) || sum(cov$current) == 0) "this report's runs"
            else sprintf("runs archived in \\texttt{%s}, %s; %d runs, %s host CPU-hours", tex_escape(archive_dir),
                         archive_cell(cov, all_revisions = TRUE), as.integer(sum(cov$current)), hours(sum(cov$host_cpu_s))),
            counts_text(ref), reps_text(ref), sum(done), nrow(items),
            if (length(lacking) && !own_is_ref)
              sprintf(" Not in the archive whole, so not run in the paper profile here: %s.",
                      paste(sprintf("\\texttt{%s}", tex_escape(lacking)), collapse = ", "))
            else "")
  } else {
    sprintf("\\emph{Not run in the paper profile}: %s.", not_run_reason(cov))
  }
  if (!own_is_ref) {
    s <- paste(s, if (is.null(own)) sprintf("This report's %s profile has no claims of it.", tex_escape(own_profile))
                  else sprintf("\\emph{Profile %s} (this report's runs%s): %s.",
                               tex_escape(own_profile), reps_text(own), counts_text(own)))
  }
  s
}

rows <- list()
missing_notes <- character()
not_run_notes <- character()
for (i in seq_len(nrow(papers))) {
  p <- papers[i, ]
  items <- items_of(p$key)
  cov <- cov_of(p$key)
  ref <- ref_claims[[p$key]]
  own <- own_claims[[p$key]]
  title <- tex_escape(p$citation)
  items_cell <- function(done) if (nrow(items) == 0) "--" else sprintf("%d of %d", sum(done), nrow(items))
  ref_row <- if (!is.null(ref) || (own_is_ref && is.null(coverage))) {
    c(title, ref_label, items_cell(ref_done(items$experiment)),
      vapply(VERDICTS, function(v) verdict_cell(ref, v), ""), values_cell(ref, "reps"), archive_cell(cov))
  } else {
    not_run_notes <- c(not_run_notes, sprintf("%s: %s", tex_escape(p$citation), not_run_reason(cov)))
    c(title, ref_label, items_cell(ref_done(items$experiment)),
      "\\multicolumn{5}{l}{not run in the paper profile (see below)}", archive_cell(cov))
  }
  rows[[length(rows) + 1]] <- paste0(paste(ref_row, collapse = " & "), " \\\\")
  if (!own_is_ref) {
    done <- figure_exists(items$experiment)
    own_row <- c("", tex_escape(own_profile), items_cell(done),
                 vapply(VERDICTS, function(v) verdict_cell(own, v), ""), values_cell(own, "reps"), "this report")
    rows[[length(rows) + 1]] <- paste0(paste(own_row, collapse = " & "), " \\\\")
  }
  if (i < nrow(papers)) rows[[length(rows) + 1]] <- "\\addlinespace"
  not_done <- if (own_is_ref) !figure_exists(items$experiment) else !archived_whole(items$experiment)
  if (any(not_done))
    missing_notes <- c(missing_notes, sprintf("%s: %s", tex_escape(p$citation),
                                              tex_escape(paste(items$item[not_done], collapse = ", "))))
  write_atomic(c(sprintf("%% generated by analysis/summary.R for %s", p$key), paste0(headline(p, items, cov), "%")),
               file.path(dirname(args[2]), sprintf("headline_%s.tex", p$key)))
}

# Totals over all papers (claims files pooled).
pool <- function(cl) if (length(cl) > 0) bind_rows(cl) else NULL
all_items <- bind_rows(lapply(papers$key, items_of))
total_rows <- c(paste0(paste(c("All papers", ref_label, sprintf("%d of %d", sum(ref_done(all_items$experiment)), nrow(all_items)),
                                vapply(VERDICTS, function(v) verdict_cell(pool(ref_claims), v), ""),
                                values_cell(pool(ref_claims), "reps"), ""), collapse = " & "), " \\\\"),
                if (!own_is_ref)
                  paste0(paste(c("", tex_escape(own_profile), sprintf("%d of %d", sum(figure_exists(all_items$experiment)), nrow(all_items)),
                                 vapply(VERDICTS, function(v) verdict_cell(pool(own_claims), v), ""),
                                 values_cell(pool(own_claims), "reps"), "this report"), collapse = " & "), " \\\\"))

stack <- function(...) sprintf("\\begin{tabular}[b]{@{}c@{}}%s\\end{tabular}", paste(c(...), collapse = "\\\\"))
note <- paste0(
  "Per paper, the first row is the paper profile's (the papers' durations and repetitions)",
  if (!own_is_ref) sprintf(paste0(", from the runs the archive \\texttt{%s} holds with this checkout's keys ",
                                  "(restored, not rerun); the second this report's, profile \\texttt{%s}"),
                           tex_escape(if (is.na(archive_dir)) "--" else archive_dir), tex_escape(own_profile)) else "",
  ". Items: the paper's evaluation figures and tables regenerated, of all it has. ",
  "Claims: the number with each verdict; in parentheses those whose verdict is robust / marginal ",
  "(-- where the claims table does not say). Reps.: repetitions per point of the runs behind the claims. ",
  "Runs: the revision that ran the archived runs and the day they were archived. ",
  if (length(not_run_notes) > 0) paste0("Not run in the paper profile: ", paste(not_run_notes, collapse = "; "), ". ") else "",
  if (length(missing_notes) > 0) paste0("Not regenerated in the paper profile: ", paste(missing_notes, collapse = "; "), ".") else "")
lines <- c(
  "{\\small\\setlength{\\tabcolsep}{3pt}",
  "\\begin{tabular}{@{}>{\\raggedright\\arraybackslash}p{0.19\\linewidth}lcccccc>{\\raggedright\\arraybackslash}p{0.13\\linewidth}@{}}",
  "\\toprule",
  " & & & \\multicolumn{4}{c}{Claims (robust / marginal)} & & \\\\",
  "\\cmidrule(lr){4-7}",
  paste0(paste("Paper", "Profile", "Items", "reproduced", stack("qualitatively", "reproduced"),
               stack("not", "reproduced"), stack("not", "run"), "Reps.", "Runs",
               sep = " & "), " \\\\"),
  "\\midrule", unlist(rows), "\\midrule", total_rows,
  "\\bottomrule", "\\end{tabular}",
  "\\par\\smallskip",
  sprintf("\\parbox{\\linewidth}{\\footnotesize\\raggedright %s}", note),
  "}")
write_atomic(lines, args[2])

# The paper profile's verdict of each claim as a macro for the prose (\claimverdict{<id>} in report.tex).
verdict_macro <- function(t) {
  strength <- if ("strength" %in% names(t)) t$strength else rep(NA_character_, nrow(t))
  words <- ifelse(t$verdict == "not run" | is.na(strength) | strength == "", t$verdict,
                  paste0(t$verdict, ", ", strength))
  sprintf("\\expandafter\\def\\csname cv@%s\\endcsname{%s}", t$id, words)
}
write_atomic(c("% generated by analysis/summary.R from the paper profile's claims tables",
               unlist(lapply(ref_claims[sort(names(ref_claims))], verdict_macro))),
             file.path(dirname(args[2]), "claim_verdicts.tex"))

# The paper profile's sizes as macros for the prose (\paperprofile{<key>}{<what>} in report.tex).
if (!is.null(coverage)) {
  size_macros <- function(key, cov) {
    cpu <- if (sum(cov$current) > 0) hours(sum(cov$host_cpu_s)) else "--"
    vals <- c(points = sum(cov$points), runs = sum(cov$runs), hours = sprintf("%.0f", sum(cov$experiment_s) / 3600),
              archived = sum(cov$current), cpuhours = cpu)
    sprintf("\\expandafter\\def\\csname pp@%s@%s\\endcsname{%s}", key, names(vals), vals)
  }
  keys <- unique(coverage$paper[coverage$paper != ""])
  write_atomic(c("% generated by analysis/summary.R from the archive coverage",
                 unlist(lapply(keys, function(k) size_macros(k, coverage[coverage$paper == k, ]))),
                 size_macros("all", coverage)),
               file.path(dirname(args[2]), "paper_profile.tex"))
}
