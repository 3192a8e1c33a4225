"""Lexical matching and the shell lexer: the pieces the review, the evidence check and capture stand on."""

from __future__ import annotations

import pytest

from tab.match import clip, path_words, stem, word_set, words
from tab.shell import parse


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
