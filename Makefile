# Two commands a fresh machine needs: `make run` (set up, then the main job) and `make test`.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup browser run test lint bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	# torch first, pinned, so nothing later pulls a multi-GB CUDA build (DEVELOPERS.md).
	$(BIN)/python -m pip install -q torch==2.13.0
	$(BIN)/python -m pip install -q -e '.[pilot,dev]'
	touch $(STAMP)

setup: $(STAMP)

# Debian's chromium for the report's browser tests (skipped with a reason where it cannot be installed).
browser:
	@command -v chromium >/dev/null 2>&1 || { command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ] && \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) || \
	  echo "chromium not installed: browser tests will be skipped"; }

run: setup
	$(BIN)/accelpilot pilot --out report

lint: setup
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks
	$(BIN)/mypy

test: setup browser
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/mypy
	$(BIN)/python -m pytest

bench: setup
	for b in benchmarks/*.py; do case $$b in */gpu_*) continue;; esac; echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) build dist .mypy_cache .ruff_cache .pytest_cache
