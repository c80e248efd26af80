# analysis/lib/metrics.R -- per-run metrics and their aggregation over repetitions.
#
# What:    metric functions of ONE run object (from read_run()), each returning one
#          number; aggregate_valid() summarises a per-run value over valid runs.
# Inputs:  run objects from analysis/lib/tidy.R.
# Outputs: numbers / tibbles.
#
# STEADY-STATE RULE (the only one; every steady-state metric uses steady_window()):
#   steady state starts warmup_s seconds after the LAST flow has started and ends
#   when the FIRST flow stops (a flow without stop_s runs to spec.duration_s, else
#   to the last goodput sample). warmup_s defaults to DEFAULT_WARMUP_S = 10 s;
#   quick profiles may pass a smaller value.
#   A goodput bin counts when it lies entirely inside the window
#   (t_s - interval_s >= start and t_s <= end); tcp and queue samples count when
#   start <= t_s <= end.
#
# Metrics usable in claims files (METRICS); all take the run first, then named
# arguments, and accept warmup_s (ignored by metrics not tied to steady state):
#   ss_goodput_mbps(run, flow)  mean goodput of a flow in steady state, Mbit/s
#                               (sum of bytes / sum of bin lengths)
#   ss_share_pct(run, flow)     that flow's goodput / all flows' goodput, %
#   ss_total_mbps(run)          sum of all flows' steady-state goodput, Mbit/s
#   ss_jain(run)                Jain's fairness index over the flows' goodputs
#   ss_qdelay_ms(run)           mean bottleneck queueing delay (queue.csv qdelay_ms)
#   retrans_pkts(run, flow)     retransmitted segments of the flow over its whole
#                               life: last minus first retrans_total in tcp.csv

suppressPackageStartupMessages(library(dplyr))

DEFAULT_WARMUP_S <- 10
EPS_S <- 1e-6  # slack for float time stamps at the window edges

METRICS <- c("ss_goodput_mbps", "ss_share_pct", "ss_total_mbps", "ss_jain",
             "ss_qdelay_ms", "retrans_pkts")

steady_window <- function(run, warmup_s = DEFAULT_WARMUP_S) {
  flows <- flows_table(run$meta)
  stops <- flows$stop_s
  end_default <- run$meta$spec$duration_s %||% max(run$goodput$t_s, -Inf)
  stops[is.na(stops)] <- end_default
  c(start = max(flows$start_s) + warmup_s, end = min(stops))
}

# Text of the rule with the numbers of a given warmup, for table notes.
steady_rule_text <- function(warmup_s = DEFAULT_WARMUP_S) {
  sprintf("Steady state: from %s s after the last flow starts until the first flow stops",
          format(warmup_s))
}

in_window_bins <- function(tab, w) tab$t_s - tab$interval_s >= w[["start"]] - EPS_S &
  tab$t_s <= w[["end"]] + EPS_S
in_window_samples <- function(tab, w) tab$t_s >= w[["start"]] - EPS_S &
  tab$t_s <= w[["end"]] + EPS_S

# Steady-state mean goodput of every flow of the run (flows without bins: NA).
ss_goodput_table <- function(run, warmup_s = DEFAULT_WARMUP_S) {
  w <- steady_window(run, warmup_s)
  flows <- flows_table(run$meta)
  if (w[["start"]] >= w[["end"]] || nrow(run$goodput) == 0)
    return(mutate(flows, goodput_mbps = NA_real_))
  means <- run$goodput[in_window_bins(run$goodput, w), ] %>%
    group_by(flow) %>%
    summarise(goodput_mbps = sum(bytes) * 8 / sum(interval_s) / 1e6, .groups = "drop")
  left_join(flows, means, by = "flow")
}

flow_value <- function(tab, column, flow) {
  v <- tab[[column]][tab$flow == flow]
  if (length(v) != 1) stop(sprintf("run has no flow %s", flow))
  v
}

ss_goodput_mbps <- function(run, flow, warmup_s = DEFAULT_WARMUP_S) {
  flow_value(ss_goodput_table(run, warmup_s), "goodput_mbps", flow)
}

ss_total_mbps <- function(run, warmup_s = DEFAULT_WARMUP_S) {
  sum(ss_goodput_table(run, warmup_s)$goodput_mbps)
}

ss_share_pct <- function(run, flow, warmup_s = DEFAULT_WARMUP_S) {
  100 * ss_goodput_mbps(run, flow, warmup_s) / ss_total_mbps(run, warmup_s)
}

jain_index <- function(x) sum(x)^2 / (length(x) * sum(x^2))

ss_jain <- function(run, warmup_s = DEFAULT_WARMUP_S) {
  jain_index(ss_goodput_table(run, warmup_s)$goodput_mbps)
}

ss_qdelay_ms <- function(run, warmup_s = DEFAULT_WARMUP_S) {
  w <- steady_window(run, warmup_s)
  if (nrow(run$queue) == 0) return(NA_real_)
  q <- run$queue$qdelay_ms[in_window_samples(run$queue, w)]
  if (length(q) == 0) NA_real_ else mean(q, na.rm = TRUE)
}

retrans_pkts <- function(run, flow, warmup_s = NULL) {
  if (nrow(run$tcp) == 0) return(NA_real_)
  s <- run$tcp[run$tcp$flow == flow & !is.na(run$tcp$retrans_total), ]
  if (nrow(s) == 0) return(NA_real_)
  s <- s[order(s$t_s), ]
  s$retrans_total[nrow(s)] - s$retrans_total[1]
}

# Mean, sd, n, min, max of `value` over the VALID rows only, per group.
# `tab` needs a logical column `valid`; groups with no valid row get n = 0.
aggregate_valid <- function(tab, value = "value", by = character()) {
  tab %>%
    group_by(across(all_of(by))) %>%
    summarise(n = sum(valid & !is.na(.data[[value]])),
              mean = if (n > 0) mean(.data[[value]][valid], na.rm = TRUE) else NA_real_,
              sd = if (n > 1) sd(.data[[value]][valid], na.rm = TRUE) else NA_real_,
              min = if (n > 0) min(.data[[value]][valid], na.rm = TRUE) else NA_real_,
              max = if (n > 0) max(.data[[value]][valid], na.rm = TRUE) else NA_real_,
              .groups = "drop")
}
