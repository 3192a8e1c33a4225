"""The llama.cpp server launcher bounds completions that its function-calling handler leaves unbounded."""

from __future__ import annotations

import pytest

from runners.models.embedded import embedded_gguf
from runners.models.llamacpp_serve import bound_completions


@pytest.mark.slow
def test_unbounded_completion_is_capped(monkeypatch) -> None:
    llama_cpp = pytest.importorskip("llama_cpp")
    llm = llama_cpp.Llama(model_path=embedded_gguf(), n_ctx=512, verbose=False)
    prompt = "Count from 1 to 500, separated by spaces: 1 2 3"
    free = llm.create_completion(prompt=prompt, max_tokens=None, temperature=0)
    assert free["usage"]["completion_tokens"] > 20  # unbounded: runs on
    monkeypatch.setattr(llama_cpp.Llama, "create_completion", llama_cpp.Llama.create_completion)  # restored after
    bound_completions(8)
    capped = llm.create_completion(prompt=prompt, max_tokens=None, temperature=0)
    assert capped["usage"]["completion_tokens"] <= 8
    explicit = llm.create_completion(prompt=prompt, max_tokens=12, temperature=0)
    assert 8 < explicit["usage"]["completion_tokens"] <= 12  # an explicit bound is kept
