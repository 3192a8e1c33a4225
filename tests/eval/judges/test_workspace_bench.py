"""Workspace-Bench: the loader on the real sample record (JSON, parquet and HF-dataset forms) over
fixture role workspaces, staging under original names, and its errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval.benchmarks import BenchmarkError, load_benchmark
from eval.benchmarks.workspace_bench import Config as WorkspaceBenchConfig
from eval.config import BenchmarkConfig, JudgeConfig
from eval.judges import make_judge
from tests.helpers.eval_records import SAMPLES, FakeModel, fenced_payload, make_job

SAMPLE = SAMPLES / "workspace-bench" / "lite_task_7.json"
RECORD = json.loads(SAMPLE.read_text())[0]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """`filesys/<role>_raw/` and `data/<hex>_<name>` as the dataset repository lays them out."""
    role = tmp_path / "wb" / "filesys" / "backend_developer_raw"
    (role / "meetings" / "2024").mkdir(parents=True)
    (role / "meetings" / "2024" / "2024-03-sprint-review.md").write_text("# Sprint review\n")
    (role / "docs" / "project").mkdir(parents=True)
    (tmp_path / "wb" / "filesys" / "data_scientist_raw").mkdir()
    for entry in RECORD["data_manifest"]:
        p = tmp_path / "wb" / entry["stored_relpath"]
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f"content of {entry['filename']}\n")
    return tmp_path / "wb"


def _cfg(root: Path, **kw) -> BenchmarkConfig:
    return WorkspaceBenchConfig(name="workspace_bench", workspaces=str(root), **{"path": str(SAMPLE), **kw})


def test_sample_record_becomes_a_task(root: Path) -> None:
    bench = load_benchmark(_cfg(root))
    assert bench.default_judge == "llm_rubric"
    t = bench.task("7")
    assert t.workspace == root / "filesys" / "backend_developer_raw"
    assert t.output == "output.md" and t.extra["output_files"] == ["output.md"] and "Expected output file(s): output.md" in t.prompt
    assert len(t.rubrics) == 10 and t.rubrics[0].check is None and t.extra["rubric_types"][0] == "Basic Evaluation"
    assert sorted(t.stage) == sorted(e["filename"] for e in RECORD["data_manifest"])  # original names, no hash prefix
    assert t.stage["project_requirements_document.md"] == root / "data" / "62cad48b93630f53_project_requirements_document.md"
    assert not any("a92adcda251a2a4f" in str(p) for p in t.workspace.rglob("*"))  # metadata stays out of the workspace


def _inputs(root: Path) -> dict[str, Path]:
    return {e["filename"]: root / e["stored_relpath"] for e in RECORD["data_manifest"]}


def test_inputs_all_in_the_role_workspace_are_not_staged(root: Path) -> None:
    role = root / "filesys" / "backend_developer_raw"
    for name, src in _inputs(root).items():
        (role / "docs" / "project" / name).write_bytes(src.read_bytes())  # the same files, already there
    assert load_benchmark(_cfg(root)).task("7").stage == {}


def test_inputs_are_never_split_between_the_role_folder_and_the_root(root: Path) -> None:
    """Task 13: two of the inputs (1.pptx, 2.pptx there) are already in the role folder, the third is not:
    all of them are staged together at the root rather than half here, half there."""
    role = root / "filesys" / "backend_developer_raw"
    inputs = _inputs(root)
    first, second, third = sorted(inputs)
    for name in (first, second):
        (role / "docs" / "project" / name).write_bytes(inputs[name].read_bytes())
    assert load_benchmark(_cfg(root)).task("7").stage == inputs
    (role / "docs" / "project" / third).write_text("a different file that only shares the name")
    assert load_benchmark(_cfg(root)).task("7").stage == inputs  # a same-named file is not the input


def test_unknown_ids_name_the_ids_that_exist(root: Path) -> None:
    with pytest.raises(BenchmarkError, match=r"has no task\(s\) \['99'\]; tasks: 7"):
        load_benchmark(_cfg(root, ids=[99]))


def test_parquet_export_and_local_hf_dataset(root: Path, tmp_path: Path) -> None:
    import datasets

    ds = datasets.Dataset.from_list([RECORD])
    ds.to_parquet(str(tmp_path / "lite.parquet"))
    assert [t.id for t in load_benchmark(_cfg(root, path=str(tmp_path / "lite.parquet"))).tasks()] == ["7"]
    repo = tmp_path / "hf" / "data"
    repo.mkdir(parents=True)
    ds.to_parquet(str(repo / "lite-00000-of-00001.parquet"))
    bench = load_benchmark(WorkspaceBenchConfig(name="workspace_bench", dataset=str(tmp_path / "hf"), split="lite", workspaces=str(root)))
    assert [t.id for t in bench.tasks()] == ["7"] and len(bench.task("7").rubrics) == 10


def test_errors_name_the_missing_path_or_field(root: Path, tmp_path: Path) -> None:
    with pytest.raises(BenchmarkError, match="needs benchmark.workspaces"):
        load_benchmark(WorkspaceBenchConfig(name="workspace_bench", path=str(SAMPLE)))
    with pytest.raises(BenchmarkError, match="has no filesys/ folder"):
        load_benchmark(_cfg(tmp_path))
    with pytest.raises(BenchmarkError, match="benchmark.path .* does not exist"):
        load_benchmark(_cfg(root, path=str(tmp_path / "nope.json")))
    with pytest.raises(BenchmarkError, match="needs benchmark.dataset"):
        load_benchmark(WorkspaceBenchConfig(name="workspace_bench", workspaces=str(root)))
    other = tmp_path / "other.json"
    other.write_text(json.dumps([{**RECORD, "persona": "Chief Llama Officer"}]))
    with pytest.raises(BenchmarkError, match=r"persona 'Chief Llama Officer'.*backend_developer_raw.*benchmark.roles"):
        load_benchmark(_cfg(root, path=str(other)))
    assert load_benchmark(_cfg(root, path=str(other), roles={"Chief Llama Officer": "data_scientist_raw"})).task("7").workspace.name == "data_scientist_raw"
    (root / RECORD["data_manifest"][0]["stored_relpath"]).unlink()
    with pytest.raises(BenchmarkError, match="input .*a92adcda251a2a4f_2024-12-project-kickoff-meeting-minutes.md is missing"):
        load_benchmark(_cfg(root))
    broken = tmp_path / "broken.jsonl"
    broken.write_text(json.dumps({k: v for k, v in RECORD.items() if k != "rubrics"}) + "\n")
    with pytest.raises(BenchmarkError, match=r"lacks field\(s\) \['rubrics'\]"):
        load_benchmark(_cfg(root, path=str(broken)))


def test_auto_judge_is_the_llm_rubric_protocol(root: Path, tmp_path: Path) -> None:
    task = load_benchmark(_cfg(root)).task("7")
    answer = json.dumps({"rubrics": [{"index": i, "passed": i < 7} for i in range(10)]})
    scores = make_judge(JudgeConfig(name="auto", cache_dir=str(tmp_path / "c")), "llm_rubric", FakeModel(answer)).score(task, make_job(tmp_path / "j"))
    assert scores["judge"] == "llm_rubric"
    assert scores["metrics"] == {"rubric_pass_rate": pytest.approx(0.7), "pass_rate": pytest.approx(0.7), "tcr70": 1.0, "pass_rate_judged": pytest.approx(0.7)}
    assert [i["type"] for i in scores["items"][:2]] == ["Basic Evaluation", "Outcome Evaluation"]


def test_the_judge_is_shown_the_records_own_task_text(root: Path, tmp_path: Path) -> None:
    """The agent's prompt names the outputs at its end; the benchmark's judge is shown the record's `task`
    as it is, with `steps` and each rubric's `rubricDiff` when the record has them (null otherwise)."""
    task = load_benchmark(_cfg(root)).task("7")
    model = FakeModel(json.dumps({"rubrics": []}))
    make_judge(JudgeConfig(name="llm_rubric", cache_dir=str(tmp_path / "c")), "llm_rubric", model).score(task, make_job(tmp_path / "j"))
    body = json.loads(fenced_payload(model.sent[0][1]["content"]))
    assert body["task"] == RECORD["task"] and task.prompt != RECORD["task"]
    assert body["steps"] is None and body["rubrics"][0]["rubricDiff"] is None and body["expectedOutputs"] == ["output.md"]
    richer = tmp_path / "richer.json"
    richer.write_text(json.dumps([{**RECORD, "steps": ["find the minutes", "copy them"], "rubric_diffs": ["easy"] * 10}]))
    task = load_benchmark(_cfg(root, path=str(richer))).task("7")
    model = FakeModel(json.dumps({"rubrics": []}))
    make_judge(JudgeConfig(name="llm_rubric", cache_dir=str(tmp_path / "c")), "llm_rubric", model).score(task, make_job(tmp_path / "j2"))
    body = json.loads(fenced_payload(model.sent[0][1]["content"]))
    assert body["steps"] == ["find the minutes", "copy them"] and body["rubrics"][3]["rubricDiff"] == "easy"


def test_a_record_without_steps_keeps_its_task_and_job_ids(root: Path) -> None:
    """Only records that have `steps`/`rubric_diffs` carry them, so every earlier task digest holds."""
    from runners.job.identity import task_digest

    task = load_benchmark(_cfg(root)).task("7")
    assert "steps" not in task.extra and "rubric_diffs" not in task.extra
    assert set(task.extra) == {"output_files", "persona", "difficulty", "rubric_types", "file_dep_graph"}
    assert task_digest(task) == "cf756abd8db5e15a2b23268f9391fac4d4b1313fb74fcbd8f55d58a34f716281"  # as before the evidence change
