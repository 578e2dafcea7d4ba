# Two entry points (see README): `make demo` runs the main job, `make test` runs the test suite.
# Both install into .venv/ at the repo root on first use and reuse it afterwards: the demo only
# the core (torch and mazerl), the tests also the extras they need; `make docs` the core and the
# `docs` extra only (each install has its own stamp file in .venv/).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
CORE := $(VENV)/.core
STAMP := $(VENV)/.installed
DOCS_STAMP := $(VENV)/.docs

.PHONY: demo test docs wheel-check lint format clean

$(CORE): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e .
	touch $(CORE)

# verl is no extra (0.9.1 pins transformers<5.11): the tests get it as
# docs/tutorials/language-models.md installs it, without its pins, so that its tests run
VERL := verl==0.9.1 tensordict==0.10.0 pyvers==0.1.0 codetiming==1.4.0 orjson==3.13.0

$(STAMP): $(CORE)
	$(BIN)/pip install --quiet -e '.[dev,cluster,llm]'
	$(BIN)/pip install --quiet --no-deps $(VERL)
	touch $(STAMP)

$(DOCS_STAMP): $(CORE)
	$(BIN)/pip install --quiet -e '.[docs]'
	touch $(DOCS_STAMP)

demo: $(CORE)
	$(BIN)/mazerl-train

# the suite also reads the site's hooks (tests/test_docs.py), so it needs both installs
test: $(STAMP) $(DOCS_STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/pytest
	$(MAKE) wheel-check
	$(MAKE) docs

# The documentation site (docs/, mkdocs.yml) into site/; strict: a broken link, reference or
# docstring fails the build. Installs the core and the `docs` extra only.
docs: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

# Build the wheel, install it into a fresh virtualenv and run the smoke preset from another
# directory: the configs must ship inside the package.
WHEEL_TMP := $(shell mktemp -u /tmp/mazerl-wheel-XXXXXX)
wheel-check: $(STAMP)
	$(BIN)/pip wheel --quiet --no-deps -w $(WHEEL_TMP)/dist .
	$(PYTHON) -m venv $(WHEEL_TMP)/venv
	$(WHEEL_TMP)/venv/bin/pip install --quiet torch==2.13.0
	$(WHEEL_TMP)/venv/bin/pip install --quiet $(WHEEL_TMP)/dist/mazerl-*.whl
	cd $(WHEEL_TMP) && venv/bin/mazerl-train experiment=smoke threads=1 logger.progress=off \
		hydra.run.dir=run base.cache_dir=cache
	test -f $(WHEEL_TMP)/run/metrics.json
	rm -rf $(WHEEL_TMP)

lint: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

clean:
	rm -rf $(VENV) outputs multirun .pytest_cache .hypothesis
