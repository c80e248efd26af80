# analysis/lib/metrics_utsumi2022.R -- metrics added for Utsumi and Hasegawa's claims
# (claims/utsumi2022.csv). Sourced after metrics.R (analysis/lib/load.R).
#
# ==== Utsumi & Hasegawa (BBR-FCA, IFIP 2022): the CUBIC sending-rate model ===========
# Metrics added for claims/utsumi2022.csv (in METRICS below). Sec. IV of the paper
# models a CUBIC flow's average sending rate from quantities a COMPETING flow can
# observe, assuming every flow loses packets at the same buffer overflows: the
# durations of the congestion-avoidance (CA) phases between loss events, the
# duration of the recoveries, and the smoothed RTT. Here those inputs come from the
# socket samples (tcp.csv) of an observer flow:
#
#   loss_episodes(run, flow)    the flow's loss episodes (recoveries), from its
#                               cumulative retrans_total: an episode starts at the
#                               estimated time of its first retransmission (the
#                               midpoint between the sample that first shows it and
#                               the one before) and ends one smoothed RTT (the
#                               flow's sample) after its last retransmission (the
#                               retransmission is acknowledged about one RTT after
#                               it is sent); a retransmission estimated before the
#                               current episode's end belongs to it. tibble(from, to).
#                               Resolution: the sample interval (the utsumi2022
#                               specs sample every 50 ms; CA phases last seconds)
#   cubic_model_inputs(run, observer)  from the observer's episodes starting in the
#                               window: the CA phase durations (from one episode's
#                               end to the next one's start), their mean t_avg and
#                               POPULATION variance t_var (so that alternating FC and
#                               non-FC phases of two lengths give back exactly those
#                               lengths, the paper's gamma = 0.5 reading), t_fc =
#                               t_avg + sqrt(t_var), t_nfc = t_avg - sqrt(t_var)
#                               (Sec. V-A), r = mean episode duration, R = mean of
#                               the observer's smoothed RTT samples in the window
#                               (s); NULL with fewer than 2 complete phases
#   utsumi_cubic_rate_pps(t_fc, t_nfc, r, R, gamma, C, beta)  Eqs. 4-8: W0 =
#                               C (t_fc - R)^3 / (4 beta) (Eq. 6 inverted), w_fc =
#                               (2 - beta) C (t_fc - R)^3 / (8 beta), w_nfc =
#                               (4 - beta) C (t_fc - R)^3 / (16 beta), t = gamma t_fc
#                               + (1 - gamma) t_nfc, w = (gamma (t_fc - R) w_fc +
#                               (1 - gamma) (t_nfc - R) w_nfc + R W0) / t (Eq. 7), B =
#                               (t w / R + (1 - beta) W0) / (t + r) (Eq. 8), packets/s;
#                               C = 0.4, beta = 0.3, gamma = 0.5 (Sec. V-A). NA when
#                               t_fc <= R; t_nfc - R is clamped at 0. The Reno-friendly
#                               region the paper names but does not give is NOT in
#                               this model (the bbr_fca module's estimate, which has
#                               it, is fca_estimate_mbps)
#   cubic_model_mbps(run, observer)  that rate in Mbit/s of payload (x the observer's
#                               MSS), from the observer's episodes in the window
#   cubic_sending_mbps(run, flow)  a flow's measured sending rate in the window: its
#                               goodput plus its retransmitted segments (x MSS) per
#                               second, Mbit/s
#   cubic_model_ratio(run, observer, cubic)  cubic_model_mbps(observer) /
#                               cubic_sending_mbps(cubic): > 1 the model overestimates
#   cubic_model_error_pct(run, observer, cubic)  100 |ratio - 1|: the model's absolute
#                               relative error, %
#   fca_estimate_mbps(run, flow)  mean of a bbr_fca flow's own CUBIC estimate
#                               (tcp.csv variant_estimate_mbps, which bbr_fca reports while its
#                               FCA control is in force) over its samples in the
#                               window; NA without such samples
#
# The model's two assumptions about a CUBIC flow's own loss episodes (Secs. IV, V-A),
# measured on the CUBIC flow's socket samples (not on an observer's):
#   loss_windows(run, flow)     the flow's loss episodes (loss_episodes) with W0, its
#                               cwnd_pkts at the last sample at or before the
#                               episode's start (the window when the loss is
#                               detected), and fc: whether the CA phase that STARTS
#                               after the episode is a fast-convergence (FC) phase,
#                               by Eq. 2 applied in order from the run's first
#                               episode: W_max,1 = 0 (tcp_cubic starts with no
#                               last maximum, so the first loss is never FC); the
#                               phase after episode j is FC iff W0_j < W_max,j, and
#                               then W_max,j+1 = (2 - beta)/2 W0_j, else W0_j.
#                               Resolution: a 50-ms sample of cwnd, so an episode
#                               whose W0 lies within 50 ms of growth of W_max can be
#                               classed either way. Episodes without an earlier
#                               cwnd sample are dropped
#   cubic_fc_phase_pct(run, flow)  gamma in %: of the complete CA phases that start
#                               in the window (after an episode starting in it, and
#                               ended by the next episode), the share that are FC
#                               phases (Sec. IV: "the ratio of the number of FC
#                               phases relative to the total number of congestion
#                               avoidance phases"); NA with fewer than 2 phases
#   cubic_fc_longer_pct(run, flow)  the second assumption of Sec. V-A: of the same
#                               phases, the % whose duration (from one episode's end
#                               to the next one's start, as cubic_model_inputs) lies
#                               on the side of their mean that the mode predicts: an
#                               FC phase longer than the mean, a non-FC phase
#                               shorter; NA with fewer than 2 phases
# Windowed metrics default to the steady state (steady_window()); the claims name
# the whole transfer (window 0..end).

METRICS <- c(METRICS, "cubic_model_mbps", "cubic_sending_mbps", "cubic_model_ratio",
             "cubic_model_error_pct", "fca_estimate_mbps", "cubic_fc_phase_pct",
             "cubic_fc_longer_pct")

UTSUMI_C <- 0.4
UTSUMI_BETA <- 0.3
UTSUMI_GAMMA <- 0.5

loss_episodes <- function(run, flow) {
  s <- run$tcp[run$tcp$flow == flow & !is.na(run$tcp$retrans_total), ]
  s <- s[order(s$t_s), ]
  none <- tibble(from = double(), to = double())
  if (nrow(s) < 2) return(none)
  inc <- which(diff(s$retrans_total) > 0) + 1
  if (length(inc) == 0) return(none)
  at <- (s$t_s[inc - 1] + s$t_s[inc]) / 2          # estimated time of the retransmissions
  rtt <- s$rtt_ms[inc] / 1e3
  rtt[is.na(rtt)] <- 0
  from <- numeric(); to <- numeric()
  for (k in seq_along(at)) {
    if (length(to) && at[k] <= to[length(to)] + EPS_S) {
      to[length(to)] <- max(to[length(to)], at[k] + rtt[k])
    } else {
      from <- c(from, at[k]); to <- c(to, at[k] + rtt[k])
    }
  }
  tibble(from = from, to = to)
}

cubic_model_inputs <- function(run, observer, warmup_s = DEFAULT_WARMUP_S, window = NULL) {
  w <- steady_window(run, warmup_s, window)
  ep <- loss_episodes(run, observer)
  ep <- ep[ep$from >= w[["start"]] - EPS_S & ep$from <= w[["end"]] + EPS_S, , drop = FALSE]
  if (nrow(ep) < 3) return(NULL)
  phases <- ep$from[-1] - ep$to[-nrow(ep)]
  phases <- phases[phases > 0]
  if (length(phases) < 2) return(NULL)
  s <- flow_samples_in(run, observer, w)
  rtt <- s$rtt_ms[!is.na(s$rtt_ms)]
  if (length(rtt) == 0) return(NULL)
  t_avg <- mean(phases)
  t_var <- mean((phases - t_avg)^2)
  list(n_phases = length(phases), t_avg = t_avg, t_var = t_var,
       t_fc = t_avg + sqrt(t_var), t_nfc = t_avg - sqrt(t_var),
       r = mean(ep$to - ep$from), R = mean(rtt) / 1e3)
}

utsumi_cubic_rate_pps <- function(t_fc, t_nfc, r, R, gamma = UTSUMI_GAMMA, C = UTSUMI_C,
                                  beta = UTSUMI_BETA) {
  a <- t_fc - R
  if (is.na(a) || a <= 0 || R <= 0) return(NA_real_)
  b <- max(0, t_nfc - R)
  W0 <- C * a^3 / (4 * beta)
  w_fc <- (2 - beta) * C * a^3 / (8 * beta)
  w_nfc <- (4 - beta) * C * a^3 / (16 * beta)
  t <- gamma * t_fc + (1 - gamma) * t_nfc
  w <- (gamma * a * w_fc + (1 - gamma) * b * w_nfc + R * W0) / t
  (t * w / R + (1 - beta) * W0) / (t + r)
}

flow_mss_bytes <- function(run, flow) {
  m <- run$tcp$mss_bytes[run$tcp$flow == flow & !is.na(run$tcp$mss_bytes)]
  if (length(m)) stats::median(m) else 1448
}

cubic_model_mbps <- function(run, observer, warmup_s = DEFAULT_WARMUP_S, window = NULL) {
  p <- cubic_model_inputs(run, observer, warmup_s, window)
  if (is.null(p)) return(NA_real_)
  utsumi_cubic_rate_pps(p$t_fc, p$t_nfc, p$r, p$R) * flow_mss_bytes(run, observer) * 8 / 1e6
}

cubic_sending_mbps <- function(run, flow, warmup_s = DEFAULT_WARMUP_S, window = NULL) {
  w <- steady_window(run, warmup_s, window)
  g <- ss_goodput_mbps(run, flow, warmup_s, window)
  s <- run$tcp[run$tcp$flow == flow & !is.na(run$tcp$retrans_total), ]
  if (is.na(g) || nrow(s) < 2 || w[["end"]] <= w[["start"]]) return(g)
  s <- s[order(s$t_s), ]
  at <- function(t) stats::approx(s$t_s, s$retrans_total, xout = t, rule = 2, ties = "ordered")$y
  g + (at(w[["end"]]) - at(w[["start"]])) * flow_mss_bytes(run, flow) * 8 /
    (w[["end"]] - w[["start"]]) / 1e6
}

cubic_model_ratio <- function(run, observer, cubic, warmup_s = DEFAULT_WARMUP_S, window = NULL) {
  m <- cubic_model_mbps(run, observer, warmup_s, window)
  x <- cubic_sending_mbps(run, cubic, warmup_s, window)
  if (is.na(m) || is.na(x) || x <= 0) NA_real_ else m / x
}

cubic_model_error_pct <- function(run, observer, cubic, warmup_s = DEFAULT_WARMUP_S,
                                  window = NULL) {
  q <- cubic_model_ratio(run, observer, cubic, warmup_s, window)
  if (is.na(q)) NA_real_ else 100 * abs(q - 1)
}

fca_estimate_mbps <- function(run, flow, warmup_s = DEFAULT_WARMUP_S, window = NULL) {
  if (!"variant_estimate_mbps" %in% names(run$tcp)) return(NA_real_)
  s <- flow_samples_in(run, flow, steady_window(run, warmup_s, window))
  v <- s$variant_estimate_mbps[!is.na(s$variant_estimate_mbps)]
  if (length(v) == 0) NA_real_ else mean(v)
}

loss_windows <- function(run, flow) {
  ep <- loss_episodes(run, flow)
  s <- run$tcp[run$tcp$flow == flow & !is.na(run$tcp$cwnd_pkts), ]
  s <- s[order(s$t_s), ]
  ep$W0 <- vapply(ep$from, function(t) {
    k <- which(s$t_s <= t + EPS_S)
    if (length(k)) s$cwnd_pkts[max(k)] else NA_real_
  }, numeric(1))
  ep <- ep[!is.na(ep$W0), , drop = FALSE]
  w_max <- 0
  ep$fc <- logical(nrow(ep))
  for (j in seq_len(nrow(ep))) {
    ep$fc[j] <- ep$W0[j] < w_max
    w_max <- if (ep$fc[j]) (2 - UTSUMI_BETA) / 2 * ep$W0[j] else ep$W0[j]
  }
  ep
}

# The complete CA phases after episodes starting in the window: fc (mode, set by the
# episode before the phase) and dur (s); NULL with fewer than 2.
fc_phases <- function(run, flow, warmup_s = DEFAULT_WARMUP_S, window = NULL) {
  w <- steady_window(run, warmup_s, window)
  ep <- loss_windows(run, flow)
  n <- nrow(ep)
  if (n < 3) return(NULL)
  # phase j lies between episode j and j + 1
  in_w <- ep$from[-n] >= w[["start"]] - EPS_S & ep$from[-n] <= w[["end"]] + EPS_S
  ph <- data.frame(fc = ep$fc[-n], dur = ep$from[-1] - ep$to[-n])[in_w, , drop = FALSE]
  if (nrow(ph) < 2) NULL else ph
}

cubic_fc_phase_pct <- function(run, flow, warmup_s = DEFAULT_WARMUP_S, window = NULL) {
  ph <- fc_phases(run, flow, warmup_s, window)
  if (is.null(ph)) NA_real_ else 100 * mean(ph$fc)
}

cubic_fc_longer_pct <- function(run, flow, warmup_s = DEFAULT_WARMUP_S, window = NULL) {
  ph <- fc_phases(run, flow, warmup_s, window)
  if (is.null(ph)) return(NA_real_)
  m <- mean(ph$dur)
  100 * mean(ifelse(ph$fc, ph$dur > m, ph$dur < m))
}

