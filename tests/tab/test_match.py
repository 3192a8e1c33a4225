"""Lexical matching and the shell lexer: the pieces the review, the evidence check and capture stand on."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tab.capture.lexer import parse
from tab.match import (
    clip,
    path_words,
    requirement_words,
    stem,
    supports,
    word_set,
    words,
)
from tests.tab.test_support import Session, own, write_files


@pytest.mark.parametrize("group", [
    ("reimbursement", "reimbursing", "reimburse", "reimbursed"),
    ("approval", "approve", "approved", "approves"),
    ("policy", "policies"),
    ("supplier", "suppliers", "supply"),
    ("violation", "violations", "violate"),
    ("travel", "travelled", "travelling", "travels"),
    ("electricity", "electrical", "electric"),
    ("saving", "savings", "save"),
])
def test_stemmer_joins_word_forms(group: tuple[str, ...]) -> None:
    assert len({stem(w) for w in group}) == 1, {w: stem(w) for w in group}


def test_stemmer_keeps_distinct_words_apart() -> None:
    assert len({stem(w) for w in ("water", "hotel", "meal", "taxi", "order", "status", "amount")}) == 7


def test_words_drop_stop_words_and_normalize_numbers() -> None:
    assert words("The amount of the order is ¥55,000 (Article 07)") == ["amount", "order", "55000", "articl", "7"]
    assert "3.5" in words("rate 3.5 percent")


def test_cjk_text_matches_by_character_pairs() -> None:
    assert word_set("差旅报销标准") & word_set("第七条 报销标准")  # shares 报销, 销标, 标准
    assert not word_set("差旅") & word_set("报销")


def test_path_words_ignore_extensions() -> None:
    assert path_words("policies/TravelPolicy_reimbursement.docx") == {"polici", "travel", "reimburs"}


def test_clip_centres_on_the_first_matching_word() -> None:
    line = "x " * 200 + "hotel limit 500" + " y" * 200
    cut = clip(line, word_set("hotel"), 60)
    assert "hotel limit 500" in cut and len(cut) <= 62 and cut.startswith("…")


def argvs(text: str) -> list[list[list[str]]]:
    return [[c.argv for c in p.commands] for p in parse(text)]


def test_lexer_splits_chains_pipes_and_keeps_quotes() -> None:
    assert argvs("cd 'my dir' && cat \"a b.md\" | grep -n x; ls -l") == [
        [["cd", "my dir"]], [["cat", "a b.md"], ["grep", "-n", "x"]], [["ls", "-l"]]]


def test_lexer_redirections_and_heredocs() -> None:
    (pipe,) = parse("cat <<'EOF' > out.md 2>&1\nline $x\nEOF")
    cmd = pipe.commands[0]
    assert cmd.argv == ["cat"] and cmd.heredoc == "line $x" and cmd.stdout_to_file
    (pipe,) = parse("grep -rn x . 2>/dev/null")
    assert pipe.commands[0].argv == ["grep", "-rn", "x", "."] and not pipe.commands[0].stdout_to_file


def test_lexer_unrolls_for_loops_and_strips_keywords() -> None:
    assert argvs('for f in a.md b.md; do head -n 1 "$f"; done') == [
        [["head", "-n", "1", "a.md"]], [["head", "-n", "1", "b.md"]]]
    assert argvs("if [ -f a ]; then cat a; fi") == [[["[", "-f", "a", "]"]], [["cat", "a"]]]


def test_lexer_survives_unbalanced_quotes_and_comments() -> None:
    assert argvs("cat 'a.md") == [[["cat", "a.md"]]]
    assert argvs("ls # cat secret.md") == [[["ls"]]]


# --- issue 11 (6): matching on the requirement's content words ---
PAIRS = json.loads((Path(__file__).resolve().parents[1] / "fixtures" / "tab_match_pairs.json").read_text())


def measure(predict: Callable[[str, str], bool]) -> tuple[float, float]:
    """Precision and recall of a requirement↔line predicate on the labelled pairs."""
    tp = sum(1 for r, line, y in PAIRS if y and predict(r, line))
    fp = sum(1 for r, line, y in PAIRS if not y and predict(r, line))
    fn = sum(1 for r, line, y in PAIRS if y and not predict(r, line))
    return tp / max(1, tp + fp), tp / max(1, tp + fn)


def test_labelled_pairs_precision_and_recall() -> None:
    """Figures reported in docs/tab.md; these floors catch a regression."""
    shown = measure(lambda r, line: bool(requirement_words(r) & word_set(line)))  # the review lists it
    checked = measure(lambda r, line: supports(requirement_words(r), word_set(line)))  # the evidence check
    print(f"review: precision {shown[0]:.2f} recall {shown[1]:.2f}; "
          f"evidence check: precision {checked[0]:.2f} recall {checked[1]:.2f}")
    assert shown[0] >= 0.65 and shown[1] >= 0.9
    assert checked[0] >= 0.85 and checked[1] >= 0.85


def test_instruction_verbs_are_not_content_words() -> None:
    assert requirement_words("List the approved vendors") == word_set("approved vendors")
    assert requirement_words("State, give, report, provide, describe, summarize, include, write, make, ensure") == set()


def test_identifiers_and_numbers_stay_whole() -> None:
    assert "q1" in words("Q1 revenue") and "1" not in words("Q1 revenue")
    assert "fy2024" in words("FY2024 headcount")


def test_state_statement_and_states_stay_apart() -> None:
    assert len({*words("state"), *words("statement"), *words("the United States")} - {"unit"}) == 3


def test_csv_best_line_is_the_matching_data_row(tmp_path: Path) -> None:
    write_files(tmp_path, {"data/orders.csv": "supplier,amount\nSupplier 3,1200\nSupplier 15,55000\n"})
    s = Session(tmp_path)
    s.one("tab_add", requirements=["Amount owed to Supplier 15"])
    s.one("bash", command="cat data/orders.csv")
    review = own(s.one("tab_review"))
    assert "Supplier 15,55000" in review and "supplier,amount" not in review


def test_evidence_check_rejects_a_file_sharing_one_incidental_word(tmp_path: Path) -> None:
    write_files(tmp_path, {"notes/holidays.md": "# Holidays\nNo cap on requests.\n",
                           "finance/budget.txt": "The per-employee spending cap is 1,850 EUR.\n"})
    s = Session(tmp_path)
    s.one("tab_add", requirements=["State the per-employee spending cap"])
    s.one("bash", command="cat notes/holidays.md")
    s.one("bash", command="cat finance/budget.txt")
    assert s.one("tab_resolve", id="r1", status="done", entries=["L1"]).is_error
    assert not s.one("tab_resolve", id="r1", status="done", entries=["L2"]).is_error
    assert [r["entries"] for r in s.tab.record()["requirements"]] == [["L2"]]


def test_a_numbered_heading_keeps_its_plural_an_ordinary_word() -> None:
    """'Article 7 Hotels:' is the plural of hotel (policy headings), not a name like 'the United States'."""
    assert "hotel" in words("Article 7 Hotels: 450 yuan per night.")
    assert "states" in words("the United States") and "states" in words("covers the States")


def test_a_two_word_requirement_is_grounded_by_a_line_stating_its_value() -> None:
    assert supports(requirement_words("hotel rate"), word_set("Article 7 Hotels: 450 yuan per night."))
    assert not supports(requirement_words("hotel rate"), word_set("Hotel bookings go through the travel desk."))
