"""Issue 50 item 3: a misspelled key was refused alone, at Hydra's stage; the missing folder and the
unset key came only on the next run, and inside tasks.jsonl one bad line per run. One run now names
them all: Hydra's unknown keys (and those `+key=` adds) with the preflight's problems and every bad
line of the task file, one `error:`, nothing written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import write_native

pytestmark = pytest.mark.slow  # each runs an entry point (Hydra composes twice: ~5 s)
REPO = Path(__file__).resolve().parents[3]
KEYS = ("OPENAI_API_KEY", "DEEPSEEK_API_KEY", "GEMINI_API_KEY")


def run(module: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in KEYS}
    return subprocess.run([sys.executable, "-m", module, *args], cwd=cwd, capture_output=True, text=True, timeout=300,
                          env={**env, "PYTHONPATH": str(REPO), "WANDB_MODE": "offline"})


def problems(stderr: str) -> list[str]:
    lines = [line for line in stderr.splitlines() if line.strip() and "placeholder price" not in line]
    assert lines[0].startswith("error: ") and stderr.count("error:") == 1 and "Traceback" not in stderr, stderr[-3000:]
    assert all(line.startswith("  - ") for line in lines[1:]), stderr[-3000:]
    return lines[1:]


@pytest.fixture
def bad_bench(tmp_path: Path) -> Path:
    good = {"id": "a", "prompt": "p", "workspace": "w", "answer": "1"}
    root = write_native(tmp_path / "bench", [], {"w/a.txt": "x"})
    (root / "tasks.jsonl").write_text("\n".join([json.dumps(good), "{bad", json.dumps({**good, "id": "b", "workspace": "nope"})]) + "\n")
    return root


@pytest.mark.parametrize("module", ["runners.sweep", "runners.job"])
def test_hydras_unknown_keys_come_with_the_preflights_problems_and_every_bad_line(module: str, bad_bench: Path, tmp_path: Path) -> None:
    r = run(module, "agent.max_turn=5", "model.rpmm=3", "benchmark=native", "benchmark.path=bench", "model=gpt54_nano", "task=a",
            "out=o", cwd=tmp_path)
    assert r.returncode != 0
    said = problems(r.stderr)
    for part in ("unknown config key 'agent.max_turn'", "nearest known keys: agent.max_turns", "unknown config key 'model.rpmm'",
                 "export OPENAI_API_KEY=", "tasks.jsonl:2:", "tasks.jsonl:3: task 'b': workspace folder"):
        assert sum(part in line for line in said) == 1, (part, said)
    assert not (tmp_path / "o").exists()


def test_a_key_added_with_a_plus_comes_with_the_rest_too(tmp_path: Path) -> None:
    r = run("runners.sweep", "+agent.max_turn=5", "benchmark=native", "benchmark.path=missing", "model=gpt54_nano", "out=o", cwd=tmp_path)
    said = problems(r.stderr)
    assert r.returncode != 0 and len(said) == 3, said
    assert "'agent.max_turn'" in said[0] and "OPENAI_API_KEY" in said[1] and "no tasks.jsonl in" in said[2], said
    assert not (tmp_path / "o").exists()
