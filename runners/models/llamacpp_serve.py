"""llama-cpp-python's OpenAI-compatible server, with every completion bounded.

Its `chatml-function-calling` handler makes inner completions with `max_tokens=None` (choosing
between a message and a tool call, writing the arguments), so a small model can generate until
the context is full — minutes on a CPU, during which the single-request server answers nobody.
Here a completion without a bound gets `RUNNINGTAB_MAX_TOKENS` (the model config's `max_tokens`).

    python -m runners.models.llamacpp_serve <llama_cpp.server arguments>
"""

from __future__ import annotations

import functools
import os
from typing import Any


def bound_completions(cap: int) -> None:
    from llama_cpp import Llama

    original = Llama.create_completion

    @functools.wraps(original)
    def create_completion(self: Any, *args: Any, **kwargs: Any) -> Any:
        if kwargs.get("max_tokens") is None and len(args) < 3:  # (prompt, suffix, max_tokens, ...)
            kwargs["max_tokens"] = cap
        return original(self, *args, **kwargs)

    Llama.create_completion = create_completion  # type: ignore[method-assign]


def main() -> None:
    cap = os.environ.get("RUNNINGTAB_MAX_TOKENS")
    if cap:
        bound_completions(int(cap))
    from llama_cpp.server.__main__ import main as serve

    serve()


if __name__ == "__main__":
    main()
