# kapi-apiserver: the two commands a fresh machine needs are `make run` and `make test`.
#
# Node: every JavaScript command goes through `npm run …`/`npx …`. The devDependency "node" puts Node 24 first on
# the PATH of npm scripts; the machine's own `node` may be older and is never called directly.

SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help
MAKEFLAGS += --no-builtin-rules --warn-undefined-variables

NPM ?= npm
TOOLS_DIR := .cache/tools
HELM ?= $(TOOLS_DIR)/helm/helm
KUBECTL ?= $(TOOLS_DIR)/kubectl/kubectl
CHART := charts/kapi-apiserver
ARGS ?=

# The jest suites find the real binaries through these (test/charts, kubectl e2e cases).
export KAPI_HELM := $(abspath $(HELM))
export KAPI_KUBECTL := $(abspath $(KUBECTL))

# npm rewrites its hidden lockfile on every install, so it is the stamp of an install that matches package-lock.json.
NODE_MODULES_STAMP := node_modules/.package-lock.json

.PHONY: help
help: ## list the targets
	@grep -E '^[a-z][a-z0-9_-]*:.*## ' $(MAKEFILE_LIST) | awk -F ':.*## ' '{printf "  make %-14s %s\n", $$1, $$2}'

# --- dependencies ---------------------------------------------------------------------------------------------

.PHONY: node_modules
node_modules: $(NODE_MODULES_STAMP) ## install npm dependencies when missing or older than package-lock.json

$(NODE_MODULES_STAMP): package-lock.json
	$(NPM) ci
	@touch $@

.PHONY: tools
tools: $(HELM) $(KUBECTL) ## fetch helm v4.1 and kubectl v1.35 into .cache/tools (once)

# No prerequisites on purpose: the binaries keep their archive dates, and they are fetched only when missing.
$(HELM) $(KUBECTL) &:
	scripts/fetch-tools.sh $(TOOLS_DIR)

# Debian binaries the suites run for real: headless Chromium (the API documents page), Prometheus (a real scrape of
# kapi, the monitoring API's backend), promtool (the alert and recording rules' unit tests), the node exporter (a
# real node's series for the monitoring API), OpenLDAP's slapd with ldap-utils (the directory logins) and the CNCF
# distribution registry (docker-registry: the image lookup's registry). Installed only when missing; none of their
# services is left running or enabled (scripts/system-deps.sh).
SYSTEM_BINARIES := chromium prometheus promtool prometheus-node-exporter slapd ldapsearch docker-registry libjemalloc.so.2
SYSTEM_PACKAGES := chromium prometheus prometheus-node-exporter slapd ldap-utils docker-registry libjemalloc2
SYSTEM_SERVICES := prometheus prometheus-node-exporter slapd docker-registry

.PHONY: system-deps
system-deps: ## apt-get install chromium, prometheus (+promtool), prometheus-node-exporter, slapd, ldap-utils, docker-registry and libjemalloc2 (the image's allocator, for the bench) when missing (CI runs it before make test)
	scripts/system-deps.sh "$(SYSTEM_BINARIES)" "$(SYSTEM_PACKAGES)" "$(SYSTEM_SERVICES)"

# --- build and run --------------------------------------------------------------------------------------------

.PHONY: build
build: node_modules ## compile TypeScript into dist/
	$(NPM) run build

.PHONY: run
run: build ## install, build and start the server (PORT=… and other variables pass through; ARGS=… adds flags)
	$(NPM) start $(if $(strip $(ARGS)),-- $(ARGS))

# --- checks ---------------------------------------------------------------------------------------------------

.PHONY: lint
lint: node_modules ## eslint and prettier --check
	$(NPM) run lint

.PHONY: typecheck
typecheck: node_modules ## tsc --noEmit over src, test and bench
	$(NPM) run typecheck

.PHONY: test
test: system-deps lint typecheck build check-api-docs chart-check ## everything CI checks: lint, types, build, API documents, chart checks, every jest suite
	$(NPM) test

.PHONY: e2e
e2e: node_modules tools ## the e2e suite: against the sandbox, or the cluster KUBECONFIG names
	$(NPM) run test:e2e

.PHONY: e2e-real
e2e-real: node_modules tools ## the e2e suite against a real kube-apiserver 1.32 and 1.26 (kits of ../shared/kube; ports: see scripts/e2e-real.sh)
	scripts/e2e-real.sh

.PHONY: bench
bench: build ## SPEC §11 performance figures
	$(NPM) run bench

PLATFORM_DOCUMENT := api/platform.openapi.json
CLIENT_TYPES := examples/platform-client/platform-api.d.ts

# --- API documents ------------------------------------------------------------------------------------------

.PHONY: api-docs
api-docs: build ## regenerate api/ (platform and CRD OpenAPI documents) and the example client's generated types
	$(NPM) run --silent api-docs
	npx openapi-typescript $(PLATFORM_DOCUMENT) -o $(CLIENT_TYPES)

.PHONY: check-api-docs
check-api-docs: build
	$(NPM) run --silent api-docs:check
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	npx openapi-typescript $(PLATFORM_DOCUMENT) -o "$$tmp/types.d.ts" >/dev/null 2>&1; \
	diff -q $(CLIENT_TYPES) "$$tmp/types.d.ts" >/dev/null || { echo '$(CLIENT_TYPES) is stale: run `make api-docs`' >&2; exit 1; }

# --- chart and manifests --------------------------------------------------------------------------------------

.PHONY: chart-crds
chart-crds: ## copy crds/*.yaml into the chart (crds/ is the single source)
	rm -rf $(CHART)/crds
	mkdir -p $(CHART)/crds
	cp crds/*.yaml $(CHART)/crds/

.PHONY: manifests
manifests: tools chart-crds ## regenerate manifests/ from the chart
	scripts/render-manifests.sh $(HELM) manifests

.PHONY: tenant-guard
tenant-guard: build ## regenerate the chart's tenant guard policy (files/tenant-guard/) from src/tenant-guard
	$(NPM) run --silent tenant-guard

.PHONY: check-tenant-guard
check-tenant-guard: build
	$(NPM) run --silent tenant-guard:check

.PHONY: chart-check
chart-check: chart-lint check-chart-crds check-tenant-guard check-manifests ## helm lint --strict, chart CRDs, the tenant guard and manifests/ up to date

.PHONY: chart-lint
chart-lint: tools
	$(HELM) lint --strict $(CHART)
	$(HELM) lint --strict $(CHART) --set service.type=NodePort --set service.nodePort=30880

.PHONY: check-chart-crds
check-chart-crds:
	@diff -r crds $(CHART)/crds || { echo 'charts/kapi-apiserver/crds differs from crds/: run `make chart-crds`' >&2; exit 1; }

.PHONY: check-manifests
check-manifests: tools
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	scripts/render-manifests.sh $(HELM) "$$tmp"; \
	diff -r --exclude=README.md manifests "$$tmp" || { echo 'manifests/ is stale: run `make manifests`' >&2; exit 1; }

.PHONY: clean
clean: ## remove build output (keeps node_modules and the .cache/tools downloads)
	rm -rf dist coverage

.PHONY: distclean
distclean: clean ## also remove node_modules and .cache
	rm -rf node_modules .cache
