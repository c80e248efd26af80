# analysis/lib/metrics_tang.R -- metrics added for Tang's claims (claims/tang.csv): window
# sums, ProbeRTT timing, gain phases. Sourced after metrics.R (analysis/lib/load.R); same
# conventions: the run first, windowed metrics default to the steady state (steady_window()).
#
#   ss_total_cwnd_pkts(run)     median over the window of the SUM of all flows' cwnd
#                               (packets): at each socket sample time, each flow's
#                               latest sample (0 before its first and > 1 s after
#                               its last); Table III's "total congestion window"
#   ss_total_inflight_pkts(run) the same for inflight_pkts
#   probe_rtt_period_s(run, flow)  median time between the starts of the flow's
#                               consecutive ProbeRTT episodes, s; episodes starting
#                               in the window, whole run without one; NA if < 2
#   probe_rtt_min_cwnd_pkts(run, flow)  median over the flow's ProbeRTT episodes of
#                               its smallest sampled cwnd in the episode, packets
#   gain_phase_rate(run, flow, gain, per_s)  number of the flow's phases at pacing
#                               gain `gain` (+- 0.01; maximal runs of such socket
#                               samples) in the window, per `per_s` seconds (10)
#   probe_rtt_sync_pct(run)     % of all flows' ProbeRTT episodes starting in the
#                               window that overlap in time an episode of every
#                               other flow (ProbeRTTs entered together)
#   probe_rtt_common_near_s(run, at_s)  the time, nearest to at_s, at which every
#                               flow is in ProbeRTT together (the latest start of
#                               one overlapping episode per flow); whole run
#   probe_rtt_after_share_pct(run, flow, during, span_s)  the flow's share of all
#                               flows' goodput over the bins lying within span_s
#                               (default 2) s after the start of each ProbeRTT
#                               episode of flow `during` starting in the window, %
#   ss_cwnd_cv_pct(run, flow)   coefficient of variation (sd / mean, %) of the
#                               flow's cwnd samples in the window
#   fair_bins_pct(run, tol_pct, bin_s)  % of the window's bin_s-second bins
#                               (default 1) in which every flow's share of the
#                               goodput is within tol_pct (default 10) percentage
#                               points of 100 / N
#
#
# A ProbeRTT episode of a flow is a maximal run of its socket samples in state
# probe_rtt; it lasts from its first such sample to the next sample of the flow.

# ==== Tang (BBR fairness in ns-3): window sums, ProbeRTT timing, gain phases =========
# Metrics added for claims/tang.csv (in METRICS below; defined in the header above).
# All take the run first; windowed ones default to the steady state (steady_window()).

METRICS <- c(METRICS, "ss_total_cwnd_pkts", "ss_total_inflight_pkts", "probe_rtt_period_s",
             "probe_rtt_min_cwnd_pkts", "gain_phase_rate", "probe_rtt_sync_pct",
             "probe_rtt_common_near_s", "probe_rtt_after_share_pct", "ss_cwnd_cv_pct",
             "fair_bins_pct")

# The sum over all flows of a tcp.csv column at every socket sample time inside the
# window: each flow contributes its latest sample at or before that time (flows
# without an earlier sample, or whose last sample is more than 1 s old, add 0).
flows_sum_series <- function(run, column, w) {
  s <- run$tcp[!is.na(run$tcp[[column]]), ]
  times <- sort(unique(s$t_s[in_window_samples(s, w)]))
  if (length(times) == 0) return(numeric())
  total <- numeric(length(times))
  for (f in unique(s$flow)) {
    x <- s[s$flow == f, ]
    x <- x[order(x$t_s), ]
    v <- if (nrow(x) == 1) rep(x[[column]], length(times)) else
      stats::approx(x$t_s, x[[column]], xout = times, method = "constant", f = 0,
                    rule = 2, ties = "ordered")$y
    v[times < x$t_s[1] - EPS_S | times > x$t_s[nrow(x)] + 1] <- 0
    total <- total + v
  }
  total
}

ss_total_cwnd_pkts <- function(run, warmup_s = DEFAULT_WARMUP_S, window = NULL) {
  v <- flows_sum_series(run, "cwnd_pkts", steady_window(run, warmup_s, window))
  if (length(v) == 0) NA_real_ else stats::median(v)
}

ss_total_inflight_pkts <- function(run, warmup_s = DEFAULT_WARMUP_S, window = NULL) {
  v <- flows_sum_series(run, "inflight_pkts", steady_window(run, warmup_s, window))
  if (length(v) == 0) NA_real_ else stats::median(v)
}

# ProbeRTT episodes of a flow starting inside the window (whole run without one).
probe_rtt_episodes_in <- function(run, flow, window = NULL) {
  ep <- probe_rtt_episodes(run, flow)
  if (is.null(window)) return(ep)
  ep[ep$from >= window[["start"]] - EPS_S & ep$from <= window[["end"]] + EPS_S, , drop = FALSE]
}

probe_rtt_period_s <- function(run, flow, warmup_s = NULL, window = NULL) {
  ep <- probe_rtt_episodes_in(run, flow, window)
  if (nrow(ep) < 2) return(NA_real_)
  stats::median(diff(ep$from))
}

probe_rtt_min_cwnd_pkts <- function(run, flow, warmup_s = NULL, window = NULL) {
  ep <- probe_rtt_episodes_in(run, flow, window)
  if (nrow(ep) == 0) return(NA_real_)
  s <- run$tcp[run$tcp$flow == flow & !is.na(run$tcp$cwnd_pkts), ]
  mins <- vapply(seq_len(nrow(ep)), function(k) {
    c <- s$cwnd_pkts[s$t_s >= ep$from[k] - EPS_S & s$t_s < ep$to[k] - EPS_S]
    if (length(c)) min(c) else NA_real_
  }, 0)
  if (all(is.na(mins))) NA_real_ else stats::median(mins, na.rm = TRUE)
}

gain_phase_rate <- function(run, flow, gain, per_s = 10, warmup_s = DEFAULT_WARMUP_S,
                            window = NULL) {
  w <- steady_window(run, warmup_s, window)
  s <- flow_samples_in(run, flow, w)
  s <- s[!is.na(s$bbr_pacing_gain), ]
  if (nrow(s) == 0 || w[["end"]] <= w[["start"]]) return(NA_real_)
  phases <- true_runs(abs(s$bbr_pacing_gain - gain) < 0.01)
  nrow(phases) * per_s / (w[["end"]] - w[["start"]])
}

# For each ProbeRTT episode of every flow: does it overlap an episode of each other
# flow? One logical per episode, over the episodes starting in the window.
probe_rtt_overlaps <- function(run, window) {
  flows <- flows_table(run$meta)$flow
  all_eps <- lapply(flows, function(f) probe_rtt_episodes(run, f))
  unlist(lapply(seq_along(flows), function(i) {
    ep <- probe_rtt_episodes_in(run, flows[i], window)
    vapply(seq_len(nrow(ep)), function(k) all(vapply(all_eps[-i], function(o)
      any(o$from < ep$to[k] & o$to > ep$from[k]), TRUE)), TRUE)
  }))
}

probe_rtt_sync_pct <- function(run, warmup_s = DEFAULT_WARMUP_S, window = NULL) {
  ov <- probe_rtt_overlaps(run, steady_window(run, warmup_s, window))
  if (length(ov) == 0) NA_real_ else 100 * mean(ov)
}

# Times at which every flow is in ProbeRTT together (the latest start of a set of
# mutually overlapping episodes, one per flow), over the whole run.
probe_rtt_common_starts <- function(run) {
  flows <- flows_table(run$meta)$flow
  eps <- lapply(flows, function(f) probe_rtt_episodes(run, f))
  if (any(vapply(eps, nrow, 0L) == 0)) return(numeric())
  out <- numeric()
  for (k in seq_len(nrow(eps[[1]]))) {
    lo <- eps[[1]]$from[k]; hi <- eps[[1]]$to[k]
    for (e in eps[-1]) {
      m <- which(e$from < hi & e$to > lo)
      if (length(m) == 0) { lo <- NA; break }
      lo <- max(lo, e$from[m[1]]); hi <- min(hi, e$to[m[1]])
    }
    if (!is.na(lo) && lo < hi) out <- c(out, lo)
  }
  out
}

# BBR's ProbeRTT interval (the min-RTT filter's 10-s window): a ProbeRTT instant read off a
# figure follows the previous ProbeRTT by it (CLOCK_EVENTS: the band of "approximately 42 s"
# is measured over one period, not from the run's start).
PROBE_RTT_INTERVAL_S <- 10
CLOCK_EVENTS$probe_rtt_common_near_s <- function(run, args) args$at_s - PROBE_RTT_INTERVAL_S

probe_rtt_common_near_s <- function(run, at_s, warmup_s = NULL, window = NULL) {
  t <- probe_rtt_common_starts(run)
  if (length(t) == 0) return(NA_real_)
  t[which.min(abs(t - at_s))]
}

probe_rtt_after_share_pct <- function(run, flow, during, span_s = 2,
                                      warmup_s = DEFAULT_WARMUP_S, window = NULL) {
  ep <- probe_rtt_episodes_in(run, during, steady_window(run, warmup_s, window))
  if (nrow(ep) == 0 || nrow(run$goodput) == 0) return(NA_real_)
  g <- run$goodput
  inside <- Reduce(`|`, lapply(ep$from, function(a)
    g$t_s - g$interval_s >= a - EPS_S & g$t_s <= a + span_s + EPS_S))
  total <- sum(g$bytes[inside])
  if (total <= 0) return(NA_real_)
  100 * sum(g$bytes[inside & g$flow == flow]) / total
}

ss_cwnd_cv_pct <- function(run, flow, warmup_s = DEFAULT_WARMUP_S, window = NULL) {
  s <- flow_samples_in(run, flow, steady_window(run, warmup_s, window))
  c <- s$cwnd_pkts[!is.na(s$cwnd_pkts)]
  if (length(c) < 3 || mean(c) <= 0) return(NA_real_)
  100 * stats::sd(c) / mean(c)
}

fair_bins_pct <- function(run, tol_pct = 10, bin_s = 1, warmup_s = DEFAULT_WARMUP_S,
                          window = NULL) {
  w <- steady_window(run, warmup_s, window)
  flows <- flows_table(run$meta)$flow
  bins <- bind_rows(lapply(flows, function(f)
    window_goodput_bins(run, f, w, bin_s) %>% mutate(flow = f)))
  if (nrow(bins) == 0) return(NA_real_)
  fair <- 100 / length(flows)
  per_bin <- bins %>% group_by(t_s) %>%
    summarise(ok = n() == length(flows) && sum(goodput_mbps) > 0 &&
                all(abs(100 * goodput_mbps / sum(goodput_mbps) - fair) <= tol_pct),
              .groups = "drop")
  100 * mean(per_bin$ok)
}
