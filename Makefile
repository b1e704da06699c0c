# make demo / make test: each creates .venv when missing, installs the project, runs.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-test
BENCH_STAMP := $(VENV)/.installed-bench
# Compiled kernels go where the activated venv and the CLI look too:
# collisionkit._numba.cache_dir() ($COLLISIONKIT_CACHE_DIR, else ~/.cache/collisionkit/numba,
# then /<hash of the kernel sources and numba version>). `make demo` prints it.

.PHONY: demo warmup wheel test test-slow bench bench-docs lint clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml setup.py | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[test,dev]"
	touch $@

$(BENCH_STAMP): pyproject.toml setup.py | $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[bench]"
	touch $@

demo: $(STAMP)
	$(BIN)/python -m collisionkit demo

warmup: $(STAMP)
	$(BIN)/python -m collisionkit warmup

# A platform wheel with every kernel precompiled for this platform's baseline CPU, in
# dist/ (about 10 minutes on 2 cores; collisionkit/_shipped.py says how it is found).
wheel: $(STAMP)
	$(BIN)/python -m collisionkit warmup --ship build/compiled --ship-cache build/ship-cache
	COLLISIONKIT_SHIP_DIR=$(CURDIR)/build/compiled $(BIN)/python -m pip wheel --quiet --no-deps -w dist .

# Every kernel compiles first, in `collisionkit warmup`'s short-lived processes (two at
# a time, a progress line at least every 30 s; each returns its memory when it exits:
# numba keeps every module it compiled for the life of the process). The two pytest
# workers then mostly load from the cache, and the suite's heartbeat (tests/conftest.py)
# names any test that runs 30 s without a result. On a warm cache the warm-up only loads.
test: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/mypy
	$(BIN)/python -m collisionkit warmup
	$(BIN)/python -m pytest -q -n 2

test-slow: $(STAMP)
	$(BIN)/python -m collisionkit warmup
	$(BIN)/python -m pytest -q -m slow -n 2

bench: $(BENCH_STAMP)
	$(BIN)/python -m benchmarks.pairs

# every benchmark, then the figure blocks of README.md and docs/ (about 2 hours on 2 cores)
bench-docs: $(BENCH_STAMP)
	$(BIN)/python -m benchmarks.regenerate

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/mypy

# (.numba_cache: where older versions compiled; the compile cache now lives in the
# user cache folder that `make demo` prints)
clean:
	rm -rf .numba_cache .pytest_cache .hypothesis
