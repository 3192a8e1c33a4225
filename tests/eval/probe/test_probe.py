"""The recovery probe asks with the tab's own review, `tab_show` schema and `tab_show` replies.

The probe rebuilds a finished job's tab from its record; what it shows the model must be what the
tab itself would have replied under the job's configuration (wording overrides included), not a
copy that drifts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from envs.protocol import ToolCall
from eval.judges.client import CachedLLM
from eval.probe.items import ProbeItem
from eval.probe.run import ProbeConfig, ask_with_show, review_context
from eval.report.load import Job
from runners.core.messages import AssistantMessage
from runners.core.record_types import JobMeta
from tab.config import TabConfig
from tests.tab.test_support import Session, write_files

FILES = {
    "policies/hotel.md": "Article 7 Hotel standards\nHotels up to 500 per night for staff.\n",
    "policies/meals.md": "Meal allowance\nBreakfast is included.\n",
    "archive/hotel_rates_2019.md": "old\n",
}
MASKED = "State the hotel standards per night: [V1] per night."
OVERRIDE = {"review_line": "  * {id} ({path}) {line}", "show_header": "== {id} {path} ({chars} chars)"}


def _session_and_job(tmp_path: Path, tab: dict[str, Any]) -> tuple[Session, ProbeItem]:
    ws = tmp_path / "ws"
    write_files(ws, FILES)
    s = Session(ws, TabConfig.coerce(tab))
    s.one("bash", command="find . -type f")
    s.one("bash", command="cat policies/hotel.md")  # L1
    s.one("read", path="policies/meals.md")  # L2
    jdir = tmp_path / "job"
    jdir.mkdir()
    (jdir / "tab.json").write_text(json.dumps(s.tab.record()), encoding="utf-8")
    job = Job(jdir, JobMeta("j1", "wb", "t1", "runningtab", "m1", 0, {"method": {"tab": tab}}), None, None)
    return s, ProbeItem(job, 0, MASKED, {}, [])


@pytest.mark.parametrize("tab", [{}, {"texts": OVERRIDE}], ids=["default", "override"])
def test_the_probe_shows_the_tabs_own_review(tmp_path: Path, tab: dict[str, Any]) -> None:
    s, item = _session_and_job(tmp_path, tab)
    context = review_context(item, ProbeConfig())
    s.tab.call("tab_add", {"requirements": [MASKED]}, 9)  # the masked requirement, the only one open
    reply = s.tab.call("tab_review", {}, 9).content
    assert "policies/hotel.md" in reply and "archive/hotel_rates_2019.md" in reply
    assert reply in context
    s.close()


class Asking:
    """A model that opens L1, then an unknown entry, then answers; it keeps what it was sent."""

    name = "asking"

    def __init__(self) -> None:
        self.sent: list[tuple[list[dict[str, Any]], list[dict[str, Any]]]] = []

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AssistantMessage:
        self.sent.append(([dict(m) for m in messages], tools))
        if len(self.sent) == 1:
            return AssistantMessage(None, [ToolCall("a", "tab_show", '{"entry_id": "l1"}'),
                                           ToolCall("b", "tab_show", '{"entry_id": "L9"}')])
        return AssistantMessage('{"[V1]": "500"}')


@pytest.mark.parametrize("tab", [{}, {"texts": OVERRIDE}], ids=["default", "override"])
def test_the_probe_offers_the_tabs_tab_show_and_answers_as_it_does(tmp_path: Path, tab: dict[str, Any]) -> None:
    s, item = _session_and_job(tmp_path, tab)
    model = Asking()
    answer, chars, opened = ask_with_show(CachedLLM(model, {"name": model.name}, tmp_path / "cache"), item, "context", ProbeConfig())
    assert answer == '{"[V1]": "500"}' and opened == ["L1"]
    offered = [t for t in s.tab.tools() if t["function"]["name"] == "tab_show"]
    assert model.sent[0][1] == offered
    replies = [m["content"] for m in model.sent[1][0] if m["role"] == "tool"]
    assert replies == [s.tab.call("tab_show", {"entry_id": "L1"}, 9).content, s.tab.call("tab_show", {"entry_id": "L9"}, 9).content]
    assert chars == len(replies[0])
    s.close()


def test_the_cached_client_keeps_tool_calls_and_the_judges_keys(tmp_path: Path) -> None:
    """One cached client for judges and probe: tool calls come back from the cache; a tool-less call
    hashes as the judge's always did, so judge caches written before stay valid."""
    import hashlib

    model = Asking()
    llm = CachedLLM(model, {"name": model.name}, tmp_path, serial=False)
    asked = [{"role": "user", "content": "q"}]
    tools = [{"type": "function", "function": {"name": "tab_show"}}]
    first, again = llm.reply(asked, tools), llm.reply(asked, tools)
    assert llm.calls == 1 and len(model.sent) == 1
    assert [(c.id, c.name, c.arguments) for c in again.tool_calls] == [(c.id, c.name, c.arguments) for c in first.tool_calls]
    assert again.content is None
    judge_key = hashlib.sha256(json.dumps({"model": llm.identity, "messages": asked}, sort_keys=True).encode()).hexdigest()
    assert llm.key(asked) == llm.key(asked, []) == judge_key != llm.key(asked, tools)
    assert llm.complete(asked) == '{"[V1]": "500"}' and llm.complete(asked) == '{"[V1]": "500"}' and llm.calls == 2
