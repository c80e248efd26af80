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
#                               life: last minus first retrans_total in tcp.csv;
#                               with per_s = S: its count over a life of S seconds,
#                               so runs shorter than the paper's compare with its
#                               counts: the count until the steady state starts
#                               plus the steady-state retransmission rate times the
#                               rest of the S seconds (= the whole-life count when
#                               the flow lives S seconds and the steady state lasts
#                               to its end)
#   ss_goodput_ratio(run, num, den)  steady-state goodput of flow `num` / flow `den`
#   ss_share_rtt_pct(run, rtt_ms)    mean per-flow share (%) of the flows whose
#                               configured base RTT is rtt_ms (Figs. 6, 16)
#   win_goodput_mbps(run, flow, from_s, to_s)  mean goodput of a flow over the
#                               bins inside [from_s, to_s] (a fixed window, NOT the
#                               steady state: for runs whose conditions change)
#   win_share_pct(run, flow, from_s, to_s)     that flow's share in the window, %
#   rampup_s(run, flow, frac)   seconds from the first departure of another flow
#                               until `flow` reaches frac (default 0.9) of the
#                               bottleneck rate: the first 100-ms bin after the
#                               departure whose centred 3-bin (300-ms) moving mean
#                               is >= frac * rate, measured at the bin's centre
#   gain_time_pct(run, flow, gain)  % of the flow's steady-state socket samples
#                               whose BBR pacing gain equals `gain` (+- 0.01):
#                               the fraction of time spent in that phase
#   ss_queue_share_pct(run, flow)   the flow's mean bottleneck backlog / all flows'
#                               mean backlog in steady state, % (flow_queue.csv:
#                               runs with `capture: bottleneck` only, else NA)
#   probe_rtt_queue_share_pct(run, flow, during)  the flow's share of the backlog
#                               over the queue samples taken while flow `during` is
#                               in ProbeRTT (a ProbeRTT socket sample stands for the
#                               interval up to the next sample): 100 * sum of the
#                               flow's backlog / sum of the total backlog, %, so
#                               nearly empty queues weigh little; whole run

suppressPackageStartupMessages(library(dplyr))

DEFAULT_WARMUP_S <- 10
EPS_S <- 1e-6  # slack for float time stamps at the window edges

METRICS <- c("ss_goodput_mbps", "ss_share_pct", "ss_total_mbps", "ss_jain",
             "ss_qdelay_ms", "retrans_pkts", "ss_goodput_ratio", "ss_share_rtt_pct",
             "win_goodput_mbps", "win_share_pct", "rampup_s", "gain_time_pct",
             "ss_queue_share_pct", "probe_rtt_queue_share_pct")

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

retrans_pkts <- function(run, flow, warmup_s = NULL, per_s = NULL) {
  if (nrow(run$tcp) == 0) return(NA_real_)
  s <- run$tcp[run$tcp$flow == flow & !is.na(run$tcp$retrans_total), ]
  if (nrow(s) == 0) return(NA_real_)
  s <- s[order(s$t_s), ]
  count <- s$retrans_total[nrow(s)] - s$retrans_total[1]
  if (is.null(per_s)) return(count)
  w <- steady_window(run, warmup_s %||% DEFAULT_WARMUP_S)
  at <- function(t) stats::approx(s$t_s, s$retrans_total, xout = t, rule = 2)$y
  before <- at(w[["start"]]) - s$retrans_total[1]
  rate <- (at(w[["end"]]) - at(w[["start"]])) / (w[["end"]] - w[["start"]])
  before + rate * (per_s - (w[["start"]] - flow_life(run, flow)[["start"]]))
}

# Start and stop of one flow (stop: its stop_s, else the run's duration).
flow_life <- function(run, flow) {
  flows <- flows_table(run$meta)
  f <- flows[flows$flow == flow, ]
  if (nrow(f) != 1) stop(sprintf("run has no flow %s", flow))
  stop_s <- f$stop_s %|NA|% (run$meta$spec$duration_s %||% max(run$goodput$t_s, -Inf))
  c(start = f$start_s, stop = stop_s)
}

ss_goodput_ratio <- function(run, num, den, warmup_s = DEFAULT_WARMUP_S) {
  g <- ss_goodput_table(run, warmup_s)
  flow_value(g, "goodput_mbps", num) / flow_value(g, "goodput_mbps", den)
}

ss_share_rtt_pct <- function(run, rtt_ms, warmup_s = DEFAULT_WARMUP_S) {
  g <- ss_goodput_table(run, warmup_s)
  sel <- abs(g$rtt_ms - rtt_ms) < 1e-9
  if (!any(sel)) stop(sprintf("run has no flow with a %s-ms RTT", format(rtt_ms)))
  mean(100 * g$goodput_mbps[sel] / sum(g$goodput_mbps))
}

# Mean goodput of every flow over the bins inside a fixed window [from_s, to_s].
win_goodput_table <- function(run, from_s, to_s) {
  w <- c(start = from_s, end = to_s)
  flows <- flows_table(run$meta)
  if (nrow(run$goodput) == 0) return(mutate(flows, goodput_mbps = NA_real_))
  means <- run$goodput[in_window_bins(run$goodput, w), ] %>%
    group_by(flow) %>%
    summarise(goodput_mbps = sum(bytes) * 8 / sum(interval_s) / 1e6, .groups = "drop")
  left_join(flows, means, by = "flow") %>% mutate(goodput_mbps = goodput_mbps %|NA|% 0)
}

win_goodput_mbps <- function(run, flow, from_s, to_s, warmup_s = NULL) {
  flow_value(win_goodput_table(run, from_s, to_s), "goodput_mbps", flow)
}

win_share_pct <- function(run, flow, from_s, to_s, warmup_s = NULL) {
  g <- win_goodput_table(run, from_s, to_s)
  100 * flow_value(g, "goodput_mbps", flow) / sum(g$goodput_mbps)
}

rampup_s <- function(run, flow, frac = 0.9, warmup_s = NULL) {
  flows <- flows_table(run$meta)
  others <- flows$stop_s[flows$flow != flow & !is.na(flows$stop_s)]
  end <- flow_life(run, flow)[["stop"]]
  others <- others[others < end]
  if (length(others) == 0) stop("no other flow leaves before this one ends")
  t_leave <- min(others)
  g <- run$goodput[run$goodput$flow == flow, ]
  g <- g[order(g$t_s), ]
  mid <- g$t_s - g$interval_s / 2
  smooth <- stats::filter(g$goodput_mbps, rep(1 / 3, 3), sides = 2)
  rate <- run$meta$bottleneck$rate_mbps
  hit <- which(mid >= t_leave & !is.na(smooth) & smooth >= frac * rate)
  if (length(hit) == 0) return(NA_real_)
  mid[hit[1]] - t_leave
}

gain_time_pct <- function(run, flow, gain, warmup_s = DEFAULT_WARMUP_S) {
  w <- steady_window(run, warmup_s)
  s <- run$tcp[run$tcp$flow == flow & in_window_samples(run$tcp, w) &
                 !is.na(run$tcp$bbr_pacing_gain), ]
  if (nrow(s) == 0) return(NA_real_)
  100 * mean(abs(s$bbr_pacing_gain - gain) < 0.01)
}

# Per-flow backlog as a wide table: t_s, then one column per flow (packets), and
# total; zero rows without flow_queue.csv.
flow_backlog_wide <- function(run) {
  fq <- run$flow_queue
  if (is.null(fq) || nrow(fq) == 0) return(tibble(t_s = double(), total = double()))
  wide <- tidyr::pivot_wider(fq[, c("t_s", "flow", "backlog_pkts")], names_from = flow,
                             values_from = backlog_pkts, names_prefix = "f")
  wide$total <- rowSums(wide[, setdiff(names(wide), "t_s"), drop = FALSE])
  wide
}

ss_queue_share_pct <- function(run, flow, warmup_s = DEFAULT_WARMUP_S) {
  wide <- flow_backlog_wide(run)
  col <- paste0("f", flow)
  if (!col %in% names(wide)) return(NA_real_)
  wide <- wide[in_window_samples(wide, steady_window(run, warmup_s)), ]
  if (nrow(wide) == 0 || sum(wide$total) == 0) return(NA_real_)
  100 * sum(wide[[col]]) / sum(wide$total)
}

probe_rtt_queue_share_pct <- function(run, flow, during, warmup_s = NULL) {
  wide <- flow_backlog_wide(run)
  col <- paste0("f", flow)
  s <- run$tcp[run$tcp$flow == during, ]
  if (!col %in% names(wide) || nrow(s) < 2) return(NA_real_)
  s <- s[order(s$t_s), ]
  prt <- which(s$state %in% "probe_rtt" & seq_len(nrow(s)) < nrow(s))
  if (length(prt) == 0) return(NA_real_)
  inside <- Reduce(`|`, lapply(prt, function(k) wide$t_s >= s$t_s[k] & wide$t_s < s$t_s[k + 1]))
  if (!any(inside) || sum(wide$total[inside]) == 0) return(NA_real_)
  100 * sum(wide[[col]][inside]) / sum(wide$total[inside])
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
