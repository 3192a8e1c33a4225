"""Figure 2 (where the values of failed rubrics went), Figure 4 (what the read log holds) and the
recovery probe, on constructed rubrics (sweep B in tests/helpers/report_sweeps.py) and a stub model server."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from eval.probe.items import probe_items
from eval.probe.run import (
    ProbeConfig,
    parse_answer,
    read_log_context,
    recorded_tab,
    review_context,
    run_probe,
)
from eval.report import write_report
from eval.report.analyses.fates import fates
from eval.report.analyses.values import Haystack, mask, rubric_values, text_values
from eval.report.load import load_sweep
from tests.helpers.http_stub import Reply, StubServer, completion, tool_call
from tests.helpers.report_sweeps import EXCERPTS_B, build_sweep_b


def csv_rows(path: Path) -> dict[tuple[str, ...], dict[str, str]]:
    with open(path, newline="") as f:
        return {(r["method"], r["model"]) + ((r["condition"],) if "condition" in r else ()): r for r in csv.DictReader(f)}


def test_expected_values_of_a_rubric() -> None:
    text = 'Does `archive` hold "Q3 plan.docx", ¥55,000 (12.5%) for 2024-12 and 4000 bytes, not Q3 or r2?'
    vals = [(v.text, v.number) for v in text_values(text)]
    assert vals == [("archive", None), ("Q3 plan.docx", None), ("¥55,000", 55000.0), ("12.5%", 12.5),
                    ("2024-12", None), ("4000", 4000.0)]
    item = {"text": "Lists 7 offices.", "check": {"type": "all", "checks": [
        {"type": "contains", "values": ["Oslo", 7]}, {"type": "absent", "values": ["Paris"]},
        {"type": "row", "cells": ["Bergen", "1,200"]}]}}
    got = [(v.text, v.number, v.span) for v in rubric_values(item)]
    assert got == [("7", 7.0, (6, 7)), ("Oslo", None, None), ("Bergen", None, None), ("1,200", 1200.0, None)]
    masked, labels = mask("The total is ¥55,000 for \"Acme\".", text_values("The total is ¥55,000 for \"Acme\"."))
    assert masked == 'The total is [V1] for "[V2]".' and [v.text for v in labels.values()] == ["¥55,000", "Acme"]


def test_values_are_found_as_numbers_or_normalized_text() -> None:
    hay = Haystack("Budget: 55000 NOK; growth 12.50 %; ACME  Corp")
    vals = {v.text: v for v in text_values('55,000 and 12.5% and "Acme Corp" and "Acme Inc" and 5500')}
    assert hay.has(vals["55,000"]) and hay.has(vals["12.5%"]) and hay.has(vals["Acme Corp"])
    assert not hay.has(vals["Acme Inc"]) and not hay.has(vals["5500"])
    # text values agree with the rule checks' whole-word look-up
    from eval.judges.rule.matching import text_has

    text = "Osloveien 5 · **Article 4:** Water — policy_v2.docx; Q3-plan (draft)"
    hay = Haystack(text)
    for needle in ["Oslo", "Osloveien", "article 4 water", "policy_v2.docx", "Q3 plan", "draft", "raft", "plan (draft)"]:
        v = text_values(f'"{needle}"')[0]
        assert hay.has(v) is text_has(text, needle), needle


@pytest.fixture
def sweep_b(tmp_path: Path) -> Path:
    return build_sweep_b(tmp_path / "b")


def test_figure2_classifies_failed_rubrics(sweep_b: Path) -> None:
    sweep = load_sweep(sweep_b)
    dci = {f.item["index"]: f.category for f in fates(sweep.job("wb__t9__dci__m1__s0"))}
    # 0: 55,000 shown and delivered -> judged wrong; 1: Acme Corp never in a tool output;
    # 2: North shown, not delivered; 3: no values; 4: passed; 5: Bergen (check value) not delivered.
    assert dci == {0: "present_wrong", 1: "never_shown", 2: "shown_missing", 3: None, 4: None, 5: "shown_missing"}
    rt = {f.item["index"]: f.category for f in fates(sweep.job("wb__t9__runningtab__m1__s0"))}
    # 140 appears only in status lines and Bergen only in a listing: neither is workspace content shown
    # (rubric 5 is shown-but-missing for Oslo alone).
    assert rt == {0: "shown_missing", 1: "shown_missing", 2: None, 3: None, 4: None, 5: "shown_missing"}

    out = write_report(sweep_b)
    t = csv_rows(out / "figure2.csv")
    d, r = t[("dci", "m1")], t[("runningtab", "m1")]
    assert [int(d[c]) for c in ("failed", "no_values", "classified", "never_shown", "shown_missing", "present_wrong")] == [5, 1, 4, 1, 2, 1]
    assert [float(d[c]) for c in ("never_shown_pct", "shown_missing_pct", "present_wrong_pct")] == [25.0, 50.0, 25.0]
    assert [int(r[c]) for c in ("failed", "no_values", "classified", "never_shown", "shown_missing", "present_wrong")] == [4, 1, 3, 0, 3, 0]
    v = csv_rows(out / "figure2_values.csv")
    # DCI: 7 values, 6 shown (all but Acme Corp), 2 missing (North, Bergen). RunningTab: 3 shown, all missing.
    assert [v[("dci", "m1")][c] for c in ("values", "shown", "shown_missing")] == ["7", "6", "2"]
    assert float(v[("dci", "m1")]["shown_missing_pct"]) == pytest.approx(100 / 3)
    assert [v[("runningtab", "m1")][c] for c in ("values", "shown", "shown_missing")] == ["7", "3", "3"]
    assert (out / "figure2.png").stat().st_size > 1000

    left = csv_rows(out / "figure4_left.csv")[("runningtab", "m1")]
    # missing: 55,000, Acme Corp, Oslo (Bergen, seen in a listing only, was never shown); the read log holds all three
    assert [left[c] for c in ("missing", "in_read_log", "numeric_missing", "numeric_in_read_log")] == ["3", "3", "1", "1"]
    assert float(left["in_read_log_pct"]) == 100.0 and float(left["numeric_in_read_log_pct"]) == 100.0
    assert "right part skipped: no probe results" in (out / "report.md").read_text()


def test_parse_answer() -> None:
    assert parse_answer('```json\n{"[V1]": "55,000", "[V2]": null}\n```') == {"[V1]": "55,000"}
    assert parse_answer("Sure: {\"[V1]\": 7} done") == {"[V1]": "7"}
    assert parse_answer("no idea") == {} and parse_answer("{broken") == {}


def test_probe_recovers_per_condition_through_the_model_client_and_cache(tmp_path: Path) -> None:
    with StubServer() as stub:
        model_cfg = {"kind": "openai", "name": "stub-model", "base_url": stub.url, "max_retries": 0}
        sdir = build_sweep_b(tmp_path / "b", model_cfg)
        items = probe_items(load_sweep(sdir), ("runningtab",))
        # Rubric 5's values come from its check and are not written in its text: nothing to mask.
        assert [(i.rubric, i.masked, i.targets) for i in items] == [
            (0, "The report states the total budget of [V1].", ["[V1]"]),
            (1, 'The report names the supplier "[V1]".', ["[V1]"]),
        ]
        stub.push(
            Reply(body=completion('{"[V1]": "50,000"}')),  # r0, nothing more: wrong
            Reply(body=completion(None, [tool_call("s1", "tab_show", '{"entry_id": "L1"}')])),  # r0, review: opens L1
            Reply(body=completion('```json\n{"[V1]": "55,000"}\n```')),
            Reply(body=completion('{"[V1]": "55000"}')),  # r0, whole read log
            Reply(body=completion('{"[V1]": null}')),  # r1, nothing more
            Reply(body=completion('The value: {"[V1]": "Acme Corp"}')),  # r1, review, no show
            Reply(body=completion('{"[V1]": "acme corp"}')),  # r1, whole read log
        )
        cfg = ProbeConfig(cache_dir=str(tmp_path / "cache"), workers=1)
        path = run_probe(sdir, cfg)
        sent = [r["body"] for r in stub.requests]
        assert len(sent) == 7
        assert "Budget total" not in sent[0]["messages"][1]["content"] and sent[0].get("tools") in (None, [])
        assert "L1 a.md: Budget total: 55,000 NOK" in sent[1]["messages"][1]["content"]
        assert [t["function"]["name"] for t in sent[1]["tools"]] == ["tab_show"]
        shown = recorded_tab(load_sweep(sdir).job("wb__t9__runningtab__m1__s0")).show("L1")[0].content  # the tab's own reply
        assert shown.endswith(EXCERPTS_B["a.md"])
        assert sent[2]["messages"][-1] == {"role": "tool", "tool_call_id": "s1", "content": shown}
        assert all(text in sent[3]["messages"][1]["content"] for text in EXCERPTS_B.values())
        assert "L2 b.md: Supplier list: Acme Corp" in sent[5]["messages"][1]["content"]

        records = [json.loads(line) for line in path.read_text().splitlines()]
        got = {(r["rubric"], r["condition"]): r for r in records}
        assert {k: r["recovered"] for k, r in got.items()} == {
            (0, "none"): 0, (0, "review"): 1, (0, "read_log"): 1, (1, "none"): 0, (1, "review"): 1, (1, "read_log"): 1,
        }
        sweep = load_sweep(sdir)
        job = sweep.job("wb__t9__runningtab__m1__s0")
        r0 = next(i for i in probe_items(sweep, ("runningtab",)) if i.rubric == 0)
        review0 = review_context(r0, cfg)
        assert review0 in sent[1]["messages"][1]["content"]
        assert got[(0, "none")]["context_chars"] == 0
        assert got[(0, "review")]["context_chars"] == len(review0) + len(shown) and got[(0, "review")]["opened"] == ["L1"]
        log_text, cut = read_log_context(job, cfg.max_log_chars)
        assert not cut and got[(1, "read_log")]["context_chars"] == len(log_text)

        # The same probe again: every answer comes from the cache, none from the server.
        again = run_probe(sdir, cfg)
        assert len(stub.requests) == 7
        assert json.loads((sdir / "probe" / "probe_config.json").read_text())["calls"] == 0
        assert [json.loads(x)["recovered"] for x in again.read_text().splitlines()] == [r["recovered"] for r in records]

    out = write_report(sdir)
    right = csv_rows(out / "figure4_right.csv")
    assert [(c, right[("runningtab", "m1", c)]["values"], right[("runningtab", "m1", c)]["recovered"]) for c in ("none", "review", "read_log")] == [
        ("none", "2", "0"), ("review", "2", "2"), ("read_log", "2", "2")]
    assert float(right[("runningtab", "m1", "review")]["recovered_pct"]) == 100.0
    assert float(right[("runningtab", "m1", "read_log")]["median_context_chars"]) == len(log_text)
    assert (out / "figure4_right.png").exists()


def test_probe_errors_are_recorded_and_left_out(tmp_path: Path) -> None:
    with StubServer(default=Reply(400, {"error": {"message": "bad request"}})) as stub:
        sdir = build_sweep_b(tmp_path / "b", {"kind": "openai", "name": "stub-model", "base_url": stub.url, "max_retries": 0})
        path = run_probe(sdir, ProbeConfig(cache_dir=str(tmp_path / "cache"), workers=2))
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(records) == 6 and all(r["error"] for r in records)
    md = (write_report(sdir) / "report.md").read_text()
    assert "6 probe call(s) failed and are left out" in md


def test_haystack_numbers_agree_with_the_rule_checks() -> None:
    """Number look-ups read only windows around digits; they must agree with reading every number."""
    from eval.judges.rule.matching import numbers_in

    text = ("Totals: 55,000 and 1,234,567.50; growth -3.25% (was 3.2); fullwidth ５５ ids r12 Q3 2024-12-01 "
            "list 1,2,3 and 7.5e3 and 0.5 and 12.500 and 9" * 3 + " 1234" * 2500)
    hay = Haystack(text)
    truth = set(numbers_in(text))
    for x in [55000, 55, 1234567.5, -3.25, 3.25, 3.2, 12, 3, 2024, 1, 2, 7.5, 0.5, 12.5, 9, 1234, 4, 1234567, 99, 0]:
        v = text_values(str(x))[0] if x >= 0 else text_values(f"total {x}")[0]
        assert v.number == x and hay.has(v) is (x in truth), x


def test_report_tables_and_figures_reach_the_tracker(sweep_b: Path) -> None:
    from runners.tracking.tracker import JsonlTracker

    class Recording:
        def __init__(self) -> None:
            self.calls: list[tuple[dict, dict]] = []

        def log_summary(self, tables: dict, images: dict | None = None) -> None:
            self.calls.append((tables, images or {}))

    rec = Recording()
    write_report(sweep_b, rec)
    (tables, images), = rec.calls
    assert {"table1", "figure2", "figure2_values", "figure4_left"} <= set(tables)
    cols, rows = tables["figure2"]
    assert cols[:4] == ["benchmark", "method", "model", "failed"] and len(rows) == 2
    assert {"figure2", "figure4_left"} <= set(images) and all(p.is_file() for p in images.values())
    write_report(sweep_b, JsonlTracker(sweep_b))  # the runner's tracker without images
    logged = [json.loads(line) for line in (sweep_b / "tracker.jsonl").read_text().splitlines()]
    assert logged[-1]["kind"] == "summary" and "table1" in logged[-1]["tables"]


def test_probe_review_stops_opening_entries_at_the_limit(tmp_path: Path) -> None:
    from eval.probe.probe_texts import text

    with StubServer() as stub:
        sdir = build_sweep_b(tmp_path / "b", {"kind": "openai", "name": "stub-model", "base_url": stub.url, "max_retries": 0})
        stub.push(
            Reply(body=completion('{"[V1]": "1"}')),
            Reply(body=completion(None, [tool_call("a", "tab_show", '{"entry_id": "L1"}')])),
            Reply(body=completion(None, [tool_call("b", "tab_show", '{"entry_id": "L2"}'), tool_call("c", "tab_show", '{"entry_id": "L9"}')])),
            Reply(body=completion('{"[V1]": "55,000"}')),
            Reply(body=completion('{"[V1]": "2"}')),
        )
        path = run_probe(sdir, ProbeConfig(cache_dir=str(tmp_path / "cache"), workers=1, limit=1, max_show=1))
        sent = [r["body"] for r in stub.requests]
    assert len(sent) == 5
    assert [m["content"] for m in sent[3]["messages"][-2:]] == [text("show_limit")] * 2
    review = next(json.loads(x) for x in path.read_text().splitlines() if json.loads(x)["condition"] == "review")
    assert review["opened"] == ["L1"] and review["recovered"] == 1
    item = probe_items(load_sweep(sdir), ("runningtab",))[0]
    assert review["context_chars"] == len(review_context(item, ProbeConfig())) + len(recorded_tab(item.job).show("L1")[0].content)
