# make demo / make test: each creates .venv when missing, installs the project, runs.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-test
BENCH_STAMP := $(VENV)/.installed-bench
# numba invalidates a cache only when the kernel's own file changes: key the
# cache folder by a hash of all kernel sources and the numba version.
CACHE = NUMBA_CACHE_DIR=$(CURDIR)/.numba_cache/$$($(BIN)/python -c "import collisionkit._numba as n; print(n.kernel_source_hash())")

.PHONY: demo test test-slow bench lint clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[test,dev]"
	touch $@

$(BENCH_STAMP): pyproject.toml | $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[bench]"
	touch $@

demo: $(STAMP)
	$(CACHE) $(BIN)/python -m collisionkit demo

test: $(STAMP)
	$(CACHE) $(BIN)/python -m pytest -q

test-slow: $(STAMP)
	$(CACHE) $(BIN)/python -m pytest -q -m slow

bench: $(BENCH_STAMP)
	$(CACHE) $(BIN)/python -m benchmarks.pairs

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks

clean:
	rm -rf .numba_cache .pytest_cache .hypothesis
