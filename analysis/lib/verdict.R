# analysis/lib/verdict.R -- claims files, reproduced values, intervals and THE verdict rule.
#
# What:    read_claims() reads and checks a claims CSV (format: claims/README.md);
#          evaluate_claim() computes a claim's reproduced value over the valid
#          repetitions of the sweep points its sentence covers, a 95 % interval,
#          the verdict and whether the verdict is robust.
# Inputs:  a claims CSV; runs from read_runs() (analysis/lib/tidy.R).
# Outputs: one-row tibbles per claim.
#
# THE VERDICT RULE (one rule for every claim; paper/sections/verdict_rule.tex
# states the same in words):
#
#   Points.   A claim selects the sweep points its sentence covers (`point`: a
#             point name, `base`, `*`, or conditions such as `f2_rtt_ms>=30`).
#             Without `aggregate` it must select one point.
#   Value.    Per point, the MEASURED QUANTITY q is the mean of the metric over
#             the point's valid runs; for a relative claim (a `ref_point`) it is
#             the ratio of that mean to the mean over the valid runs of the
#             reference point (unpaired: repetitions of two points are
#             independent runs). The DISPLAYED value is q, or for relative
#             claims `relation` of the ratio: ratio q, pct_change 100 (q - 1),
#             pct_reduction 100 (1 - q).
#   Match.    exact: q lies in the claim's BAND (match_band(), the one place):
#                    15 % of the published number's distance from its
#                    scale's reference point (bounded scales: plus half their
#                    printed resolution, SCALE_RESOLUTION):
#                      unbounded quantities (Mbit/s, ms, s, packets, ratios):
#                        the distance from 0, i.e. 15 % of the value;
#                      percentage changes and reductions (relation pct_*,
#                        quantity not bounded): in percentage points of the
#                        change, 15 % of |change| (a 93.3 % reduction accepts
#                        79.3-100 %, not 92.3-94.3 %);
#                      shares and utilisations (BOUNDED_METRICS "share",
#                        0-100 %): the distance from the NEARER end,
#                        min(s, 100 - s) (a flow's share and the others'
#                        complement are the same statement);
#                      Jain's index: the distance from 1, the unfairness
#                        1 - J ("around 0.84" accepts 0.811-0.869, not
#                        0.71-0.97; "0.6" accepts 0.535-0.665);
#                      relative claims on shares and indices (a ratio or a
#                        change of two shares or indices): the share or index
#                        the published relation predicts from the measured
#                        reference, r * mean_ref (an index capped at 1), then
#                        as above (two indices >= 0.95 no longer match
#                        "similar" automatically; "improves by -2.2 %" is
#                        tested on the index it predicts, not as 0.83-1.13x);
#                    AT A SCALE'S END the distance stops shrinking at the
#                    lexicon's end zone (SCALE_END_ZONE: a share within 10
#                    points of an end, an index within 0.1 of 1; a change
#                    below CHANGE_FLOOR_PCT = 15 %): "0.99" accepts 0.97-1;
#                    A TIME ON THE RUN'S CLOCK (clock = "run", a ProbeRTT
#                    instant) is measured from the event it follows
#                    (CLOCK_EVENTS), plus half its printed resolution;
#                    the band is mapped back to the measured domain (ratios
#                    for relative claims), where the interval is compared;
#             bound: the displayed value satisfies `op value` (the bound is the
#                    paper's own margin or the lexicon's threshold; nothing is
#                    added), except: at an OBSERVED EXTREME ("at least X",
#                    "will not exceed X": lexicon at-least / at-most) the far
#                    edge of X's band, and a COMPARISON without a number (a
#                    relative bound at ratio 1: "more", "smaller") the edge of
#                    the band of "similar" beyond it (bound_threshold());
#             trend: Kendall's tau between the sweep variable `by` and the
#                    per-point values is <= -0.6 (op "<", falls) or >= 0.6 (op
#                    ">", grows); needs at least 3 points.
#   Aggregates (the sentence covers several points):
#             all  every selected point matches (and its direction holds); the
#                  value shown is the least favourable point's;
#             min  / max: the smallest / largest per-point value is compared
#                  (e.g. "at least 55.2 %", "up to 6.1x"); the direction must hold
#                  at every selected point.
#   Direction: the qualitative effect of the sentence, "lhs op rhs" of metric
#             calls (ref(...) = on the reference runs) or numbers, compared on
#             the means. A trend's direction is built in: the last point's value
#             op the first point's.
#   Verdict:  not run                    no selected point has a valid run
#             reproduced                 value matches and the direction (if any) holds
#             qualitatively reproduced   value does not match, the direction holds
#             not reproduced             otherwise
#   Interval: 95 %, t-based over the valid runs (relative claims: delta method
#             for the ratio of two means, t with min(n, n_ref) - 1 degrees of
#             freedom; directions: paired t on per-run differences, or Welch for
#             ref(...) sides). Needs n >= 2.
#   Strength: robust    the verdict is the same for every value inside the
#                       intervals (of the value and of the direction's
#                       difference; for aggregates, of every point; for a trend,
#                       the first and last points' intervals do not overlap)
#             marginal  the verdict holds on the means only, or n < 2

suppressPackageStartupMessages({
  library(dplyr)
  library(readr)
})

TOLERANCE <- 0.15        # of the published number's distance from its scale's reference (match_band)
TOL_SLACK <- 1e-9        # float slack so that exactly 15 % still matches
TREND_TAU <- 0.6         # |Kendall's tau| a trend must reach
CONF_LEVEL <- 0.95
COMPARISONS <- c("<", "<=", ">", ">=")
VERDICTS <- c("reproduced", "qualitatively reproduced", "not reproduced", "not run")
KINDS <- c("exact", "bound", "trend")
AGGREGATES <- c("", "all", "min", "max")

CLAIM_REQUIRED <- c("id", "paper", "source", "text", "value", "unit", "experiment", "metric")
CLAIM_OPTIONAL <- c(args = "", kind = "exact", op = "", point = "base", aggregate = "", by = "",
                    window = "", direction = "", ref_experiment = "", ref_point = "",
                    relation = "", reading = "", lexicon = "", departure = "",
                    min_duration_s = "", power_exempt = "")
# Metrics whose values are bounded: "share" in 0-100 % (tolerance on the distance
# from the nearer end), "index" Jain's index in (0, 1] (on the unfairness 1 - J).
BOUNDED_METRICS <- c(ss_share_pct = "share", ss_capacity_share_pct = "share",
                     ss_share_rtt_pct = "share", ss_capacity_share_rtt_pct = "share",
                     ss_link_util_pct = "share", win_share_pct = "share",
                     ss_queue_share_pct = "share", probe_rtt_queue_share_pct = "share",
                     probe_rtt_end_queue_share_pct = "share", cheat_share_min_pct = "share",
                     probe_rtt_after_share_pct = "share", fair_bins_pct = "share",
                     gain_time_pct = "share", gain_qdelay_rise_pct = "share", cwnd_bound_pct = "share",
                     probe_rtt_sync_pct = "share", cubic_fc_phase_pct = "share",
                     cubic_fc_longer_pct = "share",
                     ss_jain = "index")
RELATIONS <- c("ratio", "pct_change", "pct_reduction")

to_display <- function(q, relation) {
  switch(relation %||% "", ratio = q, pct_change = 100 * (q - 1), pct_reduction = 100 * (1 - q), q)
}
to_measured <- function(v, relation) {
  switch(relation %||% "", ratio = v, pct_change = 1 + v / 100, pct_reduction = 1 - v / 100, v)
}

# ---- reading and checking a claims file ---------------------------------------

read_claims <- function(path) {
  claims <- read_csv(path, col_types = cols(.default = col_character()), na = character(),
                     progress = FALSE)
  missing <- setdiff(CLAIM_REQUIRED, names(claims))
  if (length(missing)) stop(path, ": missing columns: ", paste(missing, collapse = ", "))
  unknown <- setdiff(names(claims), c(CLAIM_REQUIRED, names(CLAIM_OPTIONAL)))
  if (length(unknown)) stop(path, ": unknown columns: ", paste(unknown, collapse = ", "))
  for (col in names(CLAIM_OPTIONAL)) {
    if (!col %in% names(claims)) claims[[col]] <- ""
    claims[[col]][claims[[col]] == ""] <- CLAIM_OPTIONAL[[col]]
  }
  relative <- claims$ref_point != ""
  claims$ref_experiment[relative & claims$ref_experiment == ""] <-
    claims$experiment[relative & claims$ref_experiment == ""]
  claims$relation[relative & claims$relation == ""] <- "ratio"
  claims$published <- suppressWarnings(as.numeric(claims$value))
  for (i in seq_len(nrow(claims))) {
    problem <- claim_problem(claims[i, ], relative[i])
    if (!is.null(problem)) stop(path, ": claim ", claims$id[i], ": ", problem)
  }
  dup <- claims$id[duplicated(claims$id)]
  if (length(dup)) stop(path, ": duplicate ids: ", paste(dup, collapse = ", "))
  claims
}

# NULL when the claim row is well formed, else what is wrong.
claim_problem <- function(c, relative) {
  if (!c$kind %in% KINDS) return(sprintf("kind '%s' is not one of %s", c$kind, paste(KINDS, collapse = ", ")))
  if (c$kind != "exact" && !c$op %in% COMPARISONS)
    return(sprintf("a %s claim needs op (one of %s)", c$kind, paste(COMPARISONS, collapse = " ")))
  if (c$kind == "trend") {
    if (c$value != "") return("a trend claim takes no value (the rule sets |tau| >= 0.6)")
    if (c$by == "") return("a trend claim needs `by`, the sweep variable")
    if (c$aggregate != "") return("a trend claim takes no aggregate")
    if (c$direction != "") return("a trend's direction is built in (last vs first point)")
  } else if (is.na(c$published)) return(sprintf("value '%s' is not a number", c$value))
  if (c$min_duration_s != "" && !(suppressWarnings(as.numeric(c$min_duration_s)) > 0))
    return(sprintf("min_duration_s '%s' is not a positive number of seconds", c$min_duration_s))
  if (c$departure != "" && c$lexicon == "")
    return("a departure names the lexicon entry it departs from: lexicon is empty")
  if (!c$aggregate %in% AGGREGATES) return(sprintf("aggregate '%s' is not all, min or max", c$aggregate))
  if (c$by != "" && c$kind != "trend") return("`by` is for trend claims")
  if (relative && !c$relation %in% RELATIONS)
    return(sprintf("relation '%s' is not one of %s", c$relation, paste(RELATIONS, collapse = ", ")))
  if (!relative && (c$relation != "" || c$ref_experiment != ""))
    return("relation / ref_experiment need a ref_point")
  err <- tryCatch({
    claim_call(c)
    parse_selector(c$point)
    if (relative) parse_overrides(c$ref_point)
    parse_window(c$window)
    if (c$direction != "") {
      d <- parse_direction(c$direction)
      if (!relative && (is_ref_side(d$lhs) || is_ref_side(d$rhs)))
        stop("ref(...) in a direction needs a ref_point")
    }
    NULL
  }, error = function(e) conditionMessage(e))
  err
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

# ---- sweep points ---------------------------------------------------------------

# Key/value pairs of a point name ("rate_mbps=10__f2_rtt_ms=30"); "base" has none.
point_values <- function(point) {
  if (point == "base") return(character())
  parts <- strsplit(point, "__", fixed = TRUE)[[1]]
  eq <- regexpr("=", parts, fixed = TRUE)
  setNames(substring(parts, eq + 1), substring(parts, 1, eq - 1))
}

# A point selector: "base", "*", a point name without operators (that point), or
# conditions "key op value" joined by "__" or "&" (op one of = != < <= > >=;
# numbers compare as numbers).
parse_selector <- function(text) {
  if (text %in% c("base", "*") || grepl("^[A-Za-z0-9_.-]+$", text)) return(text)
  conds <- trimws(strsplit(text, "__|&")[[1]])
  m <- regmatches(conds, regexec("^([A-Za-z0-9_]+)\\s*(<=|>=|!=|=|<|>)\\s*([^<>=!]+)$", conds))
  if (length(conds) == 0 || any(lengths(m) != 4))
    stop("point must be base, * or conditions like f2_rtt_ms>=30 joined by __ or &: ", text)
  data.frame(key = vapply(m, `[`, "", 2), op = vapply(m, `[`, "", 3),
             value = trimws(vapply(m, `[`, "", 4)), stringsAsFactors = FALSE)
}

point_matches <- function(point, selector) {
  sel <- parse_selector(selector)
  if (identical(sel, "*")) return(TRUE)
  if (is.character(sel)) return(point == sel)
  pv <- point_values(point)
  all(vapply(seq_len(nrow(sel)), function(i) {
    k <- sel$key[i]
    if (!k %in% names(pv)) return(FALSE)
    a <- suppressWarnings(as.numeric(pv[[k]]))
    b <- suppressWarnings(as.numeric(sel$value[i]))
    op <- if (sel$op[i] == "=") "==" else sel$op[i]
    if (!is.na(a) && !is.na(b)) return(match.fun(op)(a, b))
    if (!op %in% c("==", "!=")) stop("cannot order non-numbers: ", selector)
    match.fun(op)(pv[[k]], sel$value[i])
  }, TRUE))
}

# A reference point: "base", or key=value overrides joined by "__" applied to the
# claim's point (a full point name overrides every key).
parse_overrides <- function(text) {
  if (grepl("^[A-Za-z0-9_.-]+$", text)) return(text)   # base, or a point's name
  sel <- parse_selector(text)
  if (!is.data.frame(sel) || any(sel$op != "=")) stop("ref_point must be base or key=value pairs: ", text)
  setNames(sel$value, sel$key)
}

# A predicate on point names: is it the reference point of `point`?
is_ref_point_of <- function(point, ref_point) {
  ov <- parse_overrides(ref_point)
  if (is.null(names(ov))) return(function(p) p == ov)
  target <- point_values(point)
  target[names(ov)] <- ov
  function(p) p != "base" && same_values(point_values(p), target)
}

same_values <- function(a, b) length(a) == length(b) && setequal(names(a), names(b)) &&
  all(a[names(b)] == b)

# ---- statistics ------------------------------------------------------------------

tq <- function(df) stats::qt(1 - (1 - CONF_LEVEL) / 2, df)

t_interval <- function(x) {
  n <- length(x)
  if (n < 2) return(c(NA_real_, NA_real_))
  h <- tq(n - 1) * stats::sd(x) / sqrt(n)
  mean(x) + c(-h, h)
}

# Ratio of two independent means, delta method.
ratio_interval <- function(x, y) {
  nx <- length(x); ny <- length(y)
  if (min(nx, ny) < 2 || mean(y) == 0) return(c(NA_real_, NA_real_))
  mx <- mean(x); my <- mean(y)
  se <- sqrt(stats::var(x) / nx / my^2 + mx^2 * stats::var(y) / ny / my^4)
  mx / my + c(-1, 1) * tq(min(nx, ny) - 1) * se
}

# Difference of two independent means, Welch.
welch_interval <- function(x, y) {
  nx <- length(x); ny <- length(y)
  if (min(nx, ny) < 2) return(c(NA_real_, NA_real_))
  vx <- stats::var(x) / nx; vy <- stats::var(y) / ny
  df <- (vx + vy)^2 / (vx^2 / (nx - 1) + vy^2 / (ny - 1))
  if (!is.finite(df)) df <- min(nx, ny) - 1
  mean(x) - mean(y) + c(-1, 1) * tq(df) * sqrt(vx + vy)
}

# How a comparison "x op b" fares over an interval [lo, hi] of x:
# "all" (holds everywhere), "none" (nowhere), "mixed", or "unknown" (no interval).
interval_status <- function(lo, hi, op, b) {
  if (is.na(lo) || is.na(hi)) return("unknown")
  f <- match.fun(op)
  if (f(lo, b) && f(hi, b)) "all" else if (!f(lo, b) && !f(hi, b)) "none" else "mixed"
}

# The scale of a claim's metric: "share", "index" or "" (unbounded).
claim_scale <- function(claim) BOUNDED_METRICS[claim$metric] %|na|% ""
`%|na|%` <- function(a, b) if (length(a) == 0 || is.na(a)) b else unname(a)

# Half the printed resolution of a bounded scale (the papers print Jain indices to
# two decimals, shares to one): without it a published index of 1 or a share of 100 %
# could only match exactly.
SCALE_RESOLUTION <- c(share = 0.05, index = 0.005)

# THE ENDS OF A SCALE. Near an end the distance stops shrinking at the width of the
# end zone the lexicon reads as one statement: a share within 10 points of an end
# ("starves" < 10 %, "entire" >= 90 %: a fifth of an even two-flow split), a Jain index
# within 0.1 of 1 ("almost fair" >= 0.9 and above). So "0.99" accepts 0.97-1 (not
# 0.9835-0.9965) and "95 %" 93.45-96.55. With n flows the share zone is a fifth of the
# even split, 20 / n points (at most 10): a flow's 3 % of ten flows is not "starved".
SCALE_END_ZONE <- c(share = 10, index = 0.1)
share_end_zone <- function(n_flows = 2) {
  n <- if (is.finite(n_flows) && n_flows >= 2) n_flows else 2
  min(SCALE_END_ZONE[["share"]], 20 / n)
}
# A percentage change is measured from no change; below the 15 % change the lexicon
# calls significant the distance stops shrinking ("5 %" accepts 2.75-7.25, not 4.25-5.75).
CHANGE_FLOOR_PCT <- 15

# Distance of x from its scale's reference point, floored at the scale's end zone.
scale_distance <- function(x, scale, n_flows = 2) {
  switch(scale,
    share = max(min(x, 100 - x), share_end_zone(n_flows)),
    index = max(1 - x, SCALE_END_ZONE[["index"]]),
    abs(x))
}

# Half the resolution a number is printed with ("64" 0.5, "1.5" 0.05).
printed_half_resolution <- function(text) {
  d <- nchar(sub("^[^.]*\\.?", "", trimws(text)))
  0.5 * 10^(-d)
}

# Is the claim a time read on the run's clock (an instant on a figure's axis: a
# metric of CLOCK_EVENTS with clock = "run", or one without a clock argument, the
# instant of a periodic phase)?
clock_instant <- function(claim) {
  call <- claim_call(claim)
  m <- as.character(call[[1]])
  if (!m %in% names(CLOCK_EVENTS) || claim$ref_point != "") return(FALSE)
  a <- as.list(call)[-1]
  if ("clock" %in% names(formals(get(m)))) identical(a$clock, "run") else TRUE
}

# The event a clock instant follows, s on the run's clock, averaged over runs.
clock_origin <- function(claim, rs) {
  call <- claim_call(claim)
  f <- CLOCK_EVENTS[[as.character(call[[1]])]]
  mean(vapply(rs, function(r) as.numeric(f(r, as.list(call)[-1])), 0))
}

# THE MATCH BAND of an exact claim (header, "Match"), in the measured domain (the
# metric's value, or the ratio of the two means for a relative claim). ref_mean:
# the mean over the reference runs (relative claims on bounded scales need it);
# origin: for a time on the run's clock, the event it follows (clock_origin());
# n_flows: the flows of the run (the share scale's end zone).
match_band <- function(claim, ref_mean = NA_real_, origin = NA_real_, n_flows = 2) {
  v <- claim$published
  scale <- claim_scale(claim)
  res <- if (scale == "") 0 else SCALE_RESOLUTION[[scale]]
  if (claim$ref_point == "") {
    if (is.finite(origin)) {
      tol <- TOLERANCE * abs(v - origin) + printed_half_resolution(claim$value)
      return(c(v - tol, v + tol))
    }
    tol <- TOLERANCE * scale_distance(v, scale, n_flows) + res
    return(c(v - tol, v + tol))
  }
  r <- to_measured(v, claim$relation)
  if (scale != "" && is.finite(ref_mean) && ref_mean > 0) {
    top <- if (scale == "index") 1 else 100
    pred <- min(r * ref_mean, top)
    tol <- TOLERANCE * scale_distance(pred, scale, n_flows) + res
    # capped: the relation asks for more than the scale holds above this reference
    return(structure((pred + c(-tol, tol)) / ref_mean, capped = r * ref_mean > top))
  }
  tol <- if (claim$relation %in% c("pct_change", "pct_reduction"))
           TOLERANCE * max(abs(v), CHANGE_FLOOR_PCT) / 100
         else TOLERANCE * abs(r)
  c(r - tol, r + tol)
}

# A bound at an observed extreme: "at least X" / "will not exceed X" (lexicon entries
# at-least, at-most) summarise the paper's own per-point numbers, the smallest or the
# largest of which is X; X is then a measurement like an exact number and the bound is
# compared with the far edge of X's band (a value the rule accepts as X does not break
# "at most X"). Bounds the paper sets as a margin ("< 25 %", entry bound) and the
# lexicon's thresholds ("fair" >= 0.95) are compared with their number as it stands.
OBSERVED_BOUND_ENTRIES <- c("at-least", "at-most")
observed_bound <- function(claim) claim$kind == "bound" &&
  any(strsplit(claim$lexicon %||% "", "+", fixed = TRUE)[[1]] %in% OBSERVED_BOUND_ENTRIES)

# A comparison without a number: a relative bound at ratio 1 ("more", "smaller",
# "improves", "slower"). It holds when the ratio lies beyond the band "similar" (ratio 1)
# gets, on the stated side: a difference the rule would call "the same" is not "more".
# Without it two equal algorithms pass or fail a comparison by noise.
comparison_bound <- function(claim) claim$kind == "bound" && claim$ref_point != "" &&
  claim$relation == "ratio" && isTRUE(claim$published == 1)

# Bounds compared with a band's edge instead of their number (observed extremes,
# comparisons): the band is match_band()'s for the bound's number.
banded_bound <- function(claim) observed_bound(claim) || comparison_bound(claim)

# The number a bound's displayed value is compared with: the published one, or for an
# observed bound the far edge of its band (band in the measured domain, NA: none).
bound_threshold <- function(claim, band) {
  # a capped band (an index cannot be 47.8 % above a reference of 0.98) has no edge that
  # means the bound's number: the number is compared as it stands
  if (!banded_bound(claim) || anyNA(band) || isTRUE(attr(band, "capped"))) return(claim$published)
  edges <- to_display(band, claim$relation)
  near <- claim$op %in% c("<", "<=")
  if (comparison_bound(claim)) near <- !near     # beyond the band on the stated side
  if (near) max(edges) else min(edges)
}

in_band <- function(q, band) q >= band[1] - TOL_SLACK && q <= band[2] + TOL_SLACK

band_status <- function(lo, hi, q_pub, band = NULL) {
  if (is.na(lo) || is.na(hi)) return("unknown")
  if (is.null(band)) band <- q_pub + c(-1, 1) * TOLERANCE * abs(q_pub)
  band <- band + c(-TOL_SLACK, TOL_SLACK)
  if (lo >= band[1] && hi <= band[2]) "all" else if (hi < band[1] || lo > band[2]) "none" else "mixed"
}

# Status of "all points": "none" if any point is none, "all" if all are all.
combine_all <- function(s) {
  if (any(s == "none")) "none" else if (all(s == "all")) "all" else if (any(s == "unknown")) "unknown" else "mixed"
}

# Does a value match? exact: q in `band` (default: the unbounded band around q_pub,
# 15 % of |q_pub|); bound: the displayed value satisfies `op published`.
value_matches <- function(q, q_pub, kind, op, display, published,
                          band = q_pub + c(-1, 1) * TOLERANCE * abs(q_pub)) {
  if (kind == "exact") in_band(q, band)
  else match.fun(op)(display, published)
}

# THE verdict rule on the means (see header). direction_holds: TRUE/FALSE, NA = none.
claim_verdict <- function(n, matches, direction_holds) {
  if (n == 0 || is.na(matches)) return("not run")
  if (matches && !isFALSE(direction_holds)) return("reproduced")
  if (isTRUE(direction_holds)) return("qualitatively reproduced")
  "not reproduced"
}

claim_strength <- function(verdict, n, match_status, direction_status) {
  if (verdict == "not run") return("")
  decided <- c("all", "none")
  if (n >= 2 && match_status %in% decided && (is.na(direction_status) || direction_status %in% decided))
    "robust" else "marginal"
}

# ---- evaluating one point ----------------------------------------------------------

# Value of a metric call (or number) on one run, with the claim's window; NA with
# attribute `reason` when the run does not cover the window.
run_value <- function(call, run, window_text, warmup_s) {
  if (is.numeric(call)) return(call)
  args <- c(list(run), as.list(call)[-1], list(warmup_s = warmup_s))
  if (window_text != "") {
    w <- claim_window(run, window_text, warmup_s)
    if (anyNA(w)) return(structure(NA_real_, reason = attr(w, "reason")))
    args$window <- w
  }
  as.numeric(do.call(as.character(call[[1]]), args))
}

valid_runs <- function(rs) Filter(function(r) isTRUE(r$key$valid), rs)

# Runs at least min_duration_s long (a claim whose published number depends on the
# run's length, e.g. a whole-run average after a long start-up); the others are
# left out, so a profile of shorter runs leaves the claim "not run", with a note.
long_enough <- function(rs, min_duration_s) {
  if (min_duration_s == "" || length(rs) == 0) return(list(runs = rs, note = character()))
  need <- as.numeric(min_duration_s)
  len <- vapply(rs, run_end_s, 0)
  short <- len < need - EPS_S
  note <- if (any(short)) sprintf("needs runs of >= %s s; %d run(s) of %s s left out",
                                  format(need), sum(short), paste(unique(format(len[short])), collapse = "/"))
    else character()
  list(runs = rs[!short], note = note)
}

# Values of `call` over runs (valid only), with the reasons of NA values.
values_of <- function(call, rs, window_text, warmup_s) {
  v <- lapply(rs, function(r) run_value(call, r, window_text, warmup_s))
  reasons <- unique(unlist(lapply(v, attr, "reason")))
  x <- vapply(v, function(a) as.numeric(a), 0)
  list(x = x, reasons = reasons)
}

# Everything one point contributes: measured value and interval, displayed value,
# direction on the means and its interval, notes.
point_stats <- function(claim, point, runs, warmup_s) {
  all_sel <- select_runs(runs, claim$experiment, point)
  notes <- character()
  long <- long_enough(valid_runs(all_sel), claim$min_duration_s)
  sel <- long$runs
  notes <- c(notes, long$note)
  call <- claim_call(claim)
  relative <- claim$ref_point != ""
  xs <- values_of(call, sel, claim$window, warmup_s)
  notes <- c(notes, xs$reasons)
  ok <- !is.na(xs$x)
  x <- xs$x[ok]
  sel_ok <- sel[ok]
  ref_ok <- list()
  n_runs <- length(all_sel)
  if (relative) {
    is_ref <- is_ref_point_of(point, claim$ref_point)
    all_ref <- Filter(function(r) r$key$experiment == claim$ref_experiment && is_ref(r$key$point),
                      runs$runs)
    long_ref <- long_enough(valid_runs(all_ref), claim$min_duration_s)
    notes <- c(notes, long_ref$note)
    ys <- values_of(call, long_ref$runs, claim$window, warmup_s)
    notes <- c(notes, ys$reasons)
    y <- ys$x[!is.na(ys$x)]
    ref_ok <- long_ref$runs[!is.na(ys$x)]
    n_runs <- n_runs + length(all_ref)
    n <- min(length(x), length(y))
    q <- if (n > 0) mean(x) / mean(y) else NA_real_
    qi <- ratio_interval(x, y)
    if (claim$ref_experiment != claim$experiment && n > 0)
      notes <- c(notes, window_mismatch(sel_ok[[1]], ref_ok[[1]], claim$window, warmup_s))
  } else {
    n <- length(x)
    q <- if (n > 0) mean(x) else NA_real_
    qi <- t_interval(x)
  }
  display <- to_display(q, claim$relation)
  di <- sort(to_display(qi, claim$relation))
  if (length(di) < 2) di <- c(NA_real_, NA_real_)
  dir <- if (claim$direction != "" && n > 0)
    point_direction(parse_direction(claim$direction), sel_ok, ref_ok, claim$window, warmup_s)
  if (claim$metric == "retrans_pkts" && n > 0) notes <- c(notes, retrans_note(claim, sel_ok))
  origin <- if (claim$kind == "exact" && n > 0 && clock_instant(claim)) clock_origin(claim, sel_ok)
    else NA_real_
  band <- if ((claim$kind == "exact" || banded_bound(claim)) && n > 0)
    match_band(claim, if (relative) mean(y) else NA_real_, origin,
               n_flows = nrow(flows_table(sel_ok[[1]]$meta))) else c(NA_real_, NA_real_)
  read <- paste0(claim$experiment, "/", point)
  if (relative) read <- c(read, unique(vapply(all_ref, function(r) paste0(r$key$experiment, "/", r$key$point), "")))
  list(point = point, label = if (length(all_sel)) point_label(all_sel[[1]]$meta) else point,
       n = n, n_runs = n_runs, band = band, read = read,
       q = q, q_lo = qi[1], q_hi = qi[2], value = display, lo = di[1], hi = di[2],
       sd = if (!relative && n > 1) stats::sd(x) else NA_real_,
       min = if (!relative && n > 0) min(x) else NA_real_,
       max = if (!relative && n > 0) max(x) else NA_real_,
       x = x, dir = dir, notes = unique(notes))
}

# Direction on one point: holds on the means, and the status of the difference
# lhs - rhs over its interval (paired per run when both sides are on the same runs).
point_direction <- function(d, sel, ref, window_text, warmup_s) {
  side <- function(s) {
    if (is.numeric(s)) return(NULL)
    values_of(s, if (is_ref_side(s)) ref else sel, window_text, warmup_s)$x
  }
  lhs <- side(d$lhs); rhs <- side(d$rhs)
  mean_of <- function(v, s) if (is.null(v)) s else mean(v, na.rm = TRUE)
  holds <- match.fun(d$op)(mean_of(lhs, d$lhs), mean_of(rhs, d$rhs))
  paired <- !is.null(lhs) && !is.null(rhs) && is_ref_side(d$lhs) == is_ref_side(d$rhs)
  di <- if (is.null(lhs)) -rev(t_interval(rhs[!is.na(rhs)])) + d$lhs
    else if (is.null(rhs)) t_interval(lhs[!is.na(lhs)]) - d$rhs
    else if (paired) t_interval((lhs - rhs)[!is.na(lhs - rhs)])
    else welch_interval(lhs[!is.na(lhs)], rhs[!is.na(rhs)])
  list(holds = isTRUE(holds), status = interval_status(di[1], di[2], d$op, 0))
}

window_mismatch <- function(run, ref_run, window_text, warmup_s) {
  w <- function(r) if (window_text != "") claim_window(r, window_text, warmup_s) else steady_window(r, warmup_s)
  a <- w(run); b <- w(ref_run)
  if (anyNA(c(a, b)) || abs(diff(a) - diff(b)) <= 1) return(character())
  sprintf("windows differ: %.0f-%.0f s vs reference %.0f-%.0f s", a[[1]], a[[2]], b[[1]], b[[2]])
}

retrans_note <- function(claim, rs) {
  args <- as.list(claim_call(claim))
  per_s <- args$per_s
  flow <- args$flow
  if (is.null(per_s)) return(character())
  ext <- vapply(rs, function(r) retrans_extrapolated(r, flow, per_s), TRUE)
  if (!any(ext)) return(sprintf("counted over whole %s-s flows", format(per_s)))
  life <- flow_life(rs[[which(ext)[1]]], flow)
  sprintf("extrapolated to %s s from %s-s flows", format(per_s), format(life[["stop"]] - life[["start"]]))
}

# ---- evaluating a claim ---------------------------------------------------------------

claim_points <- function(claim, runs) {
  pts <- unique(runs$index$point[runs$index$experiment == claim$experiment])
  pts[vapply(pts, point_matches, TRUE, selector = claim$point)]
}

evaluate_claim <- function(claim, runs, warmup_s = DEFAULT_WARMUP_S) {
  points <- claim_points(claim, runs)
  if (length(points) > 1 && claim$aggregate == "" && claim$kind != "trend")
    stop("claim ", claim$id, ": point '", claim$point, "' selects ", length(points),
         " points (", paste(points, collapse = ", "), "); give an aggregate")
  stats <- lapply(points, point_stats, claim = claim, runs = runs, warmup_s = warmup_s)
  n_runs <- sum(vapply(stats, `[[`, 0L, "n_runs"))
  notes <- unique(unlist(lapply(stats, `[[`, "notes")))
  read <- unique(unlist(lapply(stats, `[[`, "read")))
  stats <- Filter(function(s) s$n > 0, stats)
  a <- if (length(stats) == 0) NULL
    else if (claim$kind == "trend") aggregate_trend(claim, stats)
    else aggregate_points(claim, stats)
  if (is.null(a)) {
    if (claim$kind == "trend" && length(stats) > 0)
      notes <- c(notes, sprintf("a trend needs >= 3 points; this profile ran %d", length(stats)))
    return(claim_row(claim, list(n = 0L, n_runs = n_runs, n_points = length(stats), read = read),
                     notes, warmup_s))
  }
  a$n_runs <- n_runs
  a$read <- read
  claim_row(claim, a, notes, warmup_s)
}

aggregate_points <- function(claim, stats) {
  q_pub <- to_measured(claim$published, claim$relation)
  val <- vapply(stats, `[[`, 0, "value")
  off_band <- function(x) abs(x$q - mean(x$band)) / max(diff(x$band) / 2, TOL_SLACK)
  pick <- switch(claim$aggregate,
    min = which.min(val), max = which.max(val),
    all = if (claim$kind == "exact") which.max(vapply(stats, off_band, 0))
          else if (claim$op %in% c("<", "<=")) which.max(val) else which.min(val),
    1L)
  s <- stats[[pick]]
  lo <- vapply(stats, `[[`, 0, "lo"); hi <- vapply(stats, `[[`, 0, "hi")
  status_of <- function(x) if (claim$kind == "exact")
    band_status(sort(to_measured(c(x$lo, x$hi), claim$relation))[1],
                sort(to_measured(c(x$lo, x$hi), claim$relation))[2], q_pub, x$band)
    else interval_status(x$lo, x$hi, claim$op, bound_threshold(claim, x$band))
  matches_of <- function(x) value_matches(x$q, q_pub, claim$kind, claim$op, x$value,
                                          bound_threshold(claim, x$band),
                                          x$band)
  if (claim$aggregate %in% c("min", "max")) {
    f <- match.fun(claim$aggregate)
    ext <- list(lo = f(lo), hi = f(hi), band = s$band)
    if (anyNA(c(lo, hi))) ext <- list(lo = NA_real_, hi = NA_real_, band = s$band)
    matches <- matches_of(s)
    match_status <- status_of(ext)
    ci <- c(ext$lo, ext$hi)
  } else {
    matches <- all(vapply(stats, matches_of, TRUE))
    match_status <- combine_all(vapply(stats, status_of, ""))
    ci <- c(s$lo, s$hi)
  }
  dirs <- lapply(stats, `[[`, "dir")
  has_dir <- claim$direction != ""
  holds <- if (has_dir) all(vapply(dirs, `[[`, TRUE, "holds")) else NA
  dir_status <- if (has_dir) combine_all(vapply(dirs, `[[`, "", "status")) else NA_character_
  n_dir <- if (has_dir) sprintf("%d/%d", sum(vapply(dirs, `[[`, TRUE, "holds")), length(dirs)) else ""
  accept <- sort(to_display(s$band, claim$relation))
  list(n = min(vapply(stats, `[[`, 0L, "n")), n_points = length(stats), value = s$value,
       lo = ci[1], hi = ci[2], sd = s$sd, min = s$min, max = s$max, at = s$label,
       accept_lo = accept[1], accept_hi = accept[2],
       matches = matches, match_status = match_status, holds = holds, dir_status = dir_status,
       direction_points = n_dir, tau = NA_real_)
}

aggregate_trend <- function(claim, stats) {
  if (length(stats) < 3) return(NULL)
  x <- vapply(stats, function(s) as.numeric(point_values(s$point)[[claim$by]] %||% NA), 0)
  if (anyNA(x)) stop("claim ", claim$id, ": a selected point has no numeric '", claim$by, "'")
  ord <- order(x)
  stats <- stats[ord]; x <- x[ord]
  y <- vapply(stats, `[[`, 0, "value")
  tau <- suppressWarnings(stats::cor(x, y, method = "kendall"))
  tau <- if (is.na(tau)) 0 else tau
  matches <- if (claim$op %in% c("<", "<=")) tau <= -TREND_TAU else tau >= TREND_TAU
  first <- stats[[1]]; last <- stats[[length(stats)]]
  holds <- match.fun(claim$op)(last$value, first$value)
  ends <- if (claim$ref_point == "") welch_interval(last$x, first$x)
    else c(NA_real_, NA_real_)   # ratios: compare the two ratios' intervals instead
  dir_status <- if (claim$ref_point == "") interval_status(ends[1], ends[2], claim$op, 0)
    else if (is.na(last$lo) || is.na(first$lo)) "unknown"
    else if (last$hi < first$lo || last$lo > first$hi) (if (holds) "all" else "none") else "mixed"
  match_status <- if (dir_status %in% c("all", "none")) (if (matches) "all" else "none") else "mixed"
  list(n = min(vapply(stats, `[[`, 0L, "n")), n_points = length(stats), value = tau,
       lo = NA_real_, hi = NA_real_, sd = NA_real_, min = NA_real_, max = NA_real_,
       at = sprintf("%s: %s to %s", claim$by, format(x[1]), format(x[length(x)])),
       matches = matches, match_status = match_status, holds = holds, dir_status = dir_status,
       direction_points = sprintf("%.3g -> %.3g", first$value, last$value), tau = tau,
       first = first$value, last = last$value)
}

claim_row <- function(claim, a, notes, warmup_s) {
  n <- a$n %||% 0L
  verdict <- if (n == 0) "not run" else claim_verdict(n, a$matches, a$holds)
  num <- function(name) if (is.null(a[[name]])) NA_real_ else as.numeric(a[[name]])
  chr <- function(name) if (is.null(a[[name]])) "" else as.character(a[[name]])
  tibble(id = claim$id, paper = claim$paper, source = claim$source, text = claim$text,
         reading = claim$reading, lexicon = claim$lexicon, departure = claim$departure,
         min_duration_s = claim$min_duration_s, experiment = claim$experiment, point = claim$point,
         aggregate = if (claim$kind == "trend") "trend" else claim$aggregate,
         by = claim$by, window = claim$window, metric = claim$metric, args = claim$args,
         kind = claim$kind, op = claim$op, published = claim$published, unit = claim$unit,
         n = as.integer(n), n_runs = as.integer(a$n_runs %||% NA), n_points = as.integer(a$n_points %||% 0L),
         mean = num("value"), ci_lo = num("lo"), ci_hi = num("hi"), sd = num("sd"),
         min = num("min"), max = num("max"), at = chr("at"),
         accept_lo = num("accept_lo"), accept_hi = num("accept_hi"),
         rel_diff_pct = if (claim$kind == "exact") 100 * (num("value") - claim$published) / abs(claim$published) else NA_real_,
         direction = claim$direction, direction_holds = if (n == 0) NA else a$holds,
         direction_points = chr("direction_points"),
         match_status = chr("match_status"), direction_status = chr("dir_status"),
         verdict = verdict,
         strength = claim_strength(verdict, n, chr("match_status"), if (is.null(a$dir_status)) NA else a$dir_status),
         ref_experiment = claim$ref_experiment, ref_point = claim$ref_point, relation = claim$relation,
         note = paste(notes, collapse = "; "),
         points_read = paste(sort(a$read %||% character()), collapse = ";"),
         warmup_s = warmup_s, tolerance_pct = 100 * TOLERANCE)
}

evaluate_claims <- function(claims, runs, warmup_s = DEFAULT_WARMUP_S) {
  bind_rows(lapply(seq_len(nrow(claims)), function(i) evaluate_claim(claims[i, ], runs, warmup_s)))
}
