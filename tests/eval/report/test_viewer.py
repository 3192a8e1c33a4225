"""The report's viewer: tool results as the model saw them (the loop's own context management), the
tab panel as it stood at a turn, the jobs index's filters and the side-by-side page, asserted on the
DOM headless Chromium builds from scripted job records (bench/bench_viewer.py writes them)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from bench.bench_viewer import write_scripted_job
from envs.context import manage_context
from envs.harness_texts import CONTEXT_PLACEHOLDER
from eval.report import write_report
from eval.report.load import load_sweep
from eval.report.pages.viewer_index import outcome_tags
from eval.report.pages.viewer_turns import seen_messages
from tab.render import render_tab
from tests.eval.report.test_html import CHROMIUM, open_page

browser = pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed (Debian: apt-get install -y chromium)")
RT, DCI = "wb__t1__runningtab__m1__s0", "wb__t1__dci__m1__s0"
PAYLOAD = '</script><img src=x onerror="document.title=\'pwned\'"><b id="injected">x</b>'


def _run(turns: int, chars: int) -> list[dict]:
    msgs = [{"role": "system", "content": "s", "turn": 0}, {"role": "user", "content": "u", "turn": 0}]
    for t in range(1, turns + 1):
        msgs.append({"role": "assistant", "content": None, "turn": t, "tool_calls": []})
        msgs.append({"role": "tool", "content": f"{t}:" + "x" * chars, "appendix": "", "turn": t})
    return msgs


def test_tool_results_as_the_model_saw_them_at_each_call() -> None:
    msgs = _run(30, 25_000) + [{"role": "assistant", "content": "done", "turn": 31}]
    msgs.insert(len(msgs) - 1, {"role": "tool", "content": "late", "appendix": "", "turn": 30})
    seen = seen_messages(msgs, 3)
    tools = [i for i, m in enumerate(msgs) if m["role"] == "tool"]
    first = seen[tools[0]]
    assert first.seen is not None and len(first.seen) < len(first.full) and first.seen.startswith(first.full[:20_000])
    assert "Truncated" in first.seen and first.changed
    cleared = [i for i in tools if seen[i].cleared_at is not None]
    assert cleared, "30 results of 25,000 characters pass the 240,000 of level 3"
    for i in cleared:  # the model saw the placeholder from that call on, and the capped text before it
        calls = {m["turn"]: a for a, m in enumerate(msgs) if m["role"] == "assistant"}
        at = calls[seen[i].cleared_at]
        assert manage_context(msgs[:at], 3)[i]["content"] == CONTEXT_PLACEHOLDER
        assert manage_context(msgs[: calls[seen[i].cleared_at - 1]], 3)[i]["content"] == seen[i].seen
    assert all(seen[i].cleared_at is None for i in tools if msgs[i]["turn"] > 30 - 12)
    assert all(s.cleared_at is None for s in seen_messages(msgs, 2))  # level 2 caps, never clears
    ended = seen_messages(_run(3, 10), 1)
    assert ended[-1].seen is None and ended[-3].seen == ended[-3].full  # the last result never reached the model


def _replayed(msgs: list[dict], level: int) -> list[tuple[str | None, int | None]]:
    """What the model saw of each message, by `manage_context` over the list at every model call."""
    seen: list[list] = [[None if m["role"] == "tool" else str(m.get("content") or ""), None] for m in msgs]
    for a in [a for a, m in enumerate(msgs) if m["role"] == "assistant"][1:]:
        view = manage_context(msgs[:a], level)
        for i in range(a):
            if msgs[i]["role"] != "tool":
                continue
            if seen[i][0] is None:
                seen[i][0] = view[i]["content"]
            elif seen[i][1] is None and view[i]["content"] == CONTEXT_PLACEHOLDER and view[i] is not msgs[i]:
                seen[i][1] = msgs[a]["turn"]
    return [tuple(s) for s in seen]


@pytest.mark.parametrize("level", [0, 1, 2, 3])
def test_what_the_model_saw_is_manage_context_at_every_call(level: int) -> None:
    msgs = _run(40, 25_000)[:-1] + [{"role": "user", "content": "go on", "turn": 40}]  # a turn that ends on a user message
    msgs += [{"role": "assistant", "content": None, "turn": 41, "tool_calls": []},
             {"role": "tool", "content": "y" * 60_000, "appendix": "", "turn": 41, "name": "bash"},
             {"role": "assistant", "content": "done", "turn": 42}]
    assert [(s.seen, s.cleared_at) for s in seen_messages(msgs, level)] == _replayed(msgs, level)


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    sdir = tmp_path_factory.mktemp("viewer") / "s"
    write_scripted_job(sdir, "dci", 16, 6)
    rt = write_scripted_job(sdir, "runningtab", 16, 6)
    write_scripted_job(sdir, "runningtab", 9, 3, seed=1, result={"stop_reason": "env_error", "error": "OSError: disk"})
    write_scripted_job(sdir, "dci", 9, 3, task="t2", result={"sandbox": "none"})
    old = write_scripted_job(sdir, "runningtab", 9, 3, task="t2", context_level=None)  # a record from before the fields
    res = json.loads((old / "result.json").read_text())
    del res["sandbox"]
    (old / "result.json").write_text(json.dumps(res))
    traj = [json.loads(line) for line in (rt / "trajectory.jsonl").read_text().splitlines()]
    traj[-2]["content"] = PAYLOAD + traj[-2]["content"]  # agent-controlled text in a tool result ...
    (rt / "trajectory.jsonl").write_text("".join(json.dumps(m) + "\n" for m in traj))
    tab = json.loads((rt / "tab.json").read_text())
    tab["read_log"][0]["excerpt"] += PAYLOAD  # ... and in the read log
    (rt / "tab.json").write_text(json.dumps(tab))
    return write_report(sdir)


def _panel(dom: str) -> str:
    m = re.search(r'<aside class="panel" id="tabpanel"[^>]*>(.*?)</aside>', dom, re.DOTALL)
    assert m is not None, "no tab panel"
    return m.group(1)


@browser
@pytest.mark.slow
def test_tab_panel_shows_the_tab_as_it_stood_at_each_turn(report: Path, tmp_path: Path) -> None:
    tab = json.loads((report.parent / RT / "tab.json").read_text())
    read_turns = sorted({e["turn"] for e in tab["read_log"]})
    last = max(e["turn"] for e in tab["events"])
    for k in (1, read_turns[1], read_turns[1] - 1, 8, last):
        dom, console = open_page(f"{(report / 'jobs' / f'{RT}.html').as_uri()}#t{k}", tmp_path / f"p{k}")
        assert console == []
        panel = _panel(dom)
        assert f"Tab at turn {k} (of " in panel
        assert re.findall(r'<li class="entry[^"]*" data-id="(L\d+)"', panel) == [e["id"] for e in tab["read_log"] if e["turn"] <= k]
        new = re.findall(r'<li class="entry new" data-id="(L\d+)"', panel)
        assert new == [e["id"] for e in tab["read_log"] if e["turn"] == k]
        expected = render_tab(tab, upto_turn=k).splitlines()  # the report's text rendering agrees
        for head in ("(A) Requirements:", "(B) Read log:", "(B) Candidates:"):
            line = next(x for x in expected if x.startswith(head))
            assert f"<h4>{line}</h4>" in panel, (k, line)
        assert f'class="turn current" id="t{k}"' in dom
    assert 'data-id="r2" data-status="done"' in panel and 'data-id="r1" data-status="open"' in panel
    assert "Review at t8 (tool)" in panel and "Finish check at t16 (open)" in panel


@browser
def test_job_page_shows_what_the_model_saw_and_the_full_text(report: Path, tmp_path: Path) -> None:
    dom, console = open_page(report / "jobs" / f"{RT}.html", tmp_path / "p")
    assert console == []
    traj = [json.loads(line) for line in (report.parent / RT / "trajectory.jsonl").read_text().splitlines()]
    big = [m for m in traj if m["role"] == "tool" and len(m["content"]) > 20_000]
    assert big, "the scripted job has a result over the 20,000-character cap"
    assert "the model saw 20,0" in dom and f"of {len(big[0]['content']):,} characters (context level 3)" in dom
    assert f"full text ({len(big[0]['content']):,} characters)" in dom
    assert "never sent to the model" not in dom  # every result here was followed by a model call
    old, _ = open_page(report / "jobs" / "wb__t2__runningtab__m1__s0.html", tmp_path / "p2")
    assert "context level 3 (not in the record: the runner" in old
    assert f"<title>{RT}</title>" in dom and '<b id="injected">' not in dom and "<img src" not in dom
    assert "&lt;/script&gt;&lt;img src=x" in dom  # shown as text, in the trajectory and the panel's read log


@browser
@pytest.mark.slow
def test_index_filters_hide_the_jobs_that_do_not_match(report: Path, tmp_path: Path) -> None:
    tags = {j.job_id: outcome_tags(j) for j in load_sweep(report.parent).jobs}
    assert tags["wb__t1__runningtab__m1__s1"][:2] == ["env_error", "errored"]
    assert "unsandboxed" in tags["wb__t2__dci__m1__s0"] and tags["wb__t2__runningtab__m1__s0"] == ["finished", "scored"]
    jobs = load_sweep(report.parent).jobs
    for k, (frag, want) in enumerate({
        "method=dci": {j.job_id for j in jobs if j.method == "dci"},
        "outcome=errored": {"wb__t1__runningtab__m1__s1"},
        "outcome=unsandboxed": {"wb__t2__dci__m1__s0"},
        "method=runningtab&seed=0&outcome=finished": {RT, "wb__t2__runningtab__m1__s0"},
    }.items()):
        dom, console = open_page(f"{(report / 'index.html').as_uri()}#{frag}", tmp_path / f"p{k}")
        assert console == []
        rows = re.findall(r'<tr (data-benchmark="[^>]*)>(.*?)</tr>', re.search(r'id="jobs-table">(.*?)</table>', dom, re.DOTALL).group(1))
        shown = {re.search(r"jobs/([^\"]+)\.html", body).group(1) for attrs, body in rows if " hidden" not in attrs}
        assert shown == want, frag
        assert f"{len(want)} of {len(jobs)} jobs shown" in dom
        for name, value in (kv.split("=") for kv in frag.split("&")):
            assert re.search(rf'<select name="{name}"[^>]*>', dom)
            assert f'<option value="{value}">{value}</option>' in dom


@browser
@pytest.mark.slow
def test_side_by_side_aligns_turns_and_says_where_values_went(report: Path, tmp_path: Path) -> None:
    page = report / "compare" / f"{RT}__vs__dci.html"
    dom, console = open_page(page, tmp_path / "p")
    assert console == []
    turns = {side: {json.loads(line)["turn"] for line in (report.parent / j / "trajectory.jsonl").read_text().splitlines()}
             for side, j in (("a", DCI), ("b", RT))}
    rows = re.findall(r'<tr data-turn="(\d+)"><td data-side="a">(.*?)</td><td data-side="b">(.*?)</td></tr>', dom, re.DOTALL)
    assert [int(n) for n, _, _ in rows] == sorted(turns["a"] | turns["b"])
    for n, a, b in rows:
        for side, cell in (("a", a), ("b", b)):
            got = re.findall(r'<section class="turn" data-turn="(\d+)"', cell)
            assert got == ([n] if int(n) in turns[side] else []), (n, side)
    rubrics = re.search(r'<table id="rubrics">(.*?)</table>', dom, re.DOTALL).group(1)
    assert re.findall(r'<tr data-rubric="(\d+)">', rubrics) == ["0", "1"]  # 2 passed in both, 3 has no values
    budget = re.search(r'<tr data-rubric="0">(.*?)</tr>', rubrics, re.DOTALL).group(1)
    assert budget.count('<li class="lost">55,000: shown t') == 2 and "· read L1 · lost" in budget  # only RunningTab has a read log
    job, _ = open_page(report / "jobs" / f"{RT}.html", tmp_path / "p2")
    assert f'href="../compare/{RT}__vs__dci.html"' in job
    dci, console = open_page(report / "jobs" / f"{DCI}.html", tmp_path / "p3")
    assert console == [] and f'href="../compare/{RT}__vs__dci.html"' in dci
    assert "This job has no tab." in _panel(dci) and 'class="turn current" id="t17"' in dci  # the last turn by default


@browser
def test_screenshot_of_the_viewer_is_not_blank(report: Path, tmp_path: Path) -> None:
    shot = tmp_path / "viewer.png"
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
           f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1400,900", f"--screenshot={shot}",
           (report / "jobs" / f"{RT}.html").as_uri()]
    subprocess.run(cmd, capture_output=True, timeout=90, check=True)
    import matplotlib.image

    pixels = matplotlib.image.imread(shot)
    assert pixels.shape[:2] == (900, 1400)
    colors = {tuple(p) for p in pixels[::7, ::7, :3].reshape(-1, 3).round(2).tolist()}
    assert len(colors) > 20, "the page rendered blank"
