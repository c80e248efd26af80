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
CLAIM_OPTIONAL <- c(args = "", kind = "exact", op = "", point = "base", direction = "")

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
  bad <- with(claims, is.na(published) | !kind %in% c("exact", "bound") |
                (kind == "bound" & !op %in% COMPARISONS) | duplicated(id))
  if (any(bad)) stop(path, ": bad value/kind/op or duplicate id in claims: ",
                     paste(claims$id[bad], collapse = ", "))
  for (i in seq_len(nrow(claims))) {  # fail early on malformed expressions
    claim_call(claims[i, ])
    if (claims$direction[i] != "") parse_direction(claims$direction[i])
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

# "lhs op rhs", each side a metric call or a number.
parse_direction <- function(text) {
  e <- tryCatch(str2lang(text), error = function(err) NULL)
  if (!is.call(e) || length(e) != 3 || !as.character(e[[1]]) %in% COMPARISONS)
    stop("direction must be 'lhs op rhs' with op in ", paste(COMPARISONS, collapse = " "),
         ": ", text)
  side <- function(x) if (is.numeric(x)) x else parse_metric_call(deparse(x))
  list(op = as.character(e[[1]]), lhs = side(e[[2]]), rhs = side(e[[3]]))
}

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

evaluate_claim <- function(claim, runs, warmup_s = DEFAULT_WARMUP_S) {
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
  tibble(id = claim$id, paper = claim$paper, source = claim$source, text = claim$text,
         experiment = claim$experiment, point = claim$point, metric = claim$metric,
         args = claim$args, kind = claim$kind, op = claim$op, published = claim$published,
         unit = claim$unit, n = agg$n, n_runs = nrow(keys), mean = agg$mean, sd = agg$sd,
         min = agg$min, max = agg$max,
         rel_diff_pct = 100 * (agg$mean - claim$published) / abs(claim$published),
         direction = claim$direction, direction_holds = holds, direction_runs = dir_runs,
         verdict = claim_verdict(agg$n, agg$mean, claim$published, claim$kind, claim$op, holds),
         warmup_s = warmup_s, tolerance_pct = 100 * TOLERANCE)
}

evaluate_claims <- function(claims, runs, warmup_s = DEFAULT_WARMUP_S) {
  bind_rows(lapply(seq_len(nrow(claims)), function(i) evaluate_claim(claims[i, ], runs, warmup_s)))
}
