#!/usr/bin/env bash
# The production harnesses (Claude Code, Codex CLI) in an npm prefix of their own, outside the clone, for
# the tests that drive them (tests/runners/harnesses and tests/e2e/test_harness_axis.py). Pinned here; a prefix installed from the same
# pins is reused (its stamp is written last, so an interrupted install is redone). Each package ships
# its native Linux binary as an npm dependency: nothing else is downloaded. Prints the prefix, which
# the project reads from RUNNINGTAB_AGENTS_PREFIX (docs/harnesses.md).
set -euo pipefail
PREFIX=${RUNNINGTAB_AGENTS_PREFIX:-/opt/runningtab/agents}
PINS="@anthropic-ai/claude-code@2.1.328 @openai/codex@0.169.0"
STAMP="$PREFIX/.runningtab-pins"
if [ -x "$PREFIX/node_modules/.bin/claude" ] && [ -x "$PREFIX/node_modules/.bin/codex" ] && [ "$(cat "$STAMP" 2>/dev/null)" = "$PINS" ]; then
  echo "$PREFIX"
  exit 0
fi
command -v npm >/dev/null || { echo "npm not found: install Node.js (Debian: nodejs npm) to run the harness tests" >&2; exit 1; }
mkdir -p "$PREFIX"
rm -f "$STAMP"
# shellcheck disable=SC2086
npm install --prefix "$PREFIX" --no-audit --no-fund --loglevel=error $PINS >&2
"$PREFIX/node_modules/.bin/claude" --version >&2
"$PREFIX/node_modules/.bin/codex" --version >&2
echo "$PINS" > "$STAMP"
echo "$PREFIX"
