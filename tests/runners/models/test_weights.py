"""A served model's cache key holds its weights' content, not their path: new weights at the same
`model.server.model_path` get new keys (the old replies are never served for them), the same weights
elsewhere keep theirs, the digest is remembered by size and mtime, and weights that are not local
files (a hub id) turn the cache off for that model, saying so."""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path

import pytest

from runners.models.call_cache import CallKeys, agent_identity
from runners.models.server import ServedModelConfig, ServerConfig
from tests.conftest import compose_root

MSGS = [{"role": "user", "content": "Count the files."}]


def _key(mc: ServedModelConfig, cache_dir: Path | None = None) -> str:
    identity = agent_identity(mc, 0) if cache_dir is None else agent_identity(mc, 0, cache_dir)
    return CallKeys(identity, [])(MSGS, [])


def test_new_weights_at_the_same_path_get_new_keys(tmp_path: Path) -> None:
    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"GGUF old weights")
    mc = ServedModelConfig(kind="llamacpp", name="m", server=ServerConfig(model_path=str(gguf)))
    old = _key(mc)
    gguf.write_bytes(b"GGUF new weights, longer")
    assert _key(mc) != old

    folder = tmp_path / "hf"
    (folder / "sub").mkdir(parents=True)
    (folder / "config.json").write_text("{}")
    (folder / "sub" / "model.safetensors").write_bytes(b"w" * 1000)
    vllm = ServedModelConfig(kind="vllm", name="m", server=ServerConfig(model_path=str(folder)))
    before = _key(vllm)
    (folder / "sub" / "model.safetensors").write_bytes(b"v" * 1001)
    assert _key(vllm) != before
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)  # the same weights elsewhere: the same replies
    assert _key(ServedModelConfig(kind="vllm", name="m", server=ServerConfig(model_path=str(copy)))) == _key(vllm)


def test_the_digest_is_remembered_by_size_and_mtime(tmp_path: Path) -> None:
    from runners.models.weights import MEMO_DIR, weights_digest

    gguf = tmp_path / "w.gguf"
    gguf.write_bytes(b"a" * 100)
    first = weights_digest(str(gguf), tmp_path / "cache" / MEMO_DIR)
    [memo] = (tmp_path / "cache" / MEMO_DIR).glob("*.json")
    assert first in memo.read_text() and first.startswith("sha256:")
    st = gguf.stat()
    gguf.write_bytes(b"b" * 100)
    os.utime(gguf, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert weights_digest(str(gguf), tmp_path / "cache" / MEMO_DIR) == first  # same size and mtime: not re-read
    gguf.write_bytes(b"b" * 101)
    assert weights_digest(str(gguf), tmp_path / "cache" / MEMO_DIR) != first


def test_weights_that_are_not_local_files_turn_the_cache_off_for_the_model(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from runners.job.model import job_model

    cfg = compose_root(["model=vllm", "model.name=q", "model.server.model_path=Qwen/Qwen3-0.6B", "model.cache=read_write",
                        f"model.cache_dir={tmp_path / 'cache'}", "judge=none"])
    with caplog.at_level(logging.WARNING, logger="runners.job.model"):
        jm = job_model(cfg, "t", "http://127.0.0.1:9/v1", tmp_path, "j")
    assert jm.cached is None
    assert "not cached" in caplog.text and "Qwen/Qwen3-0.6B" in caplog.text and "local copy" in caplog.text, caplog.text
    local = tmp_path / "qwen"
    local.mkdir()
    (local / "model.safetensors").write_bytes(b"w")
    cfg = compose_root(["model=vllm", "model.name=q", f"model.server.model_path={local}", "model.cache=read_write",
                        f"model.cache_dir={tmp_path / 'cache'}", "judge=none"])
    assert job_model(cfg, "t", "http://127.0.0.1:9/v1", tmp_path, "j").cached is not None
