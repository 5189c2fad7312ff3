# The two commands of the README.  Each creates .venv and installs what it needs.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
PYTEST_ARGS ?=
# the suite on every core (pytest-xdist); PYTEST_ARGS comes last, so "-n 0" runs it serially
PYTEST_XDIST := -n auto --dist worksteal

.PHONY: demo test test-slow lint bench docs clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

demo: $(BIN)/python
	$(BIN)/python -m pip install --quiet .
	$(BIN)/invariantdp demo

test: $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[test]"
	$(BIN)/python -m pytest -m "not slow" $(PYTEST_XDIST) $(PYTEST_ARGS)

test-slow: $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[test]"
	$(BIN)/python -m pytest -m slow $(PYTEST_XDIST) $(PYTEST_ARGS)

lint: $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[test]"
	$(BIN)/ruff check src tests benchmarks vignettes
	$(BIN)/ruff format --check src tests benchmarks

bench: $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[test]"
	for f in benchmarks/bench_*.py; do $(BIN)/python $$f || exit 1; done

# the site, built with warnings as errors, then opened in headless chromium
# (Debian's package, installed here when missing) by docs/check_site.py
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
docs: $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[docs]"
	rm -rf docs/_build
	$(BIN)/sphinx-build -W --keep-going -q -b html docs docs/_build/html
	command -v chromium >/dev/null 2>&1 || $(SUDO) sh -c 'apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium'
	$(BIN)/python docs/check_site.py

clean:
	rm -rf $(VENV) build dist .pytest_cache docs/_build docs/api docs/vignettes docs/changelog.md
