"""The report's prose states no verdict count by hand.

Every count of verdicts in the report (how many claims were reproduced, qualitatively
reproduced, not reproduced or not run, how many claims two trees disagree on) is generated
from the runs: generated/claims_<paper>_counts.tex, the summary table, the note of
generated/ns3_compare_<paper>.tex. A count written into paper/report.tex or
paper/sections/*.tex is true of one run only and contradicts the generated tables after the
next; dated counts of earlier runs belong in docs/results/.

The check reads the TeX source with its comments and its \\generatedinput{...}{...} calls
removed, and looks for the forms such counts have taken in this report's history
(`VERDICT_COUNT_PATTERNS`). Counts spelt in words ("five of Tang's claims") are not caught.

The same holds for the size of the paper profile and what its archive holds (runs, points,
repetitions, experiment time, host CPU time: `SIZE_PATTERNS`): the prose takes them from
generated/paper_profile.tex (\\paperprofile{<paper>}{<what>}, analysis/summary.R). A size
measured once (a benchmark) may stay in a sentence that dates it (2026-11-24) or names the file
that records it (bench/results/, docs/results/). The findings of a paper come from the paper
profile (generated/headline_<paper>.tex), so no findings heading names the quick profile.

A claim the prose names with its verdict takes the verdict from \\claimverdict{<claim id>}
(generated/claim_verdicts.tex): a verdict written by hand right beside a claim's name
("\\texttt{<id>}: not reproduced", "reproduced (...; \\texttt{<id>})") is caught
(`HAND_VERDICT`); a verdict in a sentence that names the claim further away is not.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PAPER = REPO / "paper"

_N = r"(?<![\d.,/])\d+(?!\d|\.\d)"          # a whole number, not part of a decimal or a date
_VERDICT = r"(?:reproduced|qualitatively|not\s+reproduced|not\s+run)"
_OWNER = r"(?:the|its|their|[A-Z][\w.~&\\ ]{0,30}?'s)"

VERDICT_COUNT_PATTERNS = {
    "<n> reproduced / qualitatively / not reproduced / not run":
        rf"{_N}\s+(?:claims?\s+)?(?:(?:are|were|is|was)\s+)?{_VERDICT}\b",
    "<n> of <m> claims / verdicts":
        rf"{_N}\s+of\s+(?:{_OWNER}\s+)?(?:{_N}\s+)?(?:claims|verdicts)\b",
    "<n> claims": rf"{_N}\s+claims\b",
    "<n> of <paper>'s <m>": rf"{_N}\s+of\s+[A-Z][\w.~&\\ ]{{0,30}}?'s\s+{_N}",
    "differ / agree on <n>": rf"\b(?:differ|differs|differed|agree|agrees|agreed)\s+on\s+{_N}",
    "gave <n>, <n> and <n>":
        rf"\b(?:gave|gives|give|reproduces|reproduced|reproduce)\s+{_N}(?:\s+claims)?,\s*{_N},?\s+and\s+{_N}",
    "<n> / <n> / <n> (verdict tuple)": rf"{_N}\s*/\s*{_N}\s*/\s*{_N}",
}


def prose(tex: str) -> str:
    """The TeX source without comments and without \\generatedinput{..}{..} calls."""
    lines = [re.sub(r"(?<!\\)%.*$", "", line) for line in tex.splitlines()]
    text = "\n".join(lines)
    text = re.sub(r"\\generatedinput\{[^{}]*\}\{(?:[^{}]|\{[^{}]*\})*\}", " ", text)
    # TeX spacing between a number and its unit or word
    return text.replace("~", " ").replace("\\,", " ")


_SN = r"(?<![\w.,/])\d+(?!\d|\.\d)"        # a whole number standing alone (not BBRv2's 2)
SIZE_PATTERNS = {
    "<n> runs / repetitions": rf"{_SN}\s+(?:runs|repetitions)\b",
    # points of a sweep, not percentage points ("at most 10 points")
    "all <n> points / <n> sweep points / <n> points x":
        rf"(?:\ball\s+{_SN}\s+points\b|{_SN}\s+sweep\s+points\b|{_SN}\s+points\s+(?:\$\\times\$|×))",
    "<n> experiment-hours / hours of experiment time / simulated seconds":
        rf"{_SN}\s+(?:experiment-hours|hours\s+of\s+experiment\s+time|simulated\s+seconds)\b",
    "<n> host CPU-seconds / -hours": rf"{_SN}\s+host\s+CPU-(?:seconds|hours)\b",
}
_DATED = re.compile(r"\b20\d\d-\d\d-\d\d\b|bench/|docs/\\allowbreak\{\}results|docs/results")
_ITEM = re.compile(r"(?:Figs?\.|Tables?|Eq\.)\s*(?:[\dIVX]+(?:\(\w\))?(?:\s*(?:,|and|--)\s*)?)*$")


def sentences(body: str) -> list[str]:
    """The prose cut into sentences (at a full stop followed by a space and a capital)."""
    return re.split(r"(?<=[.;:])\s+(?=[A-Z\\])", body)


def profile_sizes(tex: str) -> list[str]:
    """Each hand-written profile size or cost in `tex` that no date or record file accompanies,
    as 'form: matched text' (a figure's number, "Fig. 5 runs", is not a size)."""
    found = []
    for sentence in sentences(prose(tex)):
        if _DATED.search(sentence):
            continue
        for form, pattern in SIZE_PATTERNS.items():
            for m in re.finditer(pattern, sentence):
                if _ITEM.search(sentence[:m.start()].rstrip()):
                    continue
                found.append(f"{form}: {' '.join(m.group(0).split())!r}")
    return found


def verdict_counts(tex: str) -> list[str]:
    """Each hand-written verdict count in `tex`, as 'form: matched text'."""
    body = prose(tex)
    found = []
    for form, pattern in VERDICT_COUNT_PATTERNS.items():
        for m in re.finditer(pattern, body):
            found.append(f"{form}: {' '.join(m.group(0).split())!r}")
    return found


# The dated records the report keeps on purpose: the verdicts before and after the lexicon
# change (2026-11-26) and the band rule change (2026-11-28), kept in the report; each
# section says it is a record of one evaluation on its date (its numbers are not this report's
# runs), in tables, not prose.
DATED_RECORDS = {"lexicon_change.tex": "2026-11-26", "band_rule_change.tex": "2026-11-28"}


def report_sources() -> list[Path]:
    return [PAPER / "report.tex", *sorted(p for p in (PAPER / "sections").glob("*.tex") if p.name not in DATED_RECORDS)]


def test_the_dated_record_says_it_is_one():
    for name, date in DATED_RECORDS.items():
        text = (PAPER / "sections" / name).read_text()
        assert date in text and "record" in text.lower(), name


@pytest.mark.parametrize("tex", report_sources(), ids=lambda p: p.name)
def test_no_verdict_count_written_by_hand(tex):
    found = verdict_counts(tex.read_text())
    assert not found, (f"{tex.relative_to(REPO)} states verdict counts by hand (use the generated "
                       f"claims_<paper>_counts / ns3_compare tables; dated counts go to "
                       f"docs/results/): {found}")


# Sentences the report once contained: each must be caught.
EARLIER_COUNTS = [
    r"54 claims of Ma et al.: \textbf{31 reproduced, 12 qualitatively reproduced, 11 not reproduced}, 0 not run",
    r"Of their 19 claims: 7 reproduced, 2 qualitatively reproduced, 10 not reproduced; 13 of the verdicts are robust.",
    r"gave Ma et al.'s claims 29 reproduced, 16 qualitatively reproduced and 9 not",
    r"the verdicts differ on 30 of the 62 claims: 28 reproduced, 5 qualitatively and 28 not in ns-3",
    r"same hour: 48 reproduced, 3 qualitatively, 11 not; ns-3 and the kernel differ on 29 claims)",
    r"It reproduces 10 claims, 8 qualitatively and 30 not, and differs from the",
    r"were re-read under the lexicon (62 claims), gave 51, 2 and 9:",
    r"A run after the testbed cuts of 2026-11-24 gave 49, 3 and 10.",
    r"and 8 of Yang et al.'s 48 and 4 of Tang's 62 claims between the trees",
    r"Kim et al. & 41: 36 / 0 / 5 / 0 & 45: 42 / 0 / 3 / 0 \\",
    r"``11 of 48 reproduced''",
    r"8 of Yang et al.'s 48 and",
]

# Numbers that are not verdict counts: none may be caught.
NOT_COUNTS = [
    r"the profile runs 10, 100 and 400\,Mbit/s only",
    r"the 10-ms / 50-ms BBQ flows (paper 51.4 / 42.5), against 8.5 / 84.9 with BBR",
    r"Figs.~2, 3 and 5 run both settings in both profiles",
    r"the quick profile's 22 runs (one each, 30--95\,s) used 1008 host CPU-seconds",
    r"a claim over several points matches if every point matches",
    r"(\texttt{kim2019-fig05-vsbbr-10}; paper 87.3 and 6.3\,Mbit/s)",
    r"2026-11-23 and 2026-11-24",
    r"\generatedinput{claims_tang_counts}{the verdict counts of Tang's claims}",
    r"% 54 claims: 31 reproduced (a comment)",
]



@pytest.mark.parametrize("tex", report_sources(), ids=lambda p: p.name)
def test_no_profile_size_written_by_hand(tex):
    found = profile_sizes(tex.read_text())
    assert not found, (f"{tex.relative_to(REPO)} states the paper profile's size or cost by hand (use "
                       f"\\paperprofile{{<paper>}}{{<what>}}; a benchmark's number needs its date or file): {found}")


@pytest.mark.parametrize("tex", report_sources(), ids=lambda p: p.name)
def test_findings_are_not_headed_as_the_quick_profile(tex):
    assert not re.search(r"\{Findings \(quick profile\)\}|Findings \(quick profile\)\.", tex.read_text()), tex.name


EARLIER_SIZES = [
    r"The \emph{paper} profile runs the paper's 6000-s transfers at all 110 points (183 experiment-hours), one repetition each.",
    r"the paper profile holds 31 points $\times$ 3 repetitions (11\,700 simulated seconds).",
    r"the paper profile holds 31 points $\times$ three repetitions",
    r"The paper profile (725 runs, 201 hours of experiment time, 183 of them Utsumi's) is extrapolated",
    r"The quick profile's 22 runs (one each, 30--95\,s) used 1008 host CPU-seconds (some 8.5 minutes of the two cores)",
    r"(\texttt{results/quick-ns3-linux/}; 31 runs and their report in 3\,min 34\,s)",
]
NOT_SIZES = [
    r"Fig.~5 runs at the default 100\,ms",
    r"\emph{removes} an unfairness when its distance is at most 10 points,",
    r"Fig.~14: $m = 1, 3$. BBRv2 runs with its defaults",
    r"a change of 1.7 points of share",
    r"The paper profile runs \paperprofile{tang}{points} points, \paperprofile{tang}{runs} runs",
    r"the whole quick profile (145 runs of the five papers) took 17\,min 25\,s (2026-11-24; the runs 1405 host CPU-seconds)",
    r"In this machine's quick runs of 2026-11-23 (one run per point; the 22 ns-3 runs took 31 host CPU-seconds)",
    r"Figs.~2, 3 and 5 runs both settings",
]



# A claim named in the prose with its verdict: the verdict comes from the paper profile's claims
# tables through \claimverdict{<id>} (generated/claim_verdicts.tex, analysis/summary.R), never
# written by hand beside the claim's name (in full or abbreviated, "\texttt{-fig14-bbrv2-rtt}").
_CLAIM = r"\\texttt\{(?:[a-z][a-z0-9]*)?-[a-z0-9-]+\}"
HAND_VERDICT = re.compile(rf"{_CLAIM}\s*[:,]?\s*(?:\(\s*)?(?:is\s+|was\s+)?{_VERDICT}\b"
                          rf"|\b{_VERDICT}\s*\([^()]*?{_CLAIM}")


def hand_verdicts(tex: str) -> list[str]:
    """Each claim name in `tex` followed by a verdict written by hand."""
    return [" ".join(m.group(0).split()) for m in HAND_VERDICT.finditer(prose(tex))]


@pytest.mark.parametrize("tex", report_sources(), ids=lambda p: p.name)
def test_no_claim_verdict_written_by_hand(tex):
    found = hand_verdicts(tex.read_text())
    assert not found, (f"{tex.relative_to(REPO)} gives a claim's verdict by hand (use "
                       f"\\claimverdict{{<claim id>}}): {found}")


EARLIER_VERDICTS = [
    r"(\texttt{utsumi2022-sec5-gamma-cubic}: not reproduced)",
    r"beyond the band of ``similar'' (\texttt{-fig14-bbrv2-rtt}: not reproduced; why, below)",
    "found it off and blamed pacing (\\texttt{utsumi2022-fig04-small-off}: not\nreproduced); and",
    r"(\texttt{tang-fig04-cwnd} reproduced)",
    r"The paper's ``slight overestimate'' is qualitatively reproduced (more than slight; \texttt{tang-fig04-cwnd}).",
]
NOT_VERDICTS = [
    r"(\texttt{utsumi2022-fig04-small-off}: \claimverdict{utsumi2022-fig04-small-off})",
    r"(\texttt{kim2019-alg1-overwhelm}), as the paper says",
    r"a reading (more than slight; \texttt{tang-fig04-cwnd}: \claimverdict{tang-fig04-cwnd}).",
    r"its increases are not reproduced, and the inflation exceeds it (\texttt{tang-table3-max-30}).",
]


# Each check against the sentences the report once contained (each must be caught) and against
# sentences it must let pass.
CHECKS = {"verdict counts": (verdict_counts, EARLIER_COUNTS, NOT_COUNTS),
          "profile sizes": (profile_sizes, EARLIER_SIZES, NOT_SIZES),
          "claim verdicts": (hand_verdicts, EARLIER_VERDICTS, NOT_VERDICTS)}


@pytest.mark.parametrize("check,sentence", [(c, x) for c, (_, caught, _) in CHECKS.items() for x in caught])
def test_earlier_sentences_are_caught(check, sentence):
    assert CHECKS[check][0](sentence), sentence


@pytest.mark.parametrize("check,sentence", [(c, x) for c, (_, _, passed) in CHECKS.items() for x in passed])
def test_other_sentences_pass(check, sentence):
    assert not CHECKS[check][0](sentence), CHECKS[check][0](sentence)
