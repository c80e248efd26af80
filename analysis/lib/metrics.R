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
#   backlog_est_error_pct(run)  mean |sum of the per-flow backlog estimates -
#                               measured backlog| / mean measured backlog, %, in
#                               steady state (checks flow_backlog_estimate())
#
# Per-flow bottleneck backlog (flow_backlog_estimate(), a table, not a claim metric):
#   the testbed records only the queue's total backlog. Flow i's share of it is
#   ESTIMATED from its sender's samples. All of a path's propagation delay is a
#   netem delay line on the data path BEFORE the bottleneck (rtt_on: ingress) and
#   the ACK path adds none, so a byte sent more than one base RTT ago has left the
#   delay line; if it is not yet acknowledged it is in the bottleneck queue (or on
#   the last link, or dropped). With S(t) = bytes_acked + inflight_pkts * mss the
#   bytes handed to the network by t and A(t) = bytes_acked:
#       backlog_i(t) = S_i(t - RTT_i) - A_i(t)
#                    = inflight_i(t) - (bytes sent in the last base RTT)
#   i.e. inflight minus what is in the delay line. S_i(t - RTT_i) is interpolated
#   linearly between samples (error <= the burst a pacing-gain phase adds between
#   two samples). Assumes no losses (retransmissions are not in S), negligible
#   delayed ACKs and the configured base RTT (changes: applied). The sum over
#   flows is compared with the measured total (backlog_est_error_pct()).

suppressPackageStartupMessages(library(dplyr))

DEFAULT_WARMUP_S <- 10
EPS_S <- 1e-6  # slack for float time stamps at the window edges

METRICS <- c("ss_goodput_mbps", "ss_share_pct", "ss_total_mbps", "ss_jain",
             "ss_qdelay_ms", "retrans_pkts", "ss_goodput_ratio", "ss_share_rtt_pct",
             "win_goodput_mbps", "win_share_pct", "rampup_s", "gain_time_pct",
             "backlog_est_error_pct")

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

# Configured base RTT of a flow at times t (the spec's RTT, then its `changes`).
base_rtt_at <- function(run, flow, t) {
  flows <- flows_table(run$meta)
  rtt <- rep(flows$rtt_ms[flows$flow == flow], length(t))
  for (ch in run$meta$spec$changes %||% list()) {
    if (as.integer(ch$flow) == flow && !is.null(ch$rtt_ms)) rtt[t >= ch$at_s] <- ch$rtt_ms
  }
  rtt
}

# Per-flow bottleneck backlog ESTIMATE at each sender socket sample (see the header):
# columns flow, t_s, backlog_bytes, backlog_pkts (payload bytes / mss).
flow_backlog_estimate <- function(run) {
  empty <- tibble(flow = integer(), t_s = double(), backlog_bytes = double(),
                  backlog_pkts = double())
  if (nrow(run$tcp) == 0) return(empty)
  out <- lapply(split(run$tcp, run$tcp$flow), function(s) {
    s <- s[!is.na(s$bytes_acked) & !is.na(s$inflight_pkts) & !is.na(s$mss_bytes), ]
    s <- s[order(s$t_s), ]
    if (nrow(s) < 2) return(NULL)
    sent <- s$bytes_acked + s$inflight_pkts * s$mss_bytes
    rtt_s <- base_rtt_at(run, s$flow[1], s$t_s) / 1000
    sent_before <- stats::approx(s$t_s, sent, xout = s$t_s - rtt_s, rule = 1)$y
    backlog <- pmax(0, sent_before - s$bytes_acked)
    tibble(flow = s$flow, t_s = s$t_s, backlog_bytes = backlog,
           backlog_pkts = backlog / s$mss_bytes)
  })
  bind_rows(c(list(empty), unname(out))) %>% filter(!is.na(backlog_bytes))
}

# Sum of the per-flow estimates at the queue's sample times (each flow's estimate
# interpolated there), beside the measured backlog: t_s, estimated_pkts, measured_pkts.
backlog_estimate_vs_measured <- function(run) {
  est <- flow_backlog_estimate(run)
  q <- run$queue
  if (nrow(est) == 0 || nrow(q) == 0) return(tibble(t_s = double(), estimated_pkts = double(),
                                                    measured_pkts = double()))
  per_flow <- lapply(split(est, est$flow), function(e)
    stats::approx(e$t_s, e$backlog_pkts, xout = q$t_s, rule = 1)$y)
  total <- Reduce(`+`, per_flow)
  tibble(t_s = q$t_s, estimated_pkts = total, measured_pkts = q$backlog_pkts) %>%
    filter(!is.na(estimated_pkts))
}

backlog_est_error_pct <- function(run, warmup_s = DEFAULT_WARMUP_S) {
  cmp <- backlog_estimate_vs_measured(run)
  w <- steady_window(run, warmup_s)
  cmp <- cmp[in_window_samples(cmp, w), ]
  if (nrow(cmp) == 0 || mean(cmp$measured_pkts) == 0) return(NA_real_)
  100 * mean(abs(cmp$estimated_pkts - cmp$measured_pkts)) / mean(cmp$measured_pkts)
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
