# analysis/lib/transfer_length.R -- the evidence of the shortened-transfer rule
# (docs/specs.md, "Transfer length"): does a claim measure the same over the first T
# seconds of a full-length transfer as over the whole of it?
#
# What:    truncate_run(run, t_end)  a run as if it had ended at t_end (its tidy tables cut
#                                    at t_end, its duration and its flows' stops capped), the
#                                    stand-in for a t_end-s run with the same seed: on the
#                                    virtual clock the first t_end s of a longer run and a
#                                    t_end-s run are byte-identical
#                                    (bench/results/deep-buffer-2026-11-26.md);
#          convergence_band(claim, v) the interval a value over T must lie in, around the
#                                    value v over the full transfer;
#          control_checks(claims, controls, runs, candidates, warmup_s)
#                                    one row per claim x control run x candidate T;
#          control_coverage(controls, runs, candidates) valid full-length runs per control point;
#          accepted_durations(checks, coverage, candidates, reps) per experiment and candidate,
#                                    whether it is accepted and the shortest accepted one;
#          prefix_checks(claims, controls, runs, short, warmup_s)
#                                    the runs a shortened spec made against the first T s of
#                                    the control runs with the same seeds (step 2's stand-in).
# Inputs:  claims as read_claims() reads them; controls: data frame (experiment, point) of
#          point selectors (claims/utsumi2022_controls.csv); runs: read_runs().
#
# THE READING (fixed before any control run was looked at):
# - Every claim that reads an experiment is checked at every control point of that
#   experiment, with the claim's own metric, arguments and window (the steady state cut
#   at T, or 0..T for a 0..end window). A claim's value at a point it does not select
#   still shows whether its metric has settled by T at the slowest-converging point.
# - A bound claim on a single point's value (no reference point): the value over T is on
#   the same side of the bound as the value over the full transfer.
# - Every other claim (exact, trend, or a ratio to a reference point, whose reference is
#   not a control run): the value over T lies inside the Verdict band of its metric's scale
#   around the value over the full transfer (claims/README.md "The band of an exact
#   claim": 15 % of the value's distance from its scale's reference -- 1 - J for an
#   index, min(s, 100 - s) for a share -- plus the scale's resolution; 15 % of |v| for an
#   unbounded metric).
# - A value that cannot be computed over T or over the full transfer fails the check.
# - T is accepted for an experiment when every check of every claim, control run and seed
#   holds; otherwise the experiment keeps its full length.

# A run cut at t_end seconds.
truncate_run <- function(run, t_end) {
  if (!is.finite(t_end) || t_end <= 0) stop("truncate_run: t_end must be a positive number of seconds")
  if (t_end > run_end_s(run) + EPS_S) stop(sprintf("truncate_run: run %s ends at %s s, before %s s",
                                                   run$dir, format(run_end_s(run)), format(t_end)))
  run$meta$spec$duration_s <- t_end
  run$meta$flows <- lapply(run$meta$flows, function(f) {
    if (!is.null(f$stop_s) && f$stop_s > t_end) f$stop_s <- t_end
    f
  })
  for (name in names(TIDY_COLS)) {
    tab <- run[[name]]
    if (is.data.frame(tab) && nrow(tab) && "t_s" %in% names(tab)) run[[name]] <- tab[tab$t_s <= t_end + EPS_S, ]
  }
  run
}

# The side of the bound: TRUE when `v op bound` holds.
bound_side <- function(v, claim) match.fun(claim$op)(v, claim$published)

# Interval around v (the value over the full transfer) that a value over T must lie in.
convergence_band <- function(claim, v) {
  scale <- claim_scale(claim)
  dist <- max(switch(scale, share = min(v, 100 - v), index = 1 - v, abs(v)), 0)
  res <- if (scale == "") 0 else SCALE_RESOLUTION[[scale]]
  tol <- TOLERANCE * dist + res
  c(v - tol, v + tol)
}

# Whether value v reads as the reference value ref does, under the rule's reading: the same side
# of the bound for a bound claim on one point's value, else v inside the band around ref.
# list(test, band, holds); a value that cannot be computed never holds.
agrees <- function(claim, v, ref) {
  single_bound <- claim$kind == "bound" && claim$ref_point == ""
  band <- if (is.na(ref)) c(NA_real_, NA_real_) else convergence_band(claim, ref)
  holds <- if (is.na(ref) || is.na(v)) FALSE
    else if (single_bound) bound_side(v, claim) == bound_side(ref, claim)
    else in_band(v, band)
  list(test = if (single_bound) "same side" else "band", band = band, holds = holds)
}

# One check: the claim's metric on one control run, over T and over the full transfer.
check_one <- function(claim, run, t_end, warmup_s) {
  call <- claim_call(claim)
  full <- run_value(call, run, claim$window, warmup_s)
  short <- run_value(call, truncate_run(run, t_end), claim$window, warmup_s)
  a <- agrees(claim, short, full)
  id <- claim$id            # (tibble() sees its own earlier columns: `claim` would shadow the row)
  metric <- claim$metric
  tibble(claim = id, metric = metric, test = a$test,
         full_s = run_end_s(run), t_s = t_end, value_full = as.numeric(full), value_t = as.numeric(short),
         band_lo = a$band[1], band_hi = a$band[2], holds = a$holds)
}

# The valid runs of control point i (its experiment, its selector).
control_runs <- function(controls, i, runs) {
  idx <- runs$index
  pick <- idx$experiment == controls$experiment[i] &
    vapply(idx$point, point_matches, TRUE, selector = controls$point[i])
  valid_runs(runs$runs[pick])
}

# Every check: claims x control runs (valid, at their full length) x candidates.
control_checks <- function(claims, controls, runs, candidates, warmup_s = DEFAULT_WARMUP_S) {
  rows <- list()
  for (i in seq_len(nrow(controls))) {
    exp <- controls$experiment[i]
    for (run in control_runs(controls, i, runs)) for (j in which(claims$experiment == exp)) for (t_end in candidates) {
      if (t_end >= run_end_s(run) - EPS_S) next
      rows[[length(rows) + 1]] <- bind_cols(
        tibble(experiment = exp, control = controls$point[i], point = run$key$point,
               label = point_label(run$meta), repetition = run$key$repetition),
        check_one(claims[j, ], run, t_end, warmup_s))
    }
  }
  empty <- tibble(experiment = character(), control = character(), point = character(),
                  label = character(), repetition = integer(), claim = character(), metric = character(),
                  test = character(), full_s = numeric(), t_s = numeric(), value_full = numeric(),
                  value_t = numeric(), band_lo = numeric(), band_hi = numeric(), holds = logical())
  bind_rows(empty, rows)
}

# Valid full-length runs (longer than every candidate) per control point: data frame
# (experiment, control, runs).
control_coverage <- function(controls, runs, candidates) {
  n <- vapply(seq_len(nrow(controls)), function(i) {
    length(Filter(function(r) run_end_s(r) > max(candidates) + EPS_S, control_runs(controls, i, runs)))
  }, 0L)
  tibble(experiment = controls$experiment, control = controls$point, runs = n)
}

# Per experiment and candidate T: control points with all `reps` seeds, checks, failures,
# and whether T is accepted: every control point has its seeds, every check at T and at
# every longer candidate holds. chosen_s: the shortest accepted T (NA: keeps its length).
accepted_durations <- function(checks, coverage, candidates, reps) {
  cov <- coverage %>% group_by(experiment) %>%
    summarise(control_points = n(), complete_points = sum(runs >= reps), .groups = "drop")
  grid <- as_tibble(expand.grid(experiment = cov$experiment, t_s = sort(candidates),
                                stringsAsFactors = FALSE))
  summ <- checks %>% group_by(experiment, t_s) %>%
    summarise(checks = n(), failed = sum(!holds), .groups = "drop")
  grid %>% left_join(cov, by = "experiment") %>% left_join(summ, by = c("experiment", "t_s")) %>%
    mutate(checks = coalesce(checks, 0L), failed = coalesce(failed, 0L),
           holds = complete_points == control_points & checks > 0 & failed == 0) %>%
    arrange(experiment, t_s) %>% group_by(experiment) %>%
    mutate(accepted = rev(cumall(rev(holds))),
           chosen_s = if (any(accepted)) min(t_s[accepted]) else NA_real_) %>%
    ungroup() %>% select(-holds)
}

# ---- the shortened runs against their controls' prefixes ---------------------------------
# Step 2 of the rule stands a control run's first T s in for a T-s run with the same seed.
# prefix_checks() checks that on the runs a shortened spec really made: for every valid run of a
# control point shorter than the control run with the same seed (`short`: read_runs() of the
# paper profile's runs), every claim reading its experiment, with its own metric and window, on the
# run as it ran and on the control run cut at the run's length. It holds when the two values are
# inside each other's reading: the same side of the bound for a bound claim on one point's value,
# else the run's value inside the Verdict band around the prefix's (agrees()).
prefix_checks <- function(claims, controls, runs, short, warmup_s = DEFAULT_WARMUP_S) {
  rows <- list()
  for (i in seq_len(nrow(controls))) {
    exp <- controls$experiment[i]
    full <- control_runs(controls, i, runs)
    for (run in control_runs(controls, i, short)) {
      twin <- Filter(function(f) f$key$point == run$key$point && f$key$repetition == run$key$repetition &&
                       run_end_s(f) > run_end_s(run) + EPS_S, full)
      if (length(twin) == 0) next
      cut <- truncate_run(twin[[1]], run_end_s(run))
      for (j in which(claims$experiment == exp)) {
        claim <- claims[j, ]
        call <- claim_call(claim)
        v_run <- run_value(call, run, claim$window, warmup_s)
        v_pre <- run_value(call, cut, claim$window, warmup_s)
        a <- agrees(claim, v_run, v_pre)
        rows[[length(rows) + 1]] <- tibble(
          experiment = exp, point = run$key$point, label = point_label(run$meta),
          repetition = run$key$repetition, t_s = run_end_s(run), claim = claim$id,
          value_run = as.numeric(v_run), value_prefix = as.numeric(v_pre),
          test = a$test, holds = a$holds)
      }
    }
  }
  empty <- tibble(experiment = character(), point = character(), label = character(),
                  repetition = integer(), t_s = numeric(), claim = character(), value_run = numeric(),
                  value_prefix = numeric(), test = character(), holds = logical())
  bind_rows(empty, rows)
}
