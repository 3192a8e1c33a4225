"""Separating file content from what the harness and the shell add around it.

The harness's notices (`[Showing lines 1-2000 of 5000. Use offset=2001 to continue.]`, `Command exited
with code 1`, ...) are not file content, so they stay out of excerpts: the regexes below are built
from the harness's own templates in `envs/harness_texts.py`, so a wording change there needs nothing here.
Shell error lines (`cat: x: No such file or directory`) and Python tracebacks are dropped too.
"""

from __future__ import annotations

import re
from functools import cache

from envs import harness_texts

_READ = ("READ_LINES_NOTICE", "READ_BYTES_NOTICE", "READ_MORE_NOTICE", "READ_LONG_LINE_NOTICE", "READ_EMPTY")
_BASH = (
    "BASH_NO_OUTPUT", "BASH_LINES_NOTICE", "BASH_BYTES_NOTICE", "BASH_PARTIAL_LINE_NOTICE", "BASH_EXIT",
    "BASH_TIMEOUT", "BASH_TIMEOUT_CLAMPED",
)
_COMMON = ("CONTEXT_ALERT", "CONTEXT_PLACEHOLDER")
_SAVED = ("BASH_LINES_NOTICE", "BASH_BYTES_NOTICE", "BASH_PARTIAL_LINE_NOTICE")
_TRACEBACK = "Traceback (most recent call last):"


def _pattern(template: str) -> str:
    parts = re.split(r"\{[^{}]*\}", template)
    return ".*?".join(re.escape(p) for p in parts)


@cache
def _notice(names: tuple[str, ...]) -> re.Pattern[str]:
    templates = [getattr(harness_texts, n) for n in names if isinstance(getattr(harness_texts, n, None), str)]
    return re.compile("^(?:" + "|".join(_pattern(t) for t in templates) + r")\s*$")


def _strip_ends(text: str, notice: re.Pattern[str]) -> str:
    """Drop notice lines (and blank lines) from both ends of a tool's output."""
    lines = text.split("\n")
    start, end = 0, len(lines)
    while end > start and (not lines[end - 1].strip() or notice.match(lines[end - 1].strip())):
        end -= 1
    while start < end and (not lines[start].strip() or notice.match(lines[start].strip())):
        start += 1
    return "\n".join(lines[start:end])


def read_content(output: str) -> str:
    """The file content of a `read` result (its continuation notice removed)."""
    return _strip_ends(output, _notice(_READ + _COMMON))


def bash_content(output: str, commands: frozenset[str], failed: bool) -> str:
    """A bash result without the harness's notices, the commands' own error lines and (when the
    command failed) a Python traceback."""
    text = _strip_ends(output, _notice(_BASH + _COMMON))
    cut = text.find(_TRACEBACK) if failed else -1
    if cut >= 0:
        text = text[:cut]
    if commands:
        errors = re.compile(r"^(?:" + "|".join(re.escape(c) for c in sorted(commands)) + r"): ")
        text = "\n".join(line for line in text.split("\n") if not errors.match(line))
    return text.strip("\n")


@cache
def _saved_notices() -> tuple[re.Pattern[str], ...]:
    capped = getattr(harness_texts, "BASH_CAPPED_NOTE", "")
    optional = f"(?:{_pattern(capped)})?" if capped else ""
    out = []
    for name in _SAVED:
        template = getattr(harness_texts, name, None)
        if isinstance(template, str) and "{path}" in template:
            before, after = template.split("{path}", 1)
            out.append(re.compile(f"^{_pattern(before)}(?P<path>.+?){optional}{_pattern(after)}\\s*$"))
    return tuple(out)


def saved_output(output: str) -> str | None:
    """The file where the harness saved a bash output too long to show whole (from its notice)."""
    for line in output.rstrip().split("\n")[-3:]:
        for pattern in _saved_notices():
            m = pattern.match(line.strip())
            if m:
                return m.group("path")
    return None
