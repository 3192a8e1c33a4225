"""The colours of the report's heat maps (`heatmap.py`), and their styles (every page carries them).

A value's colour is one of eleven classes (`q0`-`q10`: 0-100% in steps of 10, light to dark blue); a
gain's, one of eleven diverging classes (`d-5`-`d5`: 10 points a step, red below 0, blue above,
saturating at ±50). Text on the darker classes is white.
"""

from __future__ import annotations

BLUES = ("#f7fbff", "#e3eef9", "#cfe1f2", "#b5d4e9", "#93c3df", "#6daed5", "#4b97c9", "#2f7ebc", "#1864aa", "#0a4a90", "#08306b")
DIVERGING = ("#b2182b", "#d6604d", "#f4a582", "#fddbc7", "#fbeee8", "#f7f7f7", "#e8f1f7", "#d1e5f0", "#92c5de", "#4393c3", "#2166ac")
STYLE = (
    ".heat{border-collapse:collapse;font-size:13px}.heat th,.heat td{border:1px solid #fff;padding:3px 8px;white-space:nowrap}"
    ".heat td.num{text-align:right;min-width:3.2em}.heat td.top{font-weight:bold;outline:2px solid #222;outline-offset:-2px}"
    ".heat td.task{max-width:22em;overflow:hidden;text-overflow:ellipsis}"
    ".chips{display:flex;gap:2px}.chips a{display:inline-block;min-width:2.4em;padding:1px 3px;text-align:center;"
    "text-decoration:none;color:#222;border-radius:2px}.chips a:hover{outline:2px solid #222}"
    ".na{background:#e6e6e6;color:#555}.scroll{max-height:32em;overflow:auto;display:inline-block;border:1px solid #ddd}"
    ".scroll thead th{position:sticky;top:0;background:#f0f0f0}"
    + "".join(f".q{i},a.q{i}{{background:{c}{';color:#fff' if i >= 6 else ''}}}" for i, c in enumerate(BLUES))
    + "".join(f".d{i - 5},a.d{i - 5}{{background:{c}{';color:#fff' if abs(i - 5) >= 4 else ''}}}" for i, c in enumerate(DIVERGING))
)


def level(share: float) -> str:
    """The colour class of a value in [0, 1]."""
    return f"q{min(10, max(0, round(share * 10)))}"


def gain_level(points: float) -> str:
    """The colour class of a gain in points."""
    return f"d{min(5, max(-5, round(points / 10)))}"
