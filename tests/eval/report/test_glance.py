"""The report's first screen and per-task view (issue 53, items 1-2), on constructed records: the forest
plot draws the paired table's own rows (the same differences, intervals and p), each benchmark's
headline metric first; the leaderboard's heat map holds Table 1's numbers, blank where there is no
result; the per-task view sorts tasks by the gain and every cell links to the side-by-side page of
its pair. The same pages in a real browser: test_first_screen.py."""

from __future__ import annotations

import csv
import html
import json
import re
from pathlib import Path

import pytest

from eval.report import write_report
from eval.report.pages.forest import SHORT, ForestRow, axis_span, forest_svg, text_width
from runners.core.job_status import Planned, write_plan
from tests.eval.report.test_harness import PATTERNS, _sweep
from tests.helpers.report_sweeps import PATTERNS as PATTERNS_A
from tests.helpers.report_sweeps import build_sweep_a, rubric_scores, write_job

ROW = re.compile(r'<g class="frow" data-setting="([^"]*)" data-method="([^"]*)" data-metric="([^"]*)" data-kind="(\w+)" '
                 r'data-diff="([^"]*)" data-low="([^"]*)" data-high="([^"]*)" data-p="([^"]*)"[^>]*>')


def _csv(report: Path, name: str) -> list[dict[str, str]]:
    with open(report / f"{name}.csv", newline="") as f:
        return list(csv.DictReader(f))


def _part(index: str, start: str, end: str) -> str:
    return index[index.index(start) : index.index(end, index.index(start))]


def _forest(index: str, where: str) -> list[tuple[str, ...]]:
    return ROW.findall(_part(index, f'id="{where}"', "</svg>"))


@pytest.fixture(scope="module")
def sweep_a(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_report(build_sweep_a(tmp_path_factory.mktemp("glance") / "s"))


def test_the_forest_draws_the_paired_tables_rows_headline_metric_first(sweep_a: Path) -> None:
    index = (sweep_a / "index.html").read_text()
    assert index.index('id="glance"') < index.index('id="per-task"') < index.index('id="table1"')  # the tables stay below
    paired = {(f"{r['benchmark']} · {r['model']}", r["method"], r["metric"]): r for r in _csv(sweep_a, "table1_vs_dci")}
    head, other = _forest(index, "forest-headline"), _forest(index, "forest-other")
    assert {r[2] for r in head} == {"rubric_pass_rate", "acc0"}  # wb's and qa's headline metric
    assert {r[2] for r in other} == {"tcr70", "acc1"}
    assert len(head) + len(other) == len(paired)
    for setting, method, metric, kind, diff, low, high, p in head + other:
        r = paired[(html.unescape(setting), method, metric)]
        assert float(diff) == pytest.approx(float(r["diff"]), abs=1e-9)  # the table's own numbers, not computed again
        assert (float(low), float(high), float(p)) == pytest.approx((float(r["ci_low"]), float(r["ci_high"]), float(r["p_value"])))
        assert kind == ("gain" if float(low) > 0 else "loss" if float(high) < 0 else "unsure")
    assert [(r[0], r[1]) for r in head] == [("qa · m1", "runningtab"), ("wb · m1", "runningtab"), ("wb · m1", "runningtab_no_review"),
                                            ("wb · m2", "runningtab")]  # the paired table's order


def test_the_heat_map_holds_table1s_headline_and_blanks_where_no_result(sweep_a: Path, tmp_path: Path) -> None:
    index = (sweep_a / "index.html").read_text()
    heat = _part(index, 'id="leaderboard-heat"', "</table>")
    table1 = {(r["benchmark"], r["model"], r["method"]): r for r in _csv(sweep_a, "table1")}
    rows = re.findall(r'<tr data-benchmark="(\w+)" data-harness="dci" data-method="(\w+)">(.*?)</tr>', heat)
    assert [(b, m) for b, m, _ in rows] == [("qa", "dci"), ("qa", "runningtab"), ("wb", "dci"), ("wb", "runningtab"),
                                           ("wb", "runningtab_no_review")]
    for bench, method, cells in rows:
        values = re.findall(r"<td class=\"num ([^\"]*)\"[^>]*>([^<]*)</td>", cells)
        assert len(values) == 2  # m1, m2 (m3 ran only an unfinished job)
        for model, (cls, text) in zip(("m1", "m2"), values, strict=True):
            metric = "acc0" if bench == "qa" else "rubric_pass_rate"
            t1 = table1.get((bench, model, method))
            if t1 is None:
                assert (cls, text) == ("na", "–")  # no result: never 0
            else:
                assert text == f"{float(t1[metric]):.1f}" and cls.split()[0] == f"q{round(float(t1[metric]) / 10)}"
    top = re.findall(r'<td class="num q\d+ top" title="(\w+) · dci · (\w+) · (\w+):', heat)
    assert top == [("qa", "runningtab", "m1"), ("wb", "runningtab", "m1"), ("wb", "runningtab", "m2")]  # each column's best, framed
    # a sweep of one harness has a heat map but no leaderboard table
    assert not (sweep_a / "leaderboard.csv").exists()
    two = write_report(_sweep(tmp_path / "two", PATTERNS))
    heat2 = _part((two / "index.html").read_text(), 'id="leaderboard-heat"', "</table>")
    board = {(r["harness"], r["method"]): (r["m1"], r["m2"]) for r in _csv(two, "leaderboard")}
    for (harness, method), vals in board.items():
        row = re.search(rf'<tr data-benchmark="wb" data-harness="{harness}" data-method="{method}">(.*?)</tr>', heat2).group(1)
        assert re.findall(r">([^<]*)</td>", row) == [f"{float(v):.1f}" if v else "–" for v in vals]


def _rate(passed: str) -> float:
    return passed.count("1") / len(passed)


def test_per_task_view_sorts_by_the_gain_and_links_each_job_to_its_side_by_side(sweep_a: Path) -> None:
    index = (sweep_a / "index.html").read_text()
    grid = _part(index, 'data-benchmark="wb" data-harness="dci" data-model="m1"', "</table>")
    gains = {}  # RunningTab − DCI per task, mean over the seeds both ran (from the patterns, not the report)
    for task in ("t1", "t2", "t3"):
        diffs = [_rate(PATTERNS_A[("runningtab", "m1", s)][task]) - _rate(PATTERNS_A[("dci", "m1", s)][task]) for s in (0, 1)]
        gains[task] = sum(diffs) / 2
    rows = re.findall(r'<tr data-task="(\w+)">(.*?)</tr>', grid)
    assert [t for t, _ in rows] == sorted(gains, key=lambda t: (-gains[t], t))
    for task, body in rows:
        assert f">{100 * gains[task]:+.1f}</td>" in body
        cells = dict(re.findall(r'<td data-method="(\w+)"><span class="chips">(.*?)</span></td>', body))
        assert list(cells) == ["dci", "runningtab", "runningtab_no_review"]  # the baseline first
        for method, chips in cells.items():
            links = re.findall(r'<a class="(q\d+)" href="([^"]+)" title="seed (\d): [^"]*">(\d+)</a>', chips)
            assert [int(s) for _, _, s, _ in links] == [0, 1]
            for cls, href, seed, text in links:
                value = _rate(PATTERNS_A[(method, "m1", int(seed))][task])
                assert (cls, text) == (f"q{round(value * 10)}", f"{100 * value:.0f}")
                partner = "runningtab" if method == "dci" else method
                assert href == f"compare/wb__{task}__{partner}__m1__s{seed}__vs__dci.html"
                assert (sweep_a / href).is_file()
    assert '<a href="#failing">the rubrics that fail most</a>' in _part(index, 'id="per-task"', "</section>")


def test_a_job_without_a_result_is_grey_and_out_of_the_gain(tmp_path: Path) -> None:
    sdir = tmp_path / "s"
    for seed, (dci, rt) in enumerate([("1100", "1111"), ("1100", "0000")]):
        write_job(sdir, "wb", "t1", "dci", "m1", seed, rubric_scores(list("abcd"), dci))
        d = write_job(sdir, "wb", "t1", "runningtab", "m1", seed, rubric_scores(list("abcd"), rt))
    result = json.loads((d / "result.json").read_text()) | {"stop_reason": "env_error", "errored": True}
    (d / "result.json").write_text(json.dumps(result))  # seed 1's RunningTab job errored: not a result
    index = (write_report(sdir) / "index.html").read_text()
    row = _part(index, '<tr data-task="t1">', "</tr>")
    assert ">+50.0</td>" in row  # seed 0 alone (100 − 50), not the mean with the errored job's 0
    assert '<a class="na" href="compare/wb__t1__runningtab__m1__s1__vs__dci.html" title="seed 1: errored' in row
    assert ">err</a>" in row


def test_each_row_says_how_many_of_its_planned_jobs_are_results(tmp_path: Path) -> None:
    """Beside each forest row: results / planned from the accounting (issue 48), the not-results' kinds
    in its tooltip; a method with no pair at all is named under the figure with where its jobs went."""
    sdir = tmp_path / "s"
    for task in ("t1", "t2", "t3"):
        for seed in (0, 1):
            write_job(sdir, "wb", task, "dci", "m1", seed, rubric_scores(list("abcd"), "1100"))
            write_job(sdir, "wb", task, "runningtab", "m1", seed, rubric_scores(list("abcd"), "1110"))
            todo = write_job(sdir, "wb", task, "todo", "m1", seed, rubric_scores(list("abcd"), "1000"))
            (todo / "result.json").write_text(json.dumps(json.loads((todo / "result.json").read_text()) | {"stop_reason": "env_error",
                                                                                                         "errored": True}))
    rt = {task: sdir / f"wb__{task}__runningtab__m1__s1" for task in ("t1", "t2")}
    result = json.loads((rt["t1"] / "result.json").read_text()) | {"stop_reason": "model_error", "errored": True}
    (rt["t1"] / "result.json").write_text(json.dumps(result))  # errored: not a result
    (rt["t2"] / "result.json").unlink()  # unfinished
    write_plan(sdir, [Planned("wb__t4__runningtab__m1__s0", "wb", "dci", "m1", "runningtab", "t4", 0)])  # never started
    index = (write_report(sdir) / "index.html").read_text()
    forest = _part(index, 'id="forest-headline"', "</svg>")
    (row,) = re.findall(r'<g class="frow" data-setting="wb · m1" data-method="runningtab"[^>]*>.*?</g>', forest)
    assert 'data-planned="7" data-results="4" data-short="3: 1 errored, 1 unfinished, 1 not started"' in row
    assert ("runningtab: 4 of 7 planned jobs are results; 3 are not: 1 errored, 1 unfinished, 1 not started; "
            "DCI: 6 of 6 planned jobs are results</title>") in row
    assert re.search(rf'<text class="lab" data-col="counts"[^>]* fill="{SHORT}" font-weight="bold">4 / 7</text>', row)
    assert "results / planned</text>" in forest and "in this colour</span> when some are not" in index
    unpaired = _part(index, 'id="forest-unpaired"', "</div>")
    assert "wb · m1 · todo: 0 of 6 planned jobs are results; 6 are not: 6 errored" in unpaired
    assert "runningtab" not in unpaired


def test_a_row_whose_planned_jobs_are_all_results_is_plain(sweep_a: Path) -> None:
    forest = _part((sweep_a / "index.html").read_text(), 'id="forest-headline"', "</svg>")
    counts = re.findall(r'<text class="lab" data-col="counts"([^>]*)>(\d+) / (\d+)</text>', forest)
    assert len(counts) == len(ROW.findall(forest)) == 4
    assert all(attrs.count("fill") == 0 and results == planned for attrs, results, planned in counts)


def test_no_baseline_says_why_and_names_are_escaped(tmp_path: Path) -> None:
    sdir = tmp_path / "s"
    write_job(sdir, "wb", "t1", "runningtab", "m<i>", 0, rubric_scores(list("ab"), "10"))
    index = (write_report(sdir) / "index.html").read_text()
    glance = _part(index, 'id="glance"', "</section>")
    assert "No paired comparison to draw: paired comparison skipped: the sweep has no DCI jobs" in glance
    assert "m<i>" not in index and "m&lt;i&gt;" in glance  # in the heat map
    assert "no baseline to sort by" in index


def test_forest_labels_fit_their_columns_and_the_axis_holds_every_interval() -> None:
    model = "a-very-long-model-name" * 4
    long = f"workspace_bench · claude_code · {model}"
    rows = [ForestRow("workspace_bench", "claude_code", model, "runningtab", "rubric_pass_rate", 3.0, -2.0, 8.0, 0.2, 30, 10),
            ForestRow("wb", "dci", "m", "todo", "rubric_pass_rate", -31.0, -47.5, -12.0, 0.01, 30, 10)]
    svg = forest_svg(rows, "DCI", "f")
    assert axis_span(rows) == 50 and axis_span(rows[:1]) == 10  # the farthest end, at least ±10
    labels = re.findall(r'<text class="lab" data-col="setting"[^>]*>([^<]*)</text>', svg)
    assert labels[0].endswith("…") and html.unescape(labels[0])[:-1] in long and labels[1] == "wb · m"
    assert text_width(html.unescape(labels[0])) <= 330  # the column's cap
    assert f"<title>{html.escape(long)} · runningtab" in svg  # the whole label in the row's tooltip
