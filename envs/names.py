"""Names the agent made that are not UTF-8, and any text holding them: stored losslessly, shown escaped.

A file name is bytes. Python holds one that is not valid UTF-8 as a string whose undecodable bytes
are lone surrogates (U+DC80-U+DCFF, `surrogateescape`), and `os.fsencode` gives the bytes back.
UTF-8 cannot encode such a string, so every writer of the record goes through `json_bytes` (JSON
escapes, read back as the same string) and every page that shows one through `shown`
(`bad\\xff\\xfe.md`).
"""

from __future__ import annotations

import json
import re
from typing import Any

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def json_bytes(obj: Any, indent: int | None = None) -> bytes:
    """UTF-8 JSON of `obj`, whatever its strings hold (`json_utf8`); values JSON does not know are
    written as their text (`default=str`)."""
    return json_utf8(json.dumps(obj, indent=indent, ensure_ascii=False, default=str))


def json_utf8(text: str) -> bytes:
    """JSON text (as `json.dumps(..., ensure_ascii=False)` makes it) as UTF-8: a lone surrogate is
    written as its escape (`\\udcff`), which `json.loads` reads back as the same string."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates stand only inside string literals: an escape means the same there
        return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text).encode("utf-8")


def shown(text: str) -> str:
    """`text` for a reader: a byte that was not UTF-8 as `\\xff`, any other lone surrogate as
    `\\ud800`; valid text comes back unchanged."""
    return _LONE_SURROGATE.sub(_escape, text)


def _escape(m: re.Match[str]) -> str:
    code = ord(m.group())
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}"
