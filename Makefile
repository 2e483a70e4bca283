# Two commands do everything on a fresh machine:  make demo  and  make test.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
ENGINE := tools/pulumi-engine/build.sh
K8S_PROVIDER := tools/k8s-provider/build.sh
YAML_LANGHOST := tools/yaml-langhost/build.sh
KUBE := tools/kube/build.sh

# Where `make demo` keeps the Pulumi state: file (.demo/state) or postgres (a throwaway local
# PostgreSQL server, scripts/postgres.sh). `make demo-down` uses whatever `make demo` used.
BACKEND ?=
DEMO_ENV = $(if $(BACKEND),DEMO_BACKEND=$(BACKEND))

.PHONY: help venv engine lint typecheck unit test demo demo-down bench constraints clean postgres postgres-down

help:
	@echo "make demo       run the main job: a real 'pulumi up' of the dev stack against the local Together simulator"
	@echo "make demo BACKEND=postgres   the same, with the Pulumi state in a local PostgreSQL server"
	@echo "make demo-down  destroy the demo stack and stop the simulator (and the PostgreSQL server)"
	@echo "make postgres   start a throwaway PostgreSQL server (.demo/postgres) and print its backend URL"
	@echo "make postgres-down  stop it and delete its data"
	@echo "make test       lint, type-check and run every test (builds the engine on first use)"
	@echo "make engine     build or locate the Pulumi engine, the Kubernetes provider plugin, the YAML language host"
	@echo "                and the Kubernetes control plane the simulator runs per cluster (--kubernetes)"
	@echo "make bench      run the benchmarks (not part of make test)"

# The virtualenv, with every Python dependency at the exact version in constraints.txt.
$(STAMP): pyproject.toml constraints.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[dev]'
	@touch $@

venv: $(STAMP)

engine:
	@$(ENGINE)
	@$(K8S_PROVIDER)
	@$(YAML_LANGHOST)
	@$(KUBE)

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: $(STAMP)
	$(VENV)/bin/mypy

unit: $(STAMP)
	$(PY) -m pytest tests/unit -q

test: lint typecheck
	@engine_bin="$$($(ENGINE))" && k8s_bin="$$($(K8S_PROVIDER))" && yaml_bin="$$($(YAML_LANGHOST))" && \
	  kube_bin="$$($(KUBE))" && \
	  TOGETHER_ENGINE_BIN="$$engine_bin" TOGETHER_K8S_PROVIDER_BIN="$$k8s_bin" \
	  TOGETHER_YAML_LANGHOST_BIN="$$yaml_bin" TOGETHER_KUBE_BIN="$$kube_bin" $(PY) -m pytest

# The demo's simulator runs every cluster on a real Kubernetes control plane (tools/kube/build.sh),
# and applies workloads with the Kubernetes provider plugin: both are built (or found) first.
DEMO_BINS = engine_bin="$$($(ENGINE))" && k8s_bin="$$($(K8S_PROVIDER))" && kube_bin="$$($(KUBE))" && \
	  TOGETHER_ENGINE_BIN="$$engine_bin" TOGETHER_K8S_PROVIDER_BIN="$$k8s_bin" TOGETHER_KUBE_BIN="$$kube_bin"

demo: $(STAMP)
	@$(DEMO_BINS) $(DEMO_ENV) bash scripts/demo.sh up

demo-down: $(STAMP)
	@$(DEMO_BINS) $(DEMO_ENV) bash scripts/demo.sh down

postgres:
	@bash scripts/postgres.sh start .demo/postgres
	@bash scripts/postgres.sh url .demo/postgres pulumi_state

postgres-down:
	@bash scripts/postgres.sh clean .demo/postgres

bench: $(STAMP)
	@engine_bin="$$($(ENGINE))" && TOGETHER_ENGINE_BIN="$$engine_bin" $(PY) -m bench

# Re-pin every Python dependency after changing pyproject.toml, from a fresh virtualenv so that
# nothing left over in .venv is pinned.
constraints:
	rm -rf .build/pin-venv && $(PYTHON) -m venv .build/pin-venv
	.build/pin-venv/bin/pip install --quiet --disable-pip-version-check -e '.[dev]'
	{ echo "# Exact versions for every Python dependency (direct and transitive), used as pip -c constraints."; \
	  echo "# Regenerate with: make constraints"; \
	  .build/pin-venv/bin/pip freeze --exclude-editable; } > constraints.txt
	rm -rf .build/pin-venv

clean:
	@if [ -f .demo/postgres/postgres.env ]; then bash scripts/postgres.sh clean .demo/postgres; fi
	rm -rf $(VENV) .build .demo .pytest_cache .mypy_cache .ruff_cache
