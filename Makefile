# syncprims: the two commands are `make demo` and `make test` (see README.md).
SHELL := /bin/bash
.DEFAULT_GOAL := help

# Downloads are cached under ~/.cache so warm runs are fast.
export GOMODCACHE ?= $(HOME)/.cache/go-mod
export GOCACHE ?= $(HOME)/.cache/go-build
export npm_config_cache ?= $(HOME)/.cache/npm
export GOTOOLCHAIN ?= auto
export CGO_ENABLED := 0

K8S_VERSION := v1.36.3
LOCAL := $(CURDIR)/.local
CONTROLPLANE := $(LOCAL)/bin/controlplane
KUBECTL := $(LOCAL)/bin/kubectl
GO_LDFLAGS := -s -w \
	-X k8s.io/component-base/version.gitVersion=$(K8S_VERSION) \
	-X k8s.io/component-base/version.gitMajor=1 \
	-X k8s.io/component-base/version.gitMinor=36 \
	-X k8s.io/component-base/version.gitTreeState=clean
CLUSTERS ?= mgmt edge-1 edge-2

.PHONY: help
help: ## list the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-14s %s\n", $$1, $$2}'

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	@touch $@

.PHONY: deps
deps: node_modules/.installed ## install the npm dependencies (cached in ~/.cache/npm)

$(CONTROLPLANE): controlplane/go.mod controlplane/go.sum $(wildcard controlplane/*.go)
	@mkdir -p $(LOCAL)/bin
	@echo "Building the local control plane from k8s.io/kubernetes $(K8S_VERSION): the first build downloads"
	@echo "and compiles for several minutes (warm builds take seconds); each package is listed as it compiles."
	cd controlplane && go build -v -trimpath -ldflags "$(GO_LDFLAGS)" -o $(CONTROLPLANE) . 2>&1 | awk '{ n++; printf "  [%4d] %s\n", n, $$0; fflush() }'; exit $${PIPESTATUS[0]}
	@ln -sf controlplane $(KUBECTL)

.PHONY: controlplane
controlplane: $(CONTROLPLANE) ## build the local control plane (a no-op when up to date)

# The kustomize helper (kustomize/, docs/adr/0006): the kustomize v5.8.1 that kubectl v1.36 embeds, sandboxed.
KUSTOMIZE_HELPER := dist/kustomize/syncprims-kustomize
$(KUSTOMIZE_HELPER): kustomize/go.mod kustomize/go.sum $(wildcard kustomize/*.go)
	cd kustomize && go build -trimpath -ldflags "-s -w -X sigs.k8s.io/kustomize/api/provenance.version=v5.8.1" -o ../$(KUSTOMIZE_HELPER) .

# The Helm helper (helm/, docs/adr/0013): helm v4.3.2's `helm template`, sandboxed; and the helm CLI of the
# same module and version (go.mod's tool directive), which the conformance tests compare it with.
HELM_VERSION := v4.3.2
HELM_LDFLAGS := -s -w -X helm.sh/helm/v4/internal/version.version=$(HELM_VERSION) -X helm.sh/helm/v4/internal/version.gitTreeState=clean
HELM_HELPER := dist/helm/syncprims-helm
HELM_CLI := $(LOCAL)/bin/helm
$(HELM_HELPER): helm/go.mod helm/go.sum $(filter-out %_test.go,$(wildcard helm/*.go))
	cd helm && go build -trimpath -ldflags "$(HELM_LDFLAGS)" -o ../$(HELM_HELPER) .

$(HELM_CLI): helm/go.mod helm/go.sum
	@mkdir -p $(LOCAL)/bin
	cd helm && go build -trimpath -ldflags "$(HELM_LDFLAGS)" -o $(HELM_CLI) helm.sh/helm/v4/cmd/helm

# The fetch helper (fetch/, docs/adr/0014): git (go-git v5) and OCI (go-containerregistry) sources, sandboxed;
# and the loopback OCI registry and SSH git server the integration tests and the bench reach.
FETCH_HELPER := dist/fetch/syncprims-fetch
TESTSERVERS := $(LOCAL)/bin/syncprims-testservers
FETCH_SOURCES := fetch/go.mod fetch/go.sum $(filter-out %_test.go,$(wildcard fetch/*.go fetch/internal/*/*.go))
$(FETCH_HELPER): $(FETCH_SOURCES)
	cd fetch && go build -trimpath -ldflags "-s -w" -o ../$(FETCH_HELPER) .

$(TESTSERVERS): $(FETCH_SOURCES) $(wildcard fetch/cmd/testservers/*.go)
	@mkdir -p $(LOCAL)/bin
	cd fetch && go build -trimpath -ldflags "-s -w" -o $(TESTSERVERS) ./cmd/testservers

.PHONY: build
build: deps $(KUSTOMIZE_HELPER) $(HELM_HELPER) $(FETCH_HELPER) ## compile TypeScript to dist/ (then `npx syncprims ...` works), and the kustomize, Helm and fetch helpers
	npx tsc -p tsconfig.build.json

.PHONY: crds
crds: build ## generate crds/ from the zod schemas in src/api, and config/ (the install manifests as a kustomize base)
	node dist/api/write-crds.js crds/
	node dist/cli/install/write-config.js config/

.PHONY: up
up: controlplane ## start the local clusters in the background (CLUSTERS="mgmt edge-1 edge-2")
	@$(CONTROLPLANE) --dir $(LOCAL) up $(CLUSTERS)

.PHONY: down
down: ## stop the demo's operators and the local clusters; leaves no process behind
	@bash examples/demo.sh stop
	@if [ -x $(CONTROLPLANE) ]; then $(CONTROLPLANE) --dir $(LOCAL) down; fi

.PHONY: status
status: controlplane ## show the local clusters
	@$(CONTROLPLANE) --dir $(LOCAL) status

.PHONY: lint
lint: deps ## eslint and the TypeScript type-check
	npx eslint .
	npx tsc -p tsconfig.json --noEmit
	cd controlplane && test -z "$$(gofmt -l .)" && go vet .
	cd kustomize && test -z "$$(gofmt -l .)" && go vet .
	cd helm && test -z "$$(gofmt -l .)" && go vet .
	cd fetch && test -z "$$(gofmt -l .)" && go vet ./...

.PHONY: test
test: deps controlplane build $(HELM_CLI) $(TESTSERVERS) lint ## everything: lint, type-check, unit and integration tests
	@# The demo's operators watch every namespace of the clusters the tests use: stopped first.
	@bash examples/demo.sh stop
	cd helm && go test ./...
	cd fetch && go test ./...
	NODE_OPTIONS=--experimental-vm-modules npx jest

.PHONY: soak
soak: deps controlplane build ## the long reliability runs: load, leaks, long property tests (at most 60 min, resumable; docs/RELIABILITY.md)
	bash soak/run.sh

.PHONY: noop-safety
noop-safety: deps controlplane build ## the no-op decision against real dry runs: every kind of hand edit on every object (about 1 min)
	NOOP_SAFETY_FULL=1 NODE_OPTIONS=--experimental-vm-modules npx jest test/integration/noop-safety.test.ts

.PHONY: demo
demo: deps controlplane build ## the three journeys (bootstrap, registration, rollout) on the local clusters
	@bash examples/demo.sh

# The oras CLI v1.3.6 (bench/oras/go.mod's tool directive), which the OCI benchmark (bench/git-oci.ts) compares the fetch helper with.
ORAS_CLI := $(LOCAL)/bin/oras
$(ORAS_CLI): bench/oras/go.mod bench/oras/go.sum
	@mkdir -p $(LOCAL)/bin
	cd bench/oras && go build -trimpath -ldflags "-s -w" -o $(ORAS_CLI) oras.land/oras/cmd/oras

.PHONY: bench
bench: deps controlplane build $(TESTSERVERS) $(ORAS_CLI) ## measure and write docs/BENCHMARKS.md
	@bash bench/run.sh

.PHONY: screenshot
screenshot: deps controlplane build ## draw docs/ui.png (the web view of a sample namespace, in headless Chromium)
	npx tsc -p tsconfig.bench.json
	node .local/bench-dist/bench/ui-screenshot.js docs/ui.png

.PHONY: clean
clean: down ## remove build output and local cluster state
	rm -rf dist $(LOCAL)
