# analysis/lib/verdict.R -- claims files, reproduced values and THE verdict rule.
#
# What:    read_claims() reads a claims CSV (format: claims/README.md);
#          evaluate_claim() computes a claim's reproduced value over the valid
#          repetitions of its experiment and its verdict.
# Inputs:  a claims CSV; runs from read_runs() (analysis/lib/tidy.R).
# Outputs: one-row tibbles per claim.
#
# VERDICT RULE (one rule for every claim; the report states the same):
#   Every comparison uses the mean over the valid repetitions (n) of the claim's
#   experiment and point.
#   value matches  := kind "exact": |mean - published| <= 15 % of |published|
#                     kind "bound": mean satisfies the published bound (op value),
#                                   e.g. mean < 25 (no extra tolerance: the bound
#                                   is already the paper's margin)
#   direction holds := the claim's `direction` comparison (e.g. the 50-ms flow's
#                     goodput > the 10-ms flow's), evaluated on the means of its
#                     two sides; claims without a direction have none.
#   RELATIVE claims (a `ref_point` is given; `ref_experiment` defaults to the
#   claim's experiment) compare the metric on the claim's runs with the same
#   metric on the reference runs, e.g. BBQ's share over BBR's. Runs are paired
#   by repetition number (both valid); the reproduced value is `relation` of the
#   two means over the pairs: "ratio" mean/ref_mean, "pct_change"
#   100 (mean - ref_mean)/ref_mean, "pct_reduction" 100 (ref_mean - mean)/ref_mean;
#   sd, min and max are those of the per-pair values, n the number of pairs.
#   A direction side written ref(<metric call>) is evaluated on the reference runs.
#   The verdict rule itself is the same.
#   verdict:
#     "not run"                   n = 0
#     "reproduced"                value matches and the direction (if any) holds
#     "qualitatively reproduced"  value does not match, but the direction holds
#     "not reproduced"            otherwise (incl. no direction given and no match,
#                                 or the direction fails)

suppressPackageStartupMessages({
  library(dplyr)
  library(readr)
})

TOLERANCE <- 0.15        # relative tolerance of "exact" claims
TOL_SLACK <- 1e-9        # float slack so that exactly 15 % still matches
COMPARISONS <- c("<", "<=", ">", ">=")
VERDICTS <- c("reproduced", "qualitatively reproduced", "not reproduced", "not run")

CLAIM_REQUIRED <- c("id", "paper", "source", "text", "value", "unit", "experiment", "metric")
CLAIM_OPTIONAL <- c(args = "", kind = "exact", op = "", point = "base", direction = "",
                    ref_experiment = "", ref_point = "", relation = "")
RELATIONS <- list(
  ratio = function(x, ref) x / ref,
  pct_change = function(x, ref) 100 * (x - ref) / ref,
  pct_reduction = function(x, ref) 100 * (ref - x) / ref)

read_claims <- function(path) {
  claims <- read_csv(path, col_types = cols(.default = col_character()), na = character(),
                     progress = FALSE)
  missing <- setdiff(CLAIM_REQUIRED, names(claims))
  if (length(missing)) stop(path, ": missing columns: ", paste(missing, collapse = ", "))
  for (col in names(CLAIM_OPTIONAL)) {
    if (!col %in% names(claims)) claims[[col]] <- ""
    claims[[col]][claims[[col]] == ""] <- CLAIM_OPTIONAL[[col]]
  }
  claims$published <- as.numeric(claims$value)
  relative <- claims$ref_point != ""
  claims$ref_experiment[relative & claims$ref_experiment == ""] <-
    claims$experiment[relative & claims$ref_experiment == ""]
  claims$relation[relative & claims$relation == ""] <- "ratio"
  bad <- with(claims, is.na(published) | !kind %in% c("exact", "bound") |
                (kind == "bound" & !op %in% COMPARISONS) | duplicated(id) |
                (relative & !relation %in% names(RELATIONS)) |
                (!relative & (relation != "" | ref_experiment != "")))
  if (any(bad)) stop(path, ": bad value/kind/op or duplicate id in claims: ",
                     paste(claims$id[bad], collapse = ", "))
  for (i in seq_len(nrow(claims))) {  # fail early on malformed expressions
    claim_call(claims[i, ])
    if (claims$direction[i] != "") {
      d <- parse_direction(claims$direction[i])
      if (!relative[i] && (is_ref_side(d$lhs) || is_ref_side(d$rhs)))
        stop(path, ": claim ", claims$id[i], ": ref(...) in a direction needs a ref_point")
    }
  }
  claims
}

# A metric call such as ss_goodput_mbps(flow = 2): only functions in METRICS,
# only named constant arguments. Returns the parsed call.
parse_metric_call <- function(text) {
  e <- tryCatch(str2lang(text), error = function(err) NULL)
  ok <- is.call(e) && is.name(e[[1]]) && as.character(e[[1]]) %in% METRICS
  args <- if (ok) as.list(e)[-1] else list()
  ok <- ok && all(nzchar(names(args) %||% rep("", length(args)))) &&
    all(vapply(args, function(a) (is.numeric(a) || is.character(a)) && length(a) == 1, TRUE))
  if (!ok) stop("not a metric call (one of ", paste(METRICS, collapse = ", "),
                " with named constant arguments): ", text)
  e
}

claim_call <- function(claim) parse_metric_call(sprintf("%s(%s)", claim$metric, claim$args))

# "lhs op rhs", each side a metric call, ref(<metric call>) (evaluated on the
# reference runs of a relative claim) or a number. A side is returned as the parsed
# call or number, with attribute ref = TRUE for ref(...).
parse_direction <- function(text) {
  e <- tryCatch(str2lang(text), error = function(err) NULL)
  if (!is.call(e) || length(e) != 3 || !as.character(e[[1]]) %in% COMPARISONS)
    stop("direction must be 'lhs op rhs' with op in ", paste(COMPARISONS, collapse = " "),
         ": ", text)
  side <- function(x) {
    if (is.numeric(x)) return(x)
    if (is.call(x) && identical(x[[1]], as.name("ref")) && length(x) == 2)
      return(structure(parse_metric_call(paste(deparse(x[[2]]), collapse = "")), ref = TRUE))
    parse_metric_call(paste(deparse(x), collapse = ""))
  }
  list(op = as.character(e[[1]]), lhs = side(e[[2]]), rhs = side(e[[3]]))
}

is_ref_side <- function(side) isTRUE(attr(side, "ref"))

eval_metric_call <- function(call, run, warmup_s) {
  if (is.numeric(call)) return(call)
  do.call(as.character(call[[1]]), c(list(run), as.list(call)[-1], list(warmup_s = warmup_s)))
}

compare <- function(a, op, b) match.fun(op)(a, b)

value_matches <- function(mean, published, kind, op) {
  if (kind == "exact") abs(mean - published) <= TOLERANCE * abs(published) + TOL_SLACK
  else compare(mean, op, published)
}

# THE verdict rule (see header). direction_holds: TRUE/FALSE, NA = no direction.
claim_verdict <- function(n, mean, published, kind, op, direction_holds) {
  if (n == 0 || is.na(mean)) return("not run")
  if (value_matches(mean, published, kind, op) && !isFALSE(direction_holds)) return("reproduced")
  if (isTRUE(direction_holds)) return("qualitatively reproduced")
  "not reproduced"
}

# Per-run values of a metric call (numeric constants pass through); NA for
# runs that are not valid (they are never evaluated).
per_run_values <- function(call, runs, warmup_s) {
  vapply(runs, function(r) if (r$key$valid) eval_metric_call(call, r, warmup_s) else NA_real_, 0)
}

valid_mean <- function(call, runs, warmup_s) {
  v <- per_run_values(call, runs, warmup_s)
  if (all(is.na(v))) NA_real_ else mean(v, na.rm = TRUE)
}

run_reps <- function(rs) vapply(rs, function(r) as.integer(r$key$repetition), 0L)

# Pairs the runs of two selections by repetition number, keeping the repetitions
# valid in both: list(repetition, pick), pick(rs, call) giving the metric call's
# values on rs's runs of those repetitions, in that order.
pair_runs <- function(sel, ref, warmup_s) {
  valid <- function(rs) vapply(rs, function(r) isTRUE(r$key$valid), TRUE)
  common <- sort(intersect(run_reps(sel)[valid(sel)], run_reps(ref)[valid(ref)]))
  pick <- function(rs, call) per_run_values(call, rs[match(common, run_reps(rs))], warmup_s)
  list(repetition = common, pick = pick)
}

evaluate_relative_claim <- function(claim, runs, warmup_s) {
  sel <- select_runs(runs, claim$experiment, claim$point)
  ref <- select_runs(runs, claim$ref_experiment, claim$ref_point)
  pv <- pair_runs(sel, ref, warmup_s)
  call <- claim_call(claim)
  x <- pv$pick(sel, call)
  y <- pv$pick(ref, call)
  ok <- !is.na(x) & !is.na(y)
  x <- x[ok]
  y <- y[ok]
  rel <- RELATIONS[[claim$relation]]
  n <- length(x)
  value <- if (n > 0) rel(mean(x), mean(y)) else NA_real_
  pairs <- rel(x, y)
  holds <- NA
  dir_runs <- ""
  if (claim$direction != "" && n > 0) {
    d <- parse_direction(claim$direction)
    side_vals <- function(side) {
      if (is.numeric(side)) return(rep(side, length(pv$repetition)))
      pv$pick(if (is_ref_side(side)) ref else sel, side)
    }
    lhs <- side_vals(d$lhs)[ok]
    rhs <- side_vals(d$rhs)[ok]
    holds <- compare(mean(lhs), d$op, mean(rhs))
    each <- compare(lhs, d$op, rhs)
    dir_runs <- sprintf("%d/%d", sum(each, na.rm = TRUE), sum(!is.na(each)))
  }
  n_runs <- length(union(run_reps(sel), run_reps(ref)))
  list(n = n, n_runs = n_runs, mean = value,
       sd = if (n > 1) stats::sd(pairs) else NA_real_,
       min = if (n > 0) min(pairs) else NA_real_, max = if (n > 0) max(pairs) else NA_real_,
       holds = holds, dir_runs = dir_runs)
}

evaluate_claim <- function(claim, runs, warmup_s = DEFAULT_WARMUP_S) {
  if (claim$ref_point != "") {
    a <- evaluate_relative_claim(claim, runs, warmup_s)
    return(claim_row(claim, a$n, a$n_runs, a$mean, a$sd, a$min, a$max, a$holds, a$dir_runs,
                     warmup_s))
  }
  sel <- select_runs(runs, claim$experiment, claim$point)
  keys <- bind_rows(tibble(valid = logical()), lapply(sel, `[[`, "key"))
  keys$value <- per_run_values(claim_call(claim), sel, warmup_s)
  agg <- aggregate_valid(keys, "value")
  holds <- NA
  dir_runs <- ""
  if (claim$direction != "" && agg$n > 0) {
    d <- parse_direction(claim$direction)
    holds <- compare(valid_mean(d$lhs, sel, warmup_s), d$op, valid_mean(d$rhs, sel, warmup_s))
    each <- compare(per_run_values(d$lhs, sel, warmup_s), d$op, per_run_values(d$rhs, sel, warmup_s))
    dir_runs <- sprintf("%d/%d", sum(each, na.rm = TRUE), sum(!is.na(each)))
  }
  claim_row(claim, agg$n, nrow(keys), agg$mean, agg$sd, agg$min, agg$max, holds, dir_runs,
            warmup_s)
}

claim_row <- function(claim, n, n_runs, mean, sd, min, max, holds, dir_runs, warmup_s) {
  tibble(id = claim$id, paper = claim$paper, source = claim$source, text = claim$text,
         experiment = claim$experiment, point = claim$point, metric = claim$metric,
         args = claim$args, kind = claim$kind, op = claim$op, published = claim$published,
         unit = claim$unit, n = n, n_runs = n_runs, mean = mean, sd = sd,
         min = min, max = max,
         rel_diff_pct = 100 * (mean - claim$published) / abs(claim$published),
         direction = claim$direction, direction_holds = holds, direction_runs = dir_runs,
         verdict = claim_verdict(n, mean, claim$published, claim$kind, claim$op, holds),
         ref_experiment = claim$ref_experiment, ref_point = claim$ref_point,
         relation = claim$relation,
         warmup_s = warmup_s, tolerance_pct = 100 * TOLERANCE)
}

evaluate_claims <- function(claims, runs, warmup_s = DEFAULT_WARMUP_S) {
  bind_rows(lapply(seq_len(nrow(claims)), function(i) evaluate_claim(claims[i, ], runs, warmup_s)))
}
