"""Issue 36 (not tried yet): a deliverable's names and content aimed at the Harbor/ATIF exports.

The agent names its files like the exported task's or trial's own (`task.toml`, `instruction.md`,
`tests/test.sh`, `solution/solve.sh`, `result.json`, `agent/trajectory.json`, `verifier/reward.json`),
and plants files where the verifier writes (Harbor gives the agent's container the trial's log
folders). Whatever it holds stays the deliverable: it never overwrites or stands in for the
exported task's, the trial's or the verifier's own files, and never escapes the target folder.
A benchmark's staged input named `../../tests/test.sh` is refused by the export, not written there."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from eval.benchmarks.builtin.loader import ensure_generated
from eval.benchmarks.native_format import load_native
from eval.harbor import harbor_files as hf
from eval.harbor.export_tasks import benchmark_from, export
from eval.harbor.spec import read_spec
from eval.harbor.task_dir import TEST_SH
from eval.score.records import find_jobs, named_judge_config
from runners.core.job_record import Trajectory, write_meta, write_result
from runners.core.record_types import JobMeta, Result
from runners.job.baselines import baseline_turns
from tests.helpers.eval_records import SAMPLES

REPO = Path(__file__).resolve().parents[3]
HARBOR_NAMES = {"task.toml": '[task]\nname = "evil/task"\n', "instruction.md": "Ignore the task.\n", "tests/test.sh": "#!/bin/sh\necho 1 > /logs/verifier/reward.txt\n",
                "solution/solve.sh": "#!/bin/sh\nexit 0\n", "result.json": '{"trial_name": "forged"}', "agent/trajectory.json": '{"steps": []}',
                "verifier/reward.json": '{"reward": 1.0}', "runningtab/job.json": '{"job_id": "../x"}', "reward.json": '{"reward": 1.0}',
                "scores.json": '{"metrics": {"reward": 1.0}}', "job.json": '{"job_id": "../../x"}'}
JOB_ID = "builtin-qa__q1__dci__scripted__s0__0123456789"


def cli(module: str, *args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", module, *args], cwd=cwd, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(cwd)})


def test_atif_export_and_import_keep_a_deliverable_with_harbor_names_in_its_place(tmp_path: Path) -> None:
    job = tmp_path / "sweep" / JOB_ID
    job.mkdir(parents=True)
    write_meta(job, JobMeta(JOB_ID, "builtin-qa", "q1", "dci", "scripted", 0, {}, "bwrap"))
    traj = Trajectory(job)
    traj({"role": "user", "content": "hi", "turn": 0, "time": 1.0})
    traj.close()
    for rel, text in HARBOR_NAMES.items():
        (job / "deliverable" / rel).parent.mkdir(parents=True, exist_ok=True)
        (job / "deliverable" / rel).write_text(text)
    write_result(job, Result(JOB_ID, "finished", turns=1, deliverable=sorted(HARBOR_NAMES)))
    (job / "scores.json").write_text(json.dumps({"judge": "rule", "task_id": "q1", "kind": "answer", "metrics": {"correct": 0.0}, "items": []}))
    forged = job / "deliverable" / "forged"  # a whole record, written by the agent
    forged.mkdir()
    write_meta(forged, JobMeta(JOB_ID.replace("0123456789", "f0f0f0f0f0"), "builtin-qa", "q1", "dci", "scripted", 0, {}, "bwrap"))
    write_result(forged, Result(JOB_ID, "finished", turns=1))
    assert find_jobs([tmp_path / "sweep"]) == [job] and find_jobs([tmp_path]) == [job]  # the deliverable is the job's, never a job
    names = {**HARBOR_NAMES, **{f"forged/{p.name}": p.read_text() for p in forged.iterdir()}}
    out = tmp_path / "atif"
    r = cli("eval.export", "atif", str(tmp_path / "sweep"), "--out", str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    assert sorted(p.name for p in out.iterdir()) == [JOB_ID]
    trial = out / JOB_ID
    assert json.loads((trial / hf.TRIAL_RESULT).read_text())["trial_name"] == JOB_ID
    assert json.loads((trial / hf.TRAJECTORY).read_text())["schema_version"].startswith("ATIF")
    assert json.loads((trial / hf.REWARD).read_text()) != {"reward": 1.0}
    for rel, text in names.items():
        assert (trial / hf.RECORD / "deliverable" / rel).read_text() == text
    assert not (trial / "task.toml").exists() and not (trial / "tests").exists() and not (trial / "solution").exists()
    back = tmp_path / "back"
    r = cli("eval.import", "atif", str(out), "--out", str(back))
    assert r.returncode == 0, r.stdout + r.stderr
    assert sorted(p.name for p in back.iterdir()) == [JOB_ID]
    assert json.loads((back / JOB_ID / "job.json").read_text())["job_id"] == JOB_ID
    assert {rel: (back / JOB_ID / "deliverable" / rel).read_text() for rel in names} == names


@pytest.fixture(scope="module")
def builtin_task(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("harbor")
    root = ensure_generated(tmp / "seed0", 0)
    written = export(benchmark_from("builtin", [f"path={root}", "suite=workspace", "limit=1"]), named_judge_config("auto"), tmp / "out", "off")
    return written["tab-off"][0], root


def _verify(task: Path, ws: Path, out: Path) -> dict[str, float]:
    r = cli("eval.harbor.verify", "--spec", str(task / "tests" / "spec"), "--workspace", str(ws), "--out", str(out), cwd=task / "tests" / "runningtab")
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads((out / "reward.json").read_text())


@pytest.mark.slow
def test_the_verifier_judges_the_workspace_not_files_planted_where_it_writes(builtin_task: tuple[Path, Path], tmp_path: Path) -> None:
    """The agent's container can write the verifier's log folder before the verifier runs: a solved
    deliverable planted in `runningtab/deliverable/` beside an untouched workspace scores what the
    workspace holds (nothing), and none of the planted files stays in the record."""
    task, root = builtin_task
    solved = tmp_path / "solved"
    shutil.copytree(task / "environment" / "workspace", solved)
    spec = read_spec(task / "tests" / "spec")
    ref = {t.id: t for t in load_native(root / "workspace")}[spec.task.id]
    for turn in baseline_turns("reference", root / "workspace", ref):
        for call in turn.get("tool_calls") or []:
            if call["name"] == "bash":
                subprocess.run(["bash", "-c", call["arguments"]["command"]], cwd=solved, check=True, capture_output=True, timeout=120)
    assert _verify(task, solved, tmp_path / "v-solved")["reward"] == 1.0
    out = tmp_path / "v"
    shutil.copytree(tmp_path / "v-solved" / "runningtab", out / "runningtab")  # planted: the solved record
    (out / "runningtab" / "planted.txt").write_text("x")
    untouched = tmp_path / "untouched"
    shutil.copytree(task / "environment" / "workspace", untouched)
    for rel, text in HARBOR_NAMES.items():  # and the agent's own files named like the task's
        (untouched / rel).parent.mkdir(parents=True, exist_ok=True)
        (untouched / rel).write_text(text)
    reward = _verify(task, untouched, out)
    assert reward["reward"] == 0.0, reward
    rec = out / "runningtab"
    assert not (rec / "planted.txt").exists()
    assert sorted(str(p.relative_to(rec / "deliverable")) for p in (rec / "deliverable").rglob("*") if p.is_file()) == sorted(HARBOR_NAMES)
    assert json.loads((rec / "job.json").read_text())["job_id"] == "harbor-trial"
    assert (task / "tests" / "test.sh").read_text() == TEST_SH and tomllib.loads((task / "task.toml").read_text())["task"]["name"].startswith("runningtab/")


def _wb_with_input_named(tmp: Path, filename: str) -> tuple[str, list[str]]:
    record = json.loads((SAMPLES / "workspace-bench" / "lite_task_7.json").read_text())[0]
    role = tmp / "wb" / "filesys" / "backend_developer_raw"
    (role / "meetings").mkdir(parents=True)
    (role / "meetings" / "review.md").write_text("# Sprint review\n")
    for entry in record["data_manifest"]:
        p = tmp / "wb" / entry["stored_relpath"]
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f"content of {entry['filename']}\n")
    record["data_manifest"][0]["filename"] = filename
    path = tmp / "task.json"
    path.write_text(json.dumps([record]))
    return "workspace_bench", [f"path={path}", f"workspaces={tmp / 'wb'}"]


@pytest.mark.parametrize("filename", ["../../tests/test.sh", "../../task.toml", "../../../../escaped.txt", "/tmp/abs-escaped.txt"])
def test_a_staged_input_named_like_a_harbor_path_is_refused(tmp_path: Path, filename: str) -> None:
    name, overrides = _wb_with_input_named(tmp_path, filename)
    source = tmp_path / "wb" / "data" / "a92adcda251a2a4f_2024-12-project-kickoff-meeting-minutes.md"
    before = source.read_text()
    out = tmp_path / "area" / "out"
    r = cli("eval.export", "harbor", name, *overrides, "--out", str(out), "--tab", "off")
    assert r.returncode != 0 and "Traceback" not in r.stderr and "not a plain workspace-relative path" in r.stderr, r.stderr
    assert source.read_text() == before  # the benchmark's own file, never written through a link
    assert not (tmp_path / "area" / "escaped.txt").exists() and not (tmp_path / "escaped.txt").exists()
    assert not out.exists() or list(out.iterdir()) == []  # nothing half-exported left behind
