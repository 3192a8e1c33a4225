"""The LLM rubric judges (Workspace-Bench's own protocol, and the earlier full-text variant): prompt
content and limits, strict parsing, retries, failures, and the on-disk cache; once through the real
OpenAI-compatible client on a stub server."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import pytest

from eval.benchmarks.builtin import office
from eval.config import JudgeConfig
from eval.judges import JudgeError, make_judge
from eval.judges.metrics import aggregate
from eval.judges.workspace_bench import judge_texts
from eval.judges.workspace_bench.protocol import MAX_CHARS, MAX_IMAGE_BYTES, TRUNCATED
from eval.judges.workspace_bench.rubric_judge import trajectory_summary
from eval.judges.workspace_bench.verdicts import read_answer
from runners.core.task import Rubric, Task
from runners.models.config import ApiModelConfig
from tests.helpers.eval_records import FakeModel, bash_call, fenced_payload, make_job
from tests.helpers.http_stub import Reply, StubServer, completion

TASK = Task(
    id="wb-7", prompt="Write the travel guide.", workspace=Path("/nonexistent"), output="output.md",
    rubrics=(Rubric("Mentions the 600 yuan cap."), Rubric("Has five sections."), Rubric("Names the approver.")),
    extra={"output_files": ["output.md"], "rubric_types": ["Outcome Evaluation", "Basic Evaluation", "Outcome Evaluation"]},
)
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32


def _verdicts(*passed) -> str:
    return json.dumps({"rubrics": [{"index": i, "passed": p, "confidence": 0.9, "evidence": "e"} for i, p in enumerate(passed)]})


def _judge(tmp_path: Path, model: FakeModel, name: str = "llm_rubric", **kw):
    return make_judge(JudgeConfig(name=name, cache_dir=str(tmp_path / "cache"), **kw), "llm_rubric", model)


def _evidence(text: str) -> dict:
    """The JSON evidence object in its fence after the protocol's instructions."""
    return json.loads(fenced_payload(text))


@pytest.fixture
def job(tmp_path: Path) -> Path:
    docx = tmp_path / "g.docx"
    office.write_docx(docx, [("title", "Guide"), ("para", "Hotels up to 600 yuan per night.")])
    return make_job(tmp_path / "job", {"output.md": "# Travel guide\n", "notes/guide.docx": docx.read_bytes()},
                    final_answer="Done.", messages=bash_call("cat policies/travel.md"))


def test_only_a_json_true_passes(tmp_path: Path, job: Path) -> None:
    model = FakeModel(_verdicts(True, "true", 1))
    scores = _judge(tmp_path, model).score(TASK, job)
    assert [i["passed"] for i in scores["items"]] == [True, False, False]
    assert all(i["judged"] for i in scores["items"]) and scores["judge_failures"] == 0
    assert scores["metrics"] == {"rubric_pass_rate": pytest.approx(1 / 3), "pass_rate": pytest.approx(1 / 3), "tcr70": 0.0, "pass_rate_judged": pytest.approx(1 / 3)}


def test_protocol_prompt_follows_the_benchmarks_judge(tmp_path: Path, job: Path) -> None:
    model = FakeModel(_verdicts(True, True, True))
    _judge(tmp_path, model).score(TASK, job)
    system, user = model.sent[0]
    assert system["role"] == "system" and system["content"].startswith(judge_texts.WB_SYSTEM)
    text = user["content"]  # no image outputs: plain text
    assert "lenient about small mistakes in how files are named" in text and "when in doubt" not in text
    body = _evidence(text)
    assert list(body) == ["taskId", "task", "steps", "expectedOutputs", "workDir", "outputs", "traceSummary", "rubrics"]
    assert body["task"] == "Write the travel guide." and body["steps"] is None and body["expectedOutputs"] == ["output.md"]
    out, docx = body["outputs"]
    assert out == {"path": "deliverable/output.md", "relToWorkDir": "output.md", "sizeBytes": len("# Travel guide\n"),
                   "excerpt": "# Travel guide\n", "mime": None, "hasImage": False, "_imageDataUrl": None, "note": None}
    assert body["workDir"] == "deliverable"
    assert docx["path"] == "deliverable/notes/guide.docx" and "Hotels up to 600 yuan per night." in docx["excerpt"]
    assert docx["mime"] == "application/vnd.openxmlformats-officedocument.wordprocessingml.document" and docx["note"] is None
    assert docx["sizeBytes"] == (job / "deliverable" / "notes" / "guide.docx").stat().st_size
    assert body["rubrics"][1] == {"index": 1, "rubric": "Has five sections.", "rubricType": "Basic Evaluation", "rubricDiff": None}
    tool = body["traceSummary"][0]
    assert tool["type"] == "tool" and tool["tool"] == "bash" and "cat policies/travel.md" in tool["input"]
    assert body["traceSummary"][-1] == {"type": "final", "text": "Done."}


def test_protocol_file_entries_for_images_and_unreadable_office_files(tmp_path: Path) -> None:
    """An image is attached and its data URL is also a field of its entry (as the benchmark's JSON has
    it); an image over 2 MB and an office file with no text get a note instead of content."""
    big = b"\x89PNG\r\n\x1a\n" + b"\x00" * (MAX_IMAGE_BYTES + 1)
    job = make_job(tmp_path / "j", {"chart.png": PNG, "huge.png": big, "broken.xlsx": b"not a zip", "data.csv": "a,b\n1,2\n", "empty.txt": ""})
    model = FakeModel(_verdicts(True, True, True))
    _judge(tmp_path, model).score(TASK, job)
    parts = model.sent[0][1]["content"]
    body = _evidence(parts[0]["text"])
    files = {f["relToWorkDir"]: f for f in body["outputs"]}
    url = "data:image/png;base64," + base64.b64encode(PNG).decode()
    assert files["chart.png"] | {} == {"path": "deliverable/chart.png", "relToWorkDir": "chart.png", "sizeBytes": len(PNG), "excerpt": None,
                                       "mime": "image/png", "hasImage": True, "_imageDataUrl": url, "note": None}
    assert [p["image_url"]["url"] for p in parts[1:]] == [url]
    assert files["huge.png"]["hasImage"] is False and files["huge.png"]["_imageDataUrl"] is None and "image" in files["huge.png"]["note"]
    assert files["broken.xlsx"]["excerpt"] is None and "xlsx" in files["broken.xlsx"]["note"]
    assert files["broken.xlsx"]["mime"] == "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
    assert (files["data.csv"]["mime"], files["data.csv"]["excerpt"]) == (None, "a,b\n1,2\n")
    assert (files["empty.txt"]["excerpt"], files["empty.txt"]["note"]) == ("", None)


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
    shown = [f["relToWorkDir"] for f in body["outputs"] if "path" in f]
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
    shown = [f.get("relToWorkDir") for f in _evidence(model.sent[0][1]["content"])["outputs"]]
    assert shown[:2] == [expected, "Inventory Optimization Report.xlsx"] and "aaa/0.md" in shown


def test_fulltext_variant_keeps_the_earlier_prompt(tmp_path: Path, job: Path) -> None:
    model = FakeModel(_verdicts(True, True, True))
    scores = _judge(tmp_path, model, name="llm_rubric_fulltext").score(TASK, job)
    assert scores["judge"] == "llm_rubric_fulltext"
    system, user = model.sent[0]
    assert system["role"] == "system" and "when in doubt, it fails" in system["content"]
    text = user["content"]
    assert "Write the travel guide." in text and "- output.md" in text
    assert "0. Mentions the 600 yuan cap.\n1. Has five sections.\n2. Names the approver." in text
    left = json.loads(fenced_payload(text))
    assert [f["path"] for f in left["files"]] == ["output.md", "notes/guide.docx"]  # expected output first
    assert "Hotels up to 600 yuan per night." in left["files"][1]["text"]  # docx as extracted text
    assert left["final_message"] == "Done." and "bash:" in left["trajectory"] and "cat policies/travel.md" in left["trajectory"]


def test_fulltext_budget_truncates_and_omits(tmp_path: Path) -> None:
    job = make_job(tmp_path / "j", {"output.md": "a" * 50, "b.md": "b" * 30, "c.md": "c" * 30})
    model = FakeModel(_verdicts(True, True, True))
    _judge(tmp_path, model, name="llm_rubric_fulltext", max_file_chars=40, max_total_chars=75).score(TASK, job)
    files = json.loads(fenced_payload(model.sent[0][1]["content"]))["files"]
    assert files[0] == {"path": "output.md", "note": "truncated to 40 characters", "text": "a" * 40}
    assert files[1] == {"path": "b.md", "text": "b" * 30} and files[2] == {"path": "c.md", "note": judge_texts.OMITTED}


def test_both_denominators(tmp_path: Path, job: Path) -> None:
    answer = json.dumps({"rubrics": [{"index": 0, "passed": True}, {"index": 2, "passed": False}]})
    scores = _judge(tmp_path, FakeModel(answer)).score(TASK, job)
    assert scores["rubric_counts"] == {"rubrics": 3, "judged": 2, "passed": 1, "extra_rows": 0, "extra_rows_passed": 0, "extra_rows_dropped": 0}
    assert scores["metrics"]["pass_rate"] == pytest.approx(1 / 3) and scores["metrics"]["pass_rate_judged"] == pytest.approx(1 / 2)
    agg = aggregate([scores])
    assert agg["pass_rate"] == pytest.approx(1 / 3) and agg["pass_rate_judged"] == pytest.approx(1 / 2)


def test_fences_and_chatter_are_tolerated() -> None:
    assert read_answer("Sure!\n```json\n" + _verdicts(True, False) + "\n```", 2).by_index[0].passed is True
    assert set(read_answer("Here: " + _verdicts(True, False, True) + " hope it helps", 3).by_index) == {0, 1, 2}
    for bad, why in [("no json", "no JSON"), ('{"rubric": []}', "without a \"rubrics\" list"), ("{oops}", "does not decode"), ("[1] {}", "an array")]:
        assert why in read_answer(bad, 3).problem
    out_of_range = read_answer('{"rubrics": [{"index": 7}]}', 3)  # readable, no verdict: an extra row only
    assert out_of_range.by_index == {} and out_of_range.problem is None and [r.index for r in out_of_range.extra_rows] == [7]


def test_llm_rubric_makes_one_call_as_the_benchmark_does(tmp_path: Path, job: Path) -> None:
    model = FakeModel("I think they all pass.", _verdicts(True, True, False))
    scores = _judge(tmp_path, model, max_retries=2).score(TASK, job)
    assert len(model.sent) == 1 and scores["judge_failures"] == 1
    assert [(i["passed"], i["judged"]) for i in scores["items"]] == [(False, True)] * 3


def test_fulltext_asks_again_after_an_unreadable_answer(tmp_path: Path, job: Path) -> None:
    model = FakeModel("I think they all pass.", _verdicts(True, True, False))
    scores = _judge(tmp_path, model, name="llm_rubric_fulltext").score(TASK, job)
    assert len(model.sent) == 2 and scores["judge_failures"] == 0
    retry = model.sent[1]
    assert retry[2] == {"role": "assistant", "content": "I think they all pass."} and "could not be parsed" in retry[3]["content"]
    assert [i["passed"] for i in scores["items"]] == [True, True, False]


def test_fulltext_unreadable_after_retries_fails_every_rubric(tmp_path: Path, job: Path) -> None:
    model = FakeModel("nope")
    scores = _judge(tmp_path, model, name="llm_rubric_fulltext", max_retries=2).score(TASK, job)
    assert len(model.sent) == 3 and scores["judge_failures"] == 1
    assert [(i["passed"], i["judged"]) for i in scores["items"]] == [(False, True)] * 3
    assert "no verdict object" in scores["items"][0]["reason"] and scores["metrics"]["pass_rate"] == 0.0


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


@pytest.mark.parametrize("name", ["llm_rubric", "llm_rubric_fulltext"])
def test_a_file_name_that_is_not_utf8_is_judged_and_shown_escaped(tmp_path: Path, name: str) -> None:
    job = make_job(tmp_path / "j", {"output.md": "# Guide\n"})
    with open(os.path.join(os.fsencode(job / "deliverable"), b"bad\xff\xfe.md"), "wb") as f:
        f.write(b"more")
    model = FakeModel(_verdicts(True, True, True))
    scores = _judge(tmp_path, model, name=name).score(TASK, job)
    assert scores["rubric_counts"]["judged"] == 3
    assert "bad\\\\xff\\\\xfe.md" in model.sent[0][1]["content"]  # the name, escaped, in the JSON text


def test_the_judge_cache_takes_text_that_is_not_utf8(tmp_path: Path) -> None:
    """A lone surrogate (a non-UTF-8 file name or byte the agent's trace carries) reaches the judge's
    cache key and entry as an escape; text that is valid UTF-8 keeps the key it had."""
    import hashlib
    import json

    from eval.judges.client import CachedLLM

    model = FakeModel(_verdicts(True, True, True))
    llm = CachedLLM(model, {"name": "m"}, tmp_path / "cache")
    odd = [{"role": "user", "content": "see bad\udcff\udcfe.md"}]
    first = llm.complete(odd)
    assert llm.complete(odd) == first and llm.calls == 1  # the second from the cache
    plain = [{"role": "user", "content": "café"}]
    blob = json.dumps({"model": {"name": "m"}, "messages": plain}, sort_keys=True, ensure_ascii=False)
    assert llm.key(plain) == hashlib.sha256(blob.encode()).hexdigest()


def test_a_judges_calls_are_cached_beside_the_records_it_scores(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 49: the judges' call cache lived in the checkout (`<repo>/.cache/judge`), not beside the
    records as the model-call cache does (`<out>/.cache/calls`)."""
    from eval.config import BenchmarkConfig
    from eval.score.records import score_job

    job = make_job(tmp_path / "out" / "sweep" / "wb-7__job", {"output.md": "# Travel guide\n"}, final_answer="Done.")
    made: list[Path] = []
    real = __import__("eval.judges.client", fromlist=["CachedLLM"]).CachedLLM.__init__

    def spy(self, model, identity, cache_dir, serial=True):  # type: ignore[no-untyped-def]
        made.append(Path(cache_dir))
        real(self, model, identity, cache_dir, serial)

    monkeypatch.setattr("eval.judges.client.CachedLLM.__init__", spy)
    score_job(job, JudgeConfig(name="llm_rubric"), task=TASK, model=FakeModel(_verdicts(True, False, True)),
              benchmark=BenchmarkConfig(name="workspace_bench"))
    assert made == [tmp_path / "out" / ".cache" / "judge"]
