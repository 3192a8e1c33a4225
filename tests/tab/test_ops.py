"""The four operations: replies, the evidence check's refusals and acceptance, re-resolving, show."""

from __future__ import annotations

from pathlib import Path

import pytest

from tab.config import TabConfig
from tests.tab.test_support import Session, own, write_files

FILES = {
    "policies/hotel.md": "Article 7 Hotel standards\nHotels up to 500 per night.\n",
    "policies/meals.md": "Meal allowance\nBreakfast is included.\n",
    "archive/hotel_rates_2019.md": "old\n",
}


@pytest.fixture
def session(tmp_path: Path):
    write_files(tmp_path, FILES)
    s = Session(tmp_path)
    s.one("tab_add", requirements=["Hotel standards per night", "Meal allowance rules"])
    s.one("bash", command="find . -type f")
    s.one("bash", command="cat policies/hotel.md")  # L1
    s.one("read", path="policies/meals.md")  # L2
    yield s
    s.close()


def test_add_returns_ids_skips_duplicates_and_refuses_nothing(session: Session) -> None:
    reply = session.one("tab_add", requirements=["Taxi rules", "hotel  STANDARDS per night", "  "])
    assert reply.content.split("\n")[:2] == ["Added 1 requirement to the tab:", "r3: Taxi rules"]
    assert "r1 already states" in reply.content
    empty = session.one("tab_add", requirements=[])
    assert empty.is_error and "non-empty list" in empty.content
    assert list(session.tab.state.requirements) == ["r1", "r2", "r3"]


def test_resolve_done_needs_a_cited_entry(session: Session) -> None:
    reply = session.one("tab_resolve", id="r1", status="done")
    assert reply.is_error and "only with evidence" in reply.content
    assert session.tab.state.requirements["r1"].status == "open"


def test_resolve_refuses_unknown_entries_and_lists_what_exists(session: Session) -> None:
    reply = session.one("tab_resolve", id="r1", status="done", entries=["L1", "L7"])
    assert reply.is_error and "no read-log entry L7" in reply.content and "L1 to L2" in reply.content
    assert session.tab.state.requirements["r1"].status == "open"


def test_resolve_refuses_entries_sharing_no_word(session: Session) -> None:
    reply = session.one("tab_resolve", id="r1", status="done", entries=["L2"])  # meals vs hotel
    assert reply.is_error and "shares a word with r1" in reply.content
    kinds = [(e["kind"], e.get("why")) for e in session.tab.record()["events"] if e["kind"] == "resolve_refused"]
    assert kinds == [("resolve_refused", "no_shared_words")]


def test_resolve_accepts_grounded_evidence_and_can_be_redone(session: Session) -> None:
    ok = session.one("tab_resolve", id="r1", status="done", entries=["l1", "L2"])  # one shares words is enough
    assert not ok.is_error and own(ok) == "r1 done, citing L1, L2. 1 still open: r2."
    again = session.one("tab_resolve", id="R1", status="set_aside", reason="the policy is outdated")
    assert again.content.startswith("r1 set aside (the policy is outdated). (It was done before.)")
    req = session.tab.state.requirements["r1"]
    assert (req.status, req.entries, req.reason, req.turn_resolved) == ("set_aside", [], "the policy is outdated", session.turn)


def test_set_aside_needs_a_reason(session: Session) -> None:
    reply = session.one("tab_resolve", id="r2", status="set_aside", reason="  ")
    assert reply.is_error and "needs a reason" in reply.content


def test_unknown_requirement_says_which_exist(session: Session) -> None:
    reply = session.one("tab_resolve", id="r9", status="done", entries=["L1"])
    assert reply.is_error and own(reply) == "No requirement 'r9'. The tab has r1 to r2."


def test_show_returns_the_stored_excerpt(session: Session) -> None:
    shown = session.one("tab_show", entry_id="L1").content.split("\n")
    assert shown[0].startswith("L1 policies/hotel.md (turn 3,") and "from: cat policies/hotel.md" in shown[0]
    assert shown[1:3] == ["Article 7 Hotel standards", "Hotels up to 500 per night."]
    missing = session.one("tab_show", entry_id="L5")
    assert missing.is_error and "L1 to L2" in missing.content


def test_review_shows_best_line_per_entry_and_matching_candidates(session: Session) -> None:
    lines = session.one("tab_review").content.split("\n")
    assert lines[:4] == [
        "Review of the 2 requirements still open:",
        "r1 [open] Hotel standards per night",
        "  L1 policies/hotel.md: Article 7 Hotel standards",
        "  unopened: archive/hotel_rates_2019.md",
    ]
    assert lines[4:6] == ["r2 [open] Meal allowance rules", "  L2 policies/meals.md: Meal allowance"]
    event = session.tab.record()["events"][-1]
    assert event["kind"] == "review" and event["lines"] == {"r1": ["L1"], "r2": ["L2"]}


def test_review_with_nothing_to_review(tmp_path: Path) -> None:
    s = Session(tmp_path)
    assert "no requirement yet" in s.one("tab_review").content
    s.one("tab_add", requirements=["Something"])
    s.one("tab_resolve", id="r1", status="set_aside", reason="no file")
    assert own(s.one("tab_review")) == "No open requirement: 1 requirement resolved."
    s.close()


def test_repeated_identical_reads_make_one_entry(session: Session) -> None:
    again = session.one("bash", command="cat policies/hotel.md")
    assert "+L" not in again.appendix
    part = session.one("bash", command="head -n 1 policies/hotel.md")
    assert "+L3 policies/hotel.md" in part.appendix
    assert len(session.tab.state.entries) == 3


def test_wording_overrides_change_replies_only(tmp_path: Path) -> None:
    write_files(tmp_path, FILES)
    s = Session(tmp_path, TabConfig(texts={"status_prefix": "[ledger]", "add_line": "- {id} :: {text}"}))
    reply = s.one("tab_add", requirements=["Hotel"])
    assert "- r1 :: Hotel" in reply.content and reply.appendix.startswith("[ledger] 1 requirement (1 open)")
    s.close()


def test_bad_wording_override_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="no such wording"):
        TabConfig(texts={"status_prefx": "x"})
    with pytest.raises(ValueError, match=r"uses \['nope'\]"):
        TabConfig(texts={"add_line": "{nope}"})


def test_status_line_names_a_few_new_entries_then_counts(tmp_path: Path) -> None:
    write_files(tmp_path, {f"n{i}.md": f"note {i}\n" for i in range(5)})
    s = Session(tmp_path)
    status = s.one("bash", command="head -n 1 n*.md").appendix
    assert status == ("[tab] 0 requirements (0 open) · 5 read-log entries (5 files) · 0 candidates · "
                      "+L1 n0.md · +L2 n1.md · +L3 n2.md · +2 more")
    s.close()
