"""Issue 50 item 4: the vLLM path ended in tracebacks, and `--cfg job` passed what the run refused.
`model=vllm` without `model.name` was 76 lines ending `MissingMandatoryValue`; with a name on a
machine without a GPU, `--cfg job` said `preflight: passed`, and the run started Ray, wrote
`sweep.yaml` and `wandb/`, and died in a traceback. The preflight now checks the served models'
GPUs (replicas × tensor_parallel_size × cluster.server_gpus) against the cluster's, says how many
it leaves idle, and a server that does not start is one line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from runners.config.schema import ConfigError
from runners.preflight.gpus import check_gpus, gpu_note, have
from tests.conftest import compose_root, write_native, write_script

REPO = Path(__file__).resolve().parents[3]
VLLM = ["model=vllm", "model.name=q", "model.server.model_path=/models/q"]


def slurm(nodes: int, gpus: int, *more: str) -> list:
    return [compose_root([*VLLM, "cluster=slurm_gpu", f"cluster.slurm.nodes={nodes}", f"cluster.slurm.gpus_per_node={gpus}", *more])]


def test_a_slurm_allocation_holds_the_replicas_or_is_refused_and_idle_gpus_are_named() -> None:
    check_gpus(slurm(2, 4, "model.server.replicas=2"), on_slurm=True)
    assert gpu_note(slurm(2, 4, "model.server.replicas=2"), on_slurm=True) == (
        "GPUs: the served models use 2 of the 8 of the Slurm allocation (cluster.slurm.nodes=2 × cluster.slurm.gpus_per_node=4); "
        "6 left idle (model.server.replicas=8 would use them for vllm)")
    with pytest.raises(ConfigError, match=r"need 10 GPU\(s\) \(vllm 10 replica\(s\) × 1;.*has 8: lower model.server.replicas"):
        check_gpus(slurm(2, 4, "model.server.replicas=10"), on_slurm=True)
    with pytest.raises(ConfigError, match=r"one replica needs 8 GPU\(s\).*a node has 4"):
        check_gpus(slurm(4, 4, "model.server.tensor_parallel_size=8"), on_slurm=True)
    check_gpus(slurm(1, 4, "model.server.tensor_parallel_size=2", "model.server.replicas=2"), on_slurm=True)  # exactly full
    api = [compose_root(["model=scripted", "cluster=slurm_gpu"])]
    assert "no model of the grid is served on GPUs, so all 16" in (gpu_note(api, on_slurm=True) or "")


def test_this_machine_is_counted_as_ray_counts_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")  # no GPU visible, whatever the machine has
    got = have(compose_root(VLLM).cluster, on_slurm=False)
    assert got.count == 0 and "this machine" in got.where
    with pytest.raises(ConfigError, match=r"need 1 GPU\(s\).*this machine .* has 0.*model=vllm_cpu cluster.server_gpus=0"):
        check_gpus([compose_root(VLLM)])
    check_gpus([compose_root([*VLLM, "cluster.server_gpus=0"])])  # vLLM's CPU build holds none
    joined = [compose_root([*VLLM, "cluster=ray"])]
    check_gpus(joined)  # a running cluster is counted when the sweep joins it (start_replicas)
    assert "counted when the sweep joins it" in (gpu_note(joined) or "")


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", "CUDA_VISIBLE_DEVICES")}
    return subprocess.run([sys.executable, "-m", *args], cwd=cwd, capture_output=True, text=True, timeout=300,
                          env={**env, "PYTHONPATH": str(REPO), "WANDB_MODE": "offline", "CUDA_VISIBLE_DEVICES": ""})


@pytest.mark.slow
def test_the_vllm_path_is_refused_in_lines_before_anything_starts(tmp_path: Path) -> None:
    unnamed = run("runners.sweep", "model=vllm", "out=o", cwd=tmp_path)
    assert unnamed.returncode != 0 and "Traceback" not in unnamed.stderr and "MissingMandatoryValue" not in unnamed.stderr
    assert unnamed.stderr.strip() == "error: model.name has no value and this config needs one: give it, e.g. model.name=...", unnamed.stderr
    shown = run("runners.sweep", "model=vllm", "model.name=q", "out=o", "--cfg", "job", cwd=tmp_path)
    verdict = shown.stdout[shown.stdout.index("# preflight:"):]
    assert "would refuse to start" in verdict and "model.server.model_path" in verdict and "has 0" in verdict, verdict
    ran = run("runners.sweep", "model=vllm", "model.name=q", "out=o", cwd=tmp_path)
    assert ran.returncode != 0 and "Traceback" not in ran.stderr and ran.stderr.count("error:") == 1, ran.stderr[-3000:]
    assert "model.server.model_path" in ran.stderr and "this machine (as Ray counts them" in ran.stderr
    assert not (tmp_path / "o").exists()  # no Ray, no sweep.yaml, no wandb/


@pytest.mark.slow
def test_a_server_that_does_not_start_is_one_line(tmp_path: Path, own_ray: None) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "vllm").write_text("#!/bin/sh\necho 'CUDA out of memory' >&2\nexit 3\n")
    (bin_dir / "vllm").chmod(0o755)
    bench = write_native(tmp_path / "b", [{"id": "t", "prompt": "p", "workspace": "w", "answer": "1"}], {"w/a.txt": "x"})
    env = {**{k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}, "PYTHONPATH": str(REPO), "WANDB_MODE": "offline",
           "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    r = subprocess.run([sys.executable, "-m", "runners.sweep", "benchmark=native", f"benchmark.path={bench}", *VLLM,
                        "cluster.server_gpus=0", "tracker=none", "out=o"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 1 and "Traceback" not in r.stderr and "ray::" not in r.stderr, r.stderr[-3000:]
    assert "error: vllm server exited with code 3 during startup; log " in r.stderr, r.stderr[-3000:]


@pytest.mark.slow
def test_a_model_config_outside_the_checkout_runs_in_the_grid(tmp_path: Path) -> None:
    """slurm/README.md's example: the model's YAML in a folder of your own (`hydra.searchpath`), named
    in `grid.model` beside a shipped one; the sweep runs it, and slurm.launch passes it on."""
    write_native(tmp_path / "b", [{"id": "t", "prompt": "p", "workspace": "w", "answer": "1"}], {"w/a.txt": "x"})
    script = write_script(tmp_path / "s.jsonl", [{"content": "<FINAL_ANSWER>1</FINAL_ANSWER>"}])
    (tmp_path / "mine" / "model").mkdir(parents=True)
    (tmp_path / "mine" / "model" / "my_scripted.yaml").write_text(
        f"defaults:\n  - scripted\n  - _self_\nid: my_scripted\nscript: {script}\n")
    args = ["hydra.searchpath=[file://mine]", "grid.model=[my_scripted]", "benchmark=native", "benchmark.path=b", "tracker=none",
            "sweep=ext", "out=o"]
    r = run("runners.sweep", *args, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    assert [p.name.split("__")[3] for p in (tmp_path / "o" / "ext").iterdir() if "__" in p.name] == ["my_scripted"]
    dry = run("slurm.launch", "--dry-run", *args, "cluster=slurm", cwd=tmp_path)
    assert dry.returncode == 0 and "hydra.searchpath=[file://mine]" in dry.stdout, dry.stderr[-3000:]
    typo = run("runners.sweep", *args[:1], "grid.model=[my_scriptd]", *args[2:], cwd=tmp_path)
    assert "unknown model 'my_scriptd'; valid model names (conf/ and hydra.searchpath): " in typo.stderr and "my_scripted" in typo.stderr
