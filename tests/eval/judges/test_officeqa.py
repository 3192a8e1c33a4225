"""OfficeQA Pro: the reward rule's edge cases, the loader on the real sample CSV, the judge."""

from __future__ import annotations

import pytest

from eval.benchmarks import BenchmarkError, load_benchmark
from eval.benchmarks.officeqa import Config as OfficeQAConfig
from eval.config import JudgeConfig
from eval.judges import make_judge
from eval.judges.officeqa_reward import (
    DEFAULT,
    VERSIONS,
    extract_final_answer,
    score_answer,
)
from tests.helpers.eval_records import SAMPLES, make_job

CSV = SAMPLES / "officeqa" / "officeqa_pro_head5.csv"


NEW, PRO, FIRST = "309dc01", "460ad51", "0da20e9"
G3, G2, G1 = "6158125", "6da3ee1", "23c8760"  # the guarded versions before 309dc01, newest first


@pytest.mark.parametrize(
    ("gt", "pred", "tol", "ok"),
    [
        ("2,602", "2628", 0.01, True),  # 26/2602 = 0.9992% <= 1%
        ("2,602", "2629", 0.01, False),  # 27/2602 = 1.04%
        ("2,602", "2628", 0.0, False),
        ("2,602", "2602", 0.0, True),
        ("2,602", "$2,602 million", 0.0, True),  # a unit on one side only is not a mismatch
        ("2.6 billion", "2.6 million", 0.0, False),  # explicit units on both sides must agree
        ("-5.2", "\u22125.2", 0.0, True),  # Unicode minus
        ("-1,234", "(1,234)", 0.0, True),  # accounting parentheses
        ("1,234", "(1,234)", 0.0, False),
        ("1608.80%", "1608.8%", 0.0, True),
        ("2,602", "2,602 (1940)", 0.0, True),  # an incidental year is ignored
        ("1977", "1976", 0.0, False),
        ("March 1977", "March 1977", 0.0, True),
        ("March 1977", "April 1977", 0.0, False),
        ("2,602", "2,602 or 2,628", 0.01, False),  # hedged: a different count of numbers
        ("[1, 2, 3]", "[1, 2, 3]", 0.0, True),
        ("[1, 2, 3]", "[1, 3, 2]", 0.0, False),  # lists match in order
        ("[1, 2, 3]", "[1, 2]", 0.0, False),
        ("[44.00,231.52]", "[44.00, 231.52]", 0.0, True),  # no space after the comma: still two items
        ("[44.00,231.52]", "[44.00,231.52]", 0.0, True),
        ("[374,443, 381,327]", "[374,443,381,327]", 0.0, True),  # commas regrouped into two items
        ("[374,443, 381,327]", "[374,443, 381,328]", 0.0, False),
        ("[383,212, 361,971]", "[383212, 361971]", 0.0, True),
        ("0", "0", 0.0, True),
        ("0", "0.001", 0.01, False),  # ground truth 0 needs exactly 0
        ("Trust Fund", "Highway Fund", 0.0, False),
        ("Trust Fund", "the Trust Fund", 0.0, False),  # the guard: a text answer must equal the ground truth
        ("5", "5\n6", 0.0, False),  # multi-line
        ("5", "", 0.0, False),
        ("42", "42" + " because" * 40, 0.0, False),  # over 250 characters
        ("42", "unable to determine 42", 0.0, False),
    ],
)
def test_newest_rule_edge_cases(gt: str, pred: str, tol: float, ok: bool) -> None:
    assert score_answer(gt, pred, tol, NEW)[0] is ok


def v(new: bool, g3: bool, g2: bool, g1: bool, pro: bool, first: bool) -> dict[str, bool]:
    return {NEW: new, G3: g3, G2: g2, G1: g1, PRO: pro, FIRST: first}


# The same answers under every version: (message, ground truth, tolerance, {version: correct}).
# Each version's column is what its own reward.py at that commit gives (databricks/officeqa; the
# newer files' score_answer on the message, the older two's on the first tag's content), recorded
# from running them outside the project.
CASES = [
    ("<FINAL_ANSWER>1</FINAL_ANSWER> then <FINAL_ANSWER>2,602</FINAL_ANSWER>", "2,602", 0.0, v(True, True, True, True, False, False)),
    ("<FINAL_ANSWER>2,602</FINAL_ANSWER> then <FINAL_ANSWER>1</FINAL_ANSWER>", "2,602", 0.0, v(False, False, False, False, True, True)),
    ("2602", "2,602", 0.0, v(True, True, True, True, True, True)),  # untagged, one direct value
    ("I think the total was 2602 in 1940, per the bulletin", "2,602", 0.0, v(True, False, False, False, True, True)),  # one number in prose
    ("It was 2602, not 2628 as in 1941", "2,602", 0.0, v(False, False, False, False, True, True)),  # two candidates
    ("<FINAL_ANSWER>Total:\n2,602</FINAL_ANSWER>", "2,602", 0.0, v(False, False, False, False, True, True)),  # multi-line tag
    ("<FINAL_ANSWER>2,602 or 2,628</FINAL_ANSWER>", "2,602", 0.01, v(False, False, False, False, True, True)),  # hedged A or B
    ("<FINAL_ANSWER>[44.00, 231.52]</FINAL_ANSWER>", "[44.00,231.52]", 0.0, v(True, False, False, False, False, False)),
    ("<FINAL_ANSWER>[374,443,381,327]</FINAL_ANSWER>", "[374,443, 381,327]", 0.0, v(True, False, False, False, False, False)),
    ("<FINAL_ANSWER>1,234.5, 99</FINAL_ANSWER>", "1,234.5, 99", 0.0, v(True, True, True, True, True, True)),
    ("<FINAL_ANSWER>2.6 million</FINAL_ANSWER>", "2.6 billion", 0.0, v(False, False, False, True, True, True)),  # units ignored before
    ("<FINAL_ANSWER>(1,234)</FINAL_ANSWER>", "-1,234", 0.0, v(True, True, False, False, False, False)),  # accounting parentheses
    ("<FINAL_ANSWER></FINAL_ANSWER>", "5", 0.0, v(False, False, False, False, False, False)),
    # where the guarded versions part ways (issue 41 item 8)
    ("<FINAL_ANSWER>The answer is 2,602.</FINAL_ANSWER>", "2,602", 0.0, v(True, False, False, False, True, True)),  # prose
    ("<FINAL_ANSWER>[3, 2, 1]</FINAL_ANSWER>", "[1, 2, 3]", 0.0, v(False, True, True, True, True, True)),  # list order
    ("<FINAL_ANSWER>2,602 (1940)</FINAL_ANSWER>", "2,602", 0.0, v(True, False, False, False, True, True)),  # a year in the count
    ("<FINAL_ANSWER>unable to determine; March 1977</FINAL_ANSWER>", "March 1977", 0.0, v(False, False, False, True, True, True)),
    ("2602" + " " * 300, "2,602", 0.0, v(True, True, True, False, True, True)),  # 23c8760 counts the unstripped length
    ("<FINAL_ANSWER>Trust  Fund</FINAL_ANSWER>", "Trust Fund", 0.0, v(True, True, True, False, False, False)),  # spaces collapsed
    ("<FINAL_ANSWER>Trust Fund 2</FINAL_ANSWER>", "Trust Fund", 0.0, v(False, False, False, False, True, True)),
    ("<FINAL_ANSWER>**2,602**</FINAL_ANSWER>", "2,602", 0.0, v(True, True, True, True, True, True)),
]


@pytest.mark.parametrize(("message", "gt", "tol", "expected"), CASES)
def test_versions_table(message: str, gt: str, tol: float, expected: dict[str, bool]) -> None:
    assert set(expected) == set(VERSIONS)
    got = {v: score_answer(gt, extract_final_answer(message, v), tol, v)[0] for v in VERSIONS}
    assert got == expected


def test_versions_are_pinned_and_the_default_is_the_newest() -> None:
    assert DEFAULT == NEW and [v.commit for v in VERSIONS.values()] == [NEW, G3, G2, G1, PRO, FIRST]
    assert VERSIONS[PRO].label == "databricks/officeqa reward.py@460ad51"
    with pytest.raises(ValueError, match="unknown OfficeQA reward version 'v9'; valid: 309dc01, 6158125, 6da3ee1, 23c8760, 460ad51, 0da20e9"):
        score_answer("1", "1", 0.0, "v9")


def test_final_answer_tags() -> None:
    msg = "First <FINAL_ANSWER>1</FINAL_ANSWER> then <final_answer> 2,602 </final_answer> done"
    assert extract_final_answer(msg) == "2,602" and extract_final_answer(msg, PRO) == "1"
    assert extract_final_answer("no tag here") == "no tag here" and extract_final_answer(None) is None
    assert score_answer("2602", None, 0.0)[0] is False


def test_loader_reads_the_real_sample(tmp_path) -> None:
    bench = load_benchmark(OfficeQAConfig(name="officeqa", questions=str(CSV), corpus=str(tmp_path)))
    assert [t.id for t in bench.tasks()] == ["UID0001", "UID0003", "UID0004", "UID0005", "UID0007"]
    t = bench.task("UID0004")
    assert t.answer == "1608.80%"
    assert t.extra["source_files"] == ["treasury_bulletin_1941_01.txt", "treasury_bulletin_1954_02.txt"]
    assert t.workspace == tmp_path and "<FINAL_ANSWER>" in t.prompt and bench.default_judge == "officeqa"
    sub = load_benchmark(OfficeQAConfig(name="officeqa", questions=str(CSV), corpus=str(tmp_path), ids=["UID0007", "UID0001"]))
    assert [t.id for t in sub.tasks()] == ["UID0007", "UID0001"]


def test_loader_errors_name_what_is_missing(tmp_path) -> None:
    with pytest.raises(BenchmarkError, match="benchmark.questions"):
        load_benchmark(OfficeQAConfig(name="officeqa", corpus=str(tmp_path)))
    with pytest.raises(BenchmarkError, match="benchmark.corpus=.*does not exist"):
        load_benchmark(OfficeQAConfig(name="officeqa", questions=str(CSV), corpus=str(tmp_path / "nope")))
    bad = tmp_path / "q.csv"
    bad.write_text("uid,question\nU1,What?\n")
    with pytest.raises(BenchmarkError, match=r"lacks column\(s\) \['answer'\]"):
        load_benchmark(OfficeQAConfig(name="officeqa", questions=str(bad), corpus=str(tmp_path)))
    with pytest.raises(BenchmarkError, match="no task"):
        load_benchmark(OfficeQAConfig(name="officeqa", questions=str(CSV), corpus=str(tmp_path), ids=["UID9999"]))


def test_judge_scores_acc0_and_acc1_and_names_the_version(tmp_path) -> None:
    task = load_benchmark(OfficeQAConfig(name="officeqa", questions=str(CSV), corpus=str(tmp_path))).task("UID0001")
    judge = make_judge(JudgeConfig(name="auto"), "officeqa")
    near = judge.score(task, make_job(tmp_path / "near", final_answer="About 2,628 <FINAL_ANSWER>2628</FINAL_ANSWER>"))
    assert near["metrics"] == {"acc0": 0.0, "acc1": 1.0}
    assert near["reward_version"] == NEW and near["rule"] == "databricks/officeqa reward.py@309dc01"
    assert near["items"][0]["predicted"] == "2628"
    exact = judge.score(task, make_job(tmp_path / "exact", final_answer="<FINAL_ANSWER>2,602</FINAL_ANSWER>"))
    assert exact["metrics"] == {"acc0": 1.0, "acc1": 1.0}
    prose = judge.score(task, make_job(tmp_path / "prose", final_answer="The answer is 2,602 or maybe 2,628."))
    assert prose["metrics"] == {"acc0": 0.0, "acc1": 0.0}


def test_benchmark_reward_selects_the_version(tmp_path) -> None:
    cfg = OfficeQAConfig(name="officeqa", questions=str(CSV), corpus=str(tmp_path), reward=PRO)
    task = load_benchmark(cfg).task("UID0001")
    hedged = make_job(tmp_path / "h", final_answer="<FINAL_ANSWER>2,602 or 2,628</FINAL_ANSWER>")
    scores = make_judge(JudgeConfig(name="auto"), "officeqa").score(task, hedged)
    assert scores["reward_version"] == PRO and scores["metrics"]["acc0"] == 1.0
    with pytest.raises(BenchmarkError, match="benchmark.reward='latest' is not a version .*valid: 309dc01, 6158125, 6da3ee1, 23c8760, 460ad51, 0da20e9"):
        load_benchmark(OfficeQAConfig(name="officeqa", questions=str(CSV), corpus=str(tmp_path), reward="latest"))


def test_reward_override_composes(compose_cfg) -> None:
    cfg = compose_cfg(["benchmark=officeqa", "benchmark.reward=0da20e9"])
    assert cfg.benchmark.reward == FIRST
    assert compose_cfg(["benchmark=officeqa"]).benchmark.reward == DEFAULT


def test_the_paper_selection_decides_every_pro_question_with_a_reason() -> None:
    """Issue 30: the paper's 104 questions "that need no external data source" were nowhere: a
    reviewed decision for each of the 133, which the paper's presets run."""
    from eval.benchmarks.selection import SHIPPED, read_selection

    rows = read_selection(SHIPPED / "officeqa_paper.csv")
    assert len(rows) == 133 and sum(d == "include" for d, _ in rows.values()) == 104
    assert all(len(reason) > 20 for _, reason in rows.values())
    # the real sample's five: UID0005 deflates with the CPI-U, the others need only the bulletins
    assert {u: rows[u][0] for u in ("UID0001", "UID0003", "UID0004", "UID0005", "UID0007")} == {
        "UID0001": "include", "UID0003": "include", "UID0004": "include", "UID0005": "exclude", "UID0007": "include"}
    assert rows["UID0010"][0] == "exclude" and "exchange rate" in rows["UID0010"][1]


def test_the_paper_presets_run_the_paper_subsets(compose_cfg) -> None:
    from omegaconf import OmegaConf

    from runners.config.schema import CONF_DIR

    assert compose_cfg(["benchmark=officeqa_paper"]).benchmark.selection == "officeqa_paper"
    grid = OmegaConf.load(CONF_DIR / "experiment" / "paper_main.yaml").grid
    assert list(grid.benchmark) == ["workspace_bench", "agentcompany_paper", "officeqa_paper"]


def test_a_selection_keeps_what_it_includes_and_refuses_what_it_did_not_review(tmp_path) -> None:
    sample = str(SAMPLES / "officeqa" / "officeqa_pro_head5.csv")
    sel = tmp_path / "sel.csv"
    rows = "UID0001,include,a\nUID0003,exclude,b\nUID0004,include,c\nUID0005,exclude,d\nUID0007,include,e\n"
    sel.write_text("# notes\nuid,decision,reason\n" + rows)
    cfg = OfficeQAConfig(questions=sample, corpus=str(tmp_path), selection=str(sel))
    assert [t.id for t in load_benchmark(cfg).tasks()] == ["UID0001", "UID0004", "UID0007"]
    sel.write_text("uid,decision,reason\n" + rows.replace("UID0007,include,e\n", ""))
    with pytest.raises(BenchmarkError, match="has no decision for 1 task.*UID0007"):
        load_benchmark(cfg)
    sel.write_text("uid,decision,reason\n" + rows + "UID0999,include,f\n")
    with pytest.raises(BenchmarkError, match="decides 1 task.*that the questions do not have: UID0999"):
        load_benchmark(cfg)
    sel.write_text("uid,decision,reason\n" + rows.replace("include,a", "maybe,a"))
    with pytest.raises(BenchmarkError, match="row 2 needs"):
        load_benchmark(cfg)
    with pytest.raises(BenchmarkError, match="no shipped selection 'nope'; shipped: officeqa_paper"):
        load_benchmark(OfficeQAConfig(questions=sample, corpus=str(tmp_path), selection="nope"))
