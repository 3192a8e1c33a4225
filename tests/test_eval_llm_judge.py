"""The LLM rubric judges (Workspace-Bench's own protocol, and the earlier full-text variant): prompt
content and limits, strict parsing, retries, failures, and the on-disk cache; once through the real
OpenAI-compatible client on a stub server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval.builtin import office
from eval.config import JudgeConfig
from eval.judges import JudgeError, judge_prompts, make_judge
from eval.judges.llm_rubric import VerdictError, parse_verdicts, trajectory_summary
from eval.judges.wb_protocol import MAX_CHARS, TRUNCATED
from eval.metrics import aggregate
from runners.core.task import Rubric, Task
from runners.models.config import ApiModelConfig
from tests.http_stub import Reply, StubServer, completion
from tests.test_eval_helpers import FakeModel, bash_call, make_job

TASK = Task(
    id="wb-7", prompt="Write the travel guide.", workspace=Path("/nonexistent"), output="output.md",
    rubrics=(Rubric("Mentions the 600 yuan cap."), Rubric("Has five sections."), Rubric("Names the approver.")),
    extra={"output_files": ["output.md"], "rubric_types": ["Outcome Evaluation", "Basic Evaluation", "Outcome Evaluation"]},
)  # fmt: skip
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32


def _verdicts(*passed) -> str:
    return json.dumps({"rubrics": [{"index": i, "passed": p, "confidence": 0.9, "evidence": "e"} for i, p in enumerate(passed)]})


def _judge(tmp_path: Path, model: FakeModel, name: str = "llm_rubric", **kw):
    return make_judge(JudgeConfig(name=name, cache_dir=str(tmp_path / "cache"), **kw), "llm_rubric", model)


def _evidence(text: str) -> dict:
    """The JSON evidence object after the protocol's instructions."""
    return json.loads(text[text.index('{"taskId"') :])


@pytest.fixture
def job(tmp_path: Path) -> Path:
    docx = tmp_path / "g.docx"
    office.write_docx(docx, [("title", "Guide"), ("para", "Hotels up to 600 yuan per night.")])
    return make_job(tmp_path / "job", {"output.md": "# Travel guide\n", "notes/guide.docx": docx.read_bytes()},
                    final_answer="Done.", messages=bash_call("cat policies/travel.md"))  # fmt: skip


def test_only_a_json_true_passes(tmp_path: Path, job: Path) -> None:
    model = FakeModel(_verdicts(True, "true", 1))
    scores = _judge(tmp_path, model).score(TASK, job)
    assert [i["passed"] for i in scores["items"]] == [True, False, False]
    assert all(i["judged"] for i in scores["items"]) and scores["judge_failures"] == 0
    assert scores["metrics"] == {"pass_rate": pytest.approx(1 / 3), "tcr70": 0.0}


def test_protocol_prompt_follows_the_benchmarks_judge(tmp_path: Path, job: Path) -> None:
    model = FakeModel(_verdicts(True, True, True))
    _judge(tmp_path, model).score(TASK, job)
    system, user = model.sent[0]
    assert system == {"role": "system", "content": judge_prompts.WB_SYSTEM}
    text = user["content"]  # no image outputs: plain text
    assert "lenient about small mistakes in how files are named" in text and "when in doubt" not in text
    body = _evidence(text)
    assert body["task"] == "Write the travel guide." and body["expectedOutputs"] == ["output.md"]
    out, docx = body["outputs"]
    assert out == {"path": "output.md", "sizeBytes": len("# Travel guide\n"), "mime": "text/markdown", "excerpt": "# Travel guide\n", "hasImage": False}
    assert docx["path"] == "notes/guide.docx" and "Hotels up to 600 yuan per night." in docx["excerpt"]
    assert docx["sizeBytes"] == (job / "deliverable" / "notes" / "guide.docx").stat().st_size
    assert body["rubrics"][1] == {"index": 1, "rubric": "Has five sections.", "rubricType": "Basic Evaluation"}
    tool = body["traceSummary"][0]
    assert tool["type"] == "tool" and tool["tool"] == "bash" and "cat policies/travel.md" in tool["input"]
    assert body["traceSummary"][-1] == {"type": "final", "text": "Done."}


def test_protocol_limits_files_excerpts_and_images(tmp_path: Path) -> None:
    files = {f"notes/n{i:02d}.md": f"note {i}" for i in range(12)}
    files.update({"output.md": "x" * (MAX_CHARS + 500), "a.png": PNG, "b.png": PNG, "c.jpg": PNG, "d.png": PNG})
    messages = [m for t in range(1, 40) for m in bash_call(f"cat f{t}.md", t)]
    model = FakeModel(_verdicts(True, True, True))
    _judge(tmp_path, model).score(TASK, make_job(tmp_path / "j", files, messages=messages))
    parts = model.sent[0][1]["content"]
    assert [p["type"] for p in parts] == ["text", "image_url", "image_url", "image_url"]  # at most 3 images
    assert parts[1]["image_url"]["url"].startswith("data:image/png;base64,")
    body = _evidence(parts[0]["text"])
    shown = [f["path"] for f in body["outputs"] if "path" in f]
    assert len(shown) == 10 and shown[:5] == ["output.md", "a.png", "b.png", "c.jpg", "d.png"]
    assert body["outputs"][-1] == {"note": "...[truncated 7 more files]"}
    assert body["outputs"][0]["excerpt"] == "x" * MAX_CHARS + TRUNCATED
    assert len(body["traceSummary"]) == 30 + 1 and body["traceSummary"][30] == "...[truncated 9 more items]"


def test_expected_output_path_is_where_the_judge_looks_first(tmp_path: Path) -> None:
    """Task 23: the expected output is a nested path; the judge must see it first, before same-named files."""
    expected = "budget-management/inventory-optimization/inventory_optimization_report.xlsx"
    task = Task(id="23", prompt="p", workspace=tmp_path, output=expected, rubrics=TASK.rubrics, extra={"output_files": [expected]})
    files = {f"aaa/{i}.md": "n" for i in range(12)}
    files.update({expected: "real", "Inventory Optimization Report.xlsx": "copy at the root"})
    model = FakeModel(_verdicts(True, True, True))
    _judge(tmp_path, model).score(task, make_job(tmp_path / "j", files))
    shown = [f.get("path") for f in _evidence(model.sent[0][1]["content"])["outputs"]]
    assert shown[:2] == [expected, "Inventory Optimization Report.xlsx"] and "aaa/0.md" in shown


def test_fulltext_variant_keeps_the_earlier_prompt(tmp_path: Path, job: Path) -> None:
    model = FakeModel(_verdicts(True, True, True))
    scores = _judge(tmp_path, model, name="llm_rubric_fulltext").score(TASK, job)
    assert scores["judge"] == "llm_rubric_fulltext"
    system, user = model.sent[0]
    assert system["role"] == "system" and "when in doubt, it fails" in system["content"]
    text = user["content"]
    assert "Write the travel guide." in text and "- output.md" in text
    assert "### output.md" in text and "Hotels up to 600 yuan per night." in text  # docx as extracted text
    assert text.index("### output.md") < text.index("### notes/guide.docx")  # expected output first
    assert "bash:" in text and "cat policies/travel.md" in text
    assert "0. Mentions the 600 yuan cap.\n1. Has five sections.\n2. Names the approver." in text


def test_both_denominators(tmp_path: Path, job: Path) -> None:
    answer = json.dumps({"rubrics": [{"index": 0, "passed": True}, {"index": 2, "passed": False}]})
    scores = _judge(tmp_path, FakeModel(answer)).score(TASK, job)
    assert scores["rubric_counts"] == {"rubrics": 3, "judged": 2, "passed": 1}
    agg = aggregate([scores])
    assert agg["pass_rate"] == pytest.approx(1 / 3) and agg["pass_rate_judged"] == pytest.approx(1 / 2)


def test_fences_and_chatter_are_tolerated() -> None:
    assert parse_verdicts("Sure!\n```json\n" + _verdicts(True, False) + "\n```", 2)[0]["passed"] is True
    assert set(parse_verdicts("Here: " + _verdicts(True, False, True) + " hope it helps", 3)) == {0, 1, 2}
    for bad, why in [("no json", "no JSON object"), ('{"rubric": []}', "no \"rubrics\" list"), ('{"rubrics": [{"index": 7}]}', "valid index"), ("{oops}", "invalid JSON")]:
        with pytest.raises(VerdictError, match=why):
            parse_verdicts(bad, 3)


def test_retry_after_an_unparseable_answer(tmp_path: Path, job: Path) -> None:
    model = FakeModel("I think they all pass.", _verdicts(True, True, False))
    scores = _judge(tmp_path, model).score(TASK, job)
    assert len(model.sent) == 2 and scores["judge_failures"] == 0
    retry = model.sent[1]
    assert retry[2] == {"role": "assistant", "content": "I think they all pass."} and "could not be parsed" in retry[3]["content"]
    assert [i["passed"] for i in scores["items"]] == [True, True, False]


def test_unparseable_after_retries_fails_every_rubric(tmp_path: Path, job: Path) -> None:
    model = FakeModel("nope")
    scores = _judge(tmp_path, model, max_retries=2).score(TASK, job)
    assert len(model.sent) == 3 and scores["judge_failures"] == 1
    assert [(i["passed"], i["judged"]) for i in scores["items"]] == [(False, False)] * 3
    assert "unparseable" in scores["items"][0]["reason"] and scores["metrics"]["pass_rate"] == 0.0


def test_a_rubric_left_out_is_unjudged(tmp_path: Path, job: Path) -> None:
    answer = json.dumps({"rubrics": [{"index": 0, "passed": True}, {"index": 2, "passed": True}]})
    items = _judge(tmp_path, FakeModel(answer)).score(TASK, job)["items"]
    assert [(i["passed"], i["judged"]) for i in items] == [(True, True), (False, False), (True, True)]


def test_calls_are_cached_by_their_full_input(tmp_path: Path, job: Path) -> None:
    model = FakeModel(_verdicts(True, False, True))
    first = _judge(tmp_path, model).score(TASK, job)
    again = _judge(tmp_path, model).score(TASK, job)
    assert len(model.sent) == 1 and again == first
    (job / "deliverable" / "output.md").write_text("# A different guide\n")
    _judge(tmp_path, model).score(TASK, job)
    assert len(model.sent) == 2


def test_non_rubric_task_and_missing_model(tmp_path: Path, job: Path) -> None:
    with pytest.raises(JudgeError, match="scores rubric tasks only"):
        _judge(tmp_path, FakeModel("x")).score(Task(id="q", prompt="p", workspace=tmp_path, answer="1"), job)
    with pytest.raises(RuntimeError, match="judge.model is empty"):
        make_judge(JudgeConfig(name="llm_rubric"), "llm_rubric")


def test_trajectory_summary_is_bounded() -> None:
    msgs = [m for t in range(1, 400) for m in bash_call(f"cat file_{t}.md", t)]
    text = trajectory_summary(msgs, 3000)
    assert len(text) < 3100 and "omitted" in text and "file_1.md" in text and "file_399.md" in text


def test_through_the_openai_compatible_client(tmp_path: Path, job: Path) -> None:
    with StubServer() as server:
        server.push(Reply(body=completion(_verdicts(False, True, True))))
        model = ApiModelConfig(kind="openai", name="gpt-5.4-mini", base_url=server.url, temperature=0.0, seed=0, max_retries=0)
        judge = make_judge(JudgeConfig(name="llm_rubric", model=model, cache_dir=str(tmp_path / "c")), "llm_rubric")
        scores = judge.score(TASK, job)
        again = judge.score(TASK, job)  # from the cache: the server has no reply left
    assert [i["passed"] for i in scores["items"]] == [False, True, True] and again == scores
    assert len(server.requests) == 1
    body = server.requests[0]["body"]
    assert body["model"] == "gpt-5.4-mini" and body["temperature"] == 0.0 and body["seed"] == 0
