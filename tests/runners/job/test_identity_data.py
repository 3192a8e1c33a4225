"""Job ids do not depend on where the data is (issue 35.2): every benchmark kind's identity inputs
hold no path of this machine, the same task folder at two paths is the same job, and each kind's
ids are pinned (builtin, native and workspace_bench as they always were; agentcompany and officeqa
as they became when their extras got typed: no absolute path, no reward version)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from envs.sandbox import bwrap_problem
from eval.benchmarks import load_benchmark
from eval.benchmarks.agentcompany import Config as AgentCompanyConfig
from eval.benchmarks.builtin.loader import Config as BuiltinConfig
from eval.benchmarks.officeqa import Config as OfficeQAConfig
from eval.benchmarks.workspace_bench import Config as WorkspaceBenchConfig
from eval.config import BenchmarkConfig
from eval.score.records import judge_key
from runners.core.task import Task
from runners.job.identity import config_identity, task_digests, task_identity
from tests.conftest import compose_root, write_native, write_script
from tests.helpers.eval_records import SAMPLES

REPO = Path(__file__).resolve().parents[3]
TAC = SAMPLES / "theagentcompany"
# two sample excerpts without a Dockerfile, one whose Dockerfile copies a file into /workspace, one
# whose Dockerfile builds /data (staged from the image cache)
TAC_TASKS = ("admin-make-spreadsheet", "finance-budget-variance", "ds-fix-table-values-and-missing-answers", "ds-sql-exercise")
WB_RECORD = SAMPLES / "workspace-bench" / "lite_task_7.json"
OQA_CSV = SAMPLES / "officeqa" / "officeqa_pro_head5.csv"
NATIVE_TASKS = [
    {"id": "rows", "prompt": "Count the rows.", "workspace": "w", "answer": "3"},
    {"id": "bonus", "prompt": "Do both.", "workspace": "w", "checkpoints": [{"text": "a"}, {"text": "b", "points": 2}],
     "extra": {"scoring": "bonus_for_completing_final"}},
]


def tac_data(root: Path) -> tuple[Path, Path]:
    """The sample task folders and a small file-server export, under `root`."""
    for name in TAC_TASKS:
        shutil.copytree(TAC / name, root / "tasks" / name)
    docs = root / "export" / "Documents" / "Financials"
    docs.mkdir(parents=True)
    (docs / "budget.xlsx").write_bytes(b"not really a spreadsheet")
    return root / "tasks", root / "export"


def tac_config(root: Path) -> AgentCompanyConfig:
    tasks, export = tac_data(root)
    return AgentCompanyConfig(tasks_dir=str(tasks), export_dir=str(export), include=list(TAC_TASKS))


def officeqa_config(root: Path, reward: str = "309dc01") -> OfficeQAConfig:
    corpus = root / "corpus"
    corpus.mkdir(parents=True)
    (corpus / "treasury_bulletin_1941_01.txt").write_text("Receipts, 1941: 2,602\n")
    return OfficeQAConfig(questions=str(OQA_CSV), corpus=str(corpus), reward=reward)


def workspace_bench_config(root: Path) -> WorkspaceBenchConfig:
    record = json.loads(WB_RECORD.read_text())[0]
    role = root / "filesys" / "backend_developer_raw" / "meetings"
    role.mkdir(parents=True)
    (role / "sprint-review.md").write_text("# Sprint review\n")
    for entry in record["data_manifest"]:
        p = root / entry["stored_relpath"]
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f"content of {entry['filename']}\n")
    return WorkspaceBenchConfig(path=str(WB_RECORD), workspaces=str(root))


def native_config(root: Path) -> BenchmarkConfig:
    return BenchmarkConfig(name="native", path=str(write_native(root, NATIVE_TASKS, {"w/data.csv": "a\n1\n2\n3\n"})))


KINDS = {
    "builtin-workspace": lambda root: BuiltinConfig(suite="workspace"),
    "builtin-company": lambda root: BuiltinConfig(suite="company"),
    "builtin-qa": lambda root: BuiltinConfig(suite="qa"),
    "native": native_config,
    "workspace_bench": workspace_bench_config,
    "agentcompany": tac_config,
    "officeqa": officeqa_config,
}
# sha256 of the sorted (task id, task digest) pairs of each kind above. builtin, native and
# workspace_bench: as before typed extras (their extras hold no path and no judging choice);
# agentcompany and officeqa moved once with issue 35.2 (no absolute task folder, no reward version).
PINNED = {
    "builtin-workspace": "3565064f12a05f62ea026df1207c3492b80e1c84a0f5d7c17312ef0338792fb4",
    "builtin-company": "e2b4982f9bc144c3e0b58b0c97920db87af7586a70614e582d89092148af534c",
    "builtin-qa": "deb7b9120d14485003b2770d818c54c2e653e5cad17f4eefe4b132bffebf206f",
    "native": "ede18ef801f546d9eebcb8f97dcdd3d640c2347828c1b9b10cf00a328ed0c04b",
    "workspace_bench": "5a1ac7d075f287e3cb57d66c5c2bd4ab5536216a9d0e4cb0fd885bbbd0b5912d",
    "agentcompany": "a3c5e909445697806846dbd787166a88900ac427b53b1a146ed7b05e6d44b6c6",
    "officeqa": "1e16ae10171eb70757803d205b7136047bc3a9e693516a95b7642a1e166ffb8c",
}


def tasks_of(cfg: BenchmarkConfig) -> list[Task]:
    return load_benchmark(cfg).tasks()


def kind_digest(tasks: list[Task]) -> str:
    return hashlib.sha256(json.dumps(sorted(task_digests(tasks).items())).encode()).hexdigest()


def strings(obj: Any) -> Iterator[str]:
    """Every string in a JSON-like structure, keys included."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield str(k)
            yield from strings(v)
    elif isinstance(obj, list | tuple):
        for v in obj:
            yield from strings(v)
    elif obj is not None:
        yield obj if isinstance(obj, str) else json.dumps(obj, default=str)


@pytest.mark.parametrize("kind", KINDS)
def test_task_digests_are_pinned(kind: str, tmp_path: Path) -> None:
    assert kind_digest(tasks_of(KINDS[kind](tmp_path / "data"))) == PINNED[kind]


@pytest.mark.parametrize("kind", KINDS)
def test_no_path_of_this_machine_in_any_identity_input(kind: str, tmp_path: Path) -> None:
    """Walk what a job id hashes (the config part and each task's part): no string names a folder
    of this machine (the data's, the checkout's, the home folder)."""
    bench = KINDS[kind](tmp_path / "data")
    script = write_script(tmp_path / "script.jsonl", [{"content": "done"}])
    cfg = compose_root([f"benchmark={bench.name}", "model=scripted", f"model.script={script}"])
    cfg.benchmark = bench
    machine = (str(tmp_path), str(REPO), str(Path.home()))
    inputs = {"config": config_identity(cfg), "tasks": [json.loads(json.dumps(task_identity(t), default=str)) for t in tasks_of(bench)]}
    found = sorted({s for s in strings(inputs) if any(m in s for m in machine)})
    assert not found, found


def test_the_same_agentcompany_folder_at_two_paths_is_the_same_job(tmp_path: Path) -> None:
    """A checkout moved (another machine, another mount, DATA/ moved) keeps every id."""
    a = task_digests(tasks_of(tac_config(tmp_path / "a")))
    b = task_digests(tasks_of(tac_config(tmp_path / "elsewhere" / "b")))
    assert sorted(a) == sorted(TAC_TASKS) and a == b


def test_an_agentcompany_task_folder_enters_by_content(tmp_path: Path) -> None:
    """What is in the task's folder still makes the job (its evaluator's references included);
    bytecode that running its code in place leaves does not."""
    cfg = tac_config(tmp_path / "a")
    before = task_digests(tasks_of(cfg))
    (Path(cfg.tasks_dir) / "ds-sql-exercise" / "__pycache__").mkdir()
    (Path(cfg.tasks_dir) / "ds-sql-exercise" / "__pycache__" / "evaluator.cpython-311.pyc").write_bytes(b"\x00")
    assert task_digests(tasks_of(cfg)) == before
    (Path(cfg.tasks_dir) / "ds-sql-exercise" / "evaluator.py").write_text("# another grader\n")
    after = task_digests(tasks_of(cfg))
    assert after["ds-sql-exercise"] != before["ds-sql-exercise"]
    assert {k: v for k, v in after.items() if k != "ds-sql-exercise"} == {k: v for k, v in before.items() if k != "ds-sql-exercise"}


def test_the_officeqa_reward_version_is_not_in_the_job_id(tmp_path: Path) -> None:
    """The reward is a judging choice: another version re-scores the records, it does not re-run them."""
    new = task_digests(tasks_of(officeqa_config(tmp_path / "a", "309dc01")))
    first = task_digests(tasks_of(officeqa_config(tmp_path / "b", "0da20e9")))
    assert new == first


def test_the_officeqa_reward_version_is_in_the_judge_key_away_from_its_default(tmp_path: Path) -> None:
    """At the default reward the officeqa judge's key is the one it always had (finished records are
    not re-scored); another version gives another key."""
    judge = compose_root(["judge=officeqa"]).judge
    assert judge_key(judge) == judge_key(judge, OfficeQAConfig()) == "9dc9d683a4e55538"  # as before issue 35
    assert judge_key(judge, OfficeQAConfig(reward="0da20e9")) != judge_key(judge)
    assert judge_key(judge, BuiltinConfig(suite="qa")) == judge_key(judge)  # a benchmark without judging choices


@pytest.mark.skipif(bwrap_problem() is not None, reason="file_server=served needs bubblewrap")
def test_a_served_agentcompany_task_holds_no_path_either(tmp_path: Path) -> None:
    cfg = dataclasses.replace(tac_config(tmp_path / "data"), file_server="served")
    tasks = tasks_of(cfg)
    machine = (str(tmp_path), str(REPO), str(Path.home()))
    found = sorted({s for t in tasks for s in strings(json.loads(json.dumps(task_identity(t), default=str))) if any(m in s for m in machine)})
    assert tasks and not found, found
    assert task_digests(tasks) == task_digests(tasks_of(dataclasses.replace(tac_config(tmp_path / "b"), file_server="served")))
