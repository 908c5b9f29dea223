# Two commands a fresh machine needs: `make run` (set up, then the main job) and `make test`.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup run test lint bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	# torch first, pinned, so nothing later pulls a multi-GB CUDA build (DEVELOPERS.md).
	$(BIN)/python -m pip install -q torch==2.13.0
	$(BIN)/python -m pip install -q -e '.[pilot,dev]'
	touch $(STAMP)

setup: $(STAMP)

run: setup
	$(BIN)/accelpilot bill examples/worked-example.toml

lint: setup
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks
	$(BIN)/mypy

test: setup
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/mypy
	$(BIN)/python -m pytest

bench: setup
	$(BIN)/python benchmarks/sweep_rate.py

clean:
	rm -rf $(VENV) build dist .mypy_cache .ruff_cache .pytest_cache
