"""Issue 50 item 9: the model-call cache had no verb to see or trim it. `runningtab cache list`
counts its entries by model; `prune` removes those older than N days and/or of one model, only
entry files, never through a link, never `_weights/`."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from runners.core.messages import AssistantMessage, Usage
from runners.models.call_cache import CallCache, reply_entry
from runners.models.call_cache_cli import main


def fill(root: Path) -> dict[str, str]:
    cache = CallCache(root)
    keys = {}
    for i, (model, age_days) in enumerate([("gpt-5.4-nano", 0), ("gpt-5.4-nano", 100), ("scripted", 100)]):
        key = f"{i:02x}" + "a" * 62
        cache.put(key, reply_entry(AssistantMessage("hi", usage=Usage(10, 2, 0.001)), model))
        then = time.time() - age_days * 86400
        os.utime(cache.path(key), (then, then))
        keys[key] = model
    (root / "_weights").mkdir()
    (root / "_weights" / "w.json").write_text("{}")
    return keys


def test_list_and_prune(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "calls"
    keys = fill(root)
    assert main(["list", str(root)]) == 0
    out = capsys.readouterr().out
    assert f"{root}: 3 entries" in out and "gpt-5.4-nano" in out and "2 entries" in out and "_weights/" in out, out
    assert main(["prune", str(root), "--older-than", "30", "--dry-run"]) == 0
    assert "would remove 2 entries" in capsys.readouterr().out and len(list(root.glob("*/*.json"))) == 4
    assert main(["prune", str(root), "--older-than", "30", "--model", "scripted"]) == 0
    assert "removed 1 entries" in capsys.readouterr().out
    left = {p.stem for p in root.glob("[0-9a-f][0-9a-f]/*.json")}
    assert left == {k for k, m in keys.items() if m != "scripted"} and (root / "_weights" / "w.json").exists()
    assert main(["prune", str(root)]) == 2 and "--older-than DAYS and/or --model NAME" in capsys.readouterr().err


def test_prune_touches_nothing_but_entries_and_follows_no_link(tmp_path: Path) -> None:
    root, elsewhere = tmp_path / "calls", tmp_path / "elsewhere"
    fill(root)
    elsewhere.mkdir()
    victim = elsewhere / ("ee" + "b" * 62 + ".json")
    victim.write_text(json.dumps({"usage": {}, "content": "x"}))
    (root / "ee").symlink_to(elsewhere)  # a shard that is a link: never entered
    (root / "notes.txt").write_text("mine")
    assert main(["prune", str(root), "--older-than", "0"]) == 0
    assert victim.exists() and (root / "notes.txt").exists() and (root / "_weights" / "w.json").exists()
    assert [p for p in root.glob("[0-9a-f][0-9a-f]/*.json") if not p.parent.is_symlink()] == []  # the real entries: all gone
