#!/usr/bin/env Rscript
# analysis/summary.R -- the report's summary table: one row per paper.
#
# Usage:   Rscript analysis/summary.R <generated_dir> <out.tex> [papers.csv] [experiments.csv]
# Inputs:  <papers.csv> (default paper/papers.csv): key, citation, title, seed (the
#          paper's file in shared/papers/);
#          <experiments.csv> (default config/experiments.csv): per experiment its paper
#          key and items, the paper's evaluation figures and tables it regenerates,
#          "; "-separated ("Fig. 4; Table I");
#          <generated_dir>/<experiment>.pdf: the regenerated figures (an item counts
#          as regenerated when its experiment's figure is there);
#          <generated_dir>/claims_<key>.csv: the claims of paper <key> as
#          analysis/claims.R writes them. Columns used: verdict (reproduced,
#          qualitatively reproduced, not reproduced, not run), strength (robust,
#          marginal or empty), profile, reps (repetitions per point). A missing
#          column, or a missing claims file, shows as "--".
# Outputs: <out.tex>, a booktabs tabular (for a table float) with one row per
#          paper of papers.csv (then any paper that only has a claims file), a
#          row of totals, and a note naming the items not regenerated.
#          Written atomically.

script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "lib", "load.R"), chdir = TRUE)

args <- script_args("summary.R <generated_dir> <out.tex> [papers.csv] [experiments.csv]", 2)
gen_dir <- args[1]
papers_csv <- if (length(args) >= 3) args[3] else file.path(script_dir, "..", "paper", "papers.csv")
experiments_csv <- if (length(args) >= 4) args[4] else file.path(script_dir, "..", "config", "experiments.csv")

VERDICTS <- c("reproduced", "qualitatively reproduced", "not reproduced", "not run")

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

papers <- read_chr_csv(papers_csv)
for (col in c("key", "citation", "title", "seed"))
  if (!col %in% names(papers)) stop(papers_csv, ": no column ", col)
experiments <- read_chr_csv(experiments_csv)
for (col in c("experiment", "paper", "items"))
  if (!col %in% names(experiments)) stop(experiments_csv, ": no column ", col)

claim_files <- list.files(gen_dir, pattern = "^claims_.+\\.csv$", full.names = TRUE)
claim_keys <- sub("^claims_(.+)\\.csv$", "\\1", basename(claim_files))
claims_of <- setNames(lapply(claim_files, read_chr_csv), claim_keys)
extra <- setdiff(claim_keys, papers$key)
if (length(extra) > 0)
  papers <- bind_rows(papers, tibble(key = extra, citation = extra, title = "", seed = ""))

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

rows <- list()
missing_notes <- character()
for (i in seq_len(nrow(papers))) {
  p <- papers[i, ]
  items <- items_of(p$key)
  done <- figure_exists(items$experiment)
  claims <- claims_of[[p$key]]
  title <- if (nzchar(p$title)) sprintf("%s: \\emph{%s}", tex_escape(p$citation), tex_escape(p$title))
           else tex_escape(p$citation)
  rows[[i]] <- c(paper = title,
                 items = if (nrow(items) == 0) "--" else sprintf("%d of %d", sum(done), nrow(items)),
                 setNames(vapply(VERDICTS, function(v) verdict_cell(claims, v), ""), VERDICTS),
                 profile = values_cell(claims, "profile", "+"),
                 reps = values_cell(claims, "reps"))
  if (any(!done))
    missing_notes <- c(missing_notes, sprintf("%s: %s", tex_escape(p$citation),
                                              tex_escape(paste(items$item[!done], collapse = ", "))))
}

# Totals over all papers (claims files pooled).
all_claims <- if (length(claims_of) > 0) bind_rows(claims_of) else NULL
all_items <- bind_rows(lapply(papers$key, items_of))
total <- c(paper = "All papers",
           items = sprintf("%d of %d", sum(figure_exists(all_items$experiment)), nrow(all_items)),
           setNames(vapply(VERDICTS, function(v) verdict_cell(all_claims, v), ""), VERDICTS),
           profile = values_cell(all_claims, "profile", "+"), reps = values_cell(all_claims, "reps"))

stack <- function(...) sprintf("\\begin{tabular}[b]{@{}c@{}}%s\\end{tabular}", paste(c(...), collapse = "\\\\"))
body <- vapply(rows, function(r) paste0(paste(r, collapse = " & "), " \\\\"), "")
note <- paste0(
  "Items: the paper's evaluation figures and tables regenerated here, of all it has. ",
  "Claims: the number with each verdict; in parentheses those whose verdict is robust / marginal ",
  "(-- where the claims table does not say). ",
  "Profile and repetitions per point: of the runs behind the claims. ",
  if (length(missing_notes) > 0) paste0("Not regenerated: ", paste(missing_notes, collapse = "; "), ".") else "")
lines <- c(
  "{\\small\\setlength{\\tabcolsep}{4pt}",
  "\\begin{tabular}{@{}>{\\raggedright\\arraybackslash}p{0.3\\linewidth}cccccll@{}}",
  "\\toprule",
  " & & \\multicolumn{4}{c}{Claims (robust / marginal)} & & \\\\",
  "\\cmidrule(lr){3-6}",
  paste0(paste("Paper", "Items", "reproduced", stack("qualitatively", "reproduced"),
               stack("not", "reproduced"), stack("not", "run"), "Profile", "Reps.",
               sep = " & "), " \\\\"),
  "\\midrule", body, "\\midrule",
  paste0(paste(total, collapse = " & "), " \\\\"),
  "\\bottomrule", "\\end{tabular}",
  "\\par\\smallskip",
  sprintf("\\parbox{\\linewidth}{\\footnotesize\\raggedright %s}", note),
  "}")
write_atomic(lines, args[2])
