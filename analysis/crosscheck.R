#!/usr/bin/env Rscript
# analysis/crosscheck.R -- the same runs on two backends, metric by metric
# (the backend cross-check: `snakemake crosscheck`, docs/native-backend.md).
#
# Usage:   Rscript analysis/crosscheck.R <runs_a> <runs_b> <out.csv> [warmup_s] [label_a,label_b]
#          labels default to "uml,native"; warmup_s to 10 (analysis/lib/metrics.R).
# Inputs:  two run trees (e.g. results/crosscheck/uml/runs, results/crosscheck/native/runs),
#          read through analysis/lib/ (run.json and tidy/*.csv only). Runs are paired by
#          experiment and sweep point; a side's value is the mean over its VALID
#          repetitions (invalid and failed runs are counted, never averaged in).
# Outputs: <out.csv>: one row per experiment, point, flow and metric: both values, the
#          difference (b - a), the allowed spread and whether the difference lies within
#          it; <out>.md the same as a Markdown table, which is also printed to stdout,
#          with a last line counting the metrics within the spread. Written atomically.
#          Exit status 0 when the comparison was made (differences beyond the spread are
#          reported, not an error); 1 when no experiment has valid runs on both sides.
#
# Metrics (steady state, analysis/lib/metrics.R):
#   goodput_mbps  per flow   ss_goodput_mbps
#   share_pct     per flow   ss_share_pct (runs of two or more flows)
#   rtt_ms        per flow   ss_rtt_ms: mean smoothed RTT of the sender's socket
#   qdelay_ms     per run    ss_qdelay_ms: mean bottleneck queueing delay
#   util_pct      per run    ss_link_util_pct: bottleneck dequeue rate / configured rate
#
# SPREAD (what "within" means): the largest difference measured between two
# independent uml runs (virtual clock) of one configuration, rounded up to the next
# half unit. On the virtual clock two independent runs are two seeds:
# bench/seed_spread.py runs five configurations of Ma et al.'s quick profile (Figs. 3
# at 10 and 100 Mbit/s, 5 at 10 vs 100 ms, 6 with one and five 10-ms flows; 30-s
# runs, two to six BBR flows) with three seeds and compares every pair with this
# script (bench/results/seed-spread-2026-11-28.md): per-flow goodput differed by up to
# 2.4 % of the bottleneck rate, shares by up to 2.53 percentage points, utilisation
# by 0.15 points, mean RTT and queueing delay by at most 0.81 of the delay spread
# below. (First measured before runs were seeded, on five pairs of runs of one
# configuration in two specs: 2.1 %, 2.1 points, 0.6 points, 12.4 % of the queueing
# delay; the share spread was 2.5 points then.)
SPREAD_GOODPUT_FRAC_OF_RATE <- 0.025   # per-flow goodput: 2.5 % of the bottleneck rate
SPREAD_SHARE_PP <- 3.0                 # share: 3 percentage points
SPREAD_UTIL_PP <- 1.0                  # utilisation: 1 percentage point
SPREAD_DELAY_FLOOR_MS <- 1.0           # RTT, queueing delay: 1 ms (the base_rtt check's tolerance)
SPREAD_DELAY_FRAC <- 0.15              #   plus 15 % of the mean queueing delay of the two sides

script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "lib", "load.R"), chdir = TRUE)

# One value per flow (or NA flow for run metrics) and metric of one run.
run_metrics <- function(run, warmup_s) {
  flows <- flows_table(run$meta)
  rate <- run$meta$bottleneck$rate_mbps
  per_flow <- bind_rows(lapply(flows$flow, function(f) {
    rtt <- ss_rtt_ms(run, f, warmup_s = warmup_s)
    base <- flows$rtt_ms[flows$flow == f]
    rows <- tibble(flow = f, metric = c("goodput_mbps", "rtt_ms"),
                   value = c(ss_goodput_mbps(run, f, warmup_s = warmup_s), rtt),
                   queueing_ms = c(NA, rtt - base))
    if (nrow(flows) > 1)
      rows <- bind_rows(rows, tibble(flow = f, metric = "share_pct",
                                     value = ss_share_pct(run, f, warmup_s = warmup_s), queueing_ms = NA))
    rows
  }))
  qd <- ss_qdelay_ms(run, warmup_s = warmup_s)
  bind_rows(per_flow, tibble(flow = NA_integer_, metric = c("qdelay_ms", "util_pct"),
                             value = c(qd, ss_link_util_pct(run, warmup_s = warmup_s)),
                             queueing_ms = c(qd, NA))) %>%
    mutate(rate_mbps = rate)
}

# Per experiment, point, flow and metric: the mean over the side's valid runs.
side_metrics <- function(root, warmup_s) {
  runs <- read_runs(root)
  idx <- runs$index
  counts <- idx %>% group_by(experiment, point) %>%
    summarise(n_valid = sum(verdict == "valid"), n_runs = n(), .groups = "drop")
  valid <- runs$runs[idx$verdict == "valid"]
  vals <- bind_rows(lapply(valid, function(r) mutate(run_metrics(r, warmup_s),
                                                     experiment = r$key$experiment, point = r$key$point)))
  if (nrow(vals) == 0)
    vals <- tibble(experiment = character(), point = character(), flow = integer(),
                   metric = character(), value = double(), queueing_ms = double(), rate_mbps = double())
  vals <- vals %>% group_by(experiment, point, flow, metric) %>%
    summarise(value = mean(value), queueing_ms = mean(queueing_ms), rate_mbps = first(rate_mbps),
              .groups = "drop")
  list(values = vals, counts = counts)
}

spread_of <- function(metric, rate_mbps, queueing_a, queueing_b) {
  delay <- SPREAD_DELAY_FLOOR_MS + SPREAD_DELAY_FRAC * pmax(0, (queueing_a + queueing_b) / 2)
  dplyr::case_when(metric == "goodput_mbps" ~ SPREAD_GOODPUT_FRAC_OF_RATE * rate_mbps,
                   metric == "share_pct" ~ SPREAD_SHARE_PP,
                   metric == "util_pct" ~ SPREAD_UTIL_PP,
                   metric %in% c("rtt_ms", "qdelay_ms") ~ delay,
                   TRUE ~ NA_real_)
}

compare <- function(a, b, labels) {
  keys <- c("experiment", "point", "flow", "metric")
  joined <- full_join(a$values, b$values, by = keys, suffix = c("_a", "_b"))
  counts <- full_join(a$counts, b$counts, by = c("experiment", "point"), suffix = c("_a", "_b"))
  if (nrow(joined) == 0) return(joined)
  out <- joined %>%
    left_join(counts, by = c("experiment", "point")) %>%
    mutate(rate_mbps = coalesce(rate_mbps_a, rate_mbps_b),
           diff = value_b - value_a,
           spread = spread_of(metric, rate_mbps, queueing_ms_a, queueing_ms_b),
           within = ifelse(is.na(diff), NA, abs(diff) <= spread + 1e-9),
           n_valid_a = coalesce(n_valid_a, 0L), n_valid_b = coalesce(n_valid_b, 0L),
           note = case_when(n_valid_a == 0 ~ paste("no valid run on", labels[1]),
                            n_valid_b == 0 ~ paste("no valid run on", labels[2]),
                            is.na(diff) ~ "not computable",
                            TRUE ~ "")) %>%
    arrange(experiment, point, is.na(flow), flow, metric)
  unit <- c(goodput_mbps = "Mbit/s", share_pct = "%", rtt_ms = "ms", qdelay_ms = "ms", util_pct = "%")
  tibble(experiment = out$experiment, point = out$point, flow = out$flow, metric = out$metric,
         unit = unname(unit[out$metric]), a = out$value_a, b = out$value_b, diff = out$diff,
         spread = out$spread, within = out$within, n_valid_a = out$n_valid_a,
         n_valid_b = out$n_valid_b, note = out$note)
}

markdown <- function(tab, labels) {
  f <- function(x) ifelse(is.na(x), "--", formatC(x, digits = 2, format = "f"))
  header <- c(sprintf("| experiment | point | flow | metric | %s | %s | difference (%s - %s) | spread | within |",
                      labels[1], labels[2], labels[2], labels[1]),
              "|---|---|---|---|---|---|---|---|---|")
  rows <- sprintf("| %s | %s | %s | %s | %s | %s | %s | %s | %s |",
                  tab$experiment, tab$point, ifelse(is.na(tab$flow), "all", tab$flow),
                  paste0(tab$metric, " (", tab$unit, ")"), f(tab$a), f(tab$b),
                  ifelse(is.na(tab$diff), tab$note, sprintf("%+.2f", tab$diff)), sprintf("±%s", f(tab$spread)),
                  ifelse(is.na(tab$within), "--", ifelse(tab$within, "yes", "NO")))
  compared <- sum(!is.na(tab$within))
  c(header, rows, "",
    sprintf("%d of %d compared metrics within the run-to-run spread (%s vs %s; %d not comparable).",
            sum(tab$within, na.rm = TRUE), compared, labels[1], labels[2], sum(is.na(tab$within))))
}

if (sys.nframe() == 0) {
  args <- script_args("crosscheck.R <runs_a> <runs_b> <out.csv> [warmup_s] [label_a,label_b]", 3)
  warmup_s <- if (length(args) >= 4) as.numeric(args[4]) else DEFAULT_WARMUP_S
  labels <- if (length(args) >= 5) strsplit(args[5], ",", fixed = TRUE)[[1]] else c("uml", "native")
  if (length(labels) != 2) stop("labels must be two names separated by a comma: ", args[5])
  for (root in args[1:2]) if (!dir.exists(root)) stop("no run tree at ", root)
  tab <- compare(side_metrics(args[1], warmup_s), side_metrics(args[2], warmup_s), labels)
  if (nrow(tab) == 0 || !any(!is.na(tab$within))) {
    message(sprintf("crosscheck: no experiment has valid runs in both %s and %s", args[1], args[2]))
    if (nrow(tab) > 0) writeLines(markdown(tab, labels))
    quit(status = 1)
  }
  csv <- tab
  names(csv) <- sub("^a$", labels[1], sub("^b$", labels[2], names(csv)))
  names(csv) <- sub("^n_valid_a$", paste0("n_valid_", labels[1]),
                    sub("^n_valid_b$", paste0("n_valid_", labels[2]), names(csv)))
  write_csv_atomic(csv, args[3])
  md <- markdown(tab, labels)
  write_atomic(md, paste0(sub("\\.csv$", "", args[3]), ".md"))
  writeLines(md)
}
