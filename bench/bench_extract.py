"""Hand-run benchmark of reading deliverables for judging (numbers in docs/benchmarks.md, "Reading
deliverables", and docs/env.md's threat model).

    .venv/bin/python bench/bench_extract.py [--repeat 5]

1. Bombs: each file of tests/helpers/deliverable_bombs.py read the way a judge reads it (eval/judges/extract/session.py:
   in the worker pool, under the default `judge.extract` limits): wall time to a result, the
   reading child's CPU time and peak RSS, and the reason.
2. Overhead: the built-in workspace suite's reference solutions (9 jobs, their deliverables md/csv),
   each scored by the rule judge with its files read (a) in this process (`extract_file`, bounded
   but without the process limits) and (b) out of process (the default); per job, wall and CPU
   time of this process and of the workers (with the children they forked). The first
   out-of-process job also starts the workers.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from eval.benchmarks.builtin import generate  # noqa: E402
from eval.benchmarks.native_format import load_native  # noqa: E402
from eval.config import (
    ExtractLimits,  # noqa: E402
    JudgeConfig,  # noqa: E402
)
from eval.judges.extract import pool as extract_pool  # noqa: E402
from eval.judges.extract import session as extraction  # noqa: E402
from eval.judges.extract.extracted import Extracted  # noqa: E402
from eval.judges.extract.read import extract_file  # noqa: E402
from eval.score.records import score_job  # noqa: E402
from tests.helpers import deliverable_bombs as bombs  # noqa: E402
from tests.helpers.eval_records import make_job  # noqa: E402

_OutOfProcess = extraction.Extractions


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _run_solution(suite: Path, task, tmp: Path, empty: bool) -> Path:
    """The task's reference solution replayed on a copy of its workspace (its bash commands, no
    sandbox: the built-in benchmark's own scripts), as a job record of what it changed."""
    ws = tmp / "ws"
    shutil.copytree(task.workspace, ws)
    before = _tree(ws)
    final = ""
    for line in [] if empty else (suite / "solutions" / f"{task.id}.jsonl").read_text().splitlines():
        turn = json.loads(line)
        for call in turn.get("tool_calls") or []:
            subprocess.run(call["arguments"]["command"], shell=True, cwd=ws, capture_output=True, text=True, timeout=60, check=True)
        if not turn.get("tool_calls"):
            final = turn.get("content") or ""
    after = _tree(ws)
    changed = {rel: data for rel, data in after.items() if before.get(rel) != data}
    return make_job(tmp / "job", changed, final_answer=final, deleted=[r for r in before if r not in after])


class InProcess(_OutOfProcess):
    """Files read in this process (the baseline: no worker, no process limits)."""

    def get(self, root: Path, rel: str) -> Extracted:
        key = (str(root), rel)
        if key not in self._done:
            self._done[key] = extract_file(root, rel, self.limits)
        return self._done[key]


def cpu() -> float:
    """CPU seconds of this process and of the extraction workers with the children they waited for."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    total = own.ru_utime + own.ru_stime
    for w in extract_pool.shared_pool()._idle:
        fields = Path(f"/proc/{w.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")  # utime stime cutime cstime
    return total


def bombs_table(tmp: Path) -> None:
    files = {"dim.xlsx (issue's spreadsheet)": ("dim.xlsx", bombs.xlsx_dimension_bomb()),
             "docx zip bomb (256 MB part)": ("notes.docx", bombs.docx_zip_bomb()),
             "pptx zip bomb (256 MB part)": ("deck.pptx", bombs.pptx_zip_bomb()),
             "xlsx zip bomb (256 MB part)": ("big.xlsx", bombs.xlsx_zip_bomb()),
             "pdf of 1,000,000 pages": ("scan.pdf", bombs.pdf_page_bomb()),
             "pdf of 50,176 pages (pdf_pages raised)": ("slow.pdf", bombs.pdf_page_bomb(224, 2)),
             "md heading line of 20,000 blanks": ("readme.md", bombs.redos_markdown().encode())}
    print("| file | bytes | time to a result | child CPU | child peak RSS | result |\n|---|---|---|---|---|---|")
    session = extraction.Extractions()
    (tmp / "warm.md").write_text("# warm\n")
    session.get(tmp, "warm.md")  # a worker started first: its start is not any bomb's
    for label, (name, data) in files.items():
        (tmp / name).write_bytes(data)
        if name == "slow.pdf":
            session.limits = ExtractLimits(pdf_pages=100_000)
        t = time.monotonic()
        got = session.get(tmp, name)
        read = session.reads[-1]
        result = got.error or f"read: {len(got.text):,} chars, {sum(len(t) for t in got.tables)} rows"
        print(f"| {label} | {len(data):,} | {time.monotonic() - t:.2f} s | {read.cpu_s:.2f} s | {read.maxrss_kb / 1024:.0f} MB | {result} |")


def overhead(tmp: Path, repeat: int) -> None:
    bench = tmp / "builtin"
    generate(bench, 0)
    tasks = load_native(bench / "workspace")
    jobs = [(t, _run_solution(bench / "workspace", t, tmp / f"s{i}", empty=False)) for i, t in enumerate(tasks)]
    rule = JudgeConfig(name="rule")
    print(f"\n{len(jobs)} jobs (built-in workspace suite, reference solutions), `score_job` with the rule judge, {repeat} rounds")
    for label, session in (("in process", InProcess), ("out of process", _OutOfProcess)):
        extraction.Extractions = session  # what `score_job`'s session is made of
        walls, cpus, first = [], [], None
        for _ in range(repeat):
            for task, job in jobs:
                t, c = time.monotonic(), cpu()
                scores = score_job(job, rule, task=task)
                walls.append(time.monotonic() - t)
                cpus.append(cpu() - c)
                assert scores["metrics"]["pass_rate"] == 1.0, (task.id, scores["items"])
                first = walls[0] if first is None else first
        print(f"{label}: per job median {statistics.median(walls) * 1e3:.1f} ms wall, {statistics.median(cpus) * 1e3:.1f} ms CPU "
              f"(this process and its children); first job {first * 1e3:.0f} ms")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-extract-") as d:
        bombs_table(Path(d))
        overhead(Path(d), args.repeat)


if __name__ == "__main__":
    main()
