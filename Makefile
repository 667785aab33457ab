# One entry point for people and CI. `make demo` runs Shoal's main job; `make check` every check.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: venv demo test lint typecheck layers check bench bench-nova fuzz clean conformance

AGENTS_STAMP := $(VENV)/agents/.installed

$(STAMP): pyproject.toml | $(AGENTS_STAMP)
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

# Heat's in-guest agents (os-collect-config, os-refresh-config, os-apply-config and heat-agents'
# hooks from its sdist), pinned, in their own venv: the local provider runs them per server.
$(AGENTS_STAMP): scripts/agents.sh
	PY=$(PY) scripts/agents.sh $(VENV)

venv: $(STAMP)

demo: $(STAMP)
	scripts/demo.sh

test: $(STAMP)
	$(BIN)/pytest -n 5 --dist worksteal

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

typecheck: $(STAMP)
	$(BIN)/mypy

layers: $(STAMP)
	$(BIN)/lint-imports

# Every check runs even when one fails; a summary at the end (scripts/check.sh).
check: $(STAMP)
	scripts/check.sh

bench: $(STAMP)
	$(BIN)/python benchmarks/placement.py
	$(BIN)/python benchmarks/orchestration.py
	$(BIN)/python benchmarks/cli.py

bench-nova: $(STAMP)
	$(BIN)/python benchmarks/nova_side_by_side.py

fuzz: $(STAMP)
	$(BIN)/pytest -m fuzz tests/fuzz

# Senlin conformance: senlin-tempest-plugin 1.8.0 against `shoal server` in Keystone mode (real
# Keystone, sim provider); fails below 291 of 306 passed (CONF_THRESHOLD). Then Heat's gabbi
# API suite (heat-tempest-plugin 3.0.0) against the orchestration façade; fails below 45 of 47.
conformance: $(STAMP)
	tests/conformance/run.sh
	tests/conformance/heat.sh

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
