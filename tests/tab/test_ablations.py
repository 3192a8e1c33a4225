"""Each ablation switch (paper Table 4) changes exactly what it should, and nothing else.

The same scripted session runs under the full tab and under each ablation; the observables (tools
offered, system block, status lines, replies, finish check, record) are compared field by field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tab.config import TabConfig
from tests.tab.test_support import Session, own, write_files

FILES = {
    "policies/hotel.md": "Article 7 Hotel standards\nHotels up to 500 per night.\n",
    "policies/meals.md": "Meal allowance\nBreakfast is included.\n",
    "archive/hotel_rates_2019.md": "old\n",
}
STEPS: list[tuple[str, dict[str, Any]]] = [
    ("tab_add", {"requirements": ["Hotel standards per night", "Meal allowance rules", "Taxi rules"]}),
    ("bash", {"command": "find . -type f"}),
    ("bash", {"command": "cat policies/hotel.md"}),
    ("read", {"path": "policies/meals.md"}),
    ("tab_review", {}),
    ("tab_resolve", {"id": "r2", "status": "done", "entries": ["L1"]}),  # L1 shares no word with r2
    ("tab_resolve", {"id": "r3", "status": "done"}),  # no evidence
    ("tab_resolve", {"id": "r1", "status": "done", "entries": ["L1"]}),
    ("tab_show", {"entry_id": "L1"}),
]
REVIEW, UNSUPPORTED, UNCITED, GROUNDED, SHOW = 4, 5, 6, 7, 8


def run(tmp_path: Path, config: TabConfig) -> dict[str, Any]:
    root = tmp_path / f"ws{len(list(tmp_path.iterdir()))}"
    write_files(root, FILES)
    s = Session(root, config)
    results = [s.one(name, **args) for name, args in STEPS]
    out = {
        "tools": [t["function"]["name"] for t in s.tab.tools()],
        "schemas": s.tab.tools(),
        "system": s.tab.system_prompt(),
        "status": [r.appendix for r in results],
        # the operations' replies (a bash or read result is the environment's, not the tab's)
        "replies": [(own(r), r.is_error) if name.startswith("tab_") else None for (name, _), r in zip(STEPS, results, strict=True)],
        "finish": s.stop(),
        "finish_again": s.stop(),
        "record": s.tab.record(),
    }
    s.close()
    return out


@pytest.fixture
def full(tmp_path: Path) -> dict[str, Any]:
    return run(tmp_path, TabConfig())


def test_full_tab_reference(full: dict[str, Any]) -> None:
    assert full["tools"] == ["tab_add", "tab_review", "tab_resolve", "tab_show"]
    assert full["replies"][UNSUPPORTED][1] and full["replies"][UNCITED][1]  # both refused
    assert full["finish"].startswith("Before you finish: 2 requirements on the tab still open:")
    assert "  L2 policies/meals.md: Meal allowance" in full["finish"]  # with the review
    assert full["finish_again"] is None
    assert full["record"]["settings"] == {"capture": True, "review": True, "evidence_check": True, "finish_check": True}


def test_no_finish_check_changes_only_the_stop(tmp_path: Path, full: dict[str, Any]) -> None:
    got = run(tmp_path, TabConfig(finish_check=False))
    assert got["finish"] is None and got["finish_again"] is None
    for key in ("tools", "schemas", "system", "status", "replies"):
        assert got[key] == full[key], key
    assert got["record"]["read_log"] == full["record"]["read_log"]
    assert got["record"]["requirements"] == full["record"]["requirements"]


def test_no_review_removes_the_review_and_nothing_else(tmp_path: Path, full: dict[str, Any]) -> None:
    got = run(tmp_path, TabConfig(review=False))
    assert got["tools"] == ["tab_add", "tab_resolve", "tab_show"]
    assert "tab_review" not in got["system"] and "tab_review" in full["system"]
    assert got["replies"][REVIEW][1] and "Unknown tool 'tab_review'" in got["replies"][REVIEW][0]
    same = [i for i in range(len(STEPS)) if i != REVIEW]
    # refusals point at the review only where it is offered; otherwise the replies are the same
    def without_review(reply: tuple[str, bool] | None) -> tuple[str, bool] | None:
        return reply and (reply[0].replace(" (tab_review shows the matching ones)", ""), reply[1])

    assert [got["replies"][i] for i in same] == [without_review(full["replies"][i]) for i in same]
    assert all("tab_review" not in (got["replies"][i] or ("",))[0] for i in same)
    assert [got["status"][i] for i in same] == [full["status"][i] for i in same]
    assert [s for s in got["schemas"] if s["function"]["name"] != "tab_review"] == [
        s for s in full["schemas"] if s["function"]["name"] != "tab_review"]
    assert got["finish"].split("\n") == [
        "Before you finish: 2 requirements on the tab still open:", "r2: Meal allowance rules", "r3: Taxi rules",
        full["finish"].split("\n")[-1]]
    assert got["record"]["read_log"] == full["record"]["read_log"]


def test_no_evidence_check_accepts_unsupported_resolutions_only(tmp_path: Path, full: dict[str, Any]) -> None:
    got = run(tmp_path, TabConfig(evidence_check=False))
    assert got["tools"] == full["tools"] and got["system"] == full["system"]
    resolve = next(s for s in got["schemas"] if s["function"]["name"] == "tab_resolve")
    assert "must cite" not in resolve["function"]["description"]
    assert got["replies"][UNSUPPORTED] == ("r2 done, citing L1. 2 still open: r1, r3.", False)
    assert got["replies"][UNCITED] == ("r3 done. 1 still open: r1.", False)
    same = [i for i in range(len(STEPS)) if i not in (UNSUPPORTED, UNCITED, GROUNDED)]
    assert [got["replies"][i] for i in same] == [full["replies"][i] for i in same]
    assert got["replies"][GROUNDED] == ("r1 done, citing L1. All 3 requirements are resolved.", False)
    assert full["replies"][GROUNDED] == ("r1 done, citing L1. 2 still open: r2, r3.", False)
    # the status lines differ only in how many requirements are open
    assert [line.split(" · ", 1)[1] for line in got["status"]] == [line.split(" · ", 1)[1] for line in full["status"]]
    assert [line.split(" · ", 1)[0][-8:] for line in got["status"]] == ["(3 open)"] * 5 + [
        "(2 open)", "(1 open)", "(0 open)", "(0 open)"]
    assert got["finish"].startswith("All 3 requirements on the tab are resolved:")
    assert got["record"]["read_log"] == full["record"]["read_log"]
    assert got["record"]["candidates"] == full["record"]["candidates"]


def test_no_capture_removes_read_log_candidates_review_and_evidence(tmp_path: Path, full: dict[str, Any]) -> None:
    got = run(tmp_path, TabConfig(capture=False))
    assert got["tools"] == ["tab_add", "tab_resolve"]
    assert "read log" not in got["system"] and "tab_review" not in got["system"] and "tab_show" not in got["system"]
    resolve = next(s for s in got["schemas"] if s["function"]["name"] == "tab_resolve")
    assert "entries" not in resolve["function"]["parameters"]["properties"]
    assert got["status"][0] == "[tab] 3 requirements (3 open)"
    assert got["status"][3] == "[tab] 3 requirements (3 open)"  # reads are not recorded
    assert got["status"][-1] == "[tab] 3 requirements (2 open)"
    assert got["record"]["read_log"] == [] and got["record"]["candidates"] == []
    assert got["replies"][UNCITED] == ("r3 done. 2 still open: r1, r2.", False)  # no citation needed
    # there is no read log to cite: the environment's schema check refuses `entries`
    assert got["replies"][UNSUPPORTED][1] and "unknown argument(s) entries" in got["replies"][UNSUPPORTED][0]
    assert "Unknown tool 'tab_show'" in got["replies"][SHOW][0]
    assert got["finish"].split("\n")[:3] == [
        "Before you finish: 2 requirements on the tab still open:", "r1: Hotel standards per night",
        "r2: Meal allowance rules"]
    assert "tab_review" not in got["finish"] and "citing" not in got["finish"]


def test_tab_review_and_show_called_directly_when_not_offered(tmp_path: Path) -> None:
    from tab.tab import Tab

    tab = Tab(tmp_path, TabConfig(capture=False))
    reply = tab.call("tab_review", {}, 1)
    assert reply.is_error and "not available in this configuration" in reply.content
    assert "no operation 'tab_nope'" in tab.call("tab_nope", {}, 1).content


def test_config_from_a_mapping_and_bad_keys() -> None:
    assert TabConfig.coerce({"review": False}).review is False
    with pytest.raises(ValueError, match="unknown tab settings"):
        TabConfig.coerce({"reveiw": False})
    with pytest.raises(ValueError, match="positive integer"):
        TabConfig(review_lines=0)


def test_every_reader_of_the_switches_uses_the_one_list() -> None:
    """A new switch is added in tab/config.py only; Table 4, the report loader and the W&B cell keys follow it."""
    import dataclasses

    from eval.report import load
    from eval.report.analyses import table4
    from runners.tracking import cells as tracking_cells
    from tab.config import SWITCHES, TabConfig

    assert list(TabConfig().settings()) == list(SWITCHES)
    assert SWITCHES == tuple(f.name for f in dataclasses.fields(TabConfig) if f.type in (bool, "bool"))
    assert table4.SWITCHES is load.TAB_SWITCHES is tracking_cells.TAB_SWITCHES is SWITCHES
