"""Recorded sweeps for the report tests, written job directory by job directory with known contents.

No tests here: the builders are shared by tests/eval/report/test_tables.py, tests/eval/report/test_fates.py and
tests/eval/report/test_html.py. Tabs are built with the tab's own `TabState`, so their records have the real
format; scores are written the way the rule judge writes them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tab.state import TabState

FULL = {"capture": True, "review": True, "evidence_check": True, "finish_check": True}


def job_id(benchmark: str, task: str, method: str, model: str, seed: int) -> str:
    return f"{benchmark}__{task}__{method}__{model}__s{seed}"


def rubric_scores(texts: list[str], passed: str, checks: dict[int, dict[str, Any]] | None = None) -> dict[str, Any]:
    """scores.json of a rubric task; `passed` is a string of 0/1 per rubric."""
    assert len(texts) == len(passed)
    items = []
    for i, (text, p) in enumerate(zip(texts, passed, strict=True)):
        item = {"kind": "rubric", "index": i, "text": text, "passed": p == "1", "judged": True}
        if checks and i in checks:
            item["check"] = checks[i]
        items.append(item)
    share = passed.count("1") / len(passed)
    return {"judge": "rule", "metrics": {"pass_rate": share, "tcr70": 1.0 if share >= 0.7 else 0.0}, "items": items}


def evaluator_view(traj: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Like the tab's: its calls, their results and the status lines removed."""
    out = []
    for m in traj:
        calls = m.get("tool_calls") or []
        if str(m.get("name", "")).startswith("tab_") or (calls and all(c["function"]["name"].startswith("tab_") for c in calls)):
            continue
        if m.get("appendix"):
            m = {**m, "content": m["content"][: -len(m["appendix"])], "appendix": ""}
        out.append(m)
    return out


def write_job(
    sdir: Path,
    benchmark: str,
    task: str,
    method: str,
    model: str,
    seed: int,
    scores: dict[str, Any] | None,
    chars_read: int = 0,
    tab: dict[str, Any] | None = None,
    tab_settings: dict[str, bool] | None = None,
    trajectory: list[dict[str, Any]] | None = None,
    deliverable: dict[str, str] | None = None,
    final_answer: str = "",
    model_cfg: dict[str, Any] | None = None,
    shown: list[tuple[int, str, str]] | None = None,
) -> Path:
    """One constructed job record; `shown`: its shown log as (turn, path, excerpt), the workspace content
    the agent received (none: a record from before the shown log existed)."""
    jid = job_id(benchmark, task, method, model, seed)
    d = sdir / jid
    d.mkdir(parents=True)
    method_cfg = {"name": method, "todo": False, "self_refine": False, "tab": tab_settings, "texts": {}}
    config = {"method": method_cfg, "model": model_cfg or {"kind": "scripted", "name": model}, "seed": seed}
    job = {"job_id": jid, "benchmark": benchmark, "task_id": task, "method": method, "model": model, "seed": seed, "config": config}
    (d / "job.json").write_text(json.dumps(job))
    traj = trajectory or [
        {"role": "system", "content": "sys", "turn": 0},
        {"role": "user", "content": f"Do task {task}.", "turn": 0},
        {"role": "assistant", "content": "done", "turn": 1},
    ]
    (d / "trajectory.jsonl").write_text("".join(json.dumps(m) + "\n" for m in traj))
    view = {"task": f"Do task {task}.", "messages": evaluator_view(traj), "final_answer": final_answer}
    (d / "evaluator_view.json").write_text(json.dumps(view))
    for rel, text in (deliverable or {}).items():
        (d / "deliverable" / rel).parent.mkdir(parents=True, exist_ok=True)
        (d / "deliverable" / rel).write_text(text)
    if tab is not None:
        (d / "tab.json").write_text(json.dumps(tab))
    if shown is not None:
        excerpts = [{"turn": t, "path": p, "excerpt": e} for t, p, e in shown]
        (d / "shown.json").write_text(json.dumps({"excerpts": excerpts}))
    result = {"job_id": jid, "stop_reason": "finished", "turns": 1, "tokens_in": 0, "tokens_out": 0, "cost": 0.0,
              "chars_read": chars_read, "final_answer": final_answer, "wall_s": 0.1, "error": None,
              "deliverable": sorted(deliverable or {}), "deleted": []}
    (d / "result.json").write_text(json.dumps(result))
    if scores is not None:
        (d / "scores.json").write_text(json.dumps(scores))
    return d


# --------------------------------------------------------------------------- sweep A: the numbers
# Benchmark "wb": three tasks with 4, 2 and 4 rubrics (so pooled and mean rates differ).
RUBRIC_COUNT = {"t1": 4, "t2": 2, "t3": 4}
# (method, model, seed) -> pass pattern per task. runningtab/m2 has no seed-1 job for t3.
PATTERNS: dict[tuple[str, str, int], dict[str, str]] = {
    ("dci", "m1", 0): {"t1": "1100", "t2": "10", "t3": "0000"},
    ("dci", "m1", 1): {"t1": "1110", "t2": "11", "t3": "1000"},
    ("runningtab", "m1", 0): {"t1": "1111", "t2": "11", "t3": "1100"},
    ("runningtab", "m1", 1): {"t1": "1110", "t2": "10", "t3": "1110"},
    ("runningtab_no_review", "m1", 0): {"t1": "1100", "t2": "11", "t3": "1000"},
    ("runningtab_no_review", "m1", 1): {"t1": "1111", "t2": "10", "t3": "1100"},
    ("dci", "m2", 0): {"t1": "1000", "t2": "00", "t3": "1100"},
    ("dci", "m2", 1): {"t1": "1000", "t2": "10", "t3": "1000"},
    ("runningtab", "m2", 0): {"t1": "1110", "t2": "10", "t3": "1100"},
    ("runningtab", "m2", 1): {"t1": "1111", "t2": "11"},
}
# Reading volume: t1 light, t2 middle, t3 heavy for every model (RunningTab reads a bit more).
CHARS = {("dci", "t1"): 1000, ("dci", "t2"): 5000, ("dci", "t3"): 20000}
# Tab contents of the m1 runningtab jobs, in order (s0 t1, s0 t2, s0 t3, s1 t1, s1 t2, s1 t3):
# requirements, read-log paths (100 chars each), candidates.
TABS_M1 = [
    (2, ["a", "b", "a"], 10),
    (4, ["a"], 20),
    (3, ["a", "b", "c", "d"], 30),
    (5, ["b", "c"], 40),
    (1, [], 50),
    (3, ["a", "b"], 60),
]


def simple_tab(n_req: int, paths: list[str], n_cand: int, settings: dict[str, bool]) -> TabState:
    st = TabState()
    ids = [st.add_requirement(f"requirement {i}", 1).id for i in range(n_req)]
    st.event(1, "add", ids=ids, texts=[f"requirement {i}" for i in range(n_req)])
    st.add_candidates([f"cand/{i}.md" for i in range(n_cand)], "find .", 2)
    for k, p in enumerate(paths):
        st.add_read(f"{p}.md", f"cat {p}.md", 3 + k, f"{k}{p}".ljust(100, "."))
    return st


def reviewed_tab() -> TabState:
    """The m1 s0 t1 runningtab tab: two reviews (1 of 2 open shown with a line, then 1 of 1), a
    candidate opened, a requirement resolved citing an entry, a tab_show, then the finish check."""
    st = TabState()
    st.add_requirement("total budget", 1)
    st.add_requirement("supplier name", 1)
    st.event(1, "add", ids=["r1", "r2"], texts=["total budget", "supplier name"])
    st.add_candidates(["a.md", *(f"cand/{i}.md" for i in range(10))], "find .", 2)  # a.md is opened next
    st.add_read("a.md", "cat a.md", 3, "The total budget is 55,000".ljust(100, "."))
    st.add_read("b.md", "cat b.md", 4, "misc".ljust(100, "."))
    st.event(5, "review", source="tool", open=["r1", "r2"], lines={"r1": ["L1"], "r2": []}, candidates={"r1": [], "r2": []})
    st.requirements["r2"].status, st.requirements["r2"].entries, st.requirements["r2"].turn_resolved = "done", ["L1"], 6
    st.event(6, "resolve", id="r2", status="done", entries=["L1"], reason=None, previous="open")
    st.event(7, "show", entry="L1")
    st.add_read("a.md", "sed -n 1,5p a.md", 8, "Supplier: Acme Corp".ljust(100, "."))
    st.event(9, "review", source="tool", open=["r1"], lines={"r1": ["L1", "L3"]}, candidates={"r1": []})
    st.event(10, "finish_check", case="open", text="r1 is still open.")
    return st


def build_sweep_a(sdir: Path) -> Path:
    """The numbers sweep (see the module constants); every job of every cell is written."""
    m1_rt = iter(TABS_M1)
    for (method, model, seed), tasks in PATTERNS.items():
        for task, passed in tasks.items():
            texts = [f"{task} rubric {'abcd'[i]}" for i in range(RUBRIC_COUNT[task])]  # no values
            chars = CHARS[("dci", task)] + (2000 if method != "dci" else 0)
            settings = None if method == "dci" else {**FULL, "review": method != "runningtab_no_review"}
            tab = None
            if method == "runningtab" and model == "m1":
                n_req, paths, n_cand = next(m1_rt)
                st = reviewed_tab() if (seed, task) == (0, "t1") else simple_tab(n_req, paths, n_cand, settings)
                tab = st.to_record(settings)
            elif method == "runningtab":  # m2: 1, 1, 2, 2, 9 requirements; one entry; 0, 0, 5, 5, 5 candidates
                n = {(0, "t1"): (1, 0), (0, "t2"): (1, 0), (0, "t3"): (2, 5), (1, "t1"): (2, 5), (1, "t2"): (9, 5)}[(seed, task)]
                st = simple_tab(n[0], ["a"], n[1], settings)
                if (seed, task) == (0, "t1"):  # one review, its one open requirement shown beside no line
                    st.event(4, "review", source="tool", open=["r1"], lines={"r1": []}, candidates={"r1": []})
                tab = st.to_record(settings)
            elif method == "runningtab_no_review":
                tab = simple_tab(1, [], 0, settings).to_record(settings)
            write_job(sdir, "wb", task, method, model, seed, rubric_scores(texts, passed), chars_read=chars,
                      tab=tab, tab_settings=settings, shown=[])
    # An answer benchmark with two tasks, DCI and RunningTab, m1, one seed.
    for method, accs in {"dci": [(1, 1), (0, 1)], "runningtab": [(1, 1), (1, 1)]}.items():
        for k, (a0, a1) in enumerate(accs):
            scores = {"judge": "officeqa", "metrics": {"acc0": float(a0), "acc1": float(a1)},
                      "items": [{"kind": "answer", "index": 0, "text": "q", "passed": bool(a0)}]}
            write_job(sdir, "qa", f"q{k}", method, "m1", 0, scores, chars_read=100)
    # An unfinished job (no result, no scores) and a directory that is not a job.
    (sdir / "wb__t1__dci__m3__s0").mkdir()
    (sdir / "wb__t1__dci__m3__s0" / "job.json").write_text(json.dumps(
        {"job_id": "wb__t1__dci__m3__s0", "benchmark": "wb", "task_id": "t1", "method": "dci", "model": "m3", "seed": 0, "config": {}}))
    (sdir / "wandb").mkdir()
    ledger = [{"job_id": "wb__t1__dci__m3__s0", "status": "failed", "error": "RayActorError: died"},
              {"job_id": "wb__t1__dci__m1__s0", "status": "failed", "error": "timeout"},
              {"job_id": "wb__t1__dci__m1__s0", "status": "ok", "error": None}]
    (sdir / "jobs.jsonl").write_text("".join(json.dumps(e) + "\n" for e in ledger) + "not json\n")
    return sdir


# --------------------------------------------------------------------------- sweep B: where values went
RUBRICS_B = [
    "The report states the total budget of 55,000.",
    'The report names the supplier "Acme Corp".',
    'The growth rate is 12.5% and the region is "North".',
    "The report has a summary section.",  # no values
    "Headcount is 140.",
    "The summary lists every office.",  # a built-in rubric: its values are its check's
]
CHECKS_B = {5: {"type": "contains", "values": ["Oslo", "Bergen"]}}
EXCERPTS_B = {"a.md": "Budget total: 55,000 NOK", "b.md": "Supplier list: Acme Corp", "c.md": "Offices: Oslo"}


def _tool(turn: int, name: str, content: str, appendix: str = "", call_id: str = "") -> list[dict[str, Any]]:
    cid = call_id or f"c{turn}"
    return [
        {"role": "assistant", "content": None, "turn": turn,
         "tool_calls": [{"id": cid, "type": "function", "function": {"name": name, "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": cid, "name": name, "content": content + appendix, "appendix": appendix,
         "is_error": False, "chars": len(content), "turn": turn},
    ]


def build_sweep_b(sdir: Path, model_cfg: dict[str, Any] | None = None) -> Path:
    """One DCI and one RunningTab job of task t9 (model m1, seed 0) with constructed observations.

    DCI saw 55,000, 12.5%, North, Oslo, Bergen and 140 in one read; its deliverable keeps 55000,
    12.5%, 140 and Oslo. RunningTab read a.md, b.md and c.md (the read log and the shown log), saw
    Bergen only in a listing and 140 only in a status line, neither of which is workspace content it
    was shown; its deliverable keeps none of the values.
    """
    head = [{"role": "system", "content": "sys", "turn": 0}, {"role": "user", "content": "Write the report.", "turn": 0}]
    dci_obs = "Budget total: 55,000 NOK\nGrowth: 12.5%\nRegion: North\nOffices: Oslo, Bergen\nHeadcount 140"
    write_job(sdir, "wb", "t9", "dci", "m1", 0, rubric_scores(RUBRICS_B, "000010", CHECKS_B),
              trajectory=head + _tool(1, "read", dci_obs) + [{"role": "assistant", "content": "done", "turn": 2}],
              deliverable={"output/report.md": "Total budget 55000. Growth 12.5%. Headcount 140. Offices: Oslo."},
              model_cfg=model_cfg, shown=[(1, "data.md", dci_obs)])
    st = TabState()
    st.add_requirement("Total budget", 1)
    st.event(1, "add", ids=["r1"], texts=["Total budget"])
    traj = head + _tool(1, "tab_add", "Added 1 requirement to the tab:\nr1: Total budget")
    for turn, (path, text) in enumerate(EXCERPTS_B.items(), start=2):
        st.add_read(path, f"cat {path}", turn, text)
        traj += _tool(turn, "bash", text, appendix=f"\n[tab] +L{turn - 1} {path} · Headcount 140")
    st.add_candidates(["Bergen/x.md"], "ls", 5)
    traj += _tool(5, "bash", "Bergen/\nc.md") + _tool(6, "bash", "999") + [{"role": "assistant", "content": "done", "turn": 7}]
    write_job(sdir, "wb", "t9", "runningtab", "m1", 0, rubric_scores(RUBRICS_B, "001010", CHECKS_B),
              tab=st.to_record(FULL), tab_settings=FULL, trajectory=traj,
              deliverable={"output/report.md": "The total is 999."}, model_cfg=model_cfg,
              shown=[(turn, path, text) for turn, (path, text) in enumerate(EXCERPTS_B.items(), start=2)])
    return sdir
