# analysis/lib/power.R -- can each claim pass and can it fail? The verdict rule of
# verdict.R (match_band, aggregate_points, aggregate_trend, claim_verdict) applied to
# synthetic measured values, without runs.
#
# What:    claim_power(claim, band) builds, for one claims row, the per-point
#          statistics evaluate_claim() would build from runs, at two kinds of value:
#            AGREE       the published number (exact), or a value clearly on the
#                        stated side of a bound: the number moved by half the
#                        contradiction distance below; the direction, if any,
#                        holds; a trend's points ordered as stated.
#                        The verdict must be "reproduced".
#            CONTRADICT  the published number moved by HALF ITS CONTRADICTION
#                        DISTANCE, to each side that stays on the scale (exact), or
#                        to the other side of the bound; a percentage change also
#                        with its sign reversed; a trend's points in the opposite
#                        order. The verdict must not be "reproduced": with the
#                        direction holding (only the value contradicts the
#                        sentence) the rule may say "qualitatively reproduced";
#                        with the direction failing too it must say "not
#                        reproduced".
#          The contradiction distance is stated here, apart from the band rule it
#          tests (changing match_band() does not move it):
#            unbounded quantity       |v| (v/2 and 3v/2 contradict "v"); a bound
#                                     at 0 is a sign: one unit of the metric
#            percentage change        max(|v|, 15) points (a change below the
#                                     15 % the lexicon calls "significant" is
#                                     contradicted by 7.5 points)
#            share, utilisation       max(min(s, 100 - s), 10) points (95 % is
#                                     contradicted by 90 %; 50 % by 25 and 75 %)
#            Jain's index             max(1 - J, 0.1) (0.99 by 0.94; 0.84 by
#                                     0.76 and 0.92)
#            time on the run's clock  its distance from the event it follows
#                                     (clock_origin(), from the experiment's spec:
#                                     a flow's join or another's departure, the
#                                     previous ProbeRTT) plus the printed
#                                     resolution ("64 s" one second after a
#                                     departure is contradicted by 63 and 65 s)
#          Relative claims on shares and indices are placed on the share or index
#          the relation predicts from a synthetic reference (POWER_REF: a Jain
#          index of 0.8, a share of 40 %, lowered so that the prediction stays on
#          the scale), as match_band() places them.
# Inputs:  a claims row as read_claims() returns it; band: "rule" (match_band), or
#          the flat bands the rule replaced, "flat15" (15 % of the measured
#          quantity) and "flat50" (50 %), to show that the test catches them.
# Outputs: a one-row tibble: id, verdict at agreement, at contradiction (value only,
#          and value with direction), the values used, and ok (passes both ways).

POWER_CHANGE_FLOOR <- 15        # percentage points
POWER_FLOOR <- c(share = 10, index = 0.1)
POWER_REF <- c(share = 40, index = 0.8)
SCALE_TOP <- c(share = 100, index = 1)

# Distance from the scale's reference point that half of contradicts a number.
power_distance <- function(x, scale, change = FALSE) {
  if (scale == "share") return(max(min(x, 100 - x), POWER_FLOOR[["share"]]))
  if (scale == "index") return(max(1 - x, POWER_FLOOR[["index"]]))
  if (change) return(max(abs(x), POWER_CHANGE_FLOOR))
  if (x == 0) return(1)
  abs(x)
}

clip_scale <- function(x, scale, change = FALSE) {
  if (scale %in% names(SCALE_TOP)) return(min(max(x, 0), SCALE_TOP[[scale]]))
  if (change) return(max(x, -100))
  x
}

# A run without data whose flows and length are the experiment's spec's (enough for
# the clock events of CLOCK_EVENTS): mininet/specs/<paper>/<experiment>.yaml.
spec_run <- function(experiment, specs_dir) {
  path <- Sys.glob(file.path(specs_dir, "*", paste0(experiment, ".yaml")))
  if (length(path) != 1) stop("no single spec for experiment ", experiment, " below ", specs_dir)
  spec <- yaml::read_yaml(path)
  flows <- lapply(seq_along(spec$flows), function(i) c(spec$flows[[i]], flow = i))
  list(meta = list(flows = flows, spec = list(duration_s = spec$duration_s)), goodput = tibble())
}

# The domain a claim's number is placed in: X (the published number on its scale) and
# the map from an X back to the measured quantity q (what evaluate_claim compares).
power_domain <- function(claim) {
  scale <- claim_scale(claim)
  relative <- claim$ref_point != ""
  v <- claim$published
  if (!relative)
    return(list(x = v, scale = scale, change = FALSE, ref = NA_real_, to_q = function(x) x))
  r <- to_measured(v, claim$relation)
  if (scale != "") {
    top <- SCALE_TOP[[scale]]
    ref <- POWER_REF[[scale]]
    if (r > 0 && r * ref > 0.9 * top) ref <- 0.9 * top / r
    return(list(x = r * ref, scale = scale, change = FALSE, ref = ref, to_q = function(x) x / ref))
  }
  change <- claim$relation %in% c("pct_change", "pct_reduction")
  list(x = v, scale = "", change = change, ref = NA_real_,
       to_q = function(x) to_measured(x, claim$relation))
}

# The band of one synthetic point under a band variant.
power_band <- function(claim, ref_mean, band, origin = NA_real_) {
  q_pub <- to_measured(claim$published, claim$relation)
  switch(band,
    rule = match_band(claim, ref_mean, origin),
    flat15 = q_pub + c(-1, 1) * 0.15 * abs(q_pub),
    flat50 = q_pub + c(-1, 1) * 0.50 * abs(q_pub),
    stop("band must be rule, flat15 or flat50: ", band))
}

# A synthetic point: q (measured quantity) with the direction's outcome, as
# point_stats() returns it (three runs, no spread: the interval is degenerate).
synthetic_point <- function(claim, q, ref_mean, holds, band, name = "base", origin = NA_real_) {
  value <- to_display(q, claim$relation)
  list(point = name, label = name, n = 3L, n_runs = 3L, read = name,
       band = if (claim$kind == "exact" || banded_bound(claim)) power_band(claim, ref_mean, band, origin)
              else c(NA_real_, NA_real_),
       q = q, q_lo = q, q_hi = q, value = value, lo = value, hi = value,
       sd = 0, min = value, max = value, x = rep(value, 3),
       dir = list(holds = holds, status = if (holds) "all" else "none"), notes = character())
}

power_verdict_points <- function(claim, q, ref_mean, holds, band, origin = NA_real_) {
  n_pts <- if (claim$aggregate == "") 1L else 3L
  stats <- lapply(seq_len(n_pts), function(k)
    synthetic_point(claim, q, ref_mean, holds, band, name = sprintf("p=%d", k), origin = origin))
  a <- aggregate_points(claim, stats)
  claim_verdict(a$n, a$matches, if (claim$direction == "") NA else a$holds)
}

power_verdict_trend <- function(claim, rising) {
  stats <- lapply(1:4, function(k) {
    v <- if (rising) 1 + 0.25 * k else 2 - 0.25 * k
    p <- synthetic_point(claim, to_measured(v, claim$relation), NA_real_, TRUE, "rule",
                         name = sprintf("%s=%d", claim$by, k))
    p$x <- v + c(-0.01, 0, 0.01)
    p
  })
  a <- aggregate_trend(claim, stats)
  claim_verdict(a$n, a$matches, a$holds)
}

claim_power <- function(claim, band = "rule", specs_dir = "mininet/specs") {
  has_dir <- claim$direction != ""
  row <- function(agree, agree_v, contra, contra_v, contra_dir) {
    ok <- agree == "reproduced" && all(contra != "reproduced") && contra_dir == "not reproduced"
    tibble(id = claim$id, paper = claim$paper, kind = claim$kind, band = band,
           agree = agree, agree_value = agree_v,
           contradict = paste(unique(contra), collapse = "/"), contradict_value = contra_v,
           contradict_with_direction = contra_dir, ok = ok, power_exempt = claim$power_exempt %||% "")
  }
  if (claim$kind == "trend") {
    up <- claim$op %in% c(">", ">=")
    agree <- power_verdict_trend(claim, up)
    contra <- power_verdict_trend(claim, !up)
    return(row(agree, if (up) "rising" else "falling", contra, if (up) "falling" else "rising", contra))
  }
  d <- power_domain(claim)
  dist <- power_distance(d$x, d$scale, d$change)
  origin <- NA_real_
  if (claim$kind == "exact" && clock_instant(claim)) {
    origin <- clock_origin(claim, list(spec_run(claim$experiment, specs_dir)))
    dist <- abs(d$x - origin) + 2 * printed_half_resolution(claim$value)
  }
  at <- function(x, holds) power_verdict_points(claim, d$to_q(x), d$ref, holds, band, origin)
  fmt <- function(x) paste(signif(x, 4), collapse = " ")
  if (claim$kind == "exact") {
    xs <- unique(vapply(c(-1, 1), function(s) clip_scale(d$x + s * dist / 2, d$scale, d$change), 0))
    if (d$change && claim$published != 0) xs <- unique(c(xs, -d$x))
    xs <- xs[abs(xs - d$x) > 1e-9]
    agree_x <- d$x
  } else {
    side <- if (claim$op %in% c(">", ">=")) 1 else -1
    agree_x <- clip_scale(d$x + side * dist / 2, d$scale, d$change)
    xs <- clip_scale(d$x - side * dist / 2, d$scale, d$change)
  }
  agree <- at(agree_x, TRUE)
  contra <- vapply(xs, at, "", holds = TRUE)
  if (length(xs) == 0) contra <- "reproduced"   # nowhere on the scale to contradict it
  contra_dir <- if (length(xs)) at(xs[1], !has_dir) else "reproduced"
  if (!has_dir) contra_dir <- contra[1]
  to_disp <- function(x) to_display(d$to_q(x), claim$relation)
  row(agree, fmt(to_disp(agree_x)), contra, fmt(vapply(xs, to_disp, 0)), contra_dir)
}

claims_power <- function(claims, band = "rule", specs_dir = "mininet/specs") {
  bind_rows(lapply(seq_len(nrow(claims)), function(i) claim_power(claims[i, ], band, specs_dir)))
}
