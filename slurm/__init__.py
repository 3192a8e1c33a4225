"""Slurm: submitting a sweep (`python -m slurm.launch`), each node's Ray inside the job
(`python -m slurm.node`); the job's config is `runners/config/slurm.py` (beside the other runner
configs: slurm/ imports runners, never the reverse) and array slices `runners/sweep/grid.py`.
The batch script template is `slurm/sweep.sbatch`; slurm/README.md explains it."""
