"""The environment-side tab (SPEC section 3): `Tab` is the plugin, `TabConfig` its switches."""

from tab.config import TabConfig
from tab.render import render_tab
from tab.stats import review_coverage, tab_summary
from tab.tab import Tab

__all__ = ["Tab", "TabConfig", "render_tab", "review_coverage", "tab_summary"]
