"""Run by Harbor's own Python (tests/helpers/harbor_venv.py), never by pytest: checks our output with
Harbor's validators and prints the verdicts as JSON.

stdin: {"tasks": [dir...], "trajectories": [file...], "results": [file...]}
stdout: {"tasks": {dir: {"findings": [...], "name": ..., "mcp_servers": [...], "verifier_mode": ...}},
         "trajectories": {file: [error...]}, "results": {file: error or null}}
Tasks: `harbor.lint.task.lint_task` with Harbor's default rules (what `harbor lint` runs) and
Harbor's Task model (what `harbor run` loads). Trajectories: Harbor's ATIF validator. Results:
Harbor's TrialResult model.
"""

import json
import sys
from pathlib import Path

from harbor.lint.models import DEFAULT_RULES
from harbor.lint.task import lint_task
from harbor.models.task.task import Task
from harbor.models.task.verifier_mode import resolve_task_verifier_mode
from harbor.models.trial.result import TrialResult
from harbor.utils.trajectory_validator import TrajectoryValidator

doc = json.load(sys.stdin)
out = {"tasks": {}, "trajectories": {}, "results": {}}
for d in doc.get("tasks", []):
    findings = [f.model_dump(mode="json") for f in lint_task(Path(d), selected_rules=set(DEFAULT_RULES))]
    task = Task(Path(d))
    out["tasks"][d] = {"findings": findings, "name": task.name, "instruction": task.instruction,
                       "mcp_servers": [s.model_dump(mode="json") for s in task.config.environment.mcp_servers],
                       "verifier_mode": resolve_task_verifier_mode(task.config).value,
                       "artifacts": [a if isinstance(a, str) else a.model_dump(mode="json") for a in task.config.artifacts]}
for f in doc.get("trajectories", []):
    v = TrajectoryValidator()
    out["trajectories"][f] = [] if v.validate(Path(f), validate_images=False) else v.get_errors()
for f in doc.get("results", []):
    try:
        TrialResult.model_validate_json(Path(f).read_text())
        out["results"][f] = None
    except Exception as e:  # noqa: BLE001 - the verdict is the point
        out["results"][f] = str(e)
print(json.dumps(out))
