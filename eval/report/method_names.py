"""How the report names and orders methods: the paper's spelling and order for its own methods."""

from __future__ import annotations

from runners.core.harness_names import is_own_loop

METHOD_ORDER = ("dci", "todo", "self_refine", "self_tracking", "runningtab")
METHOD_LABELS = {"dci": "DCI", "todo": "TODO", "self_refine": "Self-Refine", "self_tracking": "Self-Tracking", "runningtab": "RunningTab"}


def label(method: str) -> str:
    """A method's name in titles: the paper's spelling for its own methods."""
    return METHOD_LABELS.get(method, method)


def method_key(method: str) -> tuple[int, str]:
    """Sort key: the paper's order first, then ablations and other methods by name."""
    return (METHOD_ORDER.index(method), "") if method in METHOD_ORDER else (len(METHOD_ORDER), method)


def harness_key(harness: str) -> tuple[bool, str]:
    """Sort key of harnesses: our own loop (`dci`) first, then the production harnesses by name."""
    return not is_own_loop(harness), harness
