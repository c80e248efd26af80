#!/usr/bin/env Rscript
# analysis/figures/ma2019/ma2019_fig08.R -- Ma et al. (2019) Figs. 8-11 reproduced: the deep
# dive into the 10-ms vs 50-ms BBR run of Fig. 1 from 12 to 22 s.
#
# Usage:   Rscript analysis/figures/ma2019/ma2019_fig08.R <runs_dir> <out.pdf> [warmup_s] [bin_s]
# Inputs:  runs of experiment "ma2019_fig08" below <runs_dir>; the FIRST VALID
#          repetition is drawn. warmup_s: steady state of the queue shares in the
#          caption; bin_s: goodput bin (default 0.1 s).
# Outputs: <out.pdf> (6.5 x 8.5 in) and <out>.png, written atomically: four panels
#          over 12-22 s, as the paper's four figures:
#            Fig. 8  goodput of the two flows (Mbit/s)
#            Fig. 9  their smoothed RTT (tcp_info srtt, ms)
#            Fig. 10 their share of the bottleneck queue (packets), stacked: each
#                    flow's backlog from header captures on both sides of the queue
#                    (tidy/flow_queue.csv, mininet/bbrlab/data/capture.py), with the
#                    qdisc's own total backlog as a line
#            Fig. 11 their cwnd (dashed) and inflight (solid), packets
#          The 50-ms flow's ProbeRTT samples are shaded in every panel. Without a
#          valid run: a placeholder (exit status 0).

script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "..", "..", "lib", "figure.R"), chdir = TRUE)

EXPERIMENT <- figure_experiment()
WINDOW <- c(12, 22)
a <- figure_args(EXPERIMENT)
bin_s <- if (is.na(a$bin_s)) 0.1 else a$bin_s

in_win <- function(tab) tab[tab$t_s >= WINDOW[1] & tab$t_s <= WINDOW[2], ]

deep_dive <- function(run, er) {
  flows <- flows_table(run$meta)
  lab <- function(flow) factor(flows$label[match(flow, flows$flow)], levels = flows$label)
  colours <- scale_colour_manual(values = FLOW_COLOURS, drop = FALSE)
  fills <- scale_fill_manual(values = FLOW_COLOURS, drop = FALSE)
  long <- flows$flow[which.max(flows$rtt_ms)]
  prt <- in_win(run$tcp[run$tcp$flow == long & run$tcp$state %in% "probe_rtt", ])
  shade <- if (nrow(prt)) geom_rect(data = prt, inherit.aes = FALSE,
                                    aes(xmin = t_s - 0.01, xmax = t_s + 0.01, ymin = -Inf, ymax = Inf),
                                    fill = "grey50", alpha = 0.25) else NULL
  xs <- scale_x_continuous("Time (s)", limits = WINDOW, breaks = seq(WINDOW[1], WINDOW[2], 2),
                           expand = expansion(mult = 0.005))
  base <- function(title) list(shade, xs, colours, fills, theme_paper(), labs(title = title))

  g <- in_win(rebin_goodput(run$goodput, bin_s)) %>% mutate(flow_label = lab(flow))
  p8 <- ggplot(g, aes(t_s, goodput_mbps, colour = flow_label)) + base("Fig. 8: goodput") +
    geom_line(linewidth = 0.45) + scale_y_continuous("Goodput (Mbit/s)", limits = c(0, NA))

  tcp <- in_win(run$tcp) %>% mutate(flow_label = lab(flow))
  p9 <- ggplot(tcp, aes(t_s, rtt_ms, colour = flow_label)) + base("Fig. 9: RTT") +
    geom_line(linewidth = 0.45) + scale_y_continuous("RTT (ms)", limits = c(0, NA)) +
    theme(legend.position = "none")

  fq <- in_win(run$flow_queue %||% tibble(t_s = double(), flow = integer(), backlog_pkts = double()))
  fq <- fq %>% mutate(flow_label = lab(flow))
  q <- in_win(run$queue)
  p10 <- ggplot(fq, aes(t_s, backlog_pkts)) + base("Fig. 10: queue share") +
    geom_area(aes(fill = flow_label), position = "stack", alpha = 0.75, colour = NA) +
    geom_line(data = q, aes(t_s, backlog_pkts, linetype = "qdisc total"),
              inherit.aes = FALSE, colour = "black", linewidth = 0.3) +
    scale_linetype_manual(values = c("qdisc total" = "solid")) +
    scale_y_continuous("Backlog (packets)", limits = c(0, NA)) +
    guides(fill = guide_legend(order = 1), linetype = guide_legend(order = 2))
  short <- flows$flow[which.min(flows$rtt_ms)]
  share <- function(f) ss_queue_share_pct(run, f, a$warmup_s)
  fmt <- function(x) if (is.na(x)) "--" else sprintf("%.1f", x)
  capture_note <- if (nrow(run$flow_queue %||% tibble()) == 0)
    "Fig. 10: NO per-flow data (the run has no header captures; spec field capture: bottleneck)." else
    sprintf(paste("Fig. 10: per-flow backlog measured from packet-header captures where packets enter",
                  "and leave the bottleneck queue (exact up to packets in transit into the qdisc; the",
                  "capture check compares the sum with the qdisc's backlog). Steady state (warm-up %s s):",
                  "the %s-ms flow holds %s %% of the backlog and gets %s %% of the goodput; during the",
                  "%s-ms flow's ProbeRTT the %s-ms flow holds %s %% of it."),
            format(a$warmup_s), format(max(flows$rtt_ms)), fmt(share(long)),
            fmt(ss_share_pct(run, long, a$warmup_s)), format(max(flows$rtt_ms)),
            format(min(flows$rtt_ms)), fmt(probe_rtt_queue_share_pct(run, short, during = long)))

  cw <- bind_rows(tcp %>% transmute(t_s, flow_label, what = "inflight", pkts = inflight_pkts),
                  tcp %>% transmute(t_s, flow_label, what = "cwnd", pkts = cwnd_pkts))
  p11 <- ggplot(cw, aes(t_s, pkts, colour = flow_label, linetype = what)) +
    base("Fig. 11: CWND and inflight") + geom_line(linewidth = 0.4) +
    scale_linetype_manual(values = c(inflight = "solid", cwnd = "22")) +
    scale_y_continuous("Packets", limits = c(0, NA)) +
    guides(colour = "none") +
    labs(caption = wrap_caption(sprintf(paste(
      "%s, repetition %d (first valid; %s). %s-s goodput bins; socket samples every %s s, queue every %s s;",
      "grey: ProbeRTT samples of the %s-ms flow. %s %s"),
      EXPERIMENT, run$key$repetition, runs_note(er), format(bin_s),
      format(run$meta$spec$sample_interval_s %||% 0.1), format(run$meta$spec$queue_sample_interval_s %||% 0.05),
      format(max(flows$rtt_ms)), capture_note, excluded_note(er)), 125))
  list(p8, p9, p10, p11)
}

er <- a$runs
run <- first_valid_run(er)
if (is.null(run)) {
  save_figure(no_valid_run_plot(EXPERIMENT, er), a$out_pdf, 6.5, 3)
} else {
  save_figure(deep_dive(run, er), a$out_pdf, 6.5, 9.5, heights = c(1, 0.85, 1, 1.35))
}
