"""Hand-run: the report's first screen on fabricated sweeps of the shapes a reader meets, timed, and
photographed in headless Chromium (the pictures of docs/report.md).

    .venv/bin/python -m bench.bench_report_glance --shape harnesses --out /tmp/glance   # 2 methods × 2 harnesses
    .venv/bin/python -m bench.bench_report_glance --shape paper --out /tmp/glance       # the paper's grid: 135 cells
    .venv/bin/python -m bench.bench_report_glance --shape paper --out /tmp/glance --screenshots docs/img

Records are fabricated as bench/bench_scale.py fabricates them (every file a finished job leaves:
job.json, result.json, scores.json, trajectory.jsonl, evaluator_view.json, the deliverable and
extracted.json), with scores drawn from a known design: each task has its own difficulty, each
method, harness and model its own effect (RunningTab +12 points, Self-Tracking +5, Self-Refine +3,
TODO +2; Codex +10 under every method), each task's gain its own spread; a share of the jobs (1% by
default, `--failing`) is not results, errored or unfinished, as in a real sweep. `fabricate` is also what
the report's browser tests (tests/eval/report/test_first_screen.py) run on.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

EFFECT = {"dci": 0.0, "todo": 0.02, "self_refine": 0.03, "self_tracking": 0.05, "runningtab": 0.12}
HARNESS_EFFECT = {"dci": 0.0, "codex": 0.10, "claude_code": 0.08}
KIND = {"agentcompany_paper": "checkpoint", "officeqa_paper": "answer"}  # else rubric tasks
PAPER_METHODS = ["dci", "todo", "self_refine", "self_tracking", "runningtab"]
PAPER_MODELS = ["gpt54_nano", "deepseek_v4_flash", "gemini38_flash"]


@dataclass
class Block:
    """One part of a sweep: these tasks of a benchmark under every method × harness × model × seed."""

    benchmark: str
    tasks: int
    methods: list[str]
    models: list[str]
    seeds: int = 1
    harnesses: list[str] = field(default_factory=lambda: ["dci"])

    @property
    def jobs(self) -> int:
        return self.tasks * len(self.methods) * len(self.models) * self.seeds * len(self.harnesses)


SHAPES: dict[str, list[Block]] = {
    "one": [Block("workspace_bench", 1, ["dci", "runningtab"], ["gpt54_nano"])],
    "harnesses": [Block("workspace_bench", 24, ["dci", "runningtab"], ["gpt54_nano"], 3, ["dci", "codex"])],
    "paper": [Block("workspace_bench", 100, PAPER_METHODS, PAPER_MODELS, 3), Block("agentcompany_paper", 31, PAPER_METHODS, PAPER_MODELS, 3),
              Block("officeqa_paper", 104, PAPER_METHODS, PAPER_MODELS, 3)],
}


def job_id(benchmark: str, task: str, method: str, model: str, seed: int, harness: str) -> str:
    """A unique folder name (the report reads the harness from job.json, never from the id)."""
    return f"{benchmark}__{task}__{method}__{model}__s{seed}" + ("" if harness == "dci" else f"__{harness}")


def _scores(kind: str, rng: random.Random, p: float, n: int) -> dict[str, Any]:
    passed = [rng.random() < p for _ in range(n)]
    share = sum(passed) / n
    if kind == "answer":
        ok = passed[0]
        return {"judge": "officeqa", "metrics": {"acc0": float(ok), "acc1": float(ok or rng.random() < 0.3)},
                "items": [{"kind": "answer", "index": 0, "text": "the answer", "passed": ok}]}
    if kind == "checkpoint":
        items = [{"kind": "checkpoint", "index": i, "text": f"checkpoint {i + 1}", "passed": ok, "points": 1, "result": int(ok)}
                 for i, ok in enumerate(passed)]
        success = float(all(passed))
        return {"judge": "agentcompany", "metrics": {"success": success, "score": 0.5 * share + 0.5 * success}, "items": items}
    items = [{"kind": "rubric", "index": i, "text": f"The report states fact {i + 1} of the task", "passed": ok, "judged": True}
             for i, ok in enumerate(passed)]
    return {"judge": "rule", "metrics": {"pass_rate": share, "rubric_pass_rate": share, "tcr70": float(share >= 0.7)}, "items": items}


def _record(d: Path, meta: dict[str, Any], scores: dict[str, Any], answer: str, text: str, whole: bool, fate: str = "result") -> None:
    """One job's record (`whole=False`: job.json, scores.json and result.json only); result.json last.
    `fate`: `result`, `errored` (a model_error after its retries, no scores) or `unfinished` (no result.json)."""
    d.mkdir(parents=True)
    (d / "job.json").write_text(json.dumps(meta))
    if fate == "unfinished":
        return
    if fate == "result":
        (d / "scores.json").write_text(json.dumps(scores))
    if whole:
        traj = [{"role": "system", "content": "You work over the organization's files.", "turn": 0},
                {"role": "user", "content": f"Do task {meta['task_id']}.", "turn": 0},
                {"role": "assistant", "content": answer, "turn": 1}]
        (d / "trajectory.jsonl").write_text("".join(json.dumps(m) + "\n" for m in traj))
        (d / "evaluator_view.json").write_text(json.dumps({"task": traj[1]["content"], "messages": traj, "final_answer": answer}))
        (d / "deliverable" / "output").mkdir(parents=True)
        (d / "deliverable" / "output" / "report.md").write_text(text)
        (d / "extracted.json").write_text(json.dumps({"files": [{"path": "output/report.md", "text": text}], "left_out": 0,
                                                      "keep_chars": 1_000_000}))
    result = {"job_id": meta["job_id"], "stop_reason": "finished", "turns": 1, "tokens_in": 1200, "tokens_out": 300, "cost": 0.001,
              "chars_read": 5000, "final_answer": answer, "wall_s": 1.0, "error": None, "sandbox": "bwrap",
              "deliverable": ["output/report.md"] if whole else [], "deleted": []}
    if fate == "errored":
        result |= {"stop_reason": "model_error", "errored": True, "error": "the model's server answered 503 after 3 retries"}
    (d / "result.json").write_text(json.dumps(result))


def fabricate(sdir: Path, blocks: list[Block], seed: int = 0, whole: bool = True, failing: float = 0.0) -> Path:
    """A finished sweep of `blocks` in `sdir` (see the module doc); returns `sdir`. `whole=False`:
    only job.json, result.json and scores.json (what the tables and the first screen read).
    `failing`: the share of jobs that are not results, errored and unfinished in turn (drawn apart
    from the scores: the same seed gives the same scores at any share)."""
    rng, fates = random.Random(seed), random.Random(seed + 1)
    failed = 0
    sdir.mkdir(parents=True, exist_ok=True)
    for b in blocks:
        kind = KIND.get(b.benchmark, "rubric")
        for t in range(b.tasks):
            task = f"{b.benchmark[:3]}-{t + 1:04d}"
            base, spread, n = rng.uniform(0.2, 0.75), rng.gauss(0, 0.05), (1 if kind == "answer" else rng.randint(3, 8))
            for model_n, model in enumerate(b.models):
                for harness in b.harnesses:
                    for method in b.methods:
                        for s in range(b.seeds):
                            p = base + 0.04 * (model_n - 1) + HARNESS_EFFECT.get(harness, 0.0)
                            p += EFFECT.get(method, 0.01) + (spread if method != "dci" else 0.0)
                            jid = job_id(b.benchmark, task, method, model, s, harness)
                            tab = {"capture": True, "review": True, "evidence_check": True, "finish_check": True} if method == "runningtab" else None
                            config = {"method": {"name": method, "tab": tab}, "model": {"kind": "openai", "name": model},
                                      "agent": {"harness": harness}, "seed": s}
                            meta = {"job_id": jid, "benchmark": b.benchmark, "task_id": task, "method": method, "model": model,
                                    "seed": s, "harness": harness, "config": config}
                            text = f"# Report for {task}\n\n" + "".join(f"- fact {i + 1}: {rng.randint(10, 99_000):,}\n" for i in range(n))
                            fate = "result"
                            if failing and fates.random() < failing:
                                fate, failed = ("errored", "unfinished")[failed % 2], failed + 1
                            _record(sdir / jid, meta, _scores(kind, rng, min(0.98, max(0.02, p)), n), "Written to output/report.md.", text,
                                    whole, fate)
    return sdir


FRAME = """<!DOCTYPE html><html><body style="margin:0;overflow:hidden">
<iframe id="f" src="%(src)s" style="border:0;width:100vw;height:100vh"></iframe><script>
document.getElementById("f").addEventListener("load", function () {
  const e = this.contentDocument.getElementById("%(anchor)s");
  if (e) this.contentWindow.scrollTo(0, e.getBoundingClientRect().top - 8);
});
</script></body></html>
"""


def screenshot(page: Path, png: Path, anchor: str = "", width: int = 1400, height: int = 900) -> Path:
    """The page as headless Chromium draws it in a window of that size, scrolled to the element
    `anchor` (the page is framed and its frame scrolled: a headless screenshot of a page scrolled
    to its #fragment comes out blank), as a PNG of at most 128 colours (octree: median cut merged the legend's one red square into the brown)."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("headless Chromium is not installed (Debian: apt-get install -y chromium)")
    png.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="glance-shot-"))
    try:
        frame = work / "frame.html"
        frame.write_text(FRAME % {"src": page.resolve().as_uri(), "anchor": anchor})
        cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
               "--allow-file-access-from-files", f"--user-data-dir={work / 'profile'}", f"--window-size={width},{height}",
               "--virtual-time-budget=30000", f"--screenshot={png}", frame.as_uri()]
        subprocess.run(cmd, capture_output=True, timeout=300, check=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    from PIL import Image

    Image.open(png).convert("RGB").quantize(128, method=Image.Quantize.FASTOCTREE).save(png, optimize=True)
    return png


def main() -> None:
    from eval.report import write_report

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shape", choices=sorted(SHAPES), default="harnesses")
    ap.add_argument("--out", type=Path, required=True, help="the sweep goes to OUT/<shape> (replaced)")
    ap.add_argument("--failing", type=float, default=0.01, help="the share of jobs that are not results (errored, unfinished)")
    ap.add_argument("--screenshots", type=Path, help="write report_<shape>.png (the first screen), report_<shape>_per_task.png "
                    "and report_<shape>_job.png (a RunningTab job's Deliverable section) here")
    args = ap.parse_args()
    sdir = args.out.resolve() / args.shape
    shutil.rmtree(sdir, ignore_errors=True)
    t0 = time.perf_counter()
    fabricate(sdir, SHAPES[args.shape], failing=args.failing)
    jobs = sum(b.jobs for b in SHAPES[args.shape])
    print(f"fabricated {jobs:,} records ({args.failing:.0%} not results) in {time.perf_counter() - t0:.1f} s")
    t0 = time.perf_counter()
    report = write_report(sdir)
    index = report / "index.html"
    print(f"report in {time.perf_counter() - t0:.1f} s; index.html {index.stat().st_size / 1e6:.2f} MB: {index}")
    if args.screenshots:
        shots = [screenshot(index, args.screenshots / f"report_{args.shape}.png"),
                 screenshot(index, args.screenshots / f"report_{args.shape}_per_task.png", "per-task")]
        job = next(p for p in sorted((report / "jobs").iterdir()) if "__runningtab__" in p.name and (sdir / p.stem / "scores.json").is_file())
        shots.append(screenshot(job, args.screenshots / f"report_{args.shape}_job.png", "deliverable"))
        print("screenshots: " + ", ".join(str(p) for p in shots))


if __name__ == "__main__":
    main()
