"""The bench.sweep workload as an Inspect AI task (run by bench/inspect/sweep.py in its own venv)."""

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.solver import generate, use_tools
from inspect_ai.tool import bash

NOTES = "".join(f"note {i}: the budget line {i} is {i * 37 % 1000} euros\n" for i in range(20))


@task
def sweep_bench(jobs: int = 256) -> Task:
    samples = [Sample(id=i, input="Sum the budget lines in notes.txt.", files={"notes.txt": NOTES}) for i in range(jobs)]
    return Task(dataset=samples, solver=[use_tools([bash()]), generate()], sandbox="local")
