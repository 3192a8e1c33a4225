"""The finish check (Figure 9): one message at the agent's first stop, by the state of the tab.

No requirement recorded → ask for them, their resolution and a deliverable that covers them;
some open → list them (with their review when the review is on); all resolved → list each resolution.
"""

from __future__ import annotations

from tab.ops import Operations


def finish_check_message(ops: Operations, turn: int) -> tuple[str, str]:
    """(case, message) with case 'none', 'open' or 'resolved'."""
    t, state, config = ops.texts, ops.state, ops.config
    if not state.requirements:
        return "none", t.get("finish_none" if config.capture else "finish_none_nocapture")
    still = state.open_requirements()
    if still:
        lines = [t.get("finish_open_header", requirements=t.count(len(still), "requirement"))]
        if config.reviews:  # each open requirement with what the tab holds for it
            lines += ops.review_body(ops.reviews(turn, "finish_check"))
        else:
            lines += [t.get("finish_open_line", id=r.id, text=r.text) for r in still]
        lines.append(t.get("finish_open_footer" if config.capture else "finish_open_footer_nocapture"))
        return "open", "\n".join(lines)
    n = len(state.requirements)
    lines = [t.get("finish_resolved_header_one") if n == 1 else
             t.get("finish_resolved_header", requirements=t.count(n, "requirement"))]
    for r in state.requirements.values():
        if r.status == "set_aside":
            lines.append(t.get("finish_set_aside_line", id=r.id, reason=r.reason, text=r.text))
        elif r.entries:
            lines.append(t.get("finish_done_line", id=r.id, entries=", ".join(r.entries), text=r.text))
        else:
            lines.append(t.get("finish_done_line_bare", id=r.id, text=r.text))
    lines.append(t.get("finish_resolved_footer"))
    return "resolved", "\n".join(lines)
