"""HTML of the viewer's turns: each message as the model saw it, the full text one click away.

Every text from the record (the agent's, the tools', the workspace's) is escaped here; the pages
never put record text into markup unescaped.
"""

from __future__ import annotations

import html
import json
from typing import Any

from eval.report.pages.viewer_turns import Seen, Turn


def _cut(text: str, limit: int | None) -> tuple[str, int]:
    """`text` cut to `limit` characters (None: whole), and how many were left out."""
    if limit is None or len(text) <= limit:
        return text, 0
    return text[:limit], len(text) - limit


def _pre(text: str, limit: int | None, more_href: str | None) -> str:
    shown, left = _cut(text, limit)
    tail = ""
    if left:
        more = f'<a href="{html.escape(more_href)}">on the job page</a>' if more_href else "in trajectory.jsonl"
        tail = f"\n<i>[… {left:,} more characters {more}]</i>"
    return f"<pre>{html.escape(shown)}{tail}</pre>"


def _tool_notes(s: Seen, level: int) -> list[str]:
    notes = []
    if s.seen is None:
        notes.append("never sent to the model (the episode ended first)")
    elif s.seen != s.full:
        notes.append(f"the model saw {len(s.seen):,} of {len(s.full):,} characters (context level {level})")
    if s.cleared_at is not None:
        notes.append(f"replaced by the placeholder from turn {s.cleared_at} on")
    return notes


def message_html(s: Seen, level: int, limit: int | None = None, more_href: str | None = None) -> str:
    """One message; a tool result shows what the model saw, with the full text in a <details>."""
    m = s.message
    role = str(m.get("role", "?"))
    head = role + (f" · {m.get('name', '')}" + (" · error" if m.get("is_error") else "") if role == "tool" else "")
    head += " · stop hook" if m.get("stop_hook") else ""
    parts = [f'<div class="msg {html.escape(role)}"><b>{html.escape(head)}</b>']
    if role == "tool":
        notes = _tool_notes(s, level)
        parts += [f' <span class="cm">{html.escape(n)}</span>' for n in notes]
        parts.append(_pre(s.seen if s.seen is not None else s.full, limit, more_href))
        if s.changed and limit is None:
            parts.append(f'<details class="full"><summary>full text ({len(s.full):,} characters)</summary><pre>{html.escape(s.full)}</pre></details>')
    elif m.get("content"):
        parts.append(_pre(str(m["content"]), limit, more_href))
    for c in m.get("tool_calls") or []:
        fn = c.get("function") or {}
        call = f"→ {fn.get('name')}({fn.get('arguments')})"
        parts.append(f'<pre class="call">{html.escape(_cut(call, limit)[0])}</pre>')
    if m.get("extra") and limit is None:
        parts.append(f"<details><summary>provider extras</summary><pre>{html.escape(json.dumps(m['extra'], ensure_ascii=False))}</pre></details>")
    parts.append("</div>")
    return "".join(parts)


def turn_html(t: Turn, level: int, tab_events: list[str], limit: int | None = None, more_href: str | None = None,
              anchor: bool = True) -> str:
    """One turn's block; `data-turn` is what the tab panel follows (`id="t<k>"` when `anchor`)."""
    head = "the system prompt and the task" if t.number == 0 else f"turn {t.number}"
    events = "".join(f'<span class="tev">{html.escape(e)}</span>' for e in tab_events)
    body = "".join(message_html(s, level, limit, more_href) for s in t.messages)
    if t.number == 0:  # the system prompt runs long and is the same for every job of a method
        body = f"<details><summary>{len(t.messages)} messages</summary>{body}</details>"
    ident = f' id="t{t.number}"' if anchor else ""
    link = f'<a href="{html.escape(more_href)}">{head}</a>' if more_href else f'<a href="#t{t.number}">{head}</a>'
    return f'<section class="turn"{ident} data-turn="{t.number}"><div class="thead">{link}{events}</div>{body}</section>'



def json_script(element_id: str, data: Any) -> str:
    """Data for the page's script, safe inside <script> whatever the record holds."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")
    return f'<script type="application/json" id="{html.escape(element_id)}">{text}</script>'
