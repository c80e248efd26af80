"""BBR-FCA's CUBIC-rate model on the loss episodes of a real CUBIC flow (bench/probes/cubic_phases.yaml).

Usage: .venv/bin/python bench/cubic_phase_estimate.py <run dir>

Loss episodes from steps of the flow's retrans_total (tidy/tcp.csv), as analysis/lib/
metrics_utsumi2022.R reads them; the last 8 CA phases and recoveries as BBR-FCA keeps them
(t_fc, t_nfc = mean +- sd); Eq. 8 with CUBIC's Reno-friendly region, in floating point (the
reference the module's fixed-point math is tested against, tests/kernel/test_variant_math.py),
against the flow's sending rate (acknowledged bytes plus retransmissions) over the same span.
Also the mutation the code review named (W0 from t_nfc) and the paper's Eqs. 4-8 without the
Reno-friendly region.
"""
import csv
import math
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "kernel"))
import test_variant_math as tv  # noqa: E402
d = sys.argv[1]
rows = sorted((r for r in csv.DictReader(open(f"{d}/tidy/tcp.csv")) if r["flow"] == "1"), key=lambda r: float(r["t_s"]))
eps = []
for a, b in zip(rows, rows[1:]):
    if int(b["retrans_total"] or 0) > int(a["retrans_total"] or 0):
        at = (float(a["t_s"]) + float(b["t_s"])) / 2; rtt = float(b["rtt_ms"]) / 1e3
        if eps and at <= eps[-1][1] + 1e-9: eps[-1][1] = max(eps[-1][1], at + rtt)
        else: eps.append([at, at + rtt])
phases = [b[0] - a[1] for a, b in zip(eps, eps[1:])]
print(len(eps), "episodes; phases", [round(p, 2) for p in phases])
for last in (8,):
    sel = eps[-(last + 1):]
    ph = [b[0] - a[1] for a, b in zip(sel, sel[1:])]
    rc = [e[1] - e[0] for e in sel[1:]]
    lo, hi = sel[0][1], sel[-1][1]
    inwin = [r for r in rows if lo <= float(r["t_s"]) <= hi]
    R = sum(float(r["rtt_ms"]) for r in inwin) / len(inwin) / 1e3
    avg = sum(ph) / len(ph); sd = math.sqrt(sum((p - avg) ** 2 for p in ph) / len(ph))
    t_fc, t_nfc = avg + sd, max(avg - sd, 0)
    r = sum(rc) / len(rc)
    est = tv.cubic_rate_eq8(t_fc, t_nfc, r, R) * 1448 * 8 / 1e6
    def at(t, key):
        best = min(rows, key=lambda x: abs(float(x["t_s"]) - t)); return float(best[key]), float(best["t_s"])
    b0, t0 = at(lo, "bytes_acked"); b1, t1 = at(hi, "bytes_acked")
    r0, _ = at(lo, "retrans_total"); r1, _ = at(hi, "retrans_total")
    meas = ((b1 - b0) + (r1 - r0) * 1448) * 8 / (t1 - t0) / 1e6
    print(last, "phases; t_fc %.3f t_nfc %.3f r %.4f R %.4f" % (t_fc, t_nfc, r, R), "est %.1f meas %.1f ratio %.3f" % (est, meas, est / meas),
          "mutation ratio %.3f" % (tv.cubic_rate_eq8(t_nfc, t_nfc, r, R) * 1448 * 8 / 1e6 / meas))
    C, beta, a, b = 0.4, 0.3, t_fc - R, max(0.0, t_nfc - R)
    w0 = C * a ** 3 / (4 * beta)
    w = (0.5 * a * (2 - beta) * C * a ** 3 / (8 * beta) + 0.5 * b * (4 - beta) * C * a ** 3 / (16 * beta) + R * w0) / avg
    print("paper's Eqs. 4-8 without the Reno-friendly region: ratio %.3f" % (((avg * w / R + (1 - beta) * w0) / (avg + r)) * 1448 * 8 / 1e6 / meas))
