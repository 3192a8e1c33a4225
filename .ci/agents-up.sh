#!/usr/bin/env bash
# The production harnesses in a prefix of their own, outside the clone, for the tests that drive them
# (tests/runners/harnesses and tests/e2e/test_harness_axis.py): Claude Code, Codex CLI and Gemini CLI
# npm-installed into it, mini-swe-agent pip-installed into a venv in it (mini-swe-agent/). Pinned here;
# each part installed from the same pins is reused (its stamp is written last, so an interrupted
# install is redone). Each npm package ships its native Linux binary or its bundle as an npm
# dependency: nothing else is downloaded. A part that cannot be installed (no npm; no Python >= 3.10
# with venv under /usr, which the job's sandbox sees) is said on stderr, and its tests skip (fail in
# CI, which requires them: .ci/run); the script fails only when neither part is there. Prints the prefix, which the project reads from
# RUNNINGTAB_AGENTS_PREFIX (docs/harnesses.md).
set -euo pipefail
PREFIX=${RUNNINGTAB_AGENTS_PREFIX:-/opt/runningtab/agents}
NPM_PINS="@anthropic-ai/claude-code@2.1.328 @openai/codex@0.169.0 @google/gemini-cli@0.61.0"
PIP_PINS="mini-swe-agent==2.4.6 litellm==1.110.2"
PYTHON=${RUNNINGTAB_MINI_PYTHON:-/usr/bin/python3}  # the venv's interpreter: under /usr, inside the sandbox too
BIN="$PREFIX/node_modules/.bin"
VENV="$PREFIX/mini-swe-agent"
mkdir -p "$PREFIX"

npm_part() {
  local stamp="$PREFIX/.runningtab-pins"
  if [ -x "$BIN/claude" ] && [ -x "$BIN/codex" ] && [ -x "$BIN/gemini" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$NPM_PINS" ]; then
    return 0
  fi
  command -v npm >/dev/null || { echo "npm not found: install Node.js >= 20 (Debian: nodejs npm) to run the Claude Code, Codex and Gemini CLI tests" >&2; return 1; }
  node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)' ||
    { echo "Node.js $(node --version) is older than 20, which Gemini CLI needs: install Node.js >= 20 (NodeSource)" >&2; return 1; }
  rm -f "$stamp"
  # shellcheck disable=SC2086
  npm install --prefix "$PREFIX" --no-audit --no-fund --loglevel=error $NPM_PINS >&2
  "$BIN/claude" --version >&2
  "$BIN/codex" --version >&2
  "$BIN/gemini" --version >&2
  echo "$NPM_PINS" > "$stamp"
}

pip_part() {
  local stamp="$VENV/.runningtab-pins"
  if [ -x "$VENV/bin/mini" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$PIP_PINS" ]; then
    return 0
  fi
  "$PYTHON" -c 'import sys, venv; assert sys.version_info >= (3, 10)' 2>/dev/null ||
    { echo "$PYTHON is not a Python >= 3.10 with venv (Debian: python3-venv): mini-swe-agent's tests will skip" >&2; return 1; }
  rm -rf "$VENV"
  "$PYTHON" -m venv "$VENV"
  # shellcheck disable=SC2086
  "$VENV/bin/pip" install --quiet --no-input --disable-pip-version-check $PIP_PINS >&2
  MSWEA_SILENT_STARTUP=1 MSWEA_GLOBAL_CONFIG_DIR="$VENV/.config" "$VENV/bin/python" -c 'import minisweagent; print("mini-swe-agent", minisweagent.__version__)' >&2
  echo "$PIP_PINS" > "$stamp"
}

ok=0
if npm_part; then ok=1; else echo "WARNING: Claude Code, Codex CLI and Gemini CLI are not installed in $PREFIX" >&2; fi
if pip_part; then ok=1; else echo "WARNING: mini-swe-agent is not installed in $VENV" >&2; fi
[ "$ok" = 1 ] || exit 1
echo "$PREFIX"
