"""OfficeQA Pro: the reward rule's edge cases, the loader on the real sample CSV, the judge."""

from __future__ import annotations

import pytest

from eval.benchmarks import BenchmarkError, load_benchmark
from eval.config import BenchmarkConfig, JudgeConfig
from eval.judges import make_judge
from eval.officeqa_reward import MAX_ANSWER_CHARS, OFFICEQA_RULE, extract_final_answer, score_answer
from tests.test_eval_helpers import SAMPLES, make_job

CSV = SAMPLES / "officeqa" / "officeqa_pro_head5.csv"


@pytest.mark.parametrize(
    ("gt", "pred", "tol", "ok"),
    [
        ("2,602", "2628", 0.01, True),  # 26/2602 = 0.9992% <= 1%
        ("2,602", "2629", 0.01, False),  # 27/2602 = 1.04%
        ("2,602", "2628", 0.0, False),
        ("2,602", "2602", 0.0, True),
        ("2,602", "$2,602 million", 0.0, True),  # currency symbol and unit word on one side only
        ("-5.2", "\u22125.2", 0.0, True),  # Unicode minus
        ("-1,234", "(1,234)", 0.0, True),  # accounting parentheses
        ("1,234", "(1,234)", 0.0, False),
        ("1608.80%", "1608.8%", 0.0, True),
        ("1608.80%", "16.088", 0.01, False),
        ("2.6 billion", "2,600 million", 0.0, True),  # units on both sides scale
        ("2.6 billion", "2,600", 0.0, False),
        ("2,602", "2,602 (1940)", 0.0, True),  # an incidental year is ignored
        ("1977", "1976", 0.0, False),  # a year answer is compared as a number
        ("March 1977", "March 1977", 0.0, True),
        ("March 1977", "April 1977", 0.0, False),
        ("2,602", "2,602 or 2,628", 0.01, False),  # a different count of numbers
        ("[1, 2, 3]", "[1, 2, 3]", 0.0, True),
        ("[1, 2, 3]", "[1, 3, 2]", 0.0, False),  # lists match in order
        ("[1, 2, 3]", "1, 2, 3", 0.0, False),
        ("[383,212, 361,971]", "[383212, 361971]", 0.0, True),
        ("[1, 2, 3]", "[1, 2]", 0.0, False),
        ("0", "0", 0.0, True),
        ("0", "0.001", 0.01, False),  # ground truth 0 needs exactly 0
        ("Federal Old-Age and Survivors Insurance (OASI) Trust Fund", "the Federal Old-Age and Survivors Insurance Trust Fund", 0.0, True),
        ("Trust Fund", "Highway Fund", 0.0, False),
        ("5", "5\n6", 0.0, False),  # multi-line
        ("5", "", 0.0, False),
    ],
)
def test_reward_edge_cases(gt: str, pred: str, tol: float, ok: bool) -> None:
    assert score_answer(gt, pred, tol)[0] is ok


def test_over_long_answer_scores_zero() -> None:
    assert score_answer("42", "42" + " because" * 40, 0.0) == (False, f"answer longer than {MAX_ANSWER_CHARS} characters")


def test_final_answer_is_the_last_tag() -> None:
    msg = "First <FINAL_ANSWER>1</FINAL_ANSWER> then <final_answer> 2,602 </final_answer> done"
    assert extract_final_answer(msg) == "2,602"
    assert extract_final_answer("no tag here") is None
    assert score_answer("2602", None, 0.0)[0] is False


def test_loader_reads_the_real_sample(tmp_path) -> None:
    bench = load_benchmark(BenchmarkConfig(name="officeqa", questions=str(CSV), corpus=str(tmp_path)))
    assert [t.id for t in bench.tasks()] == ["UID0001", "UID0003", "UID0004", "UID0005", "UID0007"]
    t = bench.task("UID0004")
    assert t.answer == "1608.80%"
    assert t.extra["source_files"] == ["treasury_bulletin_1941_01.txt", "treasury_bulletin_1954_02.txt"]
    assert t.workspace == tmp_path and "<FINAL_ANSWER>" in t.prompt and bench.default_judge == "officeqa"
    sub = load_benchmark(BenchmarkConfig(name="officeqa", questions=str(CSV), corpus=str(tmp_path), ids=["UID0007", "UID0001"]))
    assert [t.id for t in sub.tasks()] == ["UID0007", "UID0001"]


def test_loader_errors_name_what_is_missing(tmp_path) -> None:
    with pytest.raises(BenchmarkError, match="benchmark.questions"):
        load_benchmark(BenchmarkConfig(name="officeqa", corpus=str(tmp_path)))
    with pytest.raises(BenchmarkError, match="benchmark.corpus=.*does not exist"):
        load_benchmark(BenchmarkConfig(name="officeqa", questions=str(CSV), corpus=str(tmp_path / "nope")))
    bad = tmp_path / "q.csv"
    bad.write_text("uid,question\nU1,What?\n")
    with pytest.raises(BenchmarkError, match=r"lacks column\(s\) \['answer'\]"):
        load_benchmark(BenchmarkConfig(name="officeqa", questions=str(bad), corpus=str(tmp_path)))
    with pytest.raises(BenchmarkError, match="no task"):
        load_benchmark(BenchmarkConfig(name="officeqa", questions=str(CSV), corpus=str(tmp_path), ids=["UID9999"]))


def test_judge_scores_acc0_and_acc1(tmp_path) -> None:
    task = load_benchmark(BenchmarkConfig(name="officeqa", questions=str(CSV), corpus=str(tmp_path))).task("UID0001")
    judge = make_judge(JudgeConfig(name="auto"), "officeqa")
    near = judge.score(task, make_job(tmp_path / "near", final_answer="About 2,628 <FINAL_ANSWER>2628</FINAL_ANSWER>"))
    assert near["metrics"] == {"acc0": 0.0, "acc1": 1.0}
    assert near["rule"] == OFFICEQA_RULE and near["items"][0]["predicted"] == "2628"
    exact = judge.score(task, make_job(tmp_path / "exact", final_answer="<FINAL_ANSWER>2,602</FINAL_ANSWER>"))
    assert exact["metrics"] == {"acc0": 1.0, "acc1": 1.0}
    none = judge.score(task, make_job(tmp_path / "none", final_answer="2602"))
    assert none["metrics"] == {"acc0": 0.0, "acc1": 0.0}
