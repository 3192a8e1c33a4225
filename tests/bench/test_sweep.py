"""bench/sweep.py runs the sweep as a user would: its command line goes through the real sweep
parser and preflight (`--cfg job`), and leaves every setting it does not pin at the sweep's default."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from bench import sweep as bench

REPO = Path(__file__).resolve().parents[2]


def _args(**given: object) -> argparse.Namespace:
    base = {"in_flight": 4, "jobs": 2, "latency": 0.2, "tool_turns": 6, "method": "dci", "sandbox": None,
            "shell_session": None, "actors": None}
    return argparse.Namespace(**{**base, **given})


def _shown(args: argparse.Namespace, tmp: Path) -> tuple[dict, str]:
    """The sweep's own `--cfg job` for the bench's command line: (the config, its last line)."""
    command = bench.sweep_command(args, bench.write_benchmark(tmp / "bench", args.jobs), tmp, port=9)
    done = subprocess.run([*command, "--cfg", "job"], cwd=REPO, env=bench.sweep_env(REPO), capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return yaml.safe_load(done.stdout), done.stdout.strip().splitlines()[-1]


def test_the_bench_runs_the_sweeps_defaults(tmp_path: Path) -> None:
    cfg, last = _shown(_args(), tmp_path)
    assert last.startswith("# preflight: passed"), last
    model = cfg["model"]
    assert model["cache"] == "read_write"  # the sweep's default, in a fresh folder of the bench's
    assert Path(model["cache_dir"]).is_relative_to(tmp_path)
    assert cfg["env"]["sandbox"] == "auto" and cfg["env"]["shell_session"] is True
    assert cfg["tracker"]["kind"] == "wandb" and Path(cfg["tracker"]["dir"]).is_relative_to(tmp_path)
    assert cfg["judge"]["name"] == "auto"
    assert cfg["cluster"]["max_in_flight"] == 4 and cfg["cluster"]["actors"] is None


def test_what_the_bench_is_given_reaches_the_sweep(tmp_path: Path) -> None:
    cfg, _ = _shown(_args(sandbox="none", shell_session="false", actors=3), tmp_path)
    assert cfg["env"]["sandbox"] == "none" and cfg["env"]["shell_session"] is False and cfg["cluster"]["actors"] == 3


def test_the_sweep_shares_no_cache_and_uploads_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUNNINGTAB_CALL_CACHE", "/elsewhere")
    env = bench.sweep_env(REPO)
    assert "RUNNINGTAB_CALL_CACHE" not in env and env["WANDB_MODE"] == "offline" and env["PYTHONPATH"] == str(REPO)


def test_against_a_revision_imports_that_revision(tmp_path: Path) -> None:
    other = bench.checkout_of("HEAD", tmp_path / "head")
    probe = subprocess.run([sys.executable, "-c", "import runners.sweep.driver as d; print(d.__file__)"], cwd=other,
                           env=bench.sweep_env(other), capture_output=True, text=True, check=True)
    assert Path(probe.stdout.strip()).is_relative_to(other)
