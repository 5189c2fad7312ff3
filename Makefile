# The two commands of the README.  Each creates .venv and installs what it needs.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
PYTEST_ARGS ?=

.PHONY: demo test test-slow lint bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

demo: $(BIN)/python
	$(BIN)/python -m pip install --quiet .
	$(BIN)/invariantdp demo

test: $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[test]"
	$(BIN)/python -m pytest -m "not slow" $(PYTEST_ARGS)

test-slow: $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[test]"
	$(BIN)/python -m pytest -m slow $(PYTEST_ARGS)

lint: $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[test]"
	$(BIN)/ruff check src tests benchmarks vignettes
	$(BIN)/ruff format --check src tests benchmarks

bench: $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[test]"
	for f in benchmarks/bench_*.py; do $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) build dist .pytest_cache
