"""Harbor (PyPI `harbor`, the Terminal-Bench 2.0 harness): our benchmarks as Harbor tasks with the tab
as an MCP server in the task's container, our trajectories as ATIF, and Harbor's trial results back
into our job records (docs/harbor.md).

    task_dir.py    one Harbor task per task of a benchmark (instruction, task.toml, images, verifier)
    bundle.py      the project's code the task images carry (the tab's server, the judges)
    spec.py        a task, as the verifier reads it back (tests/spec/task.json)
    verify.py      `python -m eval.harbor.verify`: the verifier inside the task's verifier image
    atif.py        a job record's trajectory as ATIF, the tab's state per step in `extra`
    trial.py       a job record as a Harbor trial directory (what `eval.export atif` writes)
    importer.py    Harbor trial directories back into job records (`eval.import atif`)

Nothing here imports `harbor`: it needs Python 3.12, our venv is 3.11. The tests check our output
with Harbor's own validators, run from a venv of their own (`make harbor-venv`).
"""
