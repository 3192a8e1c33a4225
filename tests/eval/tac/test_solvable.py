"""Issue 41 (5): every task of the shared samples that the paper preset includes reaches full marks
as the preset runs it (served): a scripted agent makes the project's reference deliverable in its
real sandbox, through the job code, and the task's own evaluator scores the record
(bench/tac_solvable.py); and every sample evaluator scores an empty deliverable or is refused with its
reason, none left unscored."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bench.tac_solvable import check_empty, check_references, main
from eval.tac.references import REFERENCES
from tests.helpers.tac_seven import TASKS, write_export

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="the agent's and the evaluator's sandboxes need bubblewrap")
PAPER_SAMPLES = sorted(p.name for p in TASKS.iterdir() if (p / "dependencies.yml").read_text().split() == ["-", "owncloud"]
                       and p.name != "sde-run-rising-wave-locally")
NO_EVALUATOR = ["admin-make-spreadsheet", "finance-budget-variance"]  # the two sample excerpts without evaluator.py


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    """A prepared folder as `python -m eval.prepare agentcompany` lays it out, from the samples."""
    root = tmp_path_factory.mktemp("data")
    shutil.copytree(TASKS, root / "tasks")
    write_export(root / "files")
    return root


def test_every_paper_sample_task_has_a_reference_or_no_evaluator() -> None:
    assert len(PAPER_SAMPLES) == 15
    assert sorted(set(PAPER_SAMPLES) - set(REFERENCES)) == NO_EVALUATOR


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(set(PAPER_SAMPLES) & set(REFERENCES)))
def test_the_reference_reaches_full_marks_as_the_paper_preset_runs_it(data: Path, tmp_path: Path, name: str) -> None:
    (outcome,) = check_references(data, "agentcompany_paper", [name], tmp_path)
    assert (outcome.status, outcome.earned) == ("full", outcome.total) and outcome.total > 0, outcome.line()


def test_a_share_link_needs_the_served_mode(data: Path, tmp_path: Path) -> None:
    """Mounted (the paper preset's mode before), the same correct deliverable caps at 1/3."""
    (outcome,) = check_references(data, "agentcompany", ["hr-new-grad-job-description"], tmp_path)
    assert (outcome.status, outcome.earned, outcome.total) == ("partial", 1, 3)


@pytest.mark.slow
def test_every_sample_evaluator_scores_an_empty_deliverable_or_is_refused(data: Path, tmp_path: Path) -> None:
    outcomes = {o.task: o for o in check_empty(data, [], tmp_path)}
    assert sorted(outcomes) == sorted(p.name for p in TASKS.iterdir())
    assert {n for n, o in outcomes.items() if o.status == "refused"} == set(NO_EVALUATOR)
    assert [o.line() for o in outcomes.values() if o.status not in ("scored", "refused")] == []
    # before: unscored (no module sotopia); checkpoint 1 (the 'unformatted' sheet unchanged) passes on the
    # server's untouched file, as it would in the benchmark
    assert (outcomes["ds-format-excel-sheets"].earned, outcomes["ds-format-excel-sheets"].total) == (1, 4)
    assert (outcomes["sde-run-rising-wave-locally"].earned, outcomes["sde-run-rising-wave-locally"].total) == (0, 2)


def test_the_command_line(data: Path, tmp_path: Path, capsys) -> None:
    assert main([str(data), "--task", "hr-organize-talent-info", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "full         hr-organize-talent-info 4/4" in out and "summary: 1 full" in out
    assert main([str(tmp_path / "nothing")]) == 2
    assert "is not a prepared TheAgentCompany folder" in capsys.readouterr().err
    assert main([str(data), "--task", "ds-sql-exercise"]) == 2  # not a task of the paper preset
    assert "not tasks of benchmark=agentcompany_paper here: ['ds-sql-exercise']" in capsys.readouterr().err


def test_the_count_goes_on_past_a_task_that_fails_and_prints_each_outcome_as_it_comes(data: Path, tmp_path: Path, capsys, monkeypatch) -> None:
    """Issue 50 (5): before, the first task whose scoring raised (task 119 of 175) ended the command
    with a traceback, and nothing had been printed."""
    import bench.tac_solvable as solvable

    def boom(*args, **kwargs):
        print("(the first line is out before the next task runs)")
        raise RuntimeError("the evaluator's image could not be built\nDockerfileError: /app/logs")

    monkeypatch.setattr(solvable, "_run_job", boom)
    assert main([str(data), "--empty", "--task", "admin-make-spreadsheet", "--task", "ds-sql-exercise", "--task", "hr-organize-talent-info",
                 "--out", str(tmp_path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[:5] == ["refused      admin-make-spreadsheet  (no evaluator.py (an encrypted or missing evaluator))",
                       "(the first line is out before the next task runs)",
                       "crashed      ds-sql-exercise  (RuntimeError: DockerfileError: /app/logs)",
                       "(the first line is out before the next task runs)",
                       "crashed      hr-organize-talent-info  (RuntimeError: DockerfileError: /app/logs)"], out
    assert out[5:] == ["summary: 2 crashed, 1 refused", "checkpoints that earned points with nothing done: 0 in 0 task(s)"]
