"""Figure 2, Figure 4 and Table 3 count only values the agent was shown in workspace files' content:
never harness text, paths, error boilerplate or the prompt (issue 30 §3). And the agent sees its
workspace at a fixed path, so the same job gets the same prompt every time."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from eval.report import write_report
from eval.report.analyses.fates import fates
from eval.report.load import load_sweep
from runners.core.job_record import JobRecord
from runners.job.identity import job_id
from runners.job.run import run_and_score
from tests.conftest import compose_root, write_native, write_script

# Rubric values that occur only in noise: 1 and 2 in bash's error boilerplate ("bash: line 1:",
# "Command exited with code 2"), 127 in the exit code of a missing command, "Orbit" only in the task's
# prompt, and "quarterly" only in the name of a file the agent listed but never opened.
RUBRICS = [
    {"text": "The memo states the figure 1", "check": {"type": "contains", "values": [1]}},
    {"text": "The memo states the figure 2", "check": {"type": "contains", "values": [2]}},
    {"text": "The memo states the figure 127", "check": {"type": "contains", "values": [127]}},
    {"text": 'The memo names the project "Orbit"', "check": {"type": "contains", "values": ["Orbit"]}},
    {"text": 'The memo cites the "quarterly" file', "check": {"type": "contains", "values": ["quarterly"]}},
    {"text": 'The memo gives the budget "4,350"', "check": {"type": "contains", "values": ["4,350"]}},
]
TASK = {"id": "memo", "prompt": "Write a memo about project Orbit to output/memo.md.", "workspace": "w",
        "output": "output/memo.md", "rubrics": RUBRICS}
FILES = {"w/budget.txt": "Budget: 4,350 EUR\n", "w/quarterly-notes/readme.txt": "nothing here\n"}
TURNS = [
    {"tool_calls": [{"name": "bash", "arguments": {"command": "ls -R"}}]},
    {"tool_calls": [{"name": "bash", "arguments": {"command": "cat missing.txt; exit 2"}}]},
    {"tool_calls": [{"name": "bash", "arguments": {"command": "no-such-command-here"}}]},
    {"tool_calls": [{"name": "bash", "arguments": {"command": "pwd; echo $PWD/output"}}]},
    {"tool_calls": [{"name": "bash", "arguments": {"command": "cat budget.txt"}}]},
    {"tool_calls": [{"name": "bash", "arguments": {"command": "mkdir -p output && echo 'Memo: nothing.' > output/memo.md"}}]},
    {"content": "Done."},
]


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("noise")
    bench = write_native(root / "bench", [TASK], FILES)
    script = write_script(root / "turns.jsonl", TURNS)
    out = root / "sweep"
    for method in ("dci", "runningtab"):
        cfg = compose_root(["benchmark=native", f"benchmark.path={bench}", f"method={method}", "model=scripted",
                            f"model.script={script}", "judge=rule", "tracker=none"])
        jid = job_id(cfg, "memo")
        run_and_score(cfg, "memo", out / jid, jid, None)
    return out


def _csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_values_in_noise_are_never_shown(sweep: Path) -> None:
    jobs = load_sweep(sweep).jobs
    assert {j.method for j in jobs} == {"dci", "runningtab"}
    for job in jobs:
        got = {f.item["text"]: f.category for f in fates(job)}
        # Only the budget was in a file's content the agent received; every other value was noise.
        assert got == {r["text"]: ("shown_missing" if "4,350" in r["text"] else "never_shown") for r in RUBRICS}, job.method


def test_figures_and_table3_do_not_count_noise(sweep: Path) -> None:
    out = write_report(sweep)
    for row in _csv(out / "figure2_values.csv"):
        assert (row["shown"], row["shown_missing"]) == ("1", "1"), row
    (left,) = _csv(out / "figure4_left.csv")
    assert left["missing"] == "1" and left["in_read_log"] == "1"
    (t3,) = _csv(out / "table3.csv")
    assert float(t3["read_log_entries"]) == 1 and float(t3["distinct_files"]) == 1


def test_the_same_job_gets_the_same_prompt(sweep: Path, tmp_path: Path) -> None:
    """The workspace is at a fixed path in the sandbox: no scratch path in what the model is sent."""
    (job,) = [j for j in load_sweep(sweep).jobs if j.method == "dci"]
    first = JobRecord(job.dir).trajectory()
    cfg_dir = tmp_path / "again"
    bench = Path(job.config["benchmark"]["path"])
    script = Path(job.config["model"]["script"])
    cfg = compose_root(["benchmark=native", f"benchmark.path={bench}", "method=dci", "model=scripted",
                        f"model.script={script}", "judge=rule", "tracker=none"])
    jid = job_id(cfg, "memo")
    run_and_score(cfg, "memo", cfg_dir / jid, jid, None)
    again = JobRecord(cfg_dir / jid).trajectory()
    assert [m["content"] for m in first if m["role"] in ("system", "user")] == \
        [m["content"] for m in again if m["role"] in ("system", "user")]
    tool_outputs = [m["content"] for m in again if m["role"] == "tool"]
    assert "/workspace\n/workspace/output" in tool_outputs[3]
    assert all("rt-ws-" not in str(m.get("content")) for m in again)
