# The two commands of the README, each doing its own set-up on a fresh machine:
#   make demo   generate a population and run the whole nightly job on it
#   make test   run the test suite (what .ci/run runs), the cluster extra's local-mode tests included
PYTHON ?= python3.11
VENV   ?= .venv
BIN     = $(VENV)/bin
export RAILBIRD_HOME ?= $(CURDIR)/var
export DAGSTER_HOME  ?= $(CURDIR)/var/dagster

.PHONY: demo test venv browser bench clean

$(BIN)/railbird: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test,cluster]'
	touch $@

venv: $(BIN)/railbird

# Debian's Chromium drives the browser tests (Playwright's own browser download
# cannot reach its host from these machines).
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get -o DPkg::Lock::Timeout=600 update -qq && DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq chromium >/dev/null; \
	  else echo "chromium missing: browser tests will be skipped (sudo apt-get install chromium)"; fi; }

demo: venv
	$(BIN)/railbird run

# The suite on TEST_WORKERS processes (pytest-xdist), whole test files to each so that a file's fixtures are
# built once; tests/conftest.py hands out the files with slow tests first. A plain `pytest -q` runs it serially.
TEST_WORKERS ?= 2
test: venv browser
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

bench: venv
	$(BIN)/python benchmarks/ingest_bench.py
	$(BIN)/python benchmarks/generate_bench.py
	$(BIN)/python benchmarks/detect_bench.py

clean:
	rm -rf var .pytest_cache
