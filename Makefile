# capirepo's own targets. `make test` is the test command the README names.
GO            ?= go
GOLANGCI_LINT_VERSION ?= v2.15.0
TOOLS_BIN     ?= $(CURDIR)/bin/tools
GOLANGCI_LINT := $(TOOLS_BIN)/golangci-lint-$(GOLANGCI_LINT_VERSION)
FUZZTIME      ?= 60s

.PHONY: all build test test-race-names test-install test-race test-cosign lint fuzz bench example clean

all: build test lint

build:
	$(GO) build -o bin/capirepo ./cmd/capirepo

# The whole suite, each test run once: the packages and tests that run work
# concurrently (providers and flavors rendered at once, binaries built per
# platform at once, providers linted at once, folder writes, uploads) run
# under the race detector only, everything else without it.
# RACE_PKGS run whole under -race; RACE_TESTS (exact names, in builder and
# contract) are skipped in the plain pass and run under -race.
MODULE     := github.com/capirepo/capirepo
RACE_PKGS  := release publish publish/github publish/gitlab publish/local internal/dirlock sign
RACE_TESTS := TestBuild_MonorepoProvidersRenderConcurrently TestBuild_FlavorsRenderConcurrently \
	TestBuild_EqualsKustomizeBuildExceptTransforms TestBuild_ExampleGolden TestBuild_NothingWrittenUnderDir \
	TestBuild_Layout_MonorepoTemplatesOnlyWhereConfigured TestBuildBinaries_ExampleBothPlatformsReproducibleAndStamped \
	TestLint_ClusterAPIProvidersHaveNoErrors TestParseObjects_SameAsLegacy
RACE_TEST_DIRS := builder contract
empty :=
space := $(empty) $(empty)
bar   := |
race_re  = ^($(subst $(space),$(bar),$(strip $(RACE_TESTS))))$$
race_pkg = ^$(MODULE)/($(subst $(space),$(bar),$(strip $(RACE_PKGS))))$$
test: test-race-names
	pkgs=$$($(GO) list ./...) && $(GO) test -skip '$(race_re)' $$(echo "$$pkgs" | grep -vE '$(race_pkg)')
	$(GO) test -race -run '$(race_re)' $(foreach d,$(RACE_TEST_DIRS),./$(d)/)
	$(GO) test -race $(foreach d,$(RACE_PKGS),./$(d)/)

# Each RACE_TESTS name is a test of builder or contract and of no other
# package: a renamed test would otherwise drop out of the race pass, and a
# same-named test elsewhere would be skipped in the plain pass.
test-race-names:
	@for t in $(RACE_TESTS); do \
		where=$$(grep -rlE "^func $$t\(" --include='*_test.go' . | grep -v '^./test/'); \
		case "$$where" in ./builder/*_test.go|./contract/*_test.go) [ "$$(echo "$$where" | wc -l)" = 1 ] && continue;; esac; \
		echo "RACE_TESTS: $$t is defined in: $${where:-no test file} (want exactly one file in $(RACE_TEST_DIRS))" >&2; exit 1; \
	done

# What capirepo signs (blob bundles, image signature referrers) verifies
# with the cosign CLI (v3). The test builds cosign through the Go module
# proxy once per machine into the user cache folder
# (~/.cache/capirepo-test/cosign-v3.1.3 on Linux: about 7 minutes the first
# time on 2 cores, seconds after) and skips with a message when it cannot.
# Not part of `make test`; .ci/run runs it after the suite.
test-cosign:
	$(GO) test -tags cosign -run TestCosign -count=1 -v ./cmd/capirepo/

# The install check and the upgrade rehearsal against a real kube-apiserver
# and etcd started in process (each rehearsal installs and upgrades core
# Cluster API: 30 s to a minute each). test/apiserver is a Go module of its own: importing
# k8s.io/kubernetes needs replace directives for its staging modules, which
# capirepo's go.mod must never have. Its build is long cold (6 to 11 minutes
# on 2 cores, 2.4 GB of build cache), so it is not part of `make test`.
# /version needs the Kubernetes version linked in; -trimpath would break the
# test server's fixtures.
APISERVER_DIR := test/apiserver
test-install:
	cd $(APISERVER_DIR) && ./check-versions.sh
	cd $(APISERVER_DIR) && $(GO) vet ./...
	cd $(APISERVER_DIR) && $(GO) test -count=1 -timeout 40m \
		-ldflags "-X k8s.io/component-base/version.gitVersion=$$($(GO) list -m -f '{{.Version}}' k8s.io/kubernetes)" ./...

$(GOLANGCI_LINT):
	mkdir -p $(TOOLS_BIN)
	GOBIN=$(TOOLS_BIN) $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	mv $(TOOLS_BIN)/golangci-lint $(GOLANGCI_LINT)

lint: $(GOLANGCI_LINT)
	$(GO) vet ./...
	$(GOLANGCI_LINT) run ./...

# Each fuzz target for FUZZTIME; crashers land in testdata/fuzz as regression cases.
fuzz:
	$(GO) test ./provider/ -run '^$$' -fuzz '^FuzzParseConfig$$' -fuzztime $(FUZZTIME)
	$(GO) test ./provider/ -run '^$$' -fuzz '^FuzzParseSettings$$' -fuzztime $(FUZZTIME)
	$(GO) test ./provider/ -run '^$$' -fuzz '^FuzzParseMetadata$$' -fuzztime $(FUZZTIME)
	$(GO) test ./templates/ -run '^$$' -fuzz '^FuzzCheck$$' -fuzztime $(FUZZTIME)
	$(GO) test ./internal/clusterctlvars/ -run '^$$' -fuzz '^FuzzConvertLegacyVars$$' -fuzztime $(FUZZTIME)
	$(GO) test ./internal/yamlsafe/ -run '^$$' -fuzz '^FuzzMayHave$$' -fuzztime $(FUZZTIME)

bench:
	bash bench/run.sh

# The main job on the bundled example provider.
example:
	$(GO) run ./cmd/capirepo build examples/infrastructure-example --version v0.1.0 --out dist
	$(GO) run ./cmd/capirepo verify dist

clean:
	rm -rf bin dist
