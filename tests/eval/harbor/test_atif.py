"""Issue 29 (2): a scripted sweep's trajectories as ATIF, accepted by Harbor's own validator and trial
model (the `harbor` package, no Docker), and back: export then import gives the same records and the
same Table 1 (with its paired intervals); a Harbor run's trial (the layout our verifier leaves) is
imported with Harbor's identity, and what cannot be imported is listed."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from eval.benchmarks.builtin.loader import ensure_generated
from eval.benchmarks.native_format import load_native
from eval.harbor import harbor_files as hf
from eval.harbor.importer import import_trials
from eval.harbor.trial import export_jobs
from eval.report import write_report
from runners.job.baselines import baseline_turns, compose_root
from runners.job.identity import job_id
from runners.job.run import run_and_score
from tests.helpers.harbor_venv import harbor_check

RECORD_FILES = ("job.json", "result.json", "scores.json", "tab.json", "shown.json", "evaluator_view.json")


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Real scripted jobs (the loop, the tab, the rule judge) on the built-in qa suite: DCI answers half
    the tasks (reference or empty), RunningTab all; two seeds."""
    tmp = tmp_path_factory.mktemp("sweep")
    bench = ensure_generated(tmp / "bench", 0)
    suite = bench / "qa"
    tasks = load_native(suite)[:4]
    out = tmp / "sweep"
    for seed in (0, 1):
        for method in ("dci", "runningtab"):
            for n, task in enumerate(tasks):
                kind = "reference" if method == "runningtab" or (n + seed) % 2 == 0 else "empty"
                script = tmp / "scripts" / f"{kind}-{task.id}.jsonl"
                script.parent.mkdir(parents=True, exist_ok=True)
                script.write_text("".join(json.dumps(t) + "\n" for t in baseline_turns(kind, suite, task)))
                cfg = compose_root(["benchmark=builtin", f"benchmark.path={bench}", "benchmark.suite=qa", f"method={method}",
                                    "model=scripted", f"model.script={script}", f"seed={seed}", f"out={tmp}"])
                jid = job_id(cfg, task.id)
                run_and_score(cfg, task.id, out / jid, jid, None)
    return out


def _lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


@pytest.mark.slow
def test_atif_validates_and_round_trips_to_the_same_table1(sweep: Path, tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "eval.export", "atif", str(sweep), "--out", str(tmp_path / "atif")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    trials = sorted(p for p in (tmp_path / "atif").iterdir())
    assert len(trials) == 16 and "16 trajectory(ies) as ATIF" in proc.stdout
    verdict = harbor_check(trajectories=[t / hf.TRAJECTORY for t in trials], results=[t / hf.TRIAL_RESULT for t in trials])
    assert all(errors == [] for errors in verdict["trajectories"].values()), verdict["trajectories"]
    assert all(error is None for error in verdict["results"].values()), verdict["results"]
    # the tab's state per step, in `extra`
    tab_trial = next(t for t in trials if "__runningtab__" in t.name)
    steps = json.loads((tab_trial / hf.TRAJECTORY).read_text())["steps"]
    tab_steps = [s["extra"]["tab"] for s in steps if s["source"] == "agent"]
    assert tab_steps and all(set(s) == {"status", "read_log", "resolutions", "events"} for s in tab_steps)
    assert any(s["status"] and s["status"].startswith("[tab]") for s in tab_steps) and any(s["read_log"] for s in tab_steps)
    assert all("tab" not in s["extra"] for s in json.loads((trials[0] / hf.TRAJECTORY).read_text())["steps"] if "__dci__" in trials[0].name)

    imp = subprocess.run([sys.executable, "-m", "eval.import", "atif", str(tmp_path / "atif"), "--out", str(tmp_path / "back")],
                         capture_output=True, text=True, timeout=300)
    assert imp.returncode == 0, imp.stderr
    for job in sorted(sweep.iterdir()):
        back = tmp_path / "back" / job.name
        assert _lines(back / "trajectory.jsonl") == _lines(job / "trajectory.jsonl")
        for name in RECORD_FILES:
            if (job / name).is_file():
                assert json.loads((back / name).read_text()) == json.loads((job / name).read_text()), (job.name, name)
    a, b = write_report(sweep), write_report(tmp_path / "back")
    for table in ("table1.csv", "table1_vs_dci.csv"):
        assert (b / table).read_text() == (a / table).read_text(), table
    assert "runningtab" in (a / "table1_vs_dci.csv").read_text()


@pytest.mark.slow
def test_a_harbor_runs_trials_are_imported_with_harbors_identity(sweep: Path, tmp_path: Path) -> None:
    """The layout a `harbor run` of an exported task leaves (our verifier's record under verifier/,
    Harbor's result.json, the agent's ATIF): the model is `<agent>:<model>`, attempts become seeds,
    a timeout is a result, another error is errored, a trial without our record is listed."""
    exported = tmp_path / "atif"
    export_jobs([sweep], exported)
    runs = tmp_path / "jobs" / "2026-01-01__claude"
    source = sorted(p for p in exported.iterdir() if "__runningtab__" in p.name and "__s0__" in p.name)[:2]
    for n, trial in enumerate([source[0], source[0], source[1]]):
        dest = runs / f"{trial.name[:20]}__{n}"
        shutil.copytree(trial, dest)
        record = json.loads((dest / hf.RECORD / "job.json").read_text())
        (dest / hf.RECORD / "job.json").write_text(json.dumps({**record, "job_id": "harbor-trial", "model": "harbor", "seed": 0, "sandbox": "container"}))
        result = json.loads((dest / hf.TRIAL_RESULT).read_text())
        result["config"]["agent"] = {"name": "claude-code", "model_name": "anthropic/claude-sonnet-4-5"}
        result["started_at"] = f"2026-01-01T00:00:0{n}+00:00"
        result["agent_execution"] = {"started_at": "2026-01-01T00:00:00+00:00", "finished_at": "2026-01-01T00:01:30+00:00"}
        result["agent_result"] = {"n_input_tokens": 1000 + n, "n_output_tokens": 50, "cost_usd": 0.01}
        if n == 1:
            result["exception_info"] = {"exception_type": "AgentTimeoutError", "exception_message": "timed out", "exception_traceback": "",
                                        "occurred_at": "2026-01-01T00:01:30+00:00"}
        if n == 2:
            result["exception_info"] = {"exception_type": "NonZeroAgentExitCodeError", "exception_message": "exit 1", "exception_traceback": "",
                                        "occurred_at": "2026-01-01T00:01:30+00:00"}
        (dest / hf.TRIAL_RESULT).write_text(json.dumps(result))
    stray = runs / "not-ours__x"
    stray.mkdir()
    (stray / hf.TRIAL_RESULT).write_text(json.dumps({"trial_name": "not-ours__x", "task_name": "other/task"}))
    verdicts = harbor_check(results=[p / hf.TRIAL_RESULT for p in sorted(runs.iterdir()) if p != stray])["results"]
    assert len(verdicts) == 3 and all(v is None for v in verdicts.values()), verdicts  # Harbor's own TrialResult
    written, skipped = import_trials([tmp_path / "jobs"], tmp_path / "back")
    assert len(written) == 3 and len(skipped) == 1 and "not-ours__x" in skipped[0]
    metas = {p.name: json.loads((p / "job.json").read_text()) for p in written}
    results = {p.name: json.loads((p / "result.json").read_text()) for p in written}
    assert {m["model"] for m in metas.values()} == {"claude-code:anthropic/claude-sonnet-4-5"}
    first_task = [m for m in metas.values() if m["task_id"] == metas[written[0].name]["task_id"]]
    assert sorted(m["seed"] for m in first_task) == [0, 1]  # two attempts of one task
    stops = sorted(r["stop_reason"] for r in results.values())
    assert stops == ["env_error", "finished", "time_limit"] and {r["tokens_out"] for r in results.values()} == {50}
    assert all(r["wall_s"] == 90.0 for r in results.values())
    assert all((p / "trajectory.jsonl").is_file() and (p / "scores.json").is_file() for p in written)
