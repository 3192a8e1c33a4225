"""`cluster.slurm`: the Slurm job's resources and set-up. It lives beside the other runner configs
(not in slurm/), so that the runner's config never imports the launcher: slurm/ imports runners, never the reverse."""

from __future__ import annotations

from dataclasses import dataclass, field

from runners.core.paths import PATH_OR_NAME, path_field


@dataclass
class SlurmConfig:
    """Resources and set-up of the Slurm job (`cluster.slurm`; see slurm/README.md).

    `array` > 0 selects job-array mode: that many one-node array tasks, each running the slice
    `grid.slice=I/array` of the grid (at most `array_parallel` at once, 0 = no limit).
    `setup`: shell lines run first in the job (module load, source a venv, export …).
    `container`: a command prefix that runs a program in your container, applied to every program
    the job starts (e.g. `apptainer exec --nv --bind /scratch image.sif`).
    `python`: the interpreter in the job (null: the one running the launcher).
    `log_dir` null: `<sweep dir>/slurm`. `job_name` null: `rt-<sweep name>`.
    `stop_grace_s`: the teardown starts this long before the time limit.
    """

    nodes: int = 1
    cpus_per_node: int = 8
    gpus_per_node: int = 0
    mem: str | None = None
    time: str = "24:00:00"
    partition: str | None = None
    account: str | None = None
    qos: str | None = None
    job_name: str | None = None
    array: int = 0
    array_parallel: int = 0
    setup: list[str] = field(default_factory=list)
    container: str | None = None
    python: str | None = path_field(kind=PATH_OR_NAME)
    log_dir: str | None = path_field()
    join_timeout_s: int = 600
    stop_grace_s: int = 120
    ray_args: list[str] = field(default_factory=list)
    sbatch_args: list[str] = field(default_factory=list)
