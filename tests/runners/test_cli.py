"""`runningtab VERB ARGS…` (runners/cli.py) is `python -m MODULE ARGS…`: the installed script, each
verb's own help, Hydra's command line, exit codes, and a real job run from another folder."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from runners.cli import VERBS, main
from runners.core.record_files import read_json
from tests.conftest import write_native, write_script
from tests.test_docs import runnable
from tests.test_layers import imports, modules

REPO = Path(__file__).resolve().parents[2]
SCRIPT = Path(sys.executable).parent / "runningtab"


def run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    assert Path(cmd[0]) != SCRIPT or SCRIPT.is_file(), f"{SCRIPT} is missing: install the project again (pip install --no-deps -e .)"
    env = {**os.environ, "WANDB_MODE": "offline"}
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_the_help_lists_every_verb_and_each_verb_names_a_module_that_runs(capsys) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["--help"])
    assert stop.value.code == 0
    listed = capsys.readouterr().out
    for verb, (module, _) in VERBS.items():
        assert runnable(REPO, module), f"verb {verb}: python -m {module} runs nothing"
        assert f"  {verb} " in listed and f"python -m {module}" in listed
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    table = readme[readme.index("### Every command"):readme.index("The project starts the others itself")]
    assert set(re.findall(r"`python -m ([\w.]+)`", table)) == {module for module, _ in VERBS.values()}


def test_the_dispatcher_imports_no_verb() -> None:
    """By module name only: runners/ may not import slurm/, and `runningtab export --help` should not
    pay for Ray and Hydra."""
    assert imports(REPO / "runners" / "cli.py", modules()) == set()


def test_an_unknown_verb_is_one_line_naming_every_verb(capsys) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["swep", "experiment=demo"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown verb 'swep'" in err and "did you mean sweep?" in err
    assert all(verb in err for verb in VERBS)
    with pytest.raises(SystemExit) as stop:
        main([])
    assert stop.value.code == 2 and "verbs:" in capsys.readouterr().err


def test_the_installed_script_is_the_dispatcher() -> None:
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    module, _, name = scripts["runningtab"].partition(":")
    assert getattr(__import__(module, fromlist=[name]), name) is main
    assert SCRIPT.is_file(), f"{SCRIPT} is missing: install the project again (pip install --no-deps -e .)"


@pytest.mark.slow
def test_every_verb_help_is_its_module_help(tmp_path: Path) -> None:
    """Byte for byte the module's own help; Hydra's two entry points (2-3 s of CPU each) are compared
    with `python -m` on `--cfg job` below and here only shown to print Hydra's help of their app."""
    hydra = {"sweep": "driver is powered by Hydra", "job": "main is powered by Hydra"}

    def both(verb: str) -> tuple[str, subprocess.CompletedProcess[str], subprocess.CompletedProcess[str] | None]:
        short = run([str(SCRIPT), verb, "--help"], tmp_path)
        return verb, short, None if verb in hydra else run([sys.executable, "-m", VERBS[verb][0], "--help"], tmp_path)

    with ThreadPoolExecutor(4) as pool:
        for verb, short, long in pool.map(both, VERBS):
            assert short.returncode == 0 and short.stdout.strip(), (verb, short.stderr[-1500:])
            if long is None:
                assert short.stdout.startswith(hydra[verb]) and "== Config ==" in short.stdout, verb
            else:
                assert long.returncode == 0 and short.stdout == long.stdout, verb


@pytest.fixture(scope="module")
def bench(tmp_path_factory) -> Path:
    task = {"id": "count", "prompt": "How many rows does data.csv have?", "workspace": "w", "answer": "3"}
    return write_native(tmp_path_factory.mktemp("bench"), [task], {"w/data.csv": "a,b\n1,2\n3,4\n5,6\n"})


@pytest.mark.slow
def test_a_job_runs_through_the_script_from_another_folder(bench: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    write_script(elsewhere / "s.jsonl", [
        {"tool_calls": [{"name": "bash", "arguments": {"command": "tail -n +2 data.csv | wc -l"}}]},
        {"content": "<FINAL_ANSWER>3</FINAL_ANSWER>"},
    ])
    args = ["benchmark=native", f"benchmark.path={os.path.relpath(bench, elsewhere)}", "task=count",
            "method=dci", "model=scripted", "model.script=s.jsonl", "out=o"]
    r = run([str(SCRIPT), "job", *args], elsewhere)
    assert r.returncode == 0, r.stderr[-2000:]
    job = Path(r.stdout.strip().splitlines()[-1])
    assert job.parent == elsewhere / "o"  # the relative paths are the caller's folder's, as with python -m
    assert read_json(job / "result.json")["stop_reason"] == "finished"


@pytest.mark.slow
def test_hydra_flags_and_exit_codes_pass_through(bench: Path, tmp_path: Path) -> None:
    args = ["benchmark=native", f"benchmark.path={bench}", "model=scripted", "grid.seed=[0,1]", "sweep=s",
            "hydra.job.name=elsewhere", "--cfg", "job"]
    refused = ["benchmark=native", f"benchmark.path={bench}", "-m", "seed=0,1"]
    with ThreadPoolExecutor(4) as pool:
        shown, shown_m, no, no_m = pool.map(lambda cmd: run(cmd, tmp_path), [
            [str(SCRIPT), "sweep", *args], [sys.executable, "-m", "runners.sweep", *args],
            [str(SCRIPT), "sweep", *refused], [sys.executable, "-m", "runners.sweep", *refused]])
    assert shown.returncode == shown_m.returncode == 0, shown.stderr[-2000:]
    assert shown.stdout == shown_m.stdout and "grid" in shown.stdout
    assert no.returncode == no_m.returncode != 0 and no.stderr == no_m.stderr and "multirun" in no.stderr
