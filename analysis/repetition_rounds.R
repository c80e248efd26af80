#!/usr/bin/env Rscript
# analysis/repetition_rounds.R -- what each round of added repetitions settled (docs/paper-profile.md:
# every point read by a claim still marginal gets 3 more seeds, at most twice).
#
# Usage:   Rscript analysis/repetition_rounds.R <runs_root> <added_repetitions.csv> <out.tex>
#                  <warmup_s> <papers.csv> [<claims.csv> ...]
# Inputs:  run.json + tidy/*.csv of the paper profile's runs below <runs_root>, added seeds
#          included; config/added_repetitions.csv (mininet/bbrlab/experiment/repetitions.py),
#          its rows of the paper profile; paper/papers.csv (key, citation, ..., claims) to name
#          each claims file's paper; the claims files of the papers.
# Outputs: <out.tex>  per paper and round: the points given seeds, the runs those seeds added,
#                     the claims that marked them (marginal before the round), how many are
#                     robust after it (settled) and how many still marginal, and how many verdicts
#                     changed (marked claims, and the others, which may read the same points);
#                     then every changed verdict, before -> after;
#          <out>.csv  one row per paper, round and claim whose verdict or strength the round
#                     changed or that the round marked.
#          All written atomically.
#
# "Before round r" is the claims evaluated on the runs a point had before it: a point's seeds
# up to the repetitions of its latest row of an earlier round (its base, 3 fewer than its first
# row, when it had none); "after" adds the round's seeds. The claims are evaluated by
# analysis/lib/verdict.R, as analysis/claims.R does.

script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "lib", "load.R"), chdir = TRUE)

args <- script_args(paste("repetition_rounds.R <runs_root> <added_repetitions.csv> <out.tex> <warmup_s>",
                          "<papers.csv> [<claims.csv> ...]"), 5)   # no claims file: a report without the reference
STEP <- 3L    # seeds a round adds to a point (repetitions.py STEP)
warmup_s <- as.numeric(args[4])
rows <- read_csv(args[2], col_types = cols(.default = col_character()), progress = FALSE)
need <- c("profile", "experiment", "point", "repetitions", "round", "claims")
if (!identical(names(rows), need)) stop(sprintf("%s: columns must be %s", args[2], paste(need, collapse = ",")))
rows <- rows[rows$profile == "paper", ]
rows$repetitions <- as.integer(rows$repetitions)
rows$round <- as.integer(rows$round)
papers <- read_csv(args[5], col_types = cols(.default = col_character()), progress = FALSE)
claim_files <- args[-(1:5)]
claims_of <- lapply(claim_files, read_claims)
keys <- vapply(claim_files, function(f) {
  k <- papers$key[normalizePath(file.path(dirname(args[5]), "..", papers$claims), mustWork = FALSE) ==
                    normalizePath(f, mustWork = FALSE)]
  if (length(k) != 1) tools::file_path_sans_ext(basename(f)) else k
}, "")
citation <- function(k) papers$citation[papers$key == k] %||% k

# A point's repetitions before round r (r = 1, 2, ...): its latest row of an earlier round, else
# its base; Inf for a point without rows (all its runs count in every round).
limit_before <- function(r) {
  if (nrow(rows) == 0) return(tibble(experiment = character(), point = character(), limit = numeric()))
  rows %>% group_by(experiment, point) %>%
    summarise(limit = if (any(round < r)) repetitions[round == max(round[round < r])][1]
                      else min(repetitions[round == min(round)]) - STEP, .groups = "drop")
}

# only the runs of the experiments the claims name (a claim reads no other)
named <- unique(unlist(lapply(claims_of, function(c) c(c$experiment, c$ref_experiment))))
runs_all <- if (nrow(rows) && length(claim_files)) read_runs(args[1], experiments = named) else NULL

# The runs as they stood before round r (r = max + 1: all of them).
runs_before <- function(r) {
  lim <- limit_before(r)
  idx <- runs_all$index %>% left_join(lim, by = c("experiment", "point"))
  keep <- is.na(idx$limit) | idx$repetition <= idx$limit
  out <- runs_all
  out$index <- runs_all$index[keep, ]
  out$runs <- runs_all$runs[keep]
  out
}

changes <- list()
table_rows <- list()
for (i in seq_along(claims_of)) {
  claims <- claims_of[[i]]
  mine <- rows[vapply(strsplit(rows$claims, ";", fixed = TRUE), function(ids) any(ids %in% claims$id), TRUE), ]
  if (nrow(mine) == 0) next
  last <- max(mine$round)
  states <- lapply(seq_len(last + 1), function(r) evaluate_claims(claims, runs_before(r), warmup_s))
  for (r in seq_len(last)) {
    before <- states[[r]]
    after <- states[[r + 1]]
    in_round <- mine[mine$round == r, ]
    marked <- intersect(unique(unlist(strsplit(in_round$claims, ";", fixed = TRUE))), claims$id)
    lim0 <- limit_before(r)
    lim1 <- limit_before(r + 1)
    added <- runs_all$index %>% inner_join(lim0, by = c("experiment", "point")) %>%
      inner_join(rename(lim1, limit1 = limit), by = c("experiment", "point")) %>%
      filter(repetition > limit, repetition <= limit1, valid) %>%
      semi_join(in_round, by = c("experiment", "point"))        # this paper's points of the round
    b <- before[match(claims$id, before$id), ]
    a <- after[match(claims$id, after$id), ]
    changed <- claims$id[b$verdict != a$verdict]
    is_marked <- claims$id %in% marked
    table_rows[[length(table_rows) + 1]] <- tibble(
      paper = citation(keys[i]), round = r, points = nrow(in_round), runs_added = nrow(added),
      marked = length(marked), settled = sum(is_marked & a$strength == "robust"),
      still_marginal = sum(is_marked & a$strength == "marginal"),
      changed_marked = sum(is_marked & claims$id %in% changed),
      changed_other = sum(!is_marked & claims$id %in% changed))
    show <- is_marked | claims$id %in% changed | b$strength != a$strength
    changes[[length(changes) + 1]] <- tibble(
      paper = keys[i], round = r, claim = claims$id[show], marked = is_marked[show],
      verdict_before = b$verdict[show], strength_before = b$strength[show], n_before = b$n[show],
      verdict_after = a$verdict[show], strength_after = a$strength[show], n_after = a$n[show])
  }
}
summary <- bind_rows(tibble(paper = character(), round = integer(), points = integer(), runs_added = integer(),
                            marked = integer(), settled = integer(), still_marginal = integer(),
                            changed_marked = integer(), changed_other = integer()), table_rows)
detail <- bind_rows(tibble(paper = character(), round = integer(), claim = character(), marked = logical(),
                           verdict_before = character(), strength_before = character(), n_before = integer(),
                           verdict_after = character(), strength_after = character(), n_after = integer()),
                    changes)

out <- args[3]
write_csv_atomic(detail, sub("\\.tex$", ".csv", out))
lines <- if (nrow(summary) == 0) {
  "\\noindent No round of added repetitions has run yet for the papers whose paper-profile runs this report has (\\texttt{config/added\\_repetitions.csv})."
} else {
  body <- summary %>% transmute(tex_escape(paper), round, points, runs_added, marked, settled, still_marginal,
                                sprintf("%d + %d", changed_marked, changed_other))
  tab <- tabular_lines(as.data.frame(body), "\\begin{tabular}{lrrrrrrr}",
                       c("paper", "round", "points", "runs added", "marked", "settled",
                         "still marginal", "changed"))
  moved <- detail[detail$verdict_before != detail$verdict_after, ]
  moved_text <- if (nrow(moved) == 0) "No verdict changed." else paste0(
    "Verdicts changed: ", paste(sprintf("\\texttt{%s} (round %d) %s $\\to$ %s", tex_escape(moved$claim), moved$round,
                                        moved$verdict_before, moved$verdict_after), collapse = "; "), ".")
  weakened <- detail[!detail$marked & detail$verdict_before == detail$verdict_after &
                       detail$strength_before != detail$strength_after, ]
  if (nrow(weakened)) moved_text <- paste0(moved_text, " Claims not marked whose strength changed with the round's seeds: ",
    paste(sprintf("\\texttt{%s} (round %d) %s $\\to$ %s", tex_escape(weakened$claim), weakened$round,
                  weakened$strength_before, weakened$strength_after), collapse = "; "), ".")
  c(tab, "", "\\par\\smallskip",
    sprintf("{\\footnotesize Marked: the claims marginal before the round, whose points it gave seeds; settled: of those, robust after it; changed: verdicts changed, of the marked claims + of the others (which may read the same points). %s\\par}",
            moved_text))
}
write_atomic(lines, out)
