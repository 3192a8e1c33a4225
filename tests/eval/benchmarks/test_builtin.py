"""The built-in benchmark: deterministic bytes by seed, realistic shape, metadata kept out of the
workspaces, and every task solvable — its scripted reference solution scores 100% with the rule
judge, an empty deliverable 0. The benchmark is generated once for this module."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from eval.benchmarks import BenchmarkError, load_benchmark
from eval.benchmarks.builtin import GENERATOR_VERSION, SUITES, generate
from eval.benchmarks.builtin.loader import COMPLETE, builtin_root, ensure_generated
from eval.benchmarks.builtin.loader import Config as BuiltinConfig
from eval.benchmarks.native_format import load_native
from runners.core.task import Task
from runners.job.baselines import run_baseline, summary


@pytest.fixture(scope="module")
def bench(tmp_path_factory) -> Path:
    return ensure_generated(tmp_path_factory.mktemp("builtin") / "seed0", 0)


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file() and p.name != COMPLETE}


@pytest.mark.slow
def test_same_seed_same_bytes(bench: Path, tmp_path: Path) -> None:
    generate(tmp_path / "again", 0)
    first, again = _tree(bench), _tree(tmp_path / "again")
    assert first.keys() == again.keys()
    assert [k for k in first if first[k] != again[k]] == []
    assert any(k.endswith(ext) for k in first for ext in (".docx", ".xlsx", ".pptx", ".pdf"))


def test_another_seed_other_content(bench: Path, tmp_path: Path) -> None:
    generate(tmp_path / "s1", 1, ("qa",))
    assert (tmp_path / "s1" / "qa" / "tasks.jsonl").read_bytes() != (bench / "qa" / "tasks.jsonl").read_bytes()


def test_shape_of_the_suites(bench: Path) -> None:
    for suite in SUITES:
        tasks = load_native(bench / suite)
        assert 8 <= len(tasks) <= 12
        assert sorted(p.stem for p in (bench / suite / "solutions").glob("*.jsonl")) == sorted(t.id for t in tasks)
        for ws in (bench / suite / "workspaces").iterdir():  # no benchmark metadata inside workspaces
            assert not [p for p in ws.rglob("*") if p.name in ("tasks.jsonl", "solutions") or p.suffix == ".jsonl"]
    files = list((bench / "workspace" / "workspaces").rglob("*.*"))
    assert len(files) >= 250 and {p.suffix for p in files} >= {".docx", ".xlsx", ".csv", ".md", ".pdf", ".pptx", ".json"}
    for t in load_native(bench / "workspace"):
        assert 8 <= len(t.rubrics) <= 20 and all(r.check for r in t.rubrics), t.id
        read = _sources_read(bench / "workspace", t)
        assert 3 <= len(read) <= 10, (t.id, read)
    for t in load_native(bench / "company"):
        assert 2 <= len(t.checkpoints) and all(c.check for c in t.checkpoints)
    for t in load_native(bench / "workspace") + load_native(bench / "company"):  # distractors and old drafts are checked
        assert "absent" in {c["type"] for item in (*t.rubrics, *t.checkpoints) for c in _checks(item.check or {})}, t.id
    assert all(t.answer for t in load_native(bench / "qa"))


def _checks(check: dict) -> list[dict]:
    """A check and every check nested in it."""
    return [check, *(c for sub in check.get("checks", []) for c in _checks(sub))]


def _sources_read(suite: Path, task: Task) -> set[str]:
    """Workspace files named in the reference solution's read and copy commands."""
    names = set()
    for line in (suite / "solutions" / f"{task.id}.jsonl").read_text().splitlines():
        for call in json.loads(line).get("tool_calls") or []:
            cmd = call["arguments"]["command"]
            if cmd.startswith(("head", "cat", "python3", "mkdir -p project")):
                names |= {tok.strip("'") for tok in cmd.split() if (task.workspace / tok.strip("'")).is_file()}
    return names


@pytest.mark.parametrize("suite", SUITES)
@pytest.mark.slow
def test_baselines_reference_empty_and_stuffing(bench: Path, suite: str, tmp_path: Path) -> None:
    """Real scripted jobs through the entry point's run_and_score, scored by the suite's judge: every
    reference solution scores 100%, every empty deliverable 0, and a generic stuffer that dumps the
    whole workspace into the output (or answers with every number it read) stays at most 15% with no
    task passed (issue 25, item 5: it scored 61% and TCR@70 6/10 on the workspace suite)."""
    for scores in run_baseline(bench / suite, "reference", tmp_path):
        failed = [(it["index"], it["reason"]) for it in scores["items"] if not it["passed"]]
        assert failed == [] and set(scores["metrics"].values()) == {1.0}, (scores["task_id"], failed)
    for scores in run_baseline(bench / suite, "empty", tmp_path):
        assert set(scores["metrics"].values()) == {0.0}, scores["task_id"]
    stuffed = run_baseline(bench / suite, "stuffing", tmp_path)
    passed = {s["task_id"]: [it["text"] for it in s["items"] if it["passed"]] for s in stuffed}
    (got,) = summary(stuffed).values()  # one kind of task a suite
    assert got["rate"] <= 0.15 and got["tasks_ok"] == 0, (got, passed)


def test_loaded_through_the_registry(bench: Path) -> None:
    for suite, prefix in zip(SUITES, ("ws-", "co-", "qa-"), strict=True):
        b = load_benchmark(BuiltinConfig(name="builtin", path=str(bench), suite=suite))
        assert b.default_judge == "rule" and all(t.id.startswith(prefix) for t in b.tasks())
    with pytest.raises(BenchmarkError, match="unknown builtin suite 'nope'; valid suites: workspace, company, qa"):
        load_benchmark(BuiltinConfig(name="builtin", path=str(bench), suite="nope"))
    assert builtin_root(BuiltinConfig(cache_dir="/c", seed=3)) == Path(f"/c/builtin/{GENERATOR_VERSION}-seed3")


def test_generation_is_atomic_and_reused(tmp_path: Path, monkeypatch) -> None:
    calls = []

    def fake_generate(out: Path, seed: int) -> None:
        calls.append(out)
        assert out.name.startswith(".seed0.") and out.parent == tmp_path  # a temp folder beside the target
        (out / "qa").mkdir()

    monkeypatch.setattr("eval.benchmarks.builtin.generate", fake_generate)
    root = ensure_generated(tmp_path / "seed0", 0)
    assert (root / COMPLETE).is_file() and (root / "qa").is_dir() and len(calls) == 1
    ensure_generated(tmp_path / "seed0", 0)
    assert len(calls) == 1  # a complete benchmark is reused
    assert [p.name for p in tmp_path.iterdir()] == ["seed0"]  # no temp folder left
    (tmp_path / "half").mkdir()
    with pytest.raises(BenchmarkError, match="not a complete built-in benchmark"):
        ensure_generated(tmp_path / "half", 0)

    def racing_generate(out: Path, seed: int) -> None:  # another job finishes first
        other = tmp_path / "raced"
        other.mkdir()
        (other / COMPLETE).write_text("seed 0\n")
        os.makedirs(out / "qa")

    monkeypatch.setattr("eval.benchmarks.builtin.generate", racing_generate)
    assert ensure_generated(tmp_path / "raced", 0) == tmp_path / "raced"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["half", "raced", "seed0"]


def test_cli_generates_suites(tmp_path: Path, capsys) -> None:
    from eval.benchmarks.builtin.__main__ import main

    main(["--out", str(tmp_path / "b"), "--seed", "4", "--suite", "qa"])
    assert "wrote qa" in capsys.readouterr().out
    assert [t.id for t in load_native(tmp_path / "b" / "qa")][:2] == ["qa-01", "qa-02"]
    assert not (tmp_path / "b" / COMPLETE).exists()  # only a full generation is a loadable benchmark.path
    with pytest.raises(BenchmarkError, match="not a complete built-in benchmark"):
        load_benchmark(BuiltinConfig(name="builtin", path=str(tmp_path / "b"), suite="qa"))
    with pytest.raises(FileExistsError, match="already exists"):
        main(["--out", str(tmp_path / "b"), "--suite", "qa"])
