"""The *qa* suite (like OfficeQA Pro): monthly fiscal bulletins 2015–2019 with tables over many
months and years; questions whose answers must be found, and often computed, across bulletins.

Each bulletin reports the last twelve months of receipts and outlays (the newest month marked
preliminary `p`, revised in the next bulletin), six months of public debt, and — in January
issues — five years of customs duties. Files: `fiscal_bulletin_YYYY_MM.txt` and `.json` for
every month, `.pdf` for the 2017 issues.
"""

from __future__ import annotations

import math
import random
from decimal import ROUND_HALF_UP, Decimal

from eval.benchmarks.builtin import solution as sol
from eval.benchmarks.builtin.writer import SuiteWriter

WS = "bulletins"
YEARS = range(2015, 2020)
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"]
SUFFIX = (
    "\n\nThe fiscal bulletins are the files of your workspace (fiscal_bulletin_YYYY_MM.txt/.json/.pdf). "
    "End your final message with the answer alone inside tags: <FINAL_ANSWER>answer</FINAL_ANSWER>."
)


def _months(years: range = YEARS) -> list[tuple[int, int]]:
    return [(y, m) for y in years for m in range(1, 13)]


def _prev(ym: tuple[int, int], k: int) -> tuple[int, int]:
    i = ym[0] * 12 + ym[1] - 1 - k
    return (i // 12, i % 12 + 1)


def _money(x: float | int) -> str:
    return f"{int(x):,}"


def _round2(x: float) -> str:
    return str(Decimal(repr(x)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


class Series:
    """The fiscal data behind every bulletin (final and preliminary values)."""

    def __init__(self, rng: random.Random):
        self.receipts, self.outlays, self.prelim, self.debt = {}, {}, {}, {}
        for i, (y, m) in enumerate(_months(range(YEARS[0] - 1, YEARS[-1] + 1))):
            season = 1.0 + 0.25 * (m in (4, 6, 9, 12)) - 0.1 * (m in (2, 8))
            self.receipts[(y, m)] = int((240_000 + 2_500 * i) * season + rng.randint(-9_000, 9_000))
            self.outlays[(y, m)] = int(300_000 + 2_300 * i + rng.randint(-15_000, 15_000))
            self.prelim[(y, m)] = self.receipts[(y, m)] + rng.choice([-1, 1]) * rng.randint(150, 2_400)
            self.debt[(y, m)] = round(18_000 + 95.5 * i + rng.uniform(-40, 40), 1)
        self.customs = {y: 31_000 + 1_700 * (y - 2010) + rng.randint(-900, 900) for y in range(2010, 2020)}

    def deficit(self, ym: tuple[int, int]) -> int:
        return self.receipts[ym] - self.outlays[ym]


def _bulletin(s: Series, y: int, m: int) -> tuple[str, dict]:
    window = [_prev((y, m), k) for k in range(11, -1, -1)]
    rows = []
    for ym in window:
        first = ym == (y, m)
        rec = s.prelim[ym] if first else s.receipts[ym]
        rows.append([f"{MONTHS[ym[1] - 1][:3]} {ym[0]}" + (" p" if first else ""), rec, s.outlays[ym], rec - s.outlays[ym]])
    debt_rows = [[f"{MONTHS[ym[1] - 1][:3]} {ym[0]}", s.debt[ym]] for ym in (_prev((y, m), k) for k in range(5, -1, -1))]
    lines = [
        f"FISCAL BULLETIN - {MONTHS[m - 1].upper()} {y}",
        "Department of the Treasury, Office of Fiscal Reporting",
        "",
        f"Receipts in {MONTHS[m - 1]} {y} totaled ${_money(s.prelim[(y, m)])} million (preliminary), and outlays "
        f"${_money(s.outlays[(y, m)])} million. Figures for earlier months are revised.",
        "",
        "Table FFO-1. Summary of Federal Fiscal Operations (in millions of dollars)",
        f"{'Month':<12}{'Receipts':>12}{'Outlays':>12}{'Surplus or deficit (-)':>26}",
    ]
    lines += [f"{r[0]:<12}{_money(r[1]):>12}{_money(r[2]):>12}{_money(r[3]):>26}" for r in rows]
    lines += ["p = preliminary", "", "Table FD-1. Public debt outstanding, end of month (in billions of dollars)"]
    lines += [f"{r[0]:<12}{r[1]:>12,.1f}" for r in debt_rows]
    data = {"issue": f"{y}-{m:02d}", "ffo1": [dict(zip(["month", "receipts", "outlays", "surplus_or_deficit"], r, strict=True)) for r in rows],
            "fd1": [{"month": r[0], "debt_billions": r[1]} for r in debt_rows]}
    if m == 1:
        years = list(range(y - 5, y))
        lines += ["", "Table CD-1. Customs duties by calendar year (in millions of dollars)"]
        lines += [f"{yy:<12}{_money(s.customs[yy]):>12}" for yy in years]
        data["cd1"] = [{"year": yy, "customs_duties": s.customs[yy]} for yy in years]
    return "\n".join(lines) + "\n", data


def _write_corpus(w: SuiteWriter, s: Series) -> None:
    for y, m in _months():
        text, data = _bulletin(s, y, m)
        base = f"fiscal_bulletin_{y}_{m:02d}"
        w.text(WS, f"{base}.txt", text)
        w.json(WS, f"{base}.json", data)
        if y == 2017:
            blocks = [("title", text.splitlines()[0])] + [("para", line) for line in text.splitlines()[1:] if line.strip()]
            w.doc(WS, f"{base}.pdf", blocks)
    w.text(WS, "about_the_bulletins.txt", "Monthly fiscal bulletins, January 2015 to December 2019. Each issue revises the previous months' receipts; the newest month is preliminary (p).")


def _f(y: int, m: int) -> str:
    return f"fiscal_bulletin_{y}_{m:02d}.txt"


def _questions(s: Series, rng: random.Random) -> list[tuple[str, str, list[str]]]:
    """(question, answer, bulletin files a solver reads)."""
    qs = []
    y, m = rng.choice([2016, 2017]), rng.randint(2, 11)
    qs.append((f"What were total receipts, in millions of dollars, in {MONTHS[m - 1]} {y}, as revised (not the preliminary figure)?",
               _money(s.receipts[(y, m)]), [_f(y, m + 1)]))
    qs.append(("What were total outlays, in millions of dollars, for calendar year 2017 (sum of the twelve monthly values)?",
               _money(sum(s.outlays[(2017, k)] for k in range(1, 13))), [_f(2017, 12)]))
    fy = [(2017, k) for k in range(10, 13)] + [(2018, k) for k in range(1, 10)]
    qs.append(("What was the total surplus or deficit, in millions of dollars, for fiscal year 2018 (October 2017 through "
               "September 2018), using revised figures? Give a deficit as a negative number.",
               _money(sum(s.deficit(ym) for ym in fy)), [_f(2018, 9), _f(2018, 10)]))
    a, b = s.receipts[(2016, 3)], s.receipts[(2019, 3)]
    qs.append(("By what percent did revised receipts change from March 2016 to March 2019? Round to the nearest "
               "hundredth and report a percent value (12.34%, not 0.1234).",
               _round2((b - a) / a * 100) + "%", [_f(2016, 4), _f(2019, 4)]))
    worst = min(((2016, k) for k in range(1, 13)), key=s.deficit)
    qs.append(("In which month of 2016 was the deficit largest (the most negative surplus or deficit, revised figures)? "
               "Answer as Month YYYY.", f"{MONTHS[worst[1] - 1]} 2016", [_f(2016, 12), _f(2017, 1)]))
    qs.append(("What was the average end-of-month public debt outstanding, in billions of dollars, from January to June "
               "2018? Round to the nearest hundredth.",
               _round2(sum(s.debt[(2018, k)] for k in range(1, 7)) / 6), [_f(2018, 6)]))
    qs.append(("By how many millions of dollars did customs duties for calendar year 2018 exceed those for 2015?",
               _money(s.customs[2018] - s.customs[2015]), [_f(2019, 1)]))
    qs.append(("List the revised receipts, in millions of dollars, for January, February and March 2019, in that order, "
               "as a bracketed list like [1, 2, 3].",
               "[" + ", ".join(_money(s.receipts[(2019, k)]) for k in (1, 2, 3)) + "]", [_f(2019, 4)]))
    vals = [s.outlays[(2017, k)] for k in range(3, 11)]
    qs.append(("What is the geometric mean of the monthly outlays from March to October 2017 inclusive, in millions of "
               "dollars? Round to the nearest hundredth.",
               _round2(math.exp(sum(math.log(v) for v in vals) / len(vals))), [_f(2017, 11)]))
    qs.append(("Receipts for April 2018 were first reported as a preliminary figure and revised in the next bulletin. "
               "By how many millions of dollars did the revision change them (revised minus preliminary)?",
               _money(s.receipts[(2018, 4)] - s.prelim[(2018, 4)]), [_f(2018, 4), _f(2018, 5)]))
    return qs


def build(w: SuiteWriter, rng: random.Random) -> None:
    s = Series(rng)
    _write_corpus(w, s)
    for i, (question, answer, files) in enumerate(_questions(s, rng), start=1):
        turns = [
            sol.find("ls | head -n 20 && ls | wc -l", "Let me see how the bulletins are named."),
            sol.read(files, "These issues hold the figures the question needs."),
            sol.finish(f"From the bulletin tables, the answer is {answer}.\n<FINAL_ANSWER>{answer}</FINAL_ANSWER>"),
        ]
        w.task(turns, id=f"qa-{i:02d}", prompt=question + SUFFIX, workspace=WS, answer=answer)
