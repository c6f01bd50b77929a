# Two commands on a fresh machine (Python 3.11 + make): `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
export DAGSTER_HOME ?= $(CURDIR)/var/dagster_home
# Dagster opt-ins for the webserver and daemon of `make dev` (as `opportunity` sets them for itself):
# opportunity_assets/night.py, DAGSTER_RUN_SETTINGS, says what each does.
DAGSTER_RUN_SETTINGS := DAGSTER_EMIT_PARTITION_SUBSET_IN_PLANNED_EVENTS=1 DAGSTER_EVENT_BATCH_SIZE=200

.PHONY: run test lint dev bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@ $(VENV)/.installed

## run: one nightly scan on the bundled data, for the latest date it supports; prints the brief
run: $(VENV)/.installed
	@mkdir -p $(DAGSTER_HOME)
	$(BIN)/opportunity run

## test: lint, type-check and the whole test suite
test: $(VENV)/.installed-dev
	bash .ci/services.sh
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/pytest

## dev: the Dagster UI on http://127.0.0.1:3000 over the same instance and store as `make run`
dev: $(VENV)/.installed
	@mkdir -p $(DAGSTER_HOME)
	@[ -s $(DAGSTER_HOME)/dagster.yaml ] || cp deploy/dagster.local.yaml $(DAGSTER_HOME)/dagster.yaml
	env $(DAGSTER_RUN_SETTINGS) $(BIN)/dagster dev -h 127.0.0.1 -p 3000

## bench: orchestration overhead and backfill timing (prints numbers)
bench: $(VENV)/.installed-dev
	$(BIN)/python bench/night_overhead.py

clean:
	rm -rf var $(VENV)
