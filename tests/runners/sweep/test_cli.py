"""The command lines of `runners.sweep` and `runners.job` as users type them (issue 14, item 1): the
root config is the default, a sweep's directory is its own, Hydra's flags work, multirun and keys
the schema does not have are refused with a message, never a traceback or a silent surprise."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from runners.core.record_files import read_json
from runners.sweep.ledger import Ledger
from tests.conftest import compose_root, write_native, write_script

REPO = Path(__file__).resolve().parents[3]
ENTRY_POINTS = ["runners.sweep", "runners.job"]


def run(module: str, *args: str, cwd: Path = REPO, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", module, *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)


def printed_config(module: str, *args: str) -> dict:
    r = run(module, *args)
    assert r.returncode == 0, r.stderr[-2000:]
    return yaml.safe_load(r.stdout)


@pytest.fixture(scope="module")
def bench(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("my_bench")
    tasks = [{"id": f"t{i}", "prompt": "How many rows?", "workspace": "w", "answer": "3"} for i in range(2)]
    return write_native(root, tasks, {"w/data.csv": "a\n1\n2\n3\n"})


@pytest.fixture(scope="module")
def script(tmp_path_factory) -> Path:
    return write_script(tmp_path_factory.mktemp("script") / "s.jsonl", [{"content": "<FINAL_ANSWER>3</FINAL_ANSWER>"}])


def test_sweep_without_experiment_is_the_root_config(bench: Path) -> None:
    """No experiment named: none applied (the demo preset's limit, turns and in-flight cap stay out)."""
    overrides = ["benchmark=native", f"benchmark.path={bench}", "grid.seed=[0,1]"]
    printed = printed_config("runners.sweep", "--cfg", "job", *overrides)
    root = compose_root(overrides)
    demo = compose_root(["experiment=demo", *overrides])
    for part in ("benchmark", "agent", "cluster", "grid"):
        assert printed[part] == dataclasses.asdict(getattr(root, part)), part
    assert printed["benchmark"]["limit"] != demo.benchmark.limit  # the demo's preset really differs here


def test_sweep_given_no_axis_runs_the_root_configs_groups() -> None:
    """The grid's default axes are the groups the root config chooses (what runners.job runs)."""
    root = compose_root([])
    for axis in ("benchmark", "method", "model"):
        (name,) = getattr(root.grid, axis)
        assert getattr(compose_root([f"{axis}={name}"]), axis) == getattr(root, axis), axis


def test_make_demo_runs_the_demo() -> None:
    """`make demo` is `runningtab demo` (runners/sweep/demo.py: experiment=demo, then the tab at work)."""
    r = subprocess.run(["make", "-n", "demo"], cwd=REPO, capture_output=True, text=True, timeout=60)
    sweep = [line for line in r.stdout.splitlines() if "runners." in line]
    assert sweep and all(line.split()[-2:] == ["-m", "runners.sweep.demo"] for line in sweep), r.stdout


@pytest.mark.parametrize("module", ENTRY_POINTS)
def test_cfg_job_prints_the_config_after_overrides(module: str) -> None:
    """Hydra's flags go anywhere on the command line (nothing is appended after them)."""
    printed = printed_config(module, "method=runningtab", "agent.max_turns=7", "--cfg", "job")
    assert printed["method"]["name"] == "runningtab" and printed["agent"]["max_turns"] == 7


@pytest.mark.slow
def test_cfg_job_prints_the_grid_the_preset_runs() -> None:
    """Issue 30: `--cfg job` of a preset printed the root's defaults on top (`model: smollm2`,
    `benchmark: builtin`), as if the paper preset ran the small local model: now each value of an
    axis the grid lists, as its cells compose it, and whether the preflight would pass."""
    r = run("runners.sweep", "experiment=paper_main", "--cfg", "job")
    assert r.returncode == 0, r.stderr[-2000:]
    printed = yaml.safe_load(r.stdout)
    assert list(printed["model"]) == ["gpt54_nano", "deepseek_v4_flash", "gemini38_flash"]
    assert printed["model"]["deepseek_v4_flash"]["api_key_env"] == "DEEPSEEK_API_KEY"
    assert list(printed["benchmark"]) == ["workspace_bench", "agentcompany_paper", "officeqa_paper"]
    assert list(printed["method"]) == ["dci", "todo", "self_refine", "self_tracking", "runningtab"]
    assert "smollm2" not in r.stdout and "builtin" not in r.stdout
    assert r.stdout.splitlines()[0].startswith("# experiment=paper_main: the sweep's grid, 3 benchmark(s) x 5 method(s) x 3 model(s) x 3 seed(s)")
    tail = r.stdout[r.stdout.index("\n# records: ") + 1:].splitlines()[1:]  # the records folder, then the verdict: every refusal a comment line
    assert tail[0].startswith("# preflight: ") and all(line.startswith("# ") for line in tail), tail


@pytest.mark.parametrize("module", ENTRY_POINTS)
def test_multirun_is_refused_and_leaves_nothing(module: str, tmp_path: Path) -> None:
    r = run(module, "-m", "method=dci,runningtab", "model=scripted", f"out={tmp_path / 'o'}", cwd=tmp_path)
    assert r.returncode != 0
    assert "-m/--multirun" in r.stderr and "grid.method=[dci,runningtab]" in r.stderr, r.stderr[-2000:]
    assert "Traceback" not in r.stderr
    assert list(tmp_path.iterdir()) == []  # no multirun/ folder, no records


@pytest.mark.parametrize("module", ENTRY_POINTS)
def test_experiment_null_is_a_message_not_a_traceback(module: str, tmp_path: Path) -> None:
    r = run(module, "experiment=null", "model=scripted", f"out={tmp_path / 'o'}")
    assert r.returncode != 0 and "Traceback" not in r.stderr, r.stderr[-2000:]
    assert "experiment=null" in r.stderr and "leave it out" in r.stderr
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("module", ENTRY_POINTS)
def test_a_key_outside_the_schema_is_refused(module: str, bench: Path, script: Path, tmp_path: Path) -> None:
    """`+agent.max_turn=5` (a typo of max_turns) fails before anything runs, naming the key and the
    nearest known one, instead of being kept as an attribute nothing reads."""
    out = tmp_path / "o"
    r = run(module, "+agent.max_turn=5", "benchmark=native", f"benchmark.path={bench}", "task=t0", "model=scripted",
            f"model.script={script}", "tracker=jsonl", f"out={out}")
    assert r.returncode != 0
    assert "'agent.max_turn'" in r.stderr and "agent.max_turns" in r.stderr, r.stderr[-2000:]
    assert "Traceback" not in r.stderr and not out.exists()


@pytest.mark.parametrize("module", ENTRY_POINTS)
@pytest.mark.parametrize(
    ("args", "says", "hydra_said"),
    [
        (["agent.max_turn=5"], "unknown config key 'agent.max_turn' (the schema has no such setting); nearest known keys: agent.max_turns",
         "+agent.max_turn=5"),
        (["grid.seed=0,1"], "grid.seed=[0,1]", "--multirun"),
        (["seed=0,1"], "grid.seed=[0,1]", "--multirun"),
        (["method=dci,runningtab"], "grid.method=[dci,runningtab]", "--multirun"),
        (["agent.max_turns=5,6"], "one value per", "--multirun"),
        (["model.script=s.jsonl"], "not a setting of this model (ServedModelConfig) but of model scripted: start from model=scripted",
         "+model.script"),
        (["model=nosuch"], "unknown model 'nosuch'; valid model names: deepseek_v4_flash, gemini38_flash", "Could not find"),
    ],
)
def test_hydras_misleading_hints_become_the_projects_one_line_errors(module: str, args: list[str], says: str,
                                                                      hydra_said: str, tmp_path: Path) -> None:
    """Hydra answers `agent.max_turn=5` with "use +agent.max_turn=5" (which the project refuses too)
    and `grid.seed=0,1` with "add --multirun" (which it refuses): one `error:` says what the
    project takes instead (with the run's other refusals, each a line of its own: here the job's
    `task=t0`, which the built-in benchmark does not have), and nothing is written."""
    r = run(module, *args, f"out={tmp_path / 'o'}", "task=t0", cwd=tmp_path)
    assert r.returncode != 0
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert lines[0].startswith("error: ") and r.stderr.count("error:") == 1 and says in r.stderr, r.stderr[-2000:]
    assert all(line.startswith("  - ") for line in lines[1:]), r.stderr[-2000:]
    assert hydra_said not in r.stderr and "HYDRA_FULL_ERROR" not in r.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_sweep_runs_what_it_is_given_into_its_own_directory(bench: Path, script: Path, tmp_path: Path) -> None:
    """The issue's command: every task of the user's benchmark × both seeds, at the root settings, in
    a directory of its own (never the demo's); the same command again resumes it."""
    from runners.sweep.driver import derived_name

    out = tmp_path / "o"
    overrides = ["benchmark=native", f"benchmark.path={bench}", "grid.seed=[0,1]", "model=scripted", f"model.script={script}"]
    cmd = [*overrides, "tracker=jsonl", f"out={out}"]
    r = run("runners.sweep", *cmd)
    assert r.returncode == 0, r.stderr[-3000:]
    assert [d.name for d in out.iterdir()] == [derived_name(overrides)]
    sdir = out / derived_name(overrides)
    assert len(Ledger(sdir).entries()) == 2 * 2
    root = compose_root(overrides)
    for job in (d for d in sdir.iterdir() if (d / "job.json").exists()):
        assert read_json(job / "job.json")["config"]["agent"] == dataclasses.asdict(root.agent)
    again = run("runners.sweep", *reversed(cmd))
    assert again.returncode == 0 and "4 already complete, 0 to run" in again.stderr, again.stderr[-3000:]
    assert len(list(out.iterdir())) == 1


def test_derived_names_keep_different_sweeps_apart() -> None:
    from runners.sweep.driver import derived_name

    base = ["benchmark=native", "benchmark.path=/data/my bench", "grid.seed=[0,1]"]
    name = derived_name(base)
    assert derived_name(list(reversed(base))) == name  # the same command in any order resumes
    assert derived_name([*base, "out=/x", "sweep=", "tracker=jsonl", "storage.bucket=b", "cluster.max_in_flight=2",
                         "grid.slice=0/4", "agent.work_dir=/scratch", "report.live_every=0"]) == name
    others = [["benchmark=native", "benchmark.path=/data/other", "grid.seed=[0,1]"], base[:2], [*base, "method=runningtab"],
              ["benchmark=native", "benchmark.path=/data/my-bench", "grid.seed=[0,1]"]]
    assert len({name, *map(derived_name, others)}) == 1 + len(others)
    assert derived_name(["benchmark.path=" + "x" * 500]) != derived_name(["benchmark.path=" + "x" * 501])
    for n in (name, *map(derived_name, others), derived_name(["benchmark.path=" + "x" * 500])):
        assert "/" not in n and "," not in n and " " not in n and len(n) < 128
    assert derived_name(["out=/x"]) == derived_name([])


def test_unknown_keys_anywhere_free_form_mappings_take_any() -> None:
    from runners.preflight.config_checks import ConfigError

    with pytest.raises(ConfigError, match=r"'foo'.*known keys: .*benchmark"):
        compose_root(["+foo=1"])
    with pytest.raises(ConfigError, match=r"'cluster\.slurm\.nodez'.*cluster\.slurm\.nodes"):
        compose_root(["+cluster.slurm.nodez=2"])
    assert compose_root(["+method.texts.hello=hi"]).method.texts["hello"] == "hi"
    assert compose_root(["+cluster.extra.anything=1"]).cluster.extra["anything"] == 1


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["grid.method=[dci,nope]"], "unknown method 'nope'; valid method names: dci,"),
        (["grid.seed=[]"], "grid.seed is empty"),
        (["grid.benchmark=[native]", "benchmark.path=/nonexistent"], "error: benchmark=native: no tasks.jsonl in /nonexistent"),
    ],
)
def test_a_bad_grid_is_one_line_without_traceback(tmp_path: Path, overrides: list[str], message: str) -> None:
    script = tmp_path / "s.jsonl"
    script.write_text('{"content": "x"}\n')
    cmd = [sys.executable, "-m", "runners.sweep", "grid.model=[scripted]", f"model.script={script}", f"out={tmp_path / 'o'}", *overrides]
    r = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and message in r.stderr and "Traceback" not in r.stderr and "HYDRA_FULL_ERROR" not in r.stderr, r.stderr
    assert not (tmp_path / "o").exists()


@pytest.mark.slow
def test_the_seeds_of_a_cell_share_one_composition(monkeypatch: pytest.MonkeyPatch) -> None:
    """A grid's seeds differ in `seed` only: Hydra composes each benchmark × method × model once (the
    paper's 135 cells cost 45 compositions, not 135), and each seed's config is what composing it gives."""
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    import runners.sweep.grid
    from runners.config.schema import CONF_DIR
    from runners.sweep.grid import cells

    over = ["grid.method=[dci,runningtab]", "grid.seed=[0,1,2]", "model=scripted", "model.script=s.jsonl"]
    with_seed = [*over, "agent.max_turns=${seed}"]
    roots = compose_root(over), compose_root(with_seed)
    composed: list[list[str]] = []
    real = runners.sweep.grid.compose
    monkeypatch.setattr(runners.sweep.grid, "compose", lambda name, overrides: composed.append(overrides) or real(name, overrides=overrides))
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base=None):
        got = cells(roots[0], over, None)
        shared = len(composed)
        composed.clear()
        turns = [c.agent.max_turns for c in cells(roots[1], with_seed, None)]  # an override that interpolates the seed
    assert len(got) == 6 and shared == 2
    assert turns == [0, 1, 2, 0, 1, 2] and len(composed) == 6
    for cfg in got:
        assert cfg == compose_root([f"method={cfg.method.name}", f"seed={cfg.seed}", "model=scripted", "model.script=s.jsonl",
                                   "model.cache=read_write"])  # a sweep settles its cache mode (runners.job: off)
