# analysis/lib/backlog_estimate.R -- a sender's own estimate of its bottleneck backlog,
# checked against the real backlog from header captures.
#
# Adaptive-BBR (Yang et al. 2019, Algorithm 1) paces by its backlog estimate
#   Q = inflight - RTprop x d                       (packets)
# where d is the delivery rate of the ACK's rate sample. The module computes Q per
# ACK; here it is recomputed from the socket samples (tcp.csv: inflight_pkts,
# bbr_min_rtt_ms, delivery_rate_mbps, mss_bytes), a proxy whose inflight is the one
# after the sampled ACK rather than before it (at most the ACK's 1-2 segments lower).
#
# backlog_estimate_table(run, flow, from_s) one row per socket sample of `flow` from
#   from_s on, with:
#     q_est_pkts     Q as above
#     backlog_pkts   the flow's packets in the bottleneck queue at that time
#                    (flow_queue.csv, from header captures; linear between samples)
#     x_pkts_s       the flow's throughput around the sample: receiver goodput over the
#                    goodput bins ending within +-XWIN_S of it, in segments/s
#     rate_term_pkts    (x - d) x RTprop: what the rate sample's shortfall below the
#                       flow's throughput adds to Q
#     outside_term_pkts inflight - backlog - x x RTprop: segments in flight that are in
#                       neither the bottleneck queue nor RTprop's worth of pipe (a
#                       segment a delayed ACK holds back, segments queued in the
#                       sender's qdisc, delay beyond RTprop on the path)
#   so that q_est - backlog = rate_term + outside_term exactly.
#   Zero rows when the run has no header captures (capture: bottleneck).
# backlog_estimate_summary(tab) the means of those columns (one row).

XWIN_S <- 0.15

backlog_estimate_table <- function(run, flow, from_s = 0) {
  s <- run$tcp[run$tcp$flow == flow & run$tcp$t_s >= from_s, ]
  s <- s[!is.na(s$inflight_pkts) & !is.na(s$bbr_min_rtt_ms) & !is.na(s$delivery_rate_mbps) &
         !is.na(s$mss_bytes), ]
  fq <- run$flow_queue
  fq <- if (is.null(fq)) NULL else fq[fq$flow == flow, ]
  empty <- tibble(t_s = double(), q_est_pkts = double(), backlog_pkts = double(),
                  x_pkts_s = double(), d_pkts_s = double(), rtprop_ms = double(),
                  rate_term_pkts = double(), outside_term_pkts = double())
  if (nrow(s) == 0 || is.null(fq) || nrow(fq) < 2) return(empty)
  fq <- fq[order(fq$t_s), ]
  g <- run$goodput[run$goodput$flow == flow, ]
  seg_s <- function(mbps, mss) mbps * 1e6 / 8 / mss
  x_mbps <- vapply(s$t_s, function(t) {
    b <- g[abs(g$t_s - t) <= XWIN_S + 1e-9, ]
    if (nrow(b) == 0 || sum(b$interval_s) <= 0) NA_real_ else sum(b$bytes) * 8 / sum(b$interval_s) / 1e6
  }, 0)
  m <- s$bbr_min_rtt_ms / 1e3
  d <- seg_s(s$delivery_rate_mbps, s$mss_bytes)
  x <- seg_s(x_mbps, s$mss_bytes)
  backlog <- stats::approx(fq$t_s, fq$backlog_pkts, s$t_s, rule = 2)$y
  tab <- tibble(t_s = s$t_s, q_est_pkts = s$inflight_pkts - d * m, backlog_pkts = backlog,
                x_pkts_s = x, d_pkts_s = d, rtprop_ms = s$bbr_min_rtt_ms,
                rate_term_pkts = (x - d) * m,
                outside_term_pkts = s$inflight_pkts - backlog - x * m)
  tab[!is.na(tab$x_pkts_s), ]
}

backlog_estimate_summary <- function(tab) {
  if (nrow(tab) == 0)
    return(tibble(n = 0L, q_est_pkts = NA_real_, backlog_pkts = NA_real_, offset_pkts = NA_real_,
                  rate_term_pkts = NA_real_, outside_term_pkts = NA_real_, rtprop_ms = NA_real_))
  tibble(n = nrow(tab), q_est_pkts = mean(tab$q_est_pkts), backlog_pkts = mean(tab$backlog_pkts),
         offset_pkts = mean(tab$q_est_pkts - tab$backlog_pkts),
         rate_term_pkts = mean(tab$rate_term_pkts), outside_term_pkts = mean(tab$outside_term_pkts),
         rtprop_ms = mean(tab$rtprop_ms))
}
