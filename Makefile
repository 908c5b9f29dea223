# Two commands a fresh machine needs: `make run` (set up, then the main job) and `make test`.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# Two stamps: the main job needs only the package and its pilot extra; development adds the tools and chromium.
RUN_STAMP := $(VENV)/.installed-run
DEV_STAMP := $(VENV)/.installed-dev

.PHONY: setup browser run test lint bench clean

$(RUN_STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	# torch first, pinned, so nothing later pulls a multi-GB CUDA build (DEVELOPERS.md).
	$(BIN)/python -m pip install -q torch==2.13.0
	$(BIN)/python -m pip install -q -e '.[pilot]'
	touch $@

$(DEV_STAMP): $(RUN_STAMP)
	$(BIN)/python -m pip install -q -e '.[pilot,dev,launch,tracking,aws,spend]'
	touch $@

# Development setup: tools, and Debian's chromium for the report's browser tests.
setup: $(DEV_STAMP) browser

# Chromium is skipped, with a reason, where it cannot be installed; the browser tests then skip too.
browser:
	@command -v chromium >/dev/null 2>&1 || { command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ] && \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) || \
	  echo "chromium not installed: browser tests will be skipped"; }

run: $(RUN_STAMP)
	$(BIN)/accelpilot pilot --out report

lint: $(DEV_STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks
	$(BIN)/mypy

test: setup
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks
	$(BIN)/mypy
	$(BIN)/python -m pytest

bench: $(DEV_STAMP)
	for b in benchmarks/*.py; do case $$b in */gpu_*) continue;; esac; echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) build dist .mypy_cache .ruff_cache .pytest_cache
