"""A finished job's tab rebuilt from its record (`tab.json`), to ask its review and `tab_show` again.

Analyses that put a question to a model after the run (the recovery probe, `eval/probe/`) show it
exactly what the tab would have replied over the job's final read log, with the job's own
configuration (limits and wording overrides): the tab's own review, schema and replies, not a copy.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from envs.protocol import ToolResult
from tab.config import TabConfig
from tab.match import requirement_words
from tab.ops import Operations
from tab.review import ExcerptIndex, requirement_review
from tab.state import Entry, Requirement, TabState
from tab.tab_texts import Texts
from tab.tools import schemas


class RecordedTab:
    """The tab of one finished job: its read log and candidates, as the record holds them."""

    def __init__(self, record: Mapping[str, Any], config: TabConfig | Mapping[str, Any] | None) -> None:
        self.config = TabConfig.coerce(config)
        self.texts = Texts(self.config.texts)
        self.state = TabState.from_record(dict(record))
        self.index = ExcerptIndex()
        for entry in self.state.entries.values():
            self.index.add(entry)
        self.ops = Operations(self.state, self.index, self.config, self.texts)

    def review(self, text: str, words: frozenset[str] | None = None) -> str:
        """`tab_review`'s reply had `text` been the one open requirement (r1); `words` (default: its
        content words) are what it is matched on, e.g. without the probe's masks."""
        req = Requirement("r1", text)
        words = requirement_words(text) if words is None else words
        unopened = self.index.candidates(list(self.state.candidates))
        item = requirement_review(req, words, self.index, unopened, self.config.review_lines, self.config.review_candidates)
        header = self.texts.get("review_header", requirements=self.texts.count(1, "requirement"))
        return "\n".join([header, *self.ops.review_body([item])])

    def show_tool(self) -> dict[str, Any]:
        """The `tab_show` schema the job's model was offered."""
        tool = next((s for s in schemas(self.config, self.texts) if s["function"]["name"] == "tab_show"), None)
        if tool is None:
            raise ValueError("this tab configuration offers no tab_show (capture is off)")
        return tool

    def show(self, entry_id: Any) -> tuple[ToolResult, Entry | None]:
        """`tab_show`'s reply for `entry_id`, and the entry it showed (None: no such entry)."""
        _, entry = self.ops.entry(entry_id)
        return self.ops.show({"entry_id": entry_id}, turn=0), entry
