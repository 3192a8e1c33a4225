"""Subprocess entry: run one TheAgentCompany evaluator and write its result as JSON.

    python run_evaluator.py EVALUATOR_PY TRAJECTORY_FILE RESULT_JSON

Mirrors the benchmark's own `eval.py`: load the evaluator, call `grade_checkpoints` with the
trajectory text, require a `Result` with at least one checkpoint, dump `result.to_dict()`.
The compat modules (`common`, `scoring`, `config`) are on `sys.path` (set by the caller).
"""

import importlib.util
import inspect
import json
import sys


def main(evaluator_py: str, trajectory_file: str, result_json: str) -> None:
    from scoring import Result

    spec = importlib.util.spec_from_file_location("evaluator", evaluator_py)
    module = importlib.util.module_from_spec(spec)
    sys.modules["evaluator"] = module
    spec.loader.exec_module(module)
    with open(trajectory_file, encoding="utf-8") as f:
        trajectory = f.read()
    grade = module.grade_checkpoints
    params = inspect.signature(grade).parameters
    result = grade(trajectory=trajectory) if "trajectory" in params else grade(trajectory) if params else grade()
    if not isinstance(result, Result):
        raise TypeError(f"grade_checkpoints must return Result type, got {type(result)}")
    if not result.checkpoints:
        raise ValueError(f"Result must have at least one checkpoint, got {result}")
    with open(result_json, "w", encoding="utf-8") as f:
        json.dump(result.to_dict(), f)


if __name__ == "__main__":
    main(*sys.argv[1:4])
