"""How many claims rows can both pass and fail under the verdict rule, and under the flat bands
it replaced (analysis/claims_power.R: synthetic values, no runs): per paper, rows passing both
ways, for the band of the rule, a flat 15 % of the measured quantity and a flat 50 %.
Writes bench/results/claims-power-<date>.md. R only, a few seconds per band.

    .venv/bin/python bench/claims_power_bands.py
"""

from __future__ import annotations

import collections
import csv
import datetime
import pathlib
import subprocess
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[1]
BANDS = {"rule": "the verdict rule (match_band)", "flat15": "flat 15 % of the measured quantity",
         "flat50": "flat 50 % of the measured quantity"}


def power(band: str, out: pathlib.Path) -> list[dict]:
    subprocess.run(["nice", "Rscript", "analysis/claims_power.R", str(out), band,
                    *map(str, sorted((REPO / "claims").glob("*.csv")))], cwd=REPO, check=True,
                   capture_output=True)
    with out.open(newline="") as fh:
        return list(csv.DictReader(fh))


def main() -> None:
    date = datetime.date.today().isoformat()
    rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                         text=True).stdout.strip()
    lines = [f"# Claims power test under three bands ({date}, {rev})", "",
             "Rows that are reproduced at the published value and not at a contradicting one "
             "(tests/analysis/test_claims_power.py), per paper: passing both ways / rows.", "",
             "| band | " + " | ".join(p.stem for p in sorted((REPO / "claims").glob("*.csv"))) + " | all |",
             "|---|" + "---|" * (len(list((REPO / "claims").glob("*.csv"))) + 1)]
    failing = {}
    with tempfile.TemporaryDirectory() as tmp:
        for band, what in BANDS.items():
            rows = power(band, pathlib.Path(tmp) / f"{band}.csv")
            total, ok = collections.Counter(), collections.Counter()
            for r in rows:
                paper = r["id"].split("-")[0]
                total[paper] += 1
                ok[paper] += r["ok"] == "TRUE"
            cells = [f"{ok[p]}/{total[p]}" for p in sorted(total)]
            lines.append(f"| {what} | " + " | ".join(cells) + f" | {sum(ok.values())}/{sum(total.values())} |")
            failing[band] = [r["id"] for r in rows if r["ok"] != "TRUE"]
    for band in ("flat15", "flat50"):
        lines += ["", f"Rows failing under the {BANDS[band]}: " + ", ".join(f"`{i}`" for i in failing[band])]
    out = REPO / "bench" / "results" / f"claims-power-{date}.md"
    out.write_text("\n".join(lines) + "\n")
    print(out)


if __name__ == "__main__":
    main()
