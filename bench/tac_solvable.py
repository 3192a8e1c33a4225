"""Can every task of a TheAgentCompany preset reach full marks, as the preset runs it?

    python -m bench.tac_solvable DATA/agentcompany [--benchmark agentcompany_paper] [--task NAME ...] [--out DIR]
    python -m bench.tac_solvable DATA/agentcompany --empty [--task NAME ...]

`DATA/agentcompany` is what `python -m eval.prepare agentcompany` writes (`tasks/`, `files/`).

- By default, for each task of the preset that has a reference deliverable (eval/tac/references.py),
  a scripted agent makes that deliverable in its real sandbox, in the preset's file-server mode
  (served: uploads and share links through the file server), through the job code, and the task's
  own evaluator scores the record. The evaluators' LLM questions go to a judge model with rules
  (eval/tac/scripted_agent.py), so this checks the tasks and the harness, not an LLM. Tasks of the
  preset without a reference are listed.
- With `--empty`, every task folder's evaluator (the preset's subset or not) scores an agent that did
  nothing: each one either scores, with the checkpoints that reached for a service that is not here
  marked unreachable, or is refused by the loader with its reason. None may be left unscored.

Prints one line per task and a summary; exits 1 when a reference misses full marks or an evaluator
is left unscored.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from eval.benchmarks import BenchmarkError, load_benchmark
from eval.benchmarks.agentcompany import load_task
from eval.judges.base import JudgeError
from eval.score.records import score_job
from eval.tac.references import REFERENCES, Deliverable, deliverable
from eval.tac.scripted_agent import RuleJudge, agent_script
from runners.config.schema import RootConfig
from runners.core.task import Task


@dataclass
class Outcome:
    task: str
    status: str  # full | partial | scored | refused | unscored | no_reference
    earned: int = 0
    total: int = 0
    unreachable: list[str] = field(default_factory=list)  # "checkpoint N: service"
    why: str = ""

    def line(self) -> str:
        score = f" {self.earned}/{self.total}" if self.total else ""
        extra = f" unreachable: {', '.join(self.unreachable)}" if self.unreachable else ""
        return f"{self.status:12} {self.task}{score}{extra}{f'  ({self.why})' if self.why else ''}"


def compose(overrides: list[str]) -> RootConfig:
    """The root config the entry points build for these overrides."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    from runners.config.schema import CONF_DIR, register, to_root

    register()
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base=None):
        return to_root(hydra_compose("config", overrides=overrides))


def _job(data: Path, benchmark: str, task: Task | None, name: str, d: Deliverable, served: bool, out: Path) -> Outcome:
    """A scripted agent's job making `d` in its sandbox, then scored by the task's evaluator."""
    import json

    from runners.job.identity import job_id
    from runners.job.run import run_job

    work = out / name
    work.mkdir(parents=True, exist_ok=True)
    script = work / "turns.jsonl"
    script.write_text("".join(json.dumps(t) + "\n" for t in agent_script(d, served)), encoding="utf-8")
    cfg = compose([f"benchmark={benchmark}", f"benchmark.tasks_dir={data / 'tasks'}", f"benchmark.export_dir={data / 'files'}",
                   f"benchmark.file_server={'served' if served else 'mounted'}", "method=dci", "model=scripted", f"model.script={script}", f"judge.cache_dir={work / 'cache'}", "env.sandbox=bwrap"])
    task = task or load_benchmark(cfg.benchmark).task(name)
    jid = job_id(cfg, task)
    result = run_job(cfg, task, work / jid, jid)
    if result.stop_reason != "finished":
        return Outcome(name, "unscored", why=f"the scripted agent stopped: {result.stop_reason} {result.error or ''}".strip())
    try:
        scores = score_job(work / jid, cfg.judge, task=task, model=RuleJudge())
    except JudgeError as e:
        return Outcome(name, "unscored", why=str(e).splitlines()[0])
    final = scores["final_score"]
    unreachable = [f"checkpoint {i['index'] + 1}: {'/'.join(i['unreachable'])}" for i in scores["items"] if "unreachable" in i]
    return Outcome(name, "", final["result"], final["total"], unreachable)


def check_references(data: Path, benchmark: str, names: list[str], out: Path) -> list[Outcome]:
    """Each task of the preset (or of `names`): its reference made in the preset's mode and scored."""
    cfg = compose([f"benchmark={benchmark}", f"benchmark.tasks_dir={data / 'tasks'}", f"benchmark.export_dir={data / 'files'}"])
    tasks = [t.id for t in load_benchmark(cfg.benchmark).tasks()]
    unknown = [n for n in names if n not in tasks]
    if unknown:
        raise BenchmarkError(f"not tasks of benchmark={benchmark} here: {unknown}; its tasks: {', '.join(tasks)}")
    served = cfg.benchmark.file_server == "served"
    outcomes = []
    for name in names or tasks:
        if name not in REFERENCES:
            outcomes.append(Outcome(name, "no_reference"))
            continue
        o = _job(data, benchmark, None, name, deliverable(name, data / "tasks" / name, out), served, out)
        o.status = o.status or ("full" if o.earned == o.total else "partial")
        outcomes.append(o)
    return outcomes


def check_empty(data: Path, names: list[str], out: Path, file_server: str = "served") -> list[Outcome]:
    """Every task folder's evaluator on an agent that did nothing (see the module doc)."""
    folders = sorted(p for p in (data / "tasks").iterdir() if (p / "task.md").is_file())
    outcomes = []
    for folder in folders:
        if names and folder.name not in names:
            continue
        try:
            task = load_task(folder, data / "files", file_server)
        except (BenchmarkError, OSError, ValueError) as e:
            outcomes.append(Outcome(folder.name, "refused", why=str(e).splitlines()[0]))
            continue
        if not (folder / "evaluator.py").is_file():
            outcomes.append(Outcome(folder.name, "refused", why="no evaluator.py (an encrypted or missing evaluator)"))
            continue
        o = _job(data, "agentcompany", task, folder.name, Deliverable(), file_server == "served", out)
        o.status = o.status or "scored"
        outcomes.append(o)
    return outcomes


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.tac_solvable", description=__doc__.split("\n\n")[0])
    ap.add_argument("data", type=Path, help="a prepared TheAgentCompany folder (python -m eval.prepare agentcompany): tasks/, files/")
    ap.add_argument("--benchmark", default="agentcompany_paper", help="the preset whose tasks and mode are checked")
    ap.add_argument("--task", action="append", default=[], help="only this task (repeatable)")
    ap.add_argument("--empty", action="store_true", help="run every task folder's evaluator on an empty deliverable instead")
    ap.add_argument("--out", type=Path, default=None, help="keep the job folders here (default: a temporary folder)")
    args = ap.parse_args(argv)
    data = args.data.expanduser().resolve()
    if not (data / "tasks").is_dir() or not (data / "files").is_dir():
        print(f"error: {data} is not a prepared TheAgentCompany folder (tasks/ and files/); make one with "
              "python -m eval.prepare agentcompany --out DATA", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="rt-solvable-") as tmp:
        out = args.out.expanduser().resolve() if args.out else Path(tmp)
        try:
            outcomes = check_empty(data, args.task, out) if args.empty else check_references(data, args.benchmark, args.task, out)
        except BenchmarkError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
    for o in outcomes:
        print(o.line())
    counts: dict[str, int] = {}
    for o in outcomes:
        counts[o.status] = counts.get(o.status, 0) + 1
    print("summary: " + ", ".join(f"{n} {status}" for status, n in sorted(counts.items())))
    return 1 if counts.get("partial") or counts.get("unscored") else 0


if __name__ == "__main__":
    sys.exit(main())
