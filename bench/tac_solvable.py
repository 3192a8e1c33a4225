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
  marked unreachable (and scored 0), or is refused with its reason: by the loader, or because its
  evaluator cannot run on this Python (eval/tac/evaluator_needs.py). None may be left unscored.

Prints one line per task as it finishes (a task that fails in any way is a line, `crashed` with the
error, and the next one runs), then a summary; exits 1 when a reference misses full marks or an
evaluator is left unscored or crashed.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from eval.benchmarks import BenchmarkError, load_benchmark
from eval.benchmarks.agentcompany import load_task
from eval.judges.base import JudgeError
from eval.score.records import score_job
from eval.tac.evaluator_needs import problem
from eval.tac.references import REFERENCES, Deliverable, deliverable
from eval.tac.scripted_agent import RuleJudge, agent_script
from runners.core.task import Task
from runners.job.baselines import compose_root


@dataclass
class Outcome:
    task: str
    status: str  # full | partial | scored | refused | unscored | crashed | no_reference
    earned: int = 0
    total: int = 0
    unreachable: list[str] = field(default_factory=list)  # "checkpoint N: service"
    why: str = ""
    services: list[str] = field(default_factory=list)  # each unreachable checkpoint's services, "/"-joined
    earning: list[str] = field(default_factory=list)  # "checkpoint N (Ppt)": the checkpoints that earned points

    def line(self) -> str:
        score = f" {self.earned}/{self.total}" if self.total else ""
        extra = f" unreachable: {', '.join(self.unreachable)}" if self.unreachable else ""
        earning = f" earned: {', '.join(self.earning)}" if self.earning else ""
        return f"{self.status:12} {self.task}{score}{extra}{earning}{f'  ({self.why})' if self.why else ''}"


def tally(outcomes: list[Outcome], empty: bool) -> list[str]:
    """The count's closing lines: outcomes by status, (`empty`) the checkpoints that earned points with
    nothing done, and the unreachable ones by service."""
    counts: dict[str, int] = {}
    by_service: dict[str, int] = {}
    for o in outcomes:
        counts[o.status] = counts.get(o.status, 0) + 1
        for services in o.services:
            by_service[services] = by_service.get(services, 0) + 1
    earning = [o for o in outcomes if o.earning]
    lines = ["summary: " + ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))]
    if empty:
        lines.append(f"checkpoints that earned points with nothing done: {sum(len(o.earning) for o in earning)} in {len(earning)} task(s)")
    if by_service:
        lines.append(f"unreachable checkpoints: {sum(by_service.values())} in {sum(1 for o in outcomes if o.services)} task(s); by service: "
                     + ", ".join(f"{k} {n}" for k, n in sorted(by_service.items(), key=lambda kv: (-kv[1], kv[0]))))
    return lines


def _job(data: Path, benchmark: str, task: Task | None, name: str, d: Deliverable, served: bool, out: Path) -> Outcome:
    """`_run_job`, and any error it ends in as the task's `crashed` line (the next task runs)."""
    try:
        return _run_job(data, benchmark, task, name, d, served, out)
    except Exception as e:  # noqa: BLE001 - one task's failure is its line, never the end of the count
        return Outcome(name, "crashed", why=f"{type(e).__name__}: {str(e).strip().splitlines()[-1] if str(e).strip() else ''}")


def _run_job(data: Path, benchmark: str, task: Task | None, name: str, d: Deliverable, served: bool, out: Path) -> Outcome:
    """A scripted agent's job making `d` in its sandbox, then scored by the task's evaluator."""
    import json

    from runners.job.identity import job_id
    from runners.job.run import run_job

    work = out / name
    work.mkdir(parents=True, exist_ok=True)
    script = work / "turns.jsonl"
    script.write_text("".join(json.dumps(t) + "\n" for t in agent_script(d, served)), encoding="utf-8")
    cfg = compose_root([f"benchmark={benchmark}", f"benchmark.tasks_dir={data / 'tasks'}", f"benchmark.export_dir={data / 'files'}",
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
    items = scores["items"]
    unreachable = [f"checkpoint {i['index'] + 1}: {'/'.join(i['unreachable'])}" for i in items if "unreachable" in i]
    earning = [f"checkpoint {i['index'] + 1} ({i['earned']}pt)" for i in items if i["earned"] > 0]
    return Outcome(name, "", final["result"], final["total"], unreachable,
                   services=["/".join(i["unreachable"]) for i in items if "unreachable" in i], earning=earning)


def check_references(data: Path, benchmark: str, names: list[str], out: Path) -> Iterator[Outcome]:
    """Each task of the preset (or of `names`): its reference made in the preset's mode and scored,
    one outcome at a time."""
    cfg = compose_root([f"benchmark={benchmark}", f"benchmark.tasks_dir={data / 'tasks'}", f"benchmark.export_dir={data / 'files'}"])
    tasks = [t.id for t in load_benchmark(cfg.benchmark).tasks()]
    unknown = [n for n in names if n not in tasks]
    if unknown:
        raise BenchmarkError(f"not tasks of benchmark={benchmark} here: {unknown}; its tasks: {', '.join(tasks)}")
    served = cfg.benchmark.file_server == "served"
    for name in names or tasks:
        if name not in REFERENCES:
            yield Outcome(name, "no_reference")
            continue
        o = _job(data, benchmark, None, name, deliverable(name, data / "tasks" / name, out), served, out)
        o.status, o.earning = o.status or ("full" if o.earned == o.total else "partial"), []  # every point is the reference's doing
        yield o


def check_empty(data: Path, names: list[str], out: Path, file_server: str = "served") -> Iterator[Outcome]:
    """Every task folder's evaluator on an agent that did nothing (see the module doc), one outcome at a time."""
    folders = sorted(p for p in (data / "tasks").iterdir() if (p / "task.md").is_file())
    for folder in folders:
        if names and folder.name not in names:
            continue
        try:
            task = load_task(folder, data / "files", file_server)
        except (BenchmarkError, OSError, ValueError) as e:
            yield Outcome(folder.name, "refused", why=str(e).splitlines()[0])
            continue
        if not (folder / "evaluator.py").is_file():
            yield Outcome(folder.name, "refused", why="no evaluator.py (an encrypted or missing evaluator)")
            continue
        why = problem(folder)
        if why is not None:
            yield Outcome(folder.name, "refused", why=why)
            continue
        o = _job(data, "agentcompany", task, folder.name, Deliverable(), file_server == "served", out)
        o.status = o.status or "scored"
        yield o


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
    outcomes: list[Outcome] = []
    with tempfile.TemporaryDirectory(prefix="rt-solvable-") as tmp:
        out = args.out.expanduser().resolve() if args.out else Path(tmp)
        try:
            for o in check_empty(data, args.task, out) if args.empty else check_references(data, args.benchmark, args.task, out):
                print(o.line(), flush=True)
                outcomes.append(o)
        except BenchmarkError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
    print("\n".join(tally(outcomes, args.empty)))
    return 1 if any(o.status in ("partial", "unscored", "crashed") for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
