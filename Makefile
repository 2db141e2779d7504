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
	cd controlplane && go build -trimpath -ldflags "$(GO_LDFLAGS)" -o $(CONTROLPLANE) .
	@ln -sf controlplane $(KUBECTL)

.PHONY: controlplane
controlplane: $(CONTROLPLANE) ## build the local control plane (a no-op when up to date)

.PHONY: build
build: deps ## compile TypeScript to dist/ (then `npx syncprims ...` works)
	npx tsc -p tsconfig.build.json

.PHONY: crds
crds: build ## generate crds/ from the zod schemas in src/api, and config/ (the install manifests as a kustomize base)
	node dist/api/write-crds.js crds/
	node dist/cli/write-config.js config/

.PHONY: up
up: controlplane ## start the local clusters in the background (CLUSTERS="mgmt edge-1 edge-2")
	@$(CONTROLPLANE) --dir $(LOCAL) up $(CLUSTERS)

.PHONY: down
down: ## stop the local clusters; leaves no process behind
	@if [ -x $(CONTROLPLANE) ]; then $(CONTROLPLANE) --dir $(LOCAL) down; fi

.PHONY: status
status: controlplane ## show the local clusters
	@$(CONTROLPLANE) --dir $(LOCAL) status

.PHONY: lint
lint: deps ## eslint and the TypeScript type-check
	npx eslint .
	npx tsc -p tsconfig.json --noEmit
	cd controlplane && test -z "$$(gofmt -l .)" && go vet .

.PHONY: test
test: deps controlplane build lint ## everything: lint, type-check, unit and integration tests
	NODE_OPTIONS=--experimental-vm-modules npx jest

.PHONY: demo
demo: deps controlplane build ## bring the local clusters up and show what runs on them
	@bash examples/demo.sh

.PHONY: bench
bench: deps controlplane build ## measure and write docs/BENCHMARKS.md
	@bash bench/run.sh

.PHONY: clean
clean: down ## remove build output and local cluster state
	rm -rf dist $(LOCAL)
