"""The form of a job id, checked wherever an id is read from a file before it names a folder.

`runners.job.identity.readable_id` makes every id: its parts cleaned to letters, digits and `_.-`,
joined by `__`. An id read back from a document someone else wrote (an imported Harbor trial, a record
being exported, a `job.json` by hand) names a folder only once it has that form: one path component,
never `.`, `..`, hidden or absolute, at most `JOB_ID_MAX` characters (a file name's limit is 255 bytes).
"""

from __future__ import annotations

import re
from typing import Any

JOB_ID_MAX = 255
_FORM = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")


def check_job_id(value: Any, where: str) -> str:
    """`value` when it is a job id of the project's form; a ValueError naming `where` it came from otherwise."""
    if isinstance(value, str) and len(value) <= JOB_ID_MAX and _FORM.fullmatch(value):
        return value
    shown = repr(value) if len(repr(value)) <= 80 else repr(value)[:77] + "..."
    raise ValueError(f"{where}: {shown} is not a job id (letters, digits and `_.-`, not starting with `.` or `-`, "
                     f"at most {JOB_ID_MAX} characters, as runners/job/identity.py makes them)")
