"""The environment-side tab (SPEC section 3): `Tab` is the plugin, `TabConfig` its switches.

`from tab import Tab, ...` imports the module that defines the name when it is first used, not at
import: the config schema imports `tab.config`, and a sweep's driver never runs a tab (issue 38.5).
"""

from __future__ import annotations

import importlib
from typing import Any

SURFACE = {  # name -> module that defines it
    "Tab": "tab.tab",
    "TabConfig": "tab.config",
    "render_tab": "tab.render",
    "review_coverage": "tab.stats",
    "tab_summary": "tab.stats",
}

__all__ = sorted(SURFACE)


def __getattr__(name: str) -> Any:
    if name not in SURFACE:
        raise AttributeError(f"module 'tab' has no attribute {name!r}")
    return getattr(importlib.import_module(SURFACE[name]), name)
