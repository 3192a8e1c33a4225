"""Baselines of a benchmark in the native format, as real jobs: what a deliverable that does no task
can score, beside an empty one and the reference solutions (`runningtab check-bench`,
bench/bench_stuffing.py, the built-in suites' tests).

Every baseline runs through the single-job entry point's `run_and_score` (the scripted model driving
bash in the agent's sandbox, then the benchmark's own judge):

- `stuffing`: a generic script that knows nothing of the rubrics. It reads every workspace file
  (office files through the reference solutions' stdlib reader) and writes all of it into the
  task's output location, each line as a markdown heading and the whole text once more as a single
  table cell (a csv output gets one cell holding the heading lines; a folder output gets
  `workspace.md` inside it). For an answer task its final answer lists every number it read.
- `empty`: the agent stops at once.
- `reference`: the task's reference solution (`solutions/<id>.jsonl`), when it has one.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shlex
from pathlib import Path
from typing import Any

from eval.benchmarks.builtin.solution import OFFICE_TEXT
from eval.config import ExtractLimits
from eval.judges.extract.read import extract_file
from runners.core.task import Task

BASELINES = ("stuffing", "empty", "reference")

STUFFER = OFFICE_TEXT + r"""import csv, os
out = sys.argv[1]
skip = os.path.normpath(out)
lines = []
for root, dirs, files in os.walk('.'):
    dirs.sort()
    for name in sorted(files):
        p = os.path.normpath(os.path.join(root, name))
        if p == skip or p.startswith(skip + os.sep):
            continue
        ext = name.rsplit('.', 1)[-1].lower()
        try:
            text = globals()[ext](p) if ext in ('docx', 'pptx', 'xlsx', 'pdf') else open(p, encoding='utf-8', errors='replace').read()
        except Exception:
            continue
        lines += [' '.join(line.replace('|', '/').split()).lstrip('# ') for line in text.splitlines()]
lines = [line for line in lines if line]
heads = '\n'.join('# ' + line for line in lines)
path = os.path.join(out, 'workspace.md') if out.endswith('/') else out
os.makedirs(os.path.dirname(path) or '.', exist_ok=True)
with open(path, 'w', newline='') as f:
    if path.lower().endswith('.csv'):
        csv.writer(f).writerows([['Workspace'], [heads]])
    else:
        f.write(heads + '\n\n| Workspace |\n|---|\n| ' + ' '.join(lines) + ' |\n')
"""
_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")


def stuffer_turns(task: Task) -> list[dict[str, Any]]:
    """The stuffer as scripted-model turns: a dump of the workspace, or an answer of every number."""
    if task.kind == "answer":
        seen: dict[str, None] = {}
        for p in sorted(q for q in task.workspace.rglob("*") if q.is_file()):
            seen.update(dict.fromkeys(m.replace(",", "") for m in _NUMBER.findall(extract_file(p.parent, p.name, ExtractLimits()).text)))
        final = f"<FINAL_ANSWER>{', '.join(seen)}</FINAL_ANSWER>"
        return [_bash("cat * > /dev/null"), {"content": final}, {"content": final}]
    return [_bash(f"python3 - {shlex.quote(task.output)} <<'RT_PY'\n{STUFFER}RT_PY"), {"content": "Done."}, {"content": "Done."}]


def _bash(command: str) -> dict[str, Any]:
    return {"content": "Let me read everything.", "tool_calls": [{"name": "bash", "arguments": {"command": command}}]}


def baseline_turns(baseline: str, suite_root: Path, task: Task) -> list[dict[str, Any]]:
    if baseline == "stuffing":
        return stuffer_turns(task)
    if baseline == "empty":
        return [{"content": "Done."}, {"content": "Done."}]
    if baseline == "reference":
        return [json.loads(line) for line in (suite_root / "solutions" / f"{task.id}.jsonl").read_text().splitlines()]
    raise ValueError(f"unknown baseline {baseline!r}; valid baselines: {', '.join(BASELINES)}")


def run_baseline(suite_root: Path, baseline: str, out: Path, benchmark: list[str] | None = None,
                 tasks: list[Task] | None = None) -> list[dict[str, Any]]:
    """Each task of the native-format folder `suite_root` (or `tasks` of it) run as a real scripted
    job with the baseline's turns; their scores. `benchmark` are the overrides that load it (default:
    the built-in suite it is, `suite_root` being `<bench>/<suite>`)."""
    from eval.benchmarks.native_format import load_native
    from runners.job.identity import job_id
    from runners.job.run import run_and_score

    benchmark = benchmark or ["benchmark=builtin", f"benchmark.path={suite_root.parent}", f"benchmark.suite={suite_root.name}"]
    scripts = out / "scripts"
    scripts.mkdir(parents=True, exist_ok=True)
    # composed once: the tasks' configs differ only in their script (a compose costs 0.2 s of CPU)
    base = compose_root([*benchmark, "method=dci", "model=scripted", f"model.script={scripts / 'none.jsonl'}", "judge=auto", f"out={out}"])
    scores = []
    for task in tasks if tasks is not None else load_native(suite_root):
        script = scripts / f"{baseline}-{task.id}.jsonl"
        script.write_text("".join(json.dumps(t) + "\n" for t in baseline_turns(baseline, suite_root, task)))
        cfg = dataclasses.replace(base, model=dataclasses.replace(base.model, script=str(script.resolve())))
        jid = job_id(cfg, task.id)
        scores.append(run_and_score(cfg, task.id, out / baseline / jid, jid, None).scores)
    return scores


def compose_root(overrides: list[str]) -> Any:
    """The job config the entry points build for these overrides."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    from runners.config.schema import CONF_DIR, register, to_root

    register()
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base=None):
        return to_root(compose("config", overrides=overrides))


def full_marks(scores: dict[str, Any]) -> bool:
    """Whether one job's scores are full marks: every rubric passed, the checkpoints' final score
    whole, or the answer right (at 1%)."""
    kind, items = scores.get("kind"), scores.get("items") or []
    if kind == "rubrics":
        return bool(items) and all(i["passed"] for i in items)
    if kind == "checkpoints":
        final = scores.get("final_score") or {}
        return final.get("total", 0) > 0 and final.get("result", 0) >= final["total"]
    return scores.get("metrics", {}).get("acc1") == 1.0


def summary(scores: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per kind of task (rubrics, checkpoints, answer), over one baseline's jobs: the pass rate
    (rubrics pooled over tasks, checkpoint points pooled, or answers right at 1%) and the tasks passed
    (TCR@70, full checkpoint score, or a right answer). A benchmark may mix the three."""
    out = {}
    for kind in ("rubrics", "checkpoints", "answer"):
        mine = [s for s in scores if s.get("kind") == kind]
        if not mine:
            continue
        items = [i for s in mine for i in s["items"]]
        if kind == "rubrics":
            passed, total, ok = sum(i["passed"] for i in items), len(items), sum(s["metrics"]["tcr70"] for s in mine)
        elif kind == "checkpoints":
            passed, total = sum(i["earned"] for i in items), sum(i["points"] for i in items)
            ok = sum(s["metrics"]["success"] for s in mine)
        else:
            passed, total = sum(s["metrics"]["acc1"] for s in mine), len(mine)
            ok = passed
        out[kind] = {"passed": int(passed), "total": total, "rate": passed / total if total else 0.0, "tasks_ok": int(ok), "tasks": len(mine)}
    return out
