# analysis/lib/metrics.R -- per-run metrics and their aggregation over repetitions.
#
# What:    metric functions of ONE run object (from read_run()), each returning one
#          number; aggregate_valid() summarises a per-run value over valid runs.
# Inputs:  run objects from analysis/lib/tidy.R.
# Outputs: numbers / tibbles.
#
# STEADY-STATE RULE (the default window of every windowed metric: steady_window()):
#   steady state starts warmup_s seconds after the LAST flow has started and ends
#   when the FIRST flow stops (a flow without stop_s runs to spec.duration_s, else
#   to the last goodput sample). warmup_s defaults to DEFAULT_WARMUP_S = 10 s.
#   A claim may name its own window instead (claims/README.md, column `window`):
#   windowed metrics take `window = c(start = a, end = b)`, which replaces the
#   steady state. claim_window() resolves a claim's window text for one run.
#   A goodput bin counts when it lies entirely inside the window
#   (t_s - interval_s >= start and t_s <= end); tcp and queue samples count when
#   start <= t_s <= end.
#
# Metrics usable in claims files (METRICS); all take the run first, then named
# arguments, and accept warmup_s and window (ignored where no window applies):
#   ss_goodput_mbps(run, flow)  mean goodput of a flow in the window, Mbit/s
#                               (sum of bytes / sum of bin lengths)
#   ss_share_pct(run, flow)     that flow's goodput / ALL FLOWS' goodput, %
#                               (for sentences about how flows split what is delivered)
#   ss_capacity_share_pct(run, flow)  that flow's goodput / the BOTTLENECK RATE, %
#                               (for "% of the bottleneck bandwidth"; goodput
#                               excludes headers: two flows filling a link
#                               sum to about 95 %, 1448 of 1514 bytes a frame)
#   ss_total_mbps(run)          sum of all flows' goodput, Mbit/s
#   ss_link_util_pct(run)       the bottleneck's dequeue rate / its configured
#                               rate, % (queue.csv sent_bytes: frames on the
#                               wire, so a full link is 100 %)
#   ss_jain(run)                Jain's fairness index over the flows' goodputs
#   ss_fair_share_ratio(run, flow)  the flow's goodput / (all flows' goodput / N)
#   ss_qdelay_ms(run)           mean bottleneck queueing delay (queue.csv qdelay_ms)
#   retrans_pkts(run, flow)     retransmitted segments of the flow over its whole
#                               life: last minus first retrans_total in tcp.csv;
#                               with per_s = S and a flow living shorter than S
#                               seconds: its count until the steady state starts
#                               plus the steady-state retransmission rate times
#                               the rest of the S seconds (retrans_extrapolated()
#                               says when that happened); a flow living at least
#                               S seconds gives its whole-life count
#   ss_goodput_ratio(run, num, den)  goodput of flow `num` / flow `den`
#   ss_share_rtt_pct(run, rtt_ms)    mean per-flow share (% of all flows'
#                               goodput) of the flows whose configured base RTT is
#                               rtt_ms (Figs. 6, 16)
#   ss_capacity_share_rtt_pct(run, rtt_ms)  the same, % of the bottleneck rate
#   win_goodput_mbps(run, flow, from_s, to_s)  mean goodput of a flow over the
#                               bins inside [from_s, to_s]
#   win_share_pct(run, flow, from_s, to_s)     that flow's share in the window, %
#   cheat_share_min_pct(run, settle_s)  for runs whose spec schedules RTT
#                               `changes` (Fig. 7's cheats): for each change, the
#                               changed flow's share (% of all flows' goodput) from
#                               settle_s after it until the next change (or the
#                               run's end); the minimum over all changes
#   cheat_gain_min_pct(run, settle_s)   the same windows: the changed flow's share
#                               after its change minus its share in the window
#                               before it (from settle_s after the previous change,
#                               or after the start, until this change), percentage
#                               points; the minimum over all changes
#   rampup_s(run, flow, frac, clock)   seconds from the first departure of another flow
#                               until `flow` reaches frac (default 0.9) of the
#                               bottleneck rate: the first 100-ms bin after the
#                               departure whose centred 3-bin (300-ms) moving mean
#                               is >= frac * rate, measured at the bin's centre;
#                               Inf when that never happens before the run ends
#   gain_time_pct(run, flow, gain)  % of the flow's socket samples in the window
#                               whose BBR pacing gain equals `gain` (+- 0.01)
#   gain_qdelay_rise_pct(run, flow, gain)  % of the flow's periods at that pacing
#                               gain (consecutive socket samples, in the window)
#                               over which the bottleneck queueing delay rose
#                               (last queue sample of the period above the first)
#   cwnd_bound_pct(run, flow)   % of the flow's socket samples in the window with
#                               inflight >= cwnd - CWND_BOUND_SLACK_PKTS (2): the
#                               flow sends as fast as ACKs free its window
#   ss_queue_share_pct(run, flow)   the flow's mean bottleneck backlog / all flows'
#                               mean backlog in the window, % (flow_queue.csv:
#                               runs with `capture: bottleneck` only, else NA)
#   probe_rtt_queue_share_pct(run, flow, during)  the flow's share of the backlog
#                               over ALL queue samples taken while flow `during` is
#                               in ProbeRTT: 100 * sum of the flow's backlog / sum
#                               of the total backlog, %; whole run
#   probe_rtt_end_queue_share_pct(run, flow, during)  the flow's share of the
#                               backlog at the END of each ProbeRTT episode of flow
#                               `during` (last queue sample before it leaves
#                               ProbeRTT with a non-empty queue), mean over
#                               episodes, %; whole run
#   ss_goodput_cv_pct(run, flow, bin_s)  instability of throughput: the coefficient
#                               of variation (sd / mean, %) of the flow's goodput
#                               over consecutive bin_s-second bins (default 1 s)
#                               inside the window, counting bins that cover at least
#                               half of bin_s; without `flow`, the mean over the
#                               flows with at least 3 such bins
#   goodput_slope_mbps_s(run, flow, bin_s)  the least-squares slope of the flow's
#                               goodput over the same bins against time, Mbit/s
#                               per s (> 0: it grows over the window)
#   ss_rtt_ms(run, flow)        mean of the flow's smoothed RTT samples (tcp.csv
#                               rtt_ms) in the window, ms
#   ss_rtt_queueing_ms(run, flow)  ss_rtt_ms minus the flow's configured base RTT:
#                               the queueing delay the flow itself sees, as RTT
#                               inflation (Yang et al.'s Fig. 5 reading)
#   startup_s(run, flow, frac)  seconds from the flow's own start until it reaches
#                               frac (default 0.9) of the bottleneck rate, measured
#                               as rampup_s measures it (centred 300-ms moving mean
#                               of the 100-ms bins, at the bin's centre)
#   convergence_s(run, flow, tol_pct, hold_s, bin_s, clock)  seconds from the flow's start
#                               (rampup_s, convergence_s: clock = "run" gives the instant
#                               on the run's clock instead of the seconds after the event)
#                               (a flow joining others) until its share of all
#                               flows' goodput, in consecutive bin_s-second bins
#                               (default 1 s) from its start, first stays within
#                               tol_pct (default 10) percentage points of its
#                               reference share for hold_s seconds (default 5);
#                               the reference share is its share over the second
#                               half of the interval from its start until the
#                               first flow stops after it (else the run's end).
#                               The time is that of the first bin's start; NA if
#                               it never does
#   probe_rtt_time_to_share_s(run, flow, during, share_pct)  median over those
#                               episodes of the seconds from the episode's first
#                               ProbeRTT sample until the flow holds >= share_pct
#                               (default 90) % of a non-empty backlog; an episode
#                               in which it never does counts as Inf
#
# A ProbeRTT episode of a flow is a maximal run of its socket samples in state
# probe_rtt; it lasts from its first such sample to the next sample of the flow.

suppressPackageStartupMessages(library(dplyr))

DEFAULT_WARMUP_S <- 10
EPS_S <- 1e-6  # slack for float time stamps at the window edges

CWND_BOUND_SLACK_PKTS <- 2

METRICS <- c("ss_goodput_mbps", "ss_share_pct", "ss_capacity_share_pct", "ss_total_mbps",
             "ss_link_util_pct", "ss_jain", "ss_fair_share_ratio", "ss_qdelay_ms",
             "retrans_pkts", "ss_goodput_ratio", "ss_share_rtt_pct",
             "ss_capacity_share_rtt_pct", "win_goodput_mbps", "win_share_pct",
             "cheat_share_min_pct", "cheat_gain_min_pct", "rampup_s",
             "gain_time_pct", "gain_qdelay_rise_pct", "cwnd_bound_pct",
             "ss_queue_share_pct", "probe_rtt_queue_share_pct",
             "probe_rtt_end_queue_share_pct", "probe_rtt_time_to_share_s",
             "ss_goodput_cv_pct", "goodput_slope_mbps_s", "ss_rtt_ms", "ss_rtt_queueing_ms",
             "startup_s", "convergence_s")

steady_window <- function(run, warmup_s = DEFAULT_WARMUP_S, window = NULL) {
  if (!is.null(window)) return(window)
  flows <- flows_table(run$meta)
  stops <- flows$stop_s
  stops[is.na(stops)] <- run_end_s(run)
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
ss_goodput_table <- function(run, warmup_s = DEFAULT_WARMUP_S, window = NULL) {
  w <- steady_window(run, warmup_s, window)
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

ss_goodput_mbps <- function(run, flow, warmup_s = DEFAULT_WARMUP_S, window = NULL) {
  flow_value(ss_goodput_table(run, warmup_s, window), "goodput_mbps", flow)
}

ss_total_mbps <- function(run, warmup_s = DEFAULT_WARMUP_S, window = NULL) {
  sum(ss_goodput_table(run, warmup_s, window)$goodput_mbps)
}

ss_share_pct <- function(run, flow, warmup_s = DEFAULT_WARMUP_S, window = NULL) {
  100 * ss_goodput_mbps(run, flow, warmup_s, window) / ss_total_mbps(run, warmup_s, window)
}

ss_capacity_share_pct <- function(run, flow, warmup_s = DEFAULT_WARMUP_S, window = NULL) {
  100 * ss_goodput_mbps(run, flow, warmup_s, window) / run$meta$bottleneck$rate_mbps
}

ss_link_util_pct <- function(run, warmup_s = DEFAULT_WARMUP_S, window = NULL) {
  w <- steady_window(run, warmup_s, window)
  q <- run$queue[in_window_samples(run$queue, w) & !is.na(run$queue$sent_bytes), ]
  if (nrow(q) < 2) return(NA_real_)
  q <- q[order(q$t_s), ]
  rate <- (q$sent_bytes[nrow(q)] - q$sent_bytes[1]) * 8 / (q$t_s[nrow(q)] - q$t_s[1]) / 1e6
  100 * rate / run$meta$bottleneck$rate_mbps
}

ss_fair_share_ratio <- function(run, flow, warmup_s = DEFAULT_WARMUP_S, window = NULL) {
  g <- ss_goodput_table(run, warmup_s, window)
  flow_value(g, "goodput_mbps", flow) / (sum(g$goodput_mbps) / nrow(g))
}

jain_index <- function(x) sum(x)^2 / (length(x) * sum(x^2))

ss_jain <- function(run, warmup_s = DEFAULT_WARMUP_S, window = NULL) {
  jain_index(ss_goodput_table(run, warmup_s, window)$goodput_mbps)
}

ss_qdelay_ms <- function(run, warmup_s = DEFAULT_WARMUP_S, window = NULL) {
  w <- steady_window(run, warmup_s, window)
  if (nrow(run$queue) == 0) return(NA_real_)
  q <- run$queue$qdelay_ms[in_window_samples(run$queue, w)]
  if (length(q) == 0) NA_real_ else mean(q, na.rm = TRUE)
}

# TRUE when retrans_pkts(run, flow, per_s = per_s) extrapolates (the flow lived
# shorter than per_s seconds).
retrans_extrapolated <- function(run, flow, per_s) {
  life <- flow_life(run, flow)
  (life[["stop"]] - life[["start"]]) < per_s - EPS_S
}

retrans_pkts <- function(run, flow, warmup_s = NULL, per_s = NULL, window = NULL) {
  if (nrow(run$tcp) == 0) return(NA_real_)
  s <- run$tcp[run$tcp$flow == flow & !is.na(run$tcp$retrans_total), ]
  if (nrow(s) == 0) return(NA_real_)
  s <- s[order(s$t_s), ]
  count <- s$retrans_total[nrow(s)] - s$retrans_total[1]
  if (is.null(per_s) || !retrans_extrapolated(run, flow, per_s)) return(count)
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
  stop_s <- f$stop_s %|NA|% run_end_s(run)
  c(start = f$start_s, stop = stop_s)
}

ss_goodput_ratio <- function(run, num, den, warmup_s = DEFAULT_WARMUP_S, window = NULL) {
  g <- ss_goodput_table(run, warmup_s, window)
  flow_value(g, "goodput_mbps", num) / flow_value(g, "goodput_mbps", den)
}

ss_share_rtt_pct <- function(run, rtt_ms, warmup_s = DEFAULT_WARMUP_S, window = NULL) {
  g <- ss_goodput_table(run, warmup_s, window)
  mean(100 * rtt_flows(g, rtt_ms)$goodput_mbps / sum(g$goodput_mbps))
}

ss_capacity_share_rtt_pct <- function(run, rtt_ms, warmup_s = DEFAULT_WARMUP_S, window = NULL) {
  g <- ss_goodput_table(run, warmup_s, window)
  mean(100 * rtt_flows(g, rtt_ms)$goodput_mbps / run$meta$bottleneck$rate_mbps)
}

rtt_flows <- function(g, rtt_ms) {
  sel <- abs(g$rtt_ms - rtt_ms) < 1e-9
  if (!any(sel)) stop(sprintf("run has no flow with a %s-ms RTT", format(rtt_ms)))
  g[sel, ]
}

# Mean goodput of every flow over the bins inside a fixed window [from_s, to_s].
# (a flow without bins in the window has 0; a run without goodput data NA)
win_goodput_table <- function(run, from_s, to_s) {
  g <- ss_goodput_table(run, window = c(start = from_s, end = to_s))
  if (nrow(run$goodput) == 0) return(g)
  mutate(g, goodput_mbps = goodput_mbps %|NA|% 0)
}

win_goodput_mbps <- function(run, flow, from_s, to_s, warmup_s = NULL, window = NULL) {
  flow_value(win_goodput_table(run, from_s, to_s), "goodput_mbps", flow)
}

win_share_pct <- function(run, flow, from_s, to_s, warmup_s = NULL, window = NULL) {
  g <- win_goodput_table(run, from_s, to_s)
  100 * flow_value(g, "goodput_mbps", flow) / sum(g$goodput_mbps)
}

# Per scheduled change: the changed flow's share after and before it (see header).
cheat_shares <- function(run, settle_s) {
  ch <- run$meta$spec$changes %||% list()
  if (length(ch) == 0) stop("the run schedules no changes")
  at <- vapply(ch, function(c) as.numeric(c$at_s), 0)
  flow <- vapply(ch, function(c) as.integer(c$flow), 0L)
  ends <- c(at[-1], run_end_s(run))
  starts <- c(0, at[-length(at)])
  data.frame(
    after = vapply(seq_along(at), function(k) win_share_pct(run, flow[k], at[k] + settle_s, ends[k]), 0),
    before = vapply(seq_along(at), function(k) win_share_pct(run, flow[k], starts[k] + settle_s, at[k]), 0))
}

cheat_share_min_pct <- function(run, settle_s = 10, warmup_s = NULL, window = NULL) {
  min(cheat_shares(run, settle_s)$after)
}

cheat_gain_min_pct <- function(run, settle_s = 10, warmup_s = NULL, window = NULL) {
  s <- cheat_shares(run, settle_s)
  min(s$after - s$before)
}

# clock = "event" (default): seconds after the event (the first other flow leaving,
# the flow joining); clock = "run": the same instant on the run's clock, for a
# sentence that gives the time as read off the figure's axis ("at around 64 s").
on_clock <- function(t, t_event, clock) {
  if (!clock %in% c("event", "run")) stop("clock must be \"event\" or \"run\": ", clock)
  if (clock == "run") t + t_event else t
}

# The first departure of a flow other than `flow` before `flow` stops (rampup_s's event).
first_departure_s <- function(run, flow) {
  flows <- flows_table(run$meta)
  others <- flows$stop_s[flows$flow != flow & !is.na(flows$stop_s)]
  end <- flow_life(run, flow)[["stop"]]
  others <- others[others < end]
  if (length(others) == 0) stop("no other flow leaves before this one ends")
  min(others)
}

# The event a time read on the run's clock follows, per metric: f(run, args) gives its
# instant (s, run's clock), args the claim's metric arguments. The verdict rule measures
# such a time's band from it (verdict.R, match_band). metrics_tang.R adds ProbeRTT's.
CLOCK_EVENTS <- list(
  rampup_s = function(run, args) first_departure_s(run, args$flow),
  convergence_s = function(run, args) flow_life(run, args$flow)[["start"]])

rampup_s <- function(run, flow, frac = 0.9, clock = "event", warmup_s = NULL, window = NULL) {
  t_leave <- first_departure_s(run, flow)
  g <- run$goodput[run$goodput$flow == flow, ]
  g <- g[order(g$t_s), ]
  mid <- g$t_s - g$interval_s / 2
  smooth <- stats::filter(g$goodput_mbps, rep(1 / 3, 3), sides = 2)
  rate <- run$meta$bottleneck$rate_mbps
  hit <- which(mid >= t_leave & !is.na(smooth) & smooth >= frac * rate)
  if (length(hit) == 0) return(Inf)     # never within the run: it did not ramp up
  on_clock(mid[hit[1]] - t_leave, t_leave, clock)
}

flow_samples_in <- function(run, flow, w) {
  s <- run$tcp[run$tcp$flow == flow & in_window_samples(run$tcp, w), ]
  s[order(s$t_s), ]
}

gain_time_pct <- function(run, flow, gain, warmup_s = DEFAULT_WARMUP_S, window = NULL) {
  s <- flow_samples_in(run, flow, steady_window(run, warmup_s, window))
  s <- s[!is.na(s$bbr_pacing_gain), ]
  if (nrow(s) == 0) return(NA_real_)
  100 * mean(abs(s$bbr_pacing_gain - gain) < 0.01)
}

# Maximal runs of TRUE in `x`: data frame of first and last index.
true_runs <- function(x) {
  x <- !is.na(x) & x
  r <- rle(x)
  ends <- cumsum(r$lengths)
  starts <- ends - r$lengths + 1
  data.frame(first = starts[r$values], last = ends[r$values])
}

gain_qdelay_rise_pct <- function(run, flow, gain, warmup_s = DEFAULT_WARMUP_S, window = NULL) {
  s <- flow_samples_in(run, flow, steady_window(run, warmup_s, window))
  periods <- true_runs(abs(s$bbr_pacing_gain - gain) < 0.01)
  if (nrow(periods) == 0 || nrow(run$queue) == 0) return(NA_real_)
  q <- run$queue[order(run$queue$t_s), ]
  rose <- vapply(seq_len(nrow(periods)), function(k) {
    from <- s$t_s[periods$first[k]]
    to <- if (periods$last[k] < nrow(s)) s$t_s[periods$last[k] + 1] else s$t_s[periods$last[k]]
    d <- q$qdelay_ms[q$t_s >= from - EPS_S & q$t_s <= to + EPS_S]
    if (length(d) < 2) NA else d[length(d)] > d[1]
  }, NA)
  if (all(is.na(rose))) return(NA_real_)
  100 * mean(rose, na.rm = TRUE)
}

cwnd_bound_pct <- function(run, flow, warmup_s = DEFAULT_WARMUP_S, window = NULL) {
  s <- flow_samples_in(run, flow, steady_window(run, warmup_s, window))
  s <- s[!is.na(s$cwnd_pkts) & !is.na(s$inflight_pkts), ]
  if (nrow(s) == 0) return(NA_real_)
  100 * mean(s$inflight_pkts >= s$cwnd_pkts - CWND_BOUND_SLACK_PKTS)
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

ss_queue_share_pct <- function(run, flow, warmup_s = DEFAULT_WARMUP_S, window = NULL) {
  wide <- flow_backlog_wide(run)
  col <- paste0("f", flow)
  if (!col %in% names(wide)) return(NA_real_)
  wide <- wide[in_window_samples(wide, steady_window(run, warmup_s, window)), ]
  if (nrow(wide) == 0 || sum(wide$total) == 0) return(NA_real_)
  100 * sum(wide[[col]]) / sum(wide$total)
}

# ProbeRTT episodes of flow `during`: data frame of from (first ProbeRTT sample)
# and to (the flow's next sample), in time order.
probe_rtt_episodes <- function(run, during) {
  s <- run$tcp[run$tcp$flow == during, ]
  s <- s[order(s$t_s), ]
  ep <- true_runs(s$state %in% "probe_rtt")
  ep <- ep[ep$last < nrow(s), , drop = FALSE]
  data.frame(from = s$t_s[ep$first], to = s$t_s[ep$last + 1])
}

probe_rtt_queue_share_pct <- function(run, flow, during, warmup_s = NULL, window = NULL) {
  wide <- flow_backlog_wide(run)
  col <- paste0("f", flow)
  ep <- probe_rtt_episodes(run, during)
  if (!col %in% names(wide) || nrow(ep) == 0) return(NA_real_)
  inside <- Reduce(`|`, lapply(seq_len(nrow(ep)), function(k)
    wide$t_s >= ep$from[k] & wide$t_s < ep$to[k]))
  if (!any(inside) || sum(wide$total[inside]) == 0) return(NA_real_)
  100 * sum(wide[[col]][inside]) / sum(wide$total[inside])
}

# Per episode: the queue samples inside it with a non-empty backlog, as the
# flow's share (%) over time.
episode_shares <- function(run, flow, during) {
  wide <- flow_backlog_wide(run)
  col <- paste0("f", flow)
  ep <- probe_rtt_episodes(run, during)
  if (!col %in% names(wide) || nrow(ep) == 0) return(list())
  lapply(seq_len(nrow(ep)), function(k) {
    w <- wide[wide$t_s >= ep$from[k] & wide$t_s < ep$to[k] & wide$total > 0, ]
    list(from = ep$from[k], t_s = w$t_s, share = 100 * w[[col]] / w$total)
  })
}

probe_rtt_end_queue_share_pct <- function(run, flow, during, warmup_s = NULL, window = NULL) {
  ends <- vapply(episode_shares(run, flow, during),
                 function(e) if (length(e$share)) e$share[length(e$share)] else NA_real_, 0)
  if (length(ends) == 0 || all(is.na(ends))) return(NA_real_)
  mean(ends, na.rm = TRUE)
}

probe_rtt_time_to_share_s <- function(run, flow, during, share_pct = 90, warmup_s = NULL,
                                      window = NULL) {
  eps <- episode_shares(run, flow, during)
  if (length(eps) == 0) return(NA_real_)
  t <- vapply(eps, function(e) {
    hit <- which(e$share >= share_pct)
    if (length(hit)) e$t_s[hit[1]] - e$from else Inf
  }, 0)
  stats::median(t)
}

# CLAIM WINDOWS: "<from>..<to>", each end a number of seconds, `start` or `end`
# (the steady state's), or the event `probe_rtt_sync`: the end of the first time
# all flows were in ProbeRTT together (episodes overlapping in time), after which
# the paper's Fig. 13 measures. Returns c(start, end), or NA ends with attribute
# `reason` when the run does not cover the window.
WINDOW_ENDS <- c("start", "end", "probe_rtt_sync")

parse_window <- function(text) {
  if (text == "") return(NULL)
  parts <- strsplit(text, "..", fixed = TRUE)[[1]]
  ok <- length(parts) == 2 && all(parts %in% WINDOW_ENDS | !is.na(suppressWarnings(as.numeric(parts))))
  if (!ok) stop("window must be '<from>..<to>' with each end a number of seconds or one of ",
                paste(WINDOW_ENDS, collapse = ", "), ": ", text)
  parts
}

probe_rtt_sync_s <- function(run) {
  flows <- flows_table(run$meta)$flow
  eps <- lapply(flows, function(f) probe_rtt_episodes(run, f))
  if (any(vapply(eps, nrow, 0L) == 0)) return(NA_real_)
  # candidate overlaps: for each episode of the first flow, intersect with every other flow
  for (k in seq_len(nrow(eps[[1]]))) {
    lo <- eps[[1]]$from[k]
    hi <- eps[[1]]$to[k]
    ok <- TRUE
    for (e in eps[-1]) {
      m <- which(e$from < hi & e$to > lo)
      if (length(m) == 0) { ok <- FALSE; break }
      lo <- max(lo, e$from[m[1]])
      hi <- min(hi, e$to[m[1]])
    }
    if (ok && lo < hi) {
      return(max(vapply(eps, function(e) max(e$to[e$from < hi & e$to > lo]), 0)))
    }
  }
  NA_real_
}

claim_window <- function(run, text, warmup_s = DEFAULT_WARMUP_S) {
  parts <- parse_window(text)
  if (is.null(parts)) return(NULL)
  steady <- steady_window(run, warmup_s)
  end_of <- function(p) switch(p, start = steady[["start"]], end = steady[["end"]],
                               probe_rtt_sync = probe_rtt_sync_s(run), as.numeric(p))
  w <- c(start = end_of(parts[1]), end = end_of(parts[2]))
  last <- run_end_s(run)
  reason <- if (anyNA(w)) sprintf("no %s in the run", paste(parts[is.na(w)], collapse = ", "))
    else if (w[["end"]] > last + EPS_S) sprintf("the run ends at %s s, before the window's end", format(last))
    else if (w[["start"]] >= w[["end"]]) "empty window"
    else NULL
  if (!is.null(reason)) return(structure(c(start = NA_real_, end = NA_real_), reason = reason))
  w
}

# The run's end: its configured duration, else its last goodput sample.
run_end_s <- function(run) run$meta$spec$duration_s %||% max(run$goodput$t_s, -Inf)

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

# A flow's goodput in consecutive bin_s-second bins inside the window w, from the
# 0.1-s bins lying wholly inside it; a bin counts when it covers >= bin_s / 2.
window_goodput_bins <- function(run, flow, w, bin_s) {
  g <- run$goodput[run$goodput$flow == flow, ]
  g <- g[in_window_bins(g, w), ]
  if (nrow(g) == 0) return(tibble(t_s = numeric(), goodput_mbps = numeric()))
  g$bin <- floor((g$t_s - g$interval_s - w[["start"]] + EPS_S) / bin_s)
  g %>% group_by(bin) %>%
    summarise(covered = sum(interval_s), goodput_mbps = sum(bytes) * 8 / sum(interval_s) / 1e6,
              .groups = "drop") %>%
    filter(covered >= bin_s / 2 - EPS_S) %>%
    transmute(t_s = w[["start"]] + (bin + 0.5) * bin_s, goodput_mbps)
}

ss_goodput_cv_pct <- function(run, flow = NULL, bin_s = 1, warmup_s = DEFAULT_WARMUP_S, window = NULL) {
  w <- steady_window(run, warmup_s, window)
  cv <- function(f) {
    b <- window_goodput_bins(run, f, w, bin_s)
    if (nrow(b) < 3 || mean(b$goodput_mbps) <= 0) return(NA_real_)
    100 * stats::sd(b$goodput_mbps) / mean(b$goodput_mbps)
  }
  if (!is.null(flow)) return(cv(flow))
  vals <- vapply(flows_table(run$meta)$flow, cv, 0)
  if (all(is.na(vals))) NA_real_ else mean(vals, na.rm = TRUE)
}

goodput_slope_mbps_s <- function(run, flow, bin_s = 1, warmup_s = DEFAULT_WARMUP_S, window = NULL) {
  b <- window_goodput_bins(run, flow, steady_window(run, warmup_s, window), bin_s)
  if (nrow(b) < 3) return(NA_real_)
  unname(stats::coef(stats::lm(goodput_mbps ~ t_s, data = b))[2])
}

ss_rtt_ms <- function(run, flow, warmup_s = DEFAULT_WARMUP_S, window = NULL) {
  s <- flow_samples_in(run, flow, steady_window(run, warmup_s, window))
  s <- s[!is.na(s$rtt_ms), ]
  if (nrow(s) == 0) NA_real_ else mean(s$rtt_ms)
}

ss_rtt_queueing_ms <- function(run, flow, warmup_s = DEFAULT_WARMUP_S, window = NULL) {
  ss_rtt_ms(run, flow, warmup_s, window) - flow_value(flows_table(run$meta), "rtt_ms", flow)
}

# First 100-ms bin at or after t0 whose centred 3-bin moving mean of the flow's
# goodput is >= frac * the bottleneck rate: seconds from t0 to that bin's centre.
time_to_rate_s <- function(run, flow, t0, frac) {
  g <- run$goodput[run$goodput$flow == flow, ]
  g <- g[order(g$t_s), ]
  mid <- g$t_s - g$interval_s / 2
  smooth <- stats::filter(g$goodput_mbps, rep(1 / 3, 3), sides = 2)
  hit <- which(mid >= t0 & !is.na(smooth) & smooth >= frac * run$meta$bottleneck$rate_mbps)
  if (length(hit) == 0) return(NA_real_)
  mid[hit[1]] - t0
}

startup_s <- function(run, flow, frac = 0.9, warmup_s = NULL, window = NULL) {
  time_to_rate_s(run, flow, flow_life(run, flow)[["start"]], frac)
}

convergence_s <- function(run, flow, tol_pct = 10, hold_s = 5, bin_s = 1, clock = "event",
                          warmup_s = NULL, window = NULL) {
  flows <- flows_table(run$meta)
  t_join <- flow_life(run, flow)[["start"]]
  stops <- vapply(flows$flow, function(f) flow_life(run, f)[["stop"]], 0)
  later <- stops[stops > t_join + EPS_S]
  t_end <- if (length(later)) min(later) else run_end_s(run)
  if (t_end - t_join < 2 * hold_s) return(NA_real_)
  ref <- win_goodput_table(run, (t_join + t_end) / 2, t_end)
  ref_share <- 100 * flow_value(ref, "goodput_mbps", flow) / sum(ref$goodput_mbps)
  w <- c(start = t_join, end = t_end)
  bins <- bind_rows(lapply(flows$flow, function(f)
    window_goodput_bins(run, f, w, bin_s) %>% mutate(flow = f)))
  if (nrow(bins) == 0) return(NA_real_)
  target <- flow
  share <- bins %>% group_by(t_s) %>%
    summarise(share = 100 * sum(goodput_mbps[flow == target]) / sum(goodput_mbps), .groups = "drop") %>%
    arrange(t_s)
  inside <- !is.na(share$share) & abs(share$share - ref_share) <= tol_pct
  k <- ceiling(hold_s / bin_s - EPS_S)
  if (length(inside) < k) return(NA_real_)
  for (i in seq_len(length(inside) - k + 1)) {
    if (all(inside[i:(i + k - 1)])) return(on_clock(share$t_s[i] - bin_s / 2 - t_join, t_join, clock))
  }
  NA_real_
}
