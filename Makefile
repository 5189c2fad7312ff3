# The two commands of the README.  Each creates .venv and installs what it needs.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
PYTEST_ARGS ?=
# the suite on every core (pytest-xdist); PYTEST_ARGS comes last, so "-n 0" runs it serially
PYTEST_XDIST := -n auto --dist worksteal

.PHONY: demo browser test test-slow lint bench docs clean

# Debian's chromium, for the site check (make docs) and its tests (make test).
# Nothing is installed system-wide unless asked: with INSTALL_BROWSER=1 `make
# test` and `make docs` install it first (with sudo when not root) and then
# require it, so that no browser test skips (CI asks for this: it runs as root).
INSTALL_BROWSER ?=
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
REQUIRE_BROWSER := $(if $(INSTALL_BROWSER),INVARIANTDP_REQUIRE_BROWSER=1,)

browser:
	command -v chromium >/dev/null 2>&1 || $(SUDO) sh -c 'apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium'

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

demo: $(BIN)/python
	$(BIN)/python -m pip install --quiet .
	$(BIN)/invariantdp demo

test: $(BIN)/python $(if $(INSTALL_BROWSER),browser)
	$(BIN)/python -m pip install --quiet -e ".[test]"
	$(REQUIRE_BROWSER) $(BIN)/python -m pytest -m "not slow" $(PYTEST_XDIST) $(PYTEST_ARGS)

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

# The site.  The notebooks (vignettes, home page) run first, as many at a time
# as there are cores, printing each one's time, into a cache kept across builds
# while the package, the notebooks and the installed versions are unchanged
# (docs/execute_notebooks.py); then Sphinx, warnings as errors; then the site
# is checked in headless chromium (docs/check_site.py) if chromium is here,
# else the check is skipped, saying so; `make docs INSTALL_BROWSER=1` installs
# chromium first and then requires the check (see `browser` above).
docs: $(BIN)/python $(if $(INSTALL_BROWSER),browser)
	$(BIN)/python -m pip install --quiet -e ".[docs]"
	rm -rf docs/_build/html docs/_build/doctrees docs/_build/jupyter_execute
	$(BIN)/python docs/execute_notebooks.py
	$(BIN)/sphinx-build -W --keep-going -q -b html docs docs/_build/html
	$(BIN)/python docs/check_site.py $(if $(INSTALL_BROWSER),,--if-available)

clean:
	rm -rf $(VENV) build dist .pytest_cache docs/_build docs/api docs/vignettes docs/changelog.md
