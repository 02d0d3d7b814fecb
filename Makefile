# The front door: `make run` (pipeline on the sample data) and `make test`.
# Both create .venv on first use; nothing but Python 3.11 needs to be installed.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-$(shell cksum pyproject.toml | cut -d' ' -f1)
PRODUCTION_STAMP := $(VENV)/.production-$(shell cksum pyproject.toml | cut -d' ' -f1)
WAREHOUSE ?= data/warehouse
# The user's Dagster instance, for `make run` and `make ui` only: the tests make their own.
run ui: export DAGSTER_HOME ?= $(abspath $(WAREHOUSE))/.dagster
# The UI offers the months that have data (the sample ends in 2020); see the README's UI section.
ui: export DIPRANK_PARTITIONS_END ?= data
# Numba's cache of the kernels, in a folder named for the kernels' sources (pipeline/systems/kernel_cache.py),
# chosen before numba is imported; a NUMBA_CACHE_DIR of the user's is kept.
compile run ui test bench: export NUMBA_CACHE_DIR ?= $(shell $(PYTHON) -m pipeline.systems.kernel_cache)

.PHONY: setup compile run test check ui bench integration clean

$(STAMP): pyproject.toml
	$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else "diprank needs Python 3.11 (set PYTHON=python3.11)")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	$(MAKE) --no-print-directory compile
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

setup: $(STAMP)

# Compile the rating kernels into numba's cache once, at setup, by rating a small generated feed
# (the same code and types as a real run), so the first real run does not wait for the compiler.
compile:
	rm -rf $(VENV)/compile
	$(BIN)/diprank generate --games 600 --players 80 --years 2 --events 8 --seed 1 --out $(VENV)/compile/raw > /dev/null
	DAGSTER_HOME=$(CURDIR)/$(VENV)/compile/home $(BIN)/diprank run --raw $(VENV)/compile/raw --warehouse $(VENV)/compile/warehouse --quiet > /dev/null
	rm -rf $(VENV)/compile

run: $(STAMP)
	$(BIN)/diprank run --raw data/raw --warehouse $(WAREHOUSE)

test: $(STAMP)
	$(BIN)/python -m pytest -q -n 2 --dist worksteal

# Lint, format and types: ruff and mypy, configured in pyproject.toml.
check: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

ui: $(STAMP)
	$(BIN)/python -m pipeline.defs.instance $(DAGSTER_HOME)
	$(BIN)/dagster dev -h 127.0.0.1 -p 3000

# The production profile against real PostgreSQL, Redis and an S3 emulator on 127.0.0.1
# (servers from Debian's packages: apt-get install postgresql redis-server). See docs/DEPLOYMENT.md.
$(PRODUCTION_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[dev,integration]"
	rm -f $(VENV)/.production-*
	touch $(PRODUCTION_STAMP)

integration: $(PRODUCTION_STAMP)
	$(BIN)/python -m pytest -q -m integration tests/integration

# BENCH_FLAGS, e.g. "--skip-property --skip-largest", leaves out the longest sections. The kernels
# are compiled first, as setup does: after a change under pipeline/systems/ the first timed run
# would otherwise include the compiler (4-5 s a system in the 1,000,000-game backfill).
bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[dev,bench]"
	$(MAKE) --no-print-directory compile
	$(BIN)/python benchmarks/run.py $(BENCH_FLAGS)

clean:
	rm -rf $(WAREHOUSE)
