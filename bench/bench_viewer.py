"""Hand-run benchmark of the report's viewer pages (numbers go in docs/report.md, "Viewer").

    .venv/bin/python bench/bench_viewer.py                    # 300 turns, 50 read-log entries
    .venv/bin/python bench/bench_viewer.py --turns 100 --entries 20

Writes a sweep of two scripted jobs on one task (DCI and RunningTab, same seed) with the given
turns and read-log entries (tool results of 1,500-30,000 characters, so context level 3 caps and
compacts), then times the job page, the side-by-side page and the whole report, and prints page
sizes. `write_scripted_job` is also what the viewer's browser tests run on.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from tab.state import TabState

FULL = {"capture": True, "review": True, "evidence_check": True, "finish_check": True}
RUBRICS = ["The report states the total budget of 55,000.", 'The report names the supplier "Acme Corp".',
           "Headcount is 140.", "The report has a summary section."]
FACTS = ["Budget total: 55,000 NOK", "Supplier: Acme Corp", "Headcount 140"]
WORDS = "travel hotel meal invoice approval budget supplier order amount status policy report".split()


def _text(rng: random.Random, chars: int) -> str:
    words, n = [], 0
    while n < chars:
        words.append(rng.choice(WORDS) + ("\n" if rng.random() < 0.1 else ""))
        n += len(words[-1]) + 1
    return " ".join(words)[:chars]


def _call(turn: int, name: str, args: dict[str, Any], content: str, appendix: str) -> list[dict[str, Any]]:
    cid = f"c{turn}"
    body = content + ("\n" + appendix if appendix else "")
    return [
        {"role": "assistant", "content": None, "turn": turn,
         "tool_calls": [{"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]},
        {"role": "tool", "tool_call_id": cid, "name": name, "content": body, "appendix": appendix, "is_error": False,
         "chars": len(content), "turn": turn},
    ]


def _script(turns: int, entries: int, tab: TabState | None, rng: random.Random, shown: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The trajectory; `tab` (when given) and `shown` (the shown log's excerpts) record what the
    environment would have captured."""
    traj: list[dict[str, Any]] = [{"role": "system", "content": "You work over the organization's files.", "turn": 0},
                                  {"role": "user", "content": "Write output/report.md on the budget.", "turn": 0}]
    read_turns = set(rng.sample(range(2, turns), min(entries, turns - 2)))
    fact_turns = dict(zip(sorted(read_turns)[:3], FACTS, strict=False))
    if tab is not None:
        texts = ["total budget", "supplier name", "headcount"]
        ids = [tab.add_requirement(t, 1).id for t in texts]
        tab.event(1, "add", ids=ids, texts=texts)
        traj += _call(1, "tab_add", {"requirements": texts}, "Added 3 requirements: " + ", ".join(ids), "")
    for t in range(2 if tab is not None else 1, turns + 1):
        if t in read_turns:
            path = f"docs/f{t}.md"
            size = 30_000 if t % 10 == 0 or t == min(read_turns) else rng.randint(1500, 4000)  # over the 20k cap
            content = (fact_turns.get(t, "") + "\n" + _text(rng, size)).strip()
            shown.append({"turn": t, "path": path, "excerpt": content})
            line = ""
            if tab is not None:
                entry = tab.add_read(path, f"cat {path}", t, content)
                line = f"[tab] +{entry.id} {path} · {len(tab.entries)} entries" if entry else ""
            traj += _call(t, "bash", {"command": f"cat {path}"}, content, line)
        else:
            paths = [f"docs/f{t + k}.md" for k in range(1, 4)]
            if tab is not None and tab.add_candidates(paths, "ls docs", t):
                line = f"[tab] {len(tab.candidates)} candidates"
            else:
                line = ""
            traj += _call(t, "bash", {"command": "ls docs"}, "\n".join(paths), line if tab is not None else "")
        if tab is not None and t == turns // 2:
            tab.event(t, "review", source="tool", open=["r1", "r3"], lines={"r1": ["L1"], "r3": []}, candidates={"r1": [], "r3": []})
            tab.requirements["r2"].status, tab.requirements["r2"].entries, tab.requirements["r2"].turn_resolved = "done", ["L2"], t
            tab.event(t, "resolve", id="r2", status="done", entries=["L2"], reason=None, previous="open")
    if tab is not None:
        tab.event(turns, "finish_check", case="open", text="r1, r3 are still open.")
    traj.append({"role": "assistant", "content": "The report is written.", "turn": turns + 1})
    return traj


def write_scripted_job(sdir: Path, method: str, turns: int, entries: int, seed: int = 0, task: str = "t1",
                       model: str = "m1", result: dict[str, Any] | None = None, context_level: int | None = 3) -> Path:
    """One job record as the runner writes it (`context_level` None: an older record without it)."""
    jid = f"wb__{task}__{method}__{model}__s{seed}"
    d = sdir / jid
    d.mkdir(parents=True)
    tab = TabState() if method != "dci" else None
    shown: list[dict[str, Any]] = []
    traj = _script(turns, entries, tab, random.Random(f"{seed}{task}"), shown)
    (d / "shown.json").write_text(json.dumps({"excerpts": shown}))
    config: dict[str, Any] = {"method": {"name": method, "tab": FULL if tab else None}, "seed": seed}
    if context_level is not None:
        config["agent"] = {"context_level": context_level}
    (d / "job.json").write_text(json.dumps({"job_id": jid, "benchmark": "wb", "task_id": task, "method": method,
                                            "model": model, "seed": seed, "config": config}))
    (d / "trajectory.jsonl").write_text("".join(json.dumps(m) + "\n" for m in traj))
    tab_msgs = [m for m in traj if m.get("name") == "tab_add" or "tab_add" in json.dumps(m.get("tool_calls"))]
    view = [{**m, "content": m["content"][: len(m["content"]) - len(m["appendix"]) - 1], "appendix": ""} if m.get("appendix") else m
            for m in traj if m not in tab_msgs]
    (d / "evaluator_view.json").write_text(json.dumps({"task": "Write the report.", "messages": view, "final_answer": ""}))
    if tab is not None:
        (d / "tab.json").write_text(json.dumps(tab.to_record(FULL)))
    (d / "deliverable" / "output").mkdir(parents=True)
    (d / "deliverable" / "output" / "report.md").write_text("# Report\n\nHeadcount 140.\n")
    reads = sum(m["chars"] for m in traj if m["role"] == "tool")
    res = {"job_id": jid, "stop_reason": "finished", "turns": turns + 1, "chars_read": reads, "final_answer": "",
           "sandbox": "bwrap", "error": None, **(result or {})}
    (d / "result.json").write_text(json.dumps(res))
    items = [{"kind": "rubric", "index": i, "text": r, "passed": i == 2, "judged": True} for i, r in enumerate(RUBRICS)]
    (d / "scores.json").write_text(json.dumps({"judge": "rule", "metrics": {"pass_rate": 0.25}, "items": items}))
    return d


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--turns", type=int, default=300)
    ap.add_argument("--entries", type=int, default=50)
    args = ap.parse_args()
    from eval.report import write_report
    from eval.report.load import load_sweep
    from eval.report.pages.jobpage import job_html
    from eval.report.pages.viewer_compare import compare_html

    with tempfile.TemporaryDirectory() as tmp:
        sdir = Path(tmp) / "bench"
        for method in ("dci", "runningtab"):
            write_scripted_job(sdir, method, args.turns, args.entries)
        sweep = load_sweep(sdir)
        dci, rt = sweep.job("wb__t1__dci__m1__s0"), sweep.job("wb__t1__runningtab__m1__s0")
        print(f"{args.turns} turns, {len(rt.tab['read_log'])} read-log entries, trajectory "
              f"{(rt.dir / 'trajectory.jsonl').stat().st_size / 1e6:.2f} MB")
        for name, build in (("job page", lambda: job_html(rt)), ("side-by-side page", lambda: compare_html(dci, rt))):
            times = []
            for _ in range(3):
                start = time.perf_counter()
                text = build()
                times.append(time.perf_counter() - start)
            print(f"{name}: {min(times):.2f} s (best of 3), {len(text.encode()) / 1e6:.2f} MB")
        start = time.perf_counter()
        out = write_report(sdir)
        browser = shutil.which("chromium") or shutil.which("chromium-browser")
        print(f"whole report (2 jobs, all analyses): {time.perf_counter() - start:.2f} s; "
              f"index {(out / 'index.html').stat().st_size / 1e3:.0f} kB")
        if browser:
            page_s, blank_s = _browser_s(browser, out, rt.job_id, tmp)
            print(f"headless Chromium, job page loaded, panel drawn, DOM dumped: {page_s:.2f} s (about:blank: {blank_s:.2f} s)")


def _browser_s(browser: str, out: Path, job_id: str, tmp: str) -> tuple[float, float]:
    """Seconds to open the job page in headless Chromium, and to open an empty page (the start-up)."""
    cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", f"--user-data-dir={tmp}/profile",
           "--dump-dom", (out / "jobs" / f"{job_id}.html").as_uri()]
    subprocess.run([*cmd[:-1], "about:blank"], capture_output=True, timeout=120)  # warm the profile
    start = time.perf_counter()
    subprocess.run([*cmd[:-1], "about:blank"], capture_output=True, timeout=120)
    blank = time.perf_counter() - start
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert 'id="tp-entries"' in done.stdout, "the tab panel did not render"
    return time.perf_counter() - start, blank


if __name__ == "__main__":
    main()
