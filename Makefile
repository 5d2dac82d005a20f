# HAPTIC developer entry points. `make demo` and `make test` install what
# they need; downloads and builds are cached under .cache/ (git-ignored).
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c

GO        ?= go
CACHE     := $(CURDIR)/.cache
BIN       := $(CACHE)/bin
SERIES    := 3.0 3.2 3.4
GOLANGCI_VERSION := v2.15.0
GOLANGCI  := $(BIN)/golangci-lint
export HAPTIC_CACHE_DIR := $(CACHE)

.PHONY: all test test-unit test-chart lint haproxy minicluster bench demo build deps fuzz generate controller-gen conformance

all: build

## deps: Debian packages the scripts and tests use (idempotent).
deps:
	@./hack/install-deps.sh

## haproxy: install HAProxy 3.0, 3.2 and 3.4 under .cache/haproxy/<series>.
haproxy: deps
	@for s in $(SERIES); do ./hack/install-haproxy.sh $$s; done

## minicluster: etcd, kube-apiserver, kube-controller-manager, echo-basic and the
## Gateway API conformance test binary into .cache/minicluster (cached on go.sum).
minicluster:
	@./hack/build-minicluster.sh

build:
	$(GO) build -o $(BIN)/ ./cmd/haptic ./cmd/haptic-agent

## generate: the code and manifests derived from the API types under api/:
## zz_generated.deepcopy.go and the CRDs in config/crd/bases (the one source),
## copied into charts/haptic/crds, by controller-gen from tools/codegen, built
## into .cache/bin on first use. `make test` fails while they are stale.
generate:
	@./hack/generate-crds.sh

controller-gen:
	@./hack/generate-crds.sh --build

## test: everything: lint, vet, unit tests with the race detector, integration
## tests against real HAProxy 3.0/3.2/3.4 and a real Kubernetes control plane.
test: lint haproxy minicluster controller-gen
	$(GO) vet ./...
	$(GO) test -race -count=1 $$($(GO) list ./... | grep -v -e '/internal/e2e$$' -e '/conformance$$')
	@# The product on the mini cluster runs alone: its zero-failed-request
	@# checks measure HAPTIC, not a machine loaded by other packages' tests.
	$(GO) test -race -count=1 ./internal/e2e/
	@# GATEWAY-HTTP core of the official Gateway API conformance suite, on
	@# the mini cluster (2-3 min); make conformance runs all the profiles.
	$(GO) test -count=1 -timeout 30m ./conformance/
	cd tools/codegen && $(GO) vet ./... && $(GO) test -race -count=1 ./...
	@# No -race: the chart tests run nothing concurrent of their own, and a race
	@# build of Helm would be a second cold build of it (the lint warms this one).
	cd tools/chart && $(GO) vet ./... && $(GO) test -count=1 ./...

## test-chart: the Helm chart's tests (tools/chart, a module of its own so the
## product does not depend on Helm): renders and golden files (-update
## rewrites them: `cd tools/chart && go test -run Golden -update`), lint,
## schema, typed objects, security settings, and the installed config's
## validation tests against HAProxy 3.4; tools/chart/install installs,
## upgrades and uninstalls the chart on the mini cluster (as root; it skips
## without `make minicluster`). A cold build of Helm takes 3-4 min.
test-chart: haproxy
	cd tools/chart && $(GO) vet ./... && $(GO) test -count=1 ./...

## conformance: the official Gateway API conformance suite v1.6.3 against
## HAPTIC installed in the mini cluster (the controller as a process, one
## HAProxy fleet per Gateway), profiles GATEWAY-HTTP, GATEWAY-GRPC and
## GATEWAY-TLS with the features the GatewayClass declares; writes the
## report to conformance/reports/ (see its README). As root.
CONFORMANCE_VERSION ?= $(shell git describe --always --dirty --abbrev=12)
CONFORMANCE_REPORTS := conformance/reports/v1.6.3/haproxy-haptic-haptic
conformance: haproxy minicluster
	mkdir -p $(CONFORMANCE_REPORTS) && rm -f $(CONFORMANCE_REPORTS)/*-report.yaml
	HAPTIC_CONFORMANCE=full HAPTIC_CONFORMANCE_VERSION=$(CONFORMANCE_VERSION) \
		HAPTIC_CONFORMANCE_REPORT=$(CURDIR)/$(CONFORMANCE_REPORTS)/experimental-$(CONFORMANCE_VERSION)-default-report.yaml \
		$(GO) test -count=1 -v -timeout 90m -run TestGatewayAPIConformance ./conformance/

## test-unit: fast tests only (no HAProxy, no cluster), with -race.
test-unit:
	$(GO) test -race -short -count=1 ./...

lint: $(GOLANGCI)
	$(GOLANGCI) run ./...
	cd tools/chart && $(GOLANGCI) run ./...

$(GOLANGCI):
	GOBIN=$(BIN) $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_VERSION)

## bench: the benchmarks, printed in go test's stable format.
bench: haproxy
	$(GO) test -run '^$$' -bench . -benchmem ./...

## demo: `haptic local` on examples/quickstart against a real HAProxy 3.4 on
## loopback, with two echo backends; drop Ingress files into the printed
## resources directory to add routes.
DEMO_LISTEN  ?= 127.0.0.1:8080
DEMO_STATS   ?= 127.0.0.1:8404
DEMO_METRICS ?= 127.0.0.1:9180
DEMO_DIR     := $(CACHE)/demo
demo: deps build
	./hack/install-haproxy.sh 3.4 >/dev/null
	rm -rf $(DEMO_DIR) && mkdir -p $(DEMO_DIR) && cp -r examples/quickstart/resources $(DEMO_DIR)/resources
	$(BIN)/haptic local -c examples/quickstart/config.yaml -r $(DEMO_DIR)/resources --haproxy 3.4 \
		--listen $(DEMO_LISTEN) --stats-listen $(DEMO_STATS) --metrics-listen $(DEMO_METRICS) \
		--echo 127.0.0.1:9001,127.0.0.1:9002

## fuzz: every fuzzer for FUZZ_EXECS executions (count-based: duration-based
## runs can end in a bare "context deadline exceeded" on Go 1.26).
FUZZ_EXECS ?= 20000x
fuzz:
	@set -e; for f in $$(grep -rl --include='*_test.go' '^func Fuzz' . | xargs dirname | sort -u); do \
		for name in $$(grep -h '^func Fuzz' $$f/*_test.go | sed 's/func \(Fuzz[A-Za-z0-9]*\).*/\1/'); do \
			echo "== $$f $$name"; \
			$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZ_EXECS) -fuzzminimizetime 1s $$f; \
		done; \
	done
