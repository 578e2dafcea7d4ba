# Two entry points (see README): `make demo` runs the main job, `make test` runs the test suite.
# Both install into .venv/ at the repo root on first use and reuse it afterwards.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint format clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e '.[dev,cluster]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/mazerl-train

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/pytest

lint: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

clean:
	rm -rf $(VENV) outputs multirun .pytest_cache .hypothesis
