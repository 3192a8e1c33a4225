"""Issue 38 item 1: with no key, no price and no data, the sweep's preflight named one refusal per
run (three runs to learn three things), and pointed at `benchmark.workspaces`, which a grid of
benchmarks cannot take. It now lists every refusal of one run, each with the command or override
that fixes it (checked against Hydra's composed config and eval.prepare's parser), exits non-zero
once and writes nothing; `--cfg job` also names the folder the records would go to."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from eval.prepare.__main__ import parser as prepare_parser
from tests.conftest import write_native, write_script
from tests.helpers.named_settings import (
    compose,
    config_groups,
    subparsers,
    unknown_flags,
    unknown_keys,
)

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[3]
KEYS = ("OPENAI_API_KEY", "DEEPSEEK_API_KEY", "GEMINI_API_KEY")


def run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in KEYS}
    return subprocess.run([sys.executable, "-m", "runners.sweep", *args], cwd=REPO, capture_output=True, text=True, timeout=300,
                          env={**env, "PYTHONPATH": str(REPO), "WANDB_MODE": "offline"})


def parsers() -> dict[str, object]:
    from hydra._internal.utils import get_args_parser

    p = prepare_parser()
    return {"eval.prepare": p, **{f"eval.prepare {k}": s for k, s in subparsers(p).items()}, "runners.sweep": get_args_parser()}


def assert_every_fix_exists(text: str, overrides: list[str]) -> None:
    assert unknown_keys(text, [compose(overrides)], config_groups()) == [], text
    assert unknown_flags(text, "runners.sweep", parsers()) == [], text


def test_every_refusal_in_one_run_with_its_fix(tmp_path: Path) -> None:
    out = tmp_path / "out"
    r = run("experiment=paper_main", f"out={out}")
    assert r.returncode != 0 and "Traceback" not in r.stderr, r.stderr[-3000:]
    assert r.stderr.count("error:") == 1, r.stderr
    for key in KEYS:
        assert f"export {key}=" in r.stderr, r.stderr
    for name in ("workspace_bench", "agentcompany", "officeqa"):
        assert f"python -m eval.prepare {name} --out DATA, then pass data.{name}=DATA/{name}" in r.stderr, r.stderr
    assert not out.exists()  # nothing started, nothing written
    assert_every_fix_exists(r.stderr, ["experiment=paper_main"])


def test_cfg_job_lists_the_same_refusals_and_the_records_folder(tmp_path: Path) -> None:
    out = tmp_path / "out"
    r = run("experiment=paper_main", f"out={out}", "--cfg", "job")
    assert r.returncode == 0, r.stderr[-3000:]
    assert f"# records: {out / 'paper_main'}\n" in r.stdout, r.stdout[-3000:]
    verdict = r.stdout[r.stdout.index("# preflight: would refuse to start"):]
    assert all(line.startswith("# ") for line in verdict.splitlines()), verdict  # still a comment, every line of it
    for name in ("workspace_bench", "agentcompany", "officeqa"):
        assert f"data.{name}=DATA/{name}" in verdict, verdict
    assert all(f"export {key}=" in verdict for key in KEYS), verdict
    assert_every_fix_exists(verdict, ["experiment=paper_main"])
    assert not out.exists()


def test_the_records_line_is_the_folder_the_sweep_writes(tmp_path: Path) -> None:
    """A sweep named by its overrides (no sweep=, no experiment=): `--cfg job` names the folder the run then uses."""
    bench = write_native(tmp_path / "b", [{"id": "t", "prompt": "How many rows?", "workspace": "w", "answer": "3"}],
                         {"w/data.csv": "a\n1\n2\n3\n"})
    script = write_script(tmp_path / "s.jsonl", [{"content": "<FINAL_ANSWER>3</FINAL_ANSWER>"}])
    args = ["grid.benchmark=[native]", f"benchmark.path={bench}", "grid.method=[dci]", "grid.model=[scripted]",
            f"model.script={script}", "grid.seed=[0]", "tracker=jsonl", f"out={tmp_path / 'out'}", "report.live_every=0"]
    shown = run(*args, "--cfg", "job")
    assert shown.returncode == 0 and "# preflight: passed" in shown.stdout, shown.stdout[-2000:] + shown.stderr[-2000:]
    [records] = [line.removeprefix("# records: ") for line in shown.stdout.splitlines() if line.startswith("# records: ")]
    ran = run(*args)
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert f"-> {records}\n" in ran.stderr and Path(records, "jobs.jsonl").is_file(), (records, ran.stderr[-2000:])


@pytest.mark.parametrize("flags", [["--cfg", "job"], []], ids=["cfg-job", "run"])
def test_a_benchmarks_own_path_in_a_grid_leads_to_its_data_override(tmp_path: Path, flags: list[str]) -> None:
    """Following the old refusal (`benchmark.workspaces`) gave Hydra's raw "Could not override" under `--cfg job`."""
    r = run("experiment=paper_main", "benchmark.workspaces=/nowhere", f"out={tmp_path / 'out'}", *flags)
    assert r.returncode != 0 and "Could not override" not in r.stderr and "Traceback" not in r.stderr, r.stderr[-3000:]
    assert "python -m eval.prepare workspace_bench --out DATA, then data.workspace_bench=DATA/workspace_bench" in r.stderr, r.stderr
    assert_every_fix_exists(r.stderr, ["experiment=paper_main"])


def test_a_job_lists_its_refusals_at_once(tmp_path: Path) -> None:
    """runners.job: no data and no key, two lines of one error (it named the data alone)."""
    env = {k: v for k, v in os.environ.items() if k not in KEYS}
    r = subprocess.run([sys.executable, "-m", "runners.job", "benchmark=workspace_bench", "model=gpt54_nano", "task=1",
                        f"out={tmp_path / 'out'}"], cwd=REPO, capture_output=True, text=True, timeout=300,
                       env={**env, "PYTHONPATH": str(REPO), "WANDB_MODE": "offline"})
    assert r.returncode != 0 and r.stderr.count("error:") == 1 and "Traceback" not in r.stderr, r.stderr[-3000:]
    assert "export OPENAI_API_KEY=" in r.stderr and "data.workspace_bench=DATA/workspace_bench" in r.stderr, r.stderr
    assert_every_fix_exists(r.stderr, ["benchmark=workspace_bench", "model=gpt54_nano"])
    assert not (tmp_path / "out").exists()
