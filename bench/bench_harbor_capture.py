"""What the tab's capture sees under a foreign harness (issue 29; numbers in docs/harbor.md).

    .venv/bin/python -m bench.bench_harbor_capture [--suite workspace] [--tasks 10]

A recorded example: each built-in task's reference solution runs as a real scripted job with the tab
(`method=runningtab`: the loop, the sandbox, the tab). Its recorded tool calls are then replayed, in
order, through the tab's MCP session (`tab.mcp.session.TabSession`, what `python -m tab.mcp` serves)
on a fresh copy of the workspace, routed as a foreign harness could route them:

- `all through the tab`: the agent reads and runs commands only with the server's `read` and `bash`;
- `own file reads`: the agent opens text files with its own tool (Claude Code's Read, Codex's file
  read): the recorded `read` calls and the plain `cat`/`head` of text files (what the reference
  solutions read text files with) stay outside; other commands (office files through Python, listings,
  greps) go through the server's `bash`;
- `own reads and shell`: the agent uses the server only for the tab's operations.

A call not routed to the server happens in the agent's own tool, which the tab never sees. Printed per
routing, summed over the tasks: read-log entries, files in the read log, excerpt characters and
candidates, against the job's own tab.json.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from pathlib import Path

from runners.job.baselines import baseline_turns, compose_root


def _plain_read(name: str, args: dict) -> bool:
    """A text file opened whole: what a harness's own file-read tool does."""
    return name == "read" or (name == "bash" and str(args.get("command", "")).startswith(("cat ", "head -n 2000 ")))


ROUTES = {
    "all through the tab": lambda name, args: name in ("read", "bash"),
    "own file reads": lambda name, args: name == "bash" and not _plain_read(name, args),
    "own reads and shell": lambda name, args: False,
}


def record_job(suite_root: Path, task, out: Path) -> Path:
    from runners.job.identity import job_id
    from runners.job.run import run_and_score

    script = out / f"{task.id}.jsonl"
    script.write_text("".join(json.dumps(t) + "\n" for t in baseline_turns("reference", suite_root, task)))
    cfg = compose_root(["benchmark=builtin", f"benchmark.path={suite_root.parent}", f"benchmark.suite={suite_root.name}", "method=runningtab",
                        "model=scripted", f"model.script={script}", "judge=none", f"out={out}"])
    jid = job_id(cfg, task.id)
    run_and_score(cfg, task.id, out / jid, jid, None)
    return out / jid


def calls(job: Path) -> list[tuple[str, dict]]:
    out = []
    for line in (job / "trajectory.jsonl").read_text().splitlines():
        m = json.loads(line)
        for c in m.get("tool_calls") or []:
            out.append((c["function"]["name"], json.loads(c["function"]["arguments"] or "{}")))
    return out


def tally(tab: dict) -> dict[str, int]:
    log = tab.get("read_log", [])
    return {"entries": len(log), "files": len({e["path"] for e in log}), "chars": sum(int(e.get("chars") or 0) for e in log),
            "candidates": len(tab.get("candidates", []))}


def replay(task, job: Path, routed, tmp: Path) -> dict[str, int]:
    from envs.workspace import materialize
    from tab.mcp.__main__ import compose
    from tab.mcp.session import TabSession

    ws = tmp / "ws"
    shutil.rmtree(ws, ignore_errors=True)
    materialize(task.workspace, ws, task.stage, method="copy")
    env, tab = compose(["env.sandbox=none"])
    session = TabSession(ws, env, tab, exclude=[task.output])
    for name, args in calls(job):
        if name.startswith("tab_") or routed(name, args):
            session.call(name, args)
    doc = session.tab.record()
    session.close()
    return tally(doc)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--suite", default="workspace")
    ap.add_argument("--tasks", type=int, default=10)
    args = ap.parse_args()
    from eval.benchmarks.builtin.loader import ensure_generated
    from eval.benchmarks.native_format import load_native

    with tempfile.TemporaryDirectory(prefix="rt-capture-") as t:
        tmp = Path(t)
        suite = ensure_generated(tmp / "bench", 0) / args.suite
        totals = {"the job's own tab": dict.fromkeys(("entries", "files", "chars", "candidates"), 0)}
        for task in load_native(suite)[: args.tasks]:
            job = record_job(suite, task, tmp)
            for k, v in tally(json.loads((job / "tab.json").read_text())).items():
                totals["the job's own tab"][k] += v
            for route, routed in ROUTES.items():
                got = replay(task, job, routed, tmp)
                row = totals.setdefault(route, dict.fromkeys(got, 0))
                for k, v in got.items():
                    row[k] += v
    base = totals["the job's own tab"]
    print(f"| routing ({args.tasks} {args.suite} tasks) | read-log entries | files | excerpt chars | candidates |")
    print("|---|---|---|---|---|")
    for route, row in totals.items():
        cells = [f"{row[k]} ({100 * row[k] / base[k]:.0f}%)" if base[k] else str(row[k]) for k in ("entries", "files", "chars", "candidates")]
        print(f"| {route} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
