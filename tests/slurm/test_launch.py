"""The Slurm launcher without a Slurm cluster: the rendered batch script, request checks, grid
slices, and the in-job node runner (free ports, and the subreaper that leaves no process behind)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from runners.config.slurm import SlurmConfig
from runners.sweep.grid import parse_slice, slice_specs
from slurm.launch import LaunchError, check, render, sbatch_header
from slurm.node import children, node_command

REPO = Path(__file__).resolve().parents[2]
PY = "/opt/py env/bin/python"


def rendered(slurm: SlurmConfig, overrides: list[str]) -> str:
    return render(slurm, overrides, "rt-x", Path("/logs/x"), Path("/work dir"), PY)


def shell_values(script: str, *names: str) -> dict[str, list[str]]:
    """Run the script's settings block in bash and read back its variables and arrays, word by word."""
    settings = script.split("# ---- filled in by the launcher", 1)[1].split("\n# ----\n", 1)[0]
    dump = "".join(f'printf "%s\\0" "${{{n}[@]}}"; printf "\\1";' for n in names)
    out = subprocess.run(
        ["bash", "-c", settings + "\n" + dump], capture_output=True, text=True, check=True
    ).stdout
    return {n: [w for w in part.split("\0") if w] for n, part in zip(names, out.split("\1"), strict=False)}


def test_overrides_reach_the_driver_word_for_word():
    overrides = [
        "experiment=paper_main",
        "grid.tasks=[a,b]",
        "agent.work_dir=/scratch/my dir",
        "model.name=it's",
        "+x=$HOME",
    ]
    script = rendered(
        SlurmConfig(
            container="apptainer exec --nv '/img s.sif'", ray_args=["--object-store-memory=1000000000"]
        ),
        overrides,
    )
    got = shell_values(script, "SWEEP", "RUN", "RAY_ARGS", "PY")
    assert got["SWEEP"] == [PY, "-m", "runners.sweep", *overrides]
    assert got["RUN"] == ["apptainer", "exec", "--nv", "/img s.sif"]
    assert got["RAY_ARGS"] == ["--object-store-memory=1000000000"]
    assert subprocess.run(["bash", "-n"], input=script, text=True).returncode == 0
    assert "{{" not in script


def test_setup_lines_run_before_the_job(tmp_path):
    script = rendered(SlurmConfig(setup=["module load cuda/12", f"echo set-up > {tmp_path}/mark"]), [])
    assert "\nmodule load cuda/12\n" in script
    shell_values(script.replace("module load cuda/12", ":"), "PY")
    assert (tmp_path / "mark").read_text() == "set-up\n"


def test_header_for_gpu_nodes():
    slurm = SlurmConfig(nodes=4, cpus_per_node=32, gpus_per_node=4, mem="0", partition="gpu", account="lab",
                        time="2-00:00:00", stop_grace_s=300, sbatch_args=["--exclusive"])
    header = sbatch_header(slurm, "rt-paper", Path("/o/slurm"), Path("/w"))
    assert header == [
        "#SBATCH --job-name=rt-paper", "#SBATCH --nodes=4", "#SBATCH --ntasks-per-node=1",
        "#SBATCH --cpus-per-task=32", "#SBATCH --time=2-00:00:00", "#SBATCH --output=/o/slurm/%j.out",
        "#SBATCH --chdir=/w", "#SBATCH --signal=B:TERM@300", "#SBATCH --gpus-per-node=4", "#SBATCH --mem=0",
        "#SBATCH --partition=gpu", "#SBATCH --account=lab", "#SBATCH --exclusive",
    ]


def test_header_for_cpu_job_array():
    header = sbatch_header(
        SlurmConfig(array=8, array_parallel=2, cpus_per_node=4), "rt-a", Path("/o"), Path("/w")
    )
    assert "#SBATCH --array=0-7%2" in header and "#SBATCH --output=/o/%A_%a.out" in header
    assert not any("gpus" in h or "partition" in h or "mem" in h for h in header)
    script = rendered(SlurmConfig(array=8), [])
    assert "\nSLICES=8\n" in script


def test_impossible_requests_are_refused():
    with pytest.raises(LaunchError, match=r"cluster.slurm.nodes=1"):
        check(SlurmConfig(array=4, nodes=2))
    with pytest.raises(LaunchError, match="must be >= 1"):
        check(SlurmConfig(nodes=0))
    check(SlurmConfig(gpus_per_node=4))  # the GPUs the models need: the sweep's preflight (tests/runners/preflight/test_gpus.py)


def test_slices_partition_the_grid():
    specs = list(range(23))
    parts = [slice_specs(specs, i, 4) for i in range(4)]
    assert sorted(x for p in parts for x in p) == specs
    assert max(map(len, parts)) - min(map(len, parts)) <= 1
    assert parse_slice("3/4") == (3, 4)
    for bad in ("4/4", "-1/2", "1", "a/b", "0/0"):
        with pytest.raises(ValueError, match="grid.slice"):
            parse_slice(bad)


def test_node_command_head_and_worker():
    head = node_command(True, None, "/tmp/rt-ray-1", 8, 4, ["--object-store-memory=10"])
    assert head[:5] == [sys.executable, "-m", "ray.scripts.scripts", "start", "--block"]
    assert {"--head", "--port=0", "--num-cpus=8", "--num-gpus=4", "--temp-dir=/tmp/rt-ray-1"} <= set(head)
    assert head[-1] == "--object-store-memory=10"
    ports = [a.split("=")[1] for a in head if a.split("=")[0].endswith("port") and a != "--port=0"]
    assert len(ports) == 3 and len(set(ports)) == 3
    worker = node_command(False, "10.0.0.1:6379", "/tmp/rt-ray-1", 8, 0)
    assert "--address=10.0.0.1:6379" in worker and "--head" not in worker
    with pytest.raises(ValueError, match="--address"):
        node_command(False, None, "/tmp/t", 1, 0)


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _run_node(cmd: list[str]) -> subprocess.Popen[str]:
    code = f"import sys; from slurm.node import run_node; sys.exit(run_node({cmd!r}, grace_s=1.0))"
    return subprocess.Popen([sys.executable, "-c", code], cwd=REPO, text=True)


def _wait_for(path: Path) -> int:
    deadline = time.monotonic() + 20
    while not (path.exists() and path.read_text().strip()):
        assert time.monotonic() < deadline, f"{path} never written"
        time.sleep(0.05)
    return int(path.read_text())


def test_node_runner_kills_orphans_when_signalled(tmp_path):
    """SIGTERM (teardown) reaches the node's process; what it orphaned does not survive it."""
    pidfile = tmp_path / "orphan"
    proc = _run_node(["sh", "-c", f"(trap '' TERM; exec sleep 300) & echo $! > {pidfile}; exec sleep 300"])
    orphan = _wait_for(pidfile)
    assert _alive(orphan)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=20) == 0  # stopped on request
    assert not _alive(orphan)


def test_node_runner_cleans_up_after_a_normal_exit(tmp_path):
    pidfile = tmp_path / "orphan"
    proc = _run_node(["sh", "-c", f"sleep 300 & echo $! > {pidfile}"])
    assert proc.wait(timeout=20) == 0
    assert not _alive(_wait_for(pidfile))


def test_children_lists_only_our_own():
    child = subprocess.Popen(["sleep", "30"])
    try:
        assert child.pid in children()
        assert os.getppid() not in children()
    finally:
        child.kill()
        child.wait()


@pytest.mark.slow
def test_plan_composes_the_sweep_config(tmp_path, monkeypatch):
    """The launcher validates with the sweep's own config and its preflight, before anything is queued."""
    from hydra.errors import HydraException

    from eval.prepare.__main__ import main as prepare
    from runners.config.schema import ConfigError
    from slurm.launch import plan
    from tests.helpers import prepare_sources as src

    tasks, workspaces = src.workspace_bench_card(tmp_path / "lite"), src.workspaces_zip(tmp_path / "w")
    assert prepare(["workspace_bench", "--out", str(tmp_path / "DATA"), "--tasks-from", str(tasks), "--workspaces-from", str(workspaces)]) == 0
    data = f"data.workspace_bench={tmp_path / 'DATA' / 'workspace_bench'}"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with pytest.raises(ConfigError, match="placeholder"):  # the shipped prices: a paper preset refuses them
        plan(["experiment=paper_ablation", "cluster=slurm_gpu", data], tmp_path)
    unpriced = "budget.allow_unpriced=true"
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        plan(["experiment=paper_ablation", "cluster=slurm_gpu", unpriced, data], tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with pytest.raises(ConfigError, match="benchmark.workspaces"):  # no data: refused before it is queued
        plan(["experiment=paper_ablation", "cluster=slurm_gpu", unpriced], tmp_path)
    launch = plan(
        ["experiment=paper_ablation", "cluster=slurm_gpu", "cluster.slurm.nodes=2", "out=o", unpriced, data], tmp_path
    )
    assert launch.sweep_dir == tmp_path / "o" / "paper_ablation" and launch.job_name == "rt-paper_ablation"
    assert launch.script_path == tmp_path / "o" / "paper_ablation" / "slurm" / "sweep.sbatch"
    assert "#SBATCH --nodes=2\n" in launch.script and "#SBATCH --gpus-per-node=4\n" in launch.script
    assert f"#SBATCH --chdir={tmp_path}\n" in launch.script
    assert (
        f"runners.sweep experiment=paper_ablation cluster=slurm_gpu cluster.slurm.nodes=2 out={tmp_path / 'o'} {unpriced} {data}"
        in launch.script
    )  # the job is given absolute paths: the launch folder's, whatever folder it starts in

    vllm = ["model=vllm", "grid.model=[vllm]", "model.name=q", "model.server.model_path=Q/q"]
    with pytest.raises(ConfigError, match="gpus_per_node=0"):
        plan([*vllm, "cluster=slurm"], tmp_path)
    with pytest.raises(LaunchError, match="leave it out"):
        plan(["cluster=slurm", "cluster.address=10.0.0.1:6379"], tmp_path)
    with pytest.raises(HydraException):
        plan(["cluster=slurm", "cluster.slurm.nodez=2"], tmp_path)
