"""Submitting a sweep to Slurm: `python -m slurm.launch [--dry-run] [--wait] [--force] OVERRIDES…`.

Composes the same config the sweep would, so a bad override fails here and not after hours in the
queue; fills `slurm/sweep.sbatch` from `cluster.slurm` (`SlurmConfig`); writes the script to the
sweep's log folder and submits it. In the job, a Ray cluster spans the allocation and
`python -m runners.sweep` runs with the same overrides against it; submitting again resumes.

Inside the job, `slurm.node` starts each node's Ray and waits for the nodes to join.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from runners.config.slurm import SlurmConfig
from runners.core.paths import absolute_overrides, started_in

PROJECT = Path(__file__).resolve().parent.parent
TEMPLATE = PROJECT / "slurm" / "sweep.sbatch"


class LaunchError(ValueError):
    """The launch request cannot work; the message says what to change."""


def check(slurm: SlurmConfig) -> None:
    """Refuse requests that cannot run (the GPUs the served models need against the allocation's:
    the sweep's preflight, `runners/preflight/gpus.py`)."""
    if slurm.nodes < 1 or slurm.cpus_per_node < 1 or slurm.gpus_per_node < 0:
        raise LaunchError("cluster.slurm.nodes and cpus_per_node must be >= 1, gpus_per_node >= 0")
    if slurm.array < 0 or slurm.array_parallel < 0:
        raise LaunchError("cluster.slurm.array and array_parallel must be >= 0")
    if slurm.array and slurm.nodes != 1:
        raise LaunchError(
            f"job-array mode runs one node per array task, but cluster.slurm.nodes={slurm.nodes}: "
            "set cluster.slurm.nodes=1 (or cluster.slurm.array=0 for one multi-node Ray cluster)"
        )


def sbatch_header(slurm: SlurmConfig, job_name: str, log_dir: Path, workdir: Path) -> list[str]:
    """The `#SBATCH` lines; one task per node that owns the node's CPUs (srun steps overlap it)."""
    out = log_dir / ("%A_%a.out" if slurm.array else "%j.out")
    opts = [
        f"--job-name={job_name}",
        f"--nodes={slurm.nodes}",
        "--ntasks-per-node=1",
        f"--cpus-per-task={slurm.cpus_per_node}",
        f"--time={slurm.time}",
        f"--output={out}",
        f"--chdir={workdir}",
        f"--signal=B:TERM@{slurm.stop_grace_s}",
    ]
    if slurm.gpus_per_node:
        opts.append(f"--gpus-per-node={slurm.gpus_per_node}")
    for name in ("mem", "partition", "account", "qos"):
        if getattr(slurm, name):
            opts.append(f"--{name}={getattr(slurm, name)}")
    if slurm.array:
        opts.append(
            f"--array=0-{slurm.array - 1}" + (f"%{slurm.array_parallel}" if slurm.array_parallel else "")
        )
    opts.extend(slurm.sbatch_args)
    return [f"#SBATCH {o}" for o in opts]


def render(
    slurm: SlurmConfig, overrides: Sequence[str], job_name: str, log_dir: Path, workdir: Path, python: str
) -> str:
    """The complete batch script: the template with this launch's values filled in."""

    def words(items: Sequence[str]) -> str:
        return " ".join(shlex.quote(w) for w in items)

    values = {
        "SBATCH": "\n".join(sbatch_header(slurm, job_name, log_dir, workdir)),
        "PROJECT": shlex.quote(str(PROJECT)),
        "PYTHON": shlex.quote(python),
        "CONTAINER": words(shlex.split(slurm.container or "")),
        "CPUS": str(slurm.cpus_per_node),
        "GPUS": str(slurm.gpus_per_node),
        "RAY_ARGS": words(slurm.ray_args),
        "JOIN_TIMEOUT": str(slurm.join_timeout_s),
        "STOP_WAIT": str(max(5, slurm.stop_grace_s // 2)),
        "SLICES": str(slurm.array),
        "OVERRIDES": words(overrides),
        "SETUP": "\n".join(slurm.setup),
    }
    text = TEMPLATE.read_text()
    for key, value in values.items():
        text = text.replace("{{" + key + "}}", value)
    assert "{{" not in text, "slurm/sweep.sbatch has a placeholder the launcher does not fill"
    return text


# ---- submitting


@dataclass
class Launch:
    """What one launch submits: the rendered script, where it and the logs go, and its job name."""

    script: str
    script_path: Path
    log_dir: Path
    job_name: str
    sweep_dir: Path
    gpus: str | None = None  # what the served models use of the allocation's GPUs, and what they leave idle


def plan(overrides: Sequence[str], workdir: Path) -> Launch:
    """Compose the sweep's config for `overrides`, check it as the sweep's preflight would (the data,
    the models' and judges' keys; not the sandbox, which is the compute node's), and render the batch script."""
    from runners.preflight.command_line import root_choices
    from runners.preflight.config_checks import check_sweep
    from runners.sweep.driver import sweep_dir_for
    from runners.sweep.grid import compose_sweep

    for o in overrides:
        if o.split("=", 1)[0].lstrip("+~") in ("cluster.address", "grid.slice"):
            raise LaunchError(
                f"{o!r}: the batch script sets {o.split('=', 1)[0].lstrip('+~')} itself; leave it out"
            )
    with started_in(workdir):  # the command's paths are the launch folder's, wherever this runs
        root, experiment, configs = compose_sweep(list(overrides), root_choices(overrides))
    overrides = absolute_overrides(overrides, [root, *configs], workdir)  # the job sees absolute paths only
    slurm: SlurmConfig = root.cluster.slurm
    check(slurm)
    if root.cluster.num_cpus is not None:
        raise LaunchError(
            "cluster.num_cpus must be null on Slurm: the job's Ray cluster has cluster.slurm.cpus_per_node per node"
        )
    check_sweep(configs, here=False)
    from runners.preflight.gpus import gpu_note

    note = gpu_note(configs, on_slurm=True)
    sweep_dir = Path(sweep_dir_for(root, experiment, overrides))
    log_dir = Path(slurm.log_dir) if slurm.log_dir else sweep_dir / "slurm"
    job_name = slurm.job_name or f"rt-{sweep_dir.name}"
    script = render(slurm, overrides, job_name, log_dir, workdir.resolve(), slurm.python or sys.executable)
    name = "array.sbatch" if slurm.array else "sweep.sbatch"
    return Launch(script, log_dir / name, log_dir, job_name, sweep_dir, note)


def queued(job_name: str) -> list[str]:
    """Ids of this user's queued or running jobs with this name (a second driver would redo jobs)."""
    out = subprocess.run(
        ["squeue", "-h", "-u", os.environ.get("USER") or str(os.getuid()), f"--name={job_name}", "-o", "%i"],
        capture_output=True, text=True, check=True,
    )
    return out.stdout.split()


def submit(launch: Launch, wait: bool) -> tuple[str, int]:
    """Write the script and `sbatch` it: the job id, and with `wait` the job's exit code once it ended."""
    launch.log_dir.mkdir(parents=True, exist_ok=True)
    launch.script_path.write_text(launch.script)
    cmd = ["sbatch", "--parsable", *(["--wait"] if wait else []), str(launch.script_path)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    job = proc.stdout.strip().split(";")[0]
    if not job:
        raise LaunchError(f"sbatch refused the job: {proc.stderr.strip() or proc.stdout.strip()}")
    return job, proc.returncode


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    p = argparse.ArgumentParser(prog="python -m slurm.launch", description=__doc__.split("\n\n")[0])
    p.add_argument("--dry-run", action="store_true", help="print the batch script, submit nothing")
    p.add_argument("--wait", action="store_true", help="return when the job has ended (sbatch --wait)")
    p.add_argument("--force", action="store_true", help="submit even if a job of this sweep is queued")
    p.add_argument(
        "overrides", nargs="*", help="the sweep's Hydra overrides, e.g. experiment=paper_main cluster=slurm"
    )
    args = p.parse_args(argv)
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    try:
        launch = plan(args.overrides, Path.cwd())
        if launch.gpus:
            print(f"slurm.launch: {launch.gpus}", file=sys.stderr)
        if args.dry_run:
            print(launch.script)
            return 0
        if shutil.which("sbatch") is None:
            raise LaunchError("sbatch is not on PATH: launch from a Slurm login node (or use --dry-run)")
        others = [] if args.force else queued(launch.job_name)
        if others:
            raise LaunchError(
                f"job(s) {', '.join(others)} named {launch.job_name} are queued or running for this sweep; two "
                "drivers on one sweep would run jobs twice. Wait, scancel them, or pass --force"
            )
        job, rc = submit(launch, args.wait)
    except (
        LaunchError,
        ValueError,
        HydraException,
        OmegaConfBaseException,
        subprocess.CalledProcessError,
    ) as e:
        cause = f"\n{e.__cause__}" if e.__cause__ else ""
        print(f"slurm.launch: {e}{cause}", file=sys.stderr)
        return 2
    log = launch.log_dir / (f"{job}_%a.out" if launch.script_path.name == "array.sbatch" else f"{job}.out")
    print(f"submitted job {job} ({launch.job_name}); sweep {launch.sweep_dir}")
    print(f"log: {log}")
    print(f"resume later with: sbatch {launch.script_path}")
    if args.wait:
        print(f"job {job} ended with exit code {rc}")
        return rc
    return 0


if __name__ == "__main__":
    sys.exit(main())
