"""Shared pieces of the *workspace* suite: rubric helpers and policy documents (the *company*
suite uses `absent` too)."""

from __future__ import annotations

from typing import Any

from eval.benchmarks.builtin.office import Block
from eval.judges.rule.matching import text_has


def rb(text: str, check: dict[str, Any]) -> dict[str, Any]:
    return {"text": text, "check": check}


def exists(path: str) -> dict[str, Any]:
    return {"type": "exists", "path": path, "min_bytes": 1}


def contains(file: str, values: list[Any], tol: float = 0.0) -> dict[str, Any]:
    return {"type": "contains", "file": file, "values": values, **({"tolerance": tol} if tol else {})}


def row(file: str, cells: list[Any], tol: float = 0.0) -> dict[str, Any]:
    return {"type": "row", "file": file, "cells": cells, **({"tolerance": tol} if tol else {})}


def absent(file: str, values: list[Any], reference: str) -> dict[str, Any]:
    """An `absent` check for values that only distractors and superseded files hold. A value the
    reference deliverable itself holds (a distractor's figure can equal one of the answer's) is
    left out, so that the reference solution passes whatever the seed."""
    keep = list(dict.fromkeys(v for v in values if not text_has(reference, v)))
    if not keep:
        raise ValueError(f"every distractor value of {file} is also in the reference deliverable: {values}")
    return {"type": "absent", "file": file, "values": keep}


class Policy:
    """A policy document: chapters of numbered articles (numbering continues across files)."""

    def __init__(self, title: str, issuer: str, chapters: list[tuple[str, list[tuple[str, str]]]], first_chapter: int = 1, first_article: int = 1):
        self.title, self.issuer, self.chapters = title, issuer, chapters
        self.first_chapter, self.first_article = first_chapter, first_article

    def numbered(self) -> list[tuple[str, list[tuple[str, str]]]]:
        """[(chapter heading, [(article heading, text)])] with their numbers."""
        out, art = [], self.first_article
        for k, (ch, arts) in enumerate(self.chapters):
            items = []
            for a_title, text in arts:
                items.append((f"Article {art} {a_title}", text))
                art += 1
            out.append((f"Chapter {self.first_chapter + k} {ch}", items))
        return out

    def blocks(self, note: str = "") -> list[Block]:
        blocks: list[Block] = [("title", self.title), ("para", f"Issued by {self.issuer}. {note}".strip())]
        for ch, arts in self.numbered():
            blocks.append(("heading", ch, 1))
            for a, text in arts:
                blocks += [("heading", a, 2), ("para", text)]
        return blocks
