"""Runtime context management levels 0-3 (SPEC section 2)."""

from __future__ import annotations

import copy

import pytest

from envs.context import manage_context

ALERT20 = "[SYSTEM ALERT: Exceeded 20k characters. Truncated.]"
PLACEHOLDER_START = "[Old tool result cleared"


def run(turns: int, chars: int, user_every: int = 0) -> list[dict]:
    """system + task, then `turns` rounds of one assistant call and one tool result of `chars` characters."""
    msgs: list[dict] = [{"role": "system", "content": "sys", "turn": 0}, {"role": "user", "content": "task", "turn": 0}]
    for t in range(1, turns + 1):
        msgs.append({"role": "assistant", "content": None, "turn": t, "tool_calls": [
            {"id": f"c{t}", "type": "function", "function": {"name": "bash", "arguments": f'{{"command": "cat f{t}"}}'}}]})
        msgs.append({"role": "tool", "tool_call_id": f"c{t}", "turn": t, "content": f"<{t}>" + "x" * (chars - len(f"<{t}>"))})
        if user_every and t % user_every == 0:
            msgs.append({"role": "user", "content": "nudge", "turn": t})
    return msgs


def cleared_turns(view: list[dict]) -> list[int]:
    return [m["turn"] for m in view if m["role"] == "tool" and m["content"].startswith(PLACEHOLDER_START)]


def test_level0_is_the_full_list():
    msgs = run(30, 60_000)
    assert manage_context(msgs, 0) == msgs


@pytest.mark.parametrize("level,cap,k", [(1, 50_000, 50), (2, 20_000, 20), (3, 20_000, 20)])
def test_caps(level, cap, k):
    msgs = run(2, cap + 5_000)
    msgs[3]["content"] = "y" * cap  # exactly at the cap: untouched
    view = manage_context(msgs, level)
    assert view[3] is msgs[3]
    capped = view[5]["content"]
    assert capped == msgs[5]["content"][:cap] + "\n" + f"[SYSTEM ALERT: Exceeded {k}k characters. Truncated.]"
    assert [m["content"] for m in view if m["role"] != "tool"] == [m["content"] for m in msgs if m["role"] != "tool"]


def test_cap_keeps_the_plugin_appendix():
    msgs = run(1, 10)
    status = "[tab] 2 requirements (1 open) · 3 read-log entries (2 files)"
    msgs[3]["content"] = "z" * 30_000 + "\n" + status
    msgs[3]["appendix"] = status
    assert manage_context(msgs, 3)[3]["content"] == "z" * 20_000 + "\n" + ALERT20 + "\n" + status


def test_level3_compacts_after_240k_keeping_the_latest_12_turns():
    # 10,000 characters a turn: 240,000 after turn 24 is not *more than* 240,000, so nothing yet
    assert cleared_turns(manage_context(run(24, 10_000), 3)) == []
    view = manage_context(run(25, 10_000), 3)
    assert cleared_turns(view) == list(range(1, 14))  # all but turns 14..25
    kept = [m for m in view if m["role"] == "tool" and m["turn"] >= 14]
    assert all(m["content"].startswith(f"<{m['turn']}>") for m in kept)
    assert sum(m["role"] == "assistant" for m in view) == 25  # the agent's own messages and commands stay
    assert [m["tool_calls"] for m in view if m["role"] == "assistant"] == [
        m["tool_calls"] for m in run(25, 10_000) if m["role"] == "assistant"]


def test_level3_counter_restarts_after_compaction():
    # after the compaction at turn 25 the counter is 0 again: next one when turns 26..50 pass 240,000
    assert cleared_turns(manage_context(run(49, 10_000), 3)) == list(range(1, 14))
    assert cleared_turns(manage_context(run(50, 10_000), 3)) == list(range(1, 39))


def test_level3_turns_are_assistant_rounds_not_user_messages():
    plain = cleared_turns(manage_context(run(25, 10_000), 3))
    with_nudges = cleared_turns(manage_context(run(25, 10_000, user_every=2), 3))
    assert plain == with_nudges == list(range(1, 14))


def test_level3_counts_original_text_not_the_capped_view():
    # 30,000-character results are shown capped at 20,000 but count 30,000: 9 turns = 270,000 > 240,000
    view = manage_context(run(9, 30_000), 3)
    assert cleared_turns(view) == []  # compaction at turn 9, but no turn is older than the latest 12
    view = manage_context(run(17, 30_000), 3)  # the counter restarted at 9: turns 10..17 make 240,000
    assert cleared_turns(view) == []
    view = manage_context(run(18, 30_000), 3)  # second compaction at turn 18 clears turns 1..6
    assert cleared_turns(view) == list(range(1, 7))
    assert all(len(m["content"]) <= 20_000 + len(ALERT20) + 1 for m in view if m["role"] == "tool")


def test_pure_and_stable_between_calls():
    msgs = run(40, 10_000)
    frozen = copy.deepcopy(msgs)
    first = manage_context(msgs, 3)
    assert msgs == frozen  # the full list is never modified
    assert manage_context(msgs, 3) == first
    # what the model saw at turn 30 is a prefix-consistent recomputation: cleared turns only grow
    earlier = cleared_turns(manage_context(msgs[: 2 + 2 * 30], 3))
    assert set(earlier) <= set(cleared_turns(first))


def test_bad_level():
    with pytest.raises(ValueError, match="0, 1, 2, 3"):
        manage_context([], 4)


def test_tab_show_is_not_cut_again():
    """Its read-log entry is already what the model got under the cap; the header must not cost lines."""
    msgs = run(1, 10)
    msgs[3]["content"] = "Entry L1 (a.txt, turn 1):\n" + "e" * 20_000
    msgs[3]["name"] = "tab_show"
    assert manage_context(msgs, 3)[3] is msgs[3]
    msgs[3]["name"] = "bash"
    assert manage_context(msgs, 3)[3]["content"].endswith(ALERT20)
