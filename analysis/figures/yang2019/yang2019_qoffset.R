#!/usr/bin/env Rscript
# analysis/figures/yang2019/yang2019_qoffset.R -- Adaptive-BBR's backlog estimate Q against
# the real backlog (not a figure of the paper; mininet/specs/yang2019/yang2019_qoffset.yaml).
#
# Usage:   Rscript analysis/figures/yang2019/yang2019_qoffset.R <runs_dir> <out.pdf> [warmup_s]
# Inputs:  runs of experiment "yang2019_qoffset" below <runs_dir> (one Adaptive-BBR flow
#          alone, header captures at the bottleneck).
# Outputs: <out.pdf> and <out>.png, atomically.
#          (a) per point (first valid repetition): Q = inflight - RTprop x delivery rate from
#              the socket samples, and the flow's real backlog from the header captures,
#              packets, from FROM_S on (after the start-up's queue has drained);
#          (b) per point, mean over valid repetitions: Q - backlog split into the
#              delivery-rate term and the inflight outside the queue and RTprop's pipe
#              (analysis/lib/backlog_estimate.R), with the numbers in the caption.

script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "..", "..", "lib", "figure.R"), chdir = TRUE)

EXPERIMENT <- figure_experiment()
FROM_S <- 3
TERMS <- c(rate_term_pkts = "(link share - rate sample) x RTprop",
           outside_term_pkts = "in flight outside the queue and RTprop's pipe")

a <- figure_args(EXPERIMENT)
er <- a$runs
valid <- Filter(function(r) r$key$valid, er$runs)
if (length(valid) == 0) {
  save_figure(no_valid_run_plot(EXPERIMENT, er), a$out_pdf, 6.5, 2.5)
  quit(save = "no")
}
points <- unique(vapply(valid, function(r) r$key$point, ""))
label_of <- function(p) point_label(valid[[match(p, vapply(valid, function(r) r$key$point, ""))]]$meta)
labels <- vapply(points, label_of, "")

# (a) time series of the first valid repetition of each point
firsts <- lapply(points, function(p) first_valid_run(er, function(r) r$key$point == p))
ts <- bind_rows(lapply(firsts, function(r) {
  t <- backlog_estimate_table(r, 1, FROM_S)
  bind_rows(tibble(t_s = t$t_s, v = t$q_est_pkts, series = "Q from TCP's inflight"),
            tibble(t_s = t$t_s, v = t$backlog_pkts, series = "real backlog (header captures)")) %>%
    mutate(panel = sprintf("%s (rep %d)", point_label(r$meta), r$key$repetition))
}))
ts$panel <- factor(ts$panel, levels = unique(ts$panel))
alpha <- as.numeric(firsts[[1]]$meta$spec$flows[[1]]$module_params$alpha_pkts %||% 3)
p1 <- ggplot(ts, aes(t_s, v, colour = series)) +
  geom_hline(yintercept = c(1, alpha), linetype = "dashed", colour = "grey50", linewidth = 0.3) +
  geom_line(linewidth = 0.3) +
  facet_wrap(~panel, ncol = 2) +
  scale_colour_manual(NULL, values = c("Q from TCP's inflight" = "#009E73", "real backlog (header captures)" = "grey25")) +
  scale_x_continuous("Time (s)", expand = expansion(mult = c(0, 0.01))) +
  scale_y_continuous("Packets") +
  labs(title = "(a) Adaptive-BBR's backlog estimate and its real backlog, alone on the link",
       caption = wrap_caption(sprintf(paste(
         "Q = inflight - RTprop x delivery rate from the socket samples (20-ms), from %g s on, with TCP's",
         "inflight, which counts the segments fq still holds (the module's Q leaves them out unless",
         "inflight_departed = 0); dashed: 1 packet (below it the gain is 1.25) and alpha = %g packets (Eq. 5's target)."),
         FROM_S, alpha), 110)) +
  theme_paper()

# (b) the mean decomposition per point over its valid repetitions
per_run <- bind_rows(lapply(valid, function(r)
  backlog_estimate_summary(backlog_estimate_table(r, 1, FROM_S)) %>% mutate(point = r$key$point)))
means <- per_run %>% group_by(point) %>%
  summarise(n_runs = n(), across(c(q_est_pkts, backlog_pkts, offset_pkts, rate_term_pkts,
                                   outside_term_pkts, rtprop_ms), mean), .groups = "drop")
link_mbps <- as.numeric(valid[[1]]$meta$spec$bottleneck$rate_mbps)
mtu <- as.numeric(valid[[1]]$meta$spec$mtu_bytes %||% 1500)   # payload: MTU - IP - TCP with timestamps; frame: + Ethernet
extra <- bind_rows(lapply(valid, function(r) tibble(point = r$key$point,
  goodput = ss_goodput_mbps(r, flow = 1, window = c(start = FROM_S, end = run_end_s(r))),
  gain = mean(r$tcp$bbr_pacing_gain[r$tcp$flow == 1 & r$tcp$t_s >= FROM_S], na.rm = TRUE)))) %>%
  group_by(point) %>% summarise(goodput = mean(goodput), gain = mean(gain), .groups = "drop")
means <- left_join(means, extra, by = "point")
axis_label <- sprintf("%s\n%.1f Mbit/s, gain %.3f", labels[means$point], means$goodput, means$gain)
means$label <- factor(axis_label, levels = axis_label[order(-means$offset_pkts)])
bars <- tidyr::pivot_longer(means, all_of(names(TERMS)), names_to = "term", values_to = "pkts")
bars$term <- factor(TERMS[bars$term], levels = TERMS)
p2 <- ggplot(bars, aes(label, pkts, fill = term)) +
  geom_col(width = 0.6) +
  geom_point(data = means, aes(label, offset_pkts), inherit.aes = FALSE, shape = 23, size = 2, fill = "white") +
  geom_hline(yintercept = 0, colour = "grey40", linewidth = 0.3) +
  scale_fill_manual(NULL, values = c("#E69F00", "#56B4E9")) +
  scale_y_continuous("Q - real backlog (packets)") +
  scale_x_discrete(NULL, labels = scales::label_wrap(22)) +
  labs(title = "(b) Where Q's offset comes from (means; diamond: the offset)",
       caption = sweep_caption(EXPERIMENT, er, a$warmup_s, paste(
         sprintf("Below each point: the flow's goodput from %g s on (the %g-Mbit/s link carries at most %.1f of payload) and its mean pacing gain. Per point:",
                 FROM_S, link_mbps, link_mbps * (mtu - 52) / (mtu + 14)), paste(sprintf("%s: Q %.2f, backlog %.2f, offset %.2f = %.2f (rate) + %.2f (outside) packets, RTprop %.2f ms (n = %d)",
                                              labels[means$point], means$q_est_pkts, means$backlog_pkts,
                                              means$offset_pkts, means$rate_term_pkts, means$outside_term_pkts,
                                              means$rtprop_ms, means$n_runs), collapse = "; ")))) +
  theme_paper() + theme(legend.position = "bottom")
save_figure(list(p1, p2), a$out_pdf, 6.5, 7.5, heights = c(4.2, 3.3))
