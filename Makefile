# AceMQ developer entry points. `make test` is what CI runs (.ci/run).
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c

GO ?= go
FUZZTIME ?= 30s
# The test run's private RabbitMQ node: its own name, ports and data directory.
TEST_BROKER := RABBITMQ_NODENAME=acemq-test@localhost RABBITMQ_NODE_PORT=5673 \
	ACEMQ_RABBITMQ_MGMT_PORT=15673 ACEMQ_RABBITMQ_DIR=$(CURDIR)/.rabbitmq/test \
	ACEMQ_TEST_URL=amqp://guest:guest@localhost:5673/ \
	ACEMQ_TEST_MANAGEMENT_URL=http://guest:guest@localhost:15673
# staticcheck is pinned in its own module (tools/go.mod) so the library's go.mod
# stays free of tool dependencies; `go tool` builds it from the module proxy.
STATICCHECK := $(GO) tool -modfile=tools/go.mod staticcheck
# Go files as `go list ./...` sees them: skip testdata, _* and .* dirs (.rabbitmq).
GOFILES = find . -type d \( -name testdata -o -name '_*' -o -name '.?*' \) -prune -o -type f -name '*.go' -print

.PHONY: demo test conformance test-unit lint fuzz tidy rabbitmq rabbitmq-stop

demo:
	$(GO) run ./cmd/acemq demo

# Everything: every test against a private RabbitMQ node (installed when
# missing, started for the run and stopped after it), then the short memory
# alarm scenario alone on that node (an alarm blocks every publisher on it),
# then the short failover scenario on a three-node cluster, then the
# benchmark harness's own tests (bench/, a module of its own), then lint.
test:
	$(TEST_BROKER) bash scripts/rabbitmq.sh run bash -c '$(GO) test -race -count=1 ./... && $(MAKE) --no-print-directory conformance chaos-alarm'
	@$(MAKE) --no-print-directory chaos-cluster
	$(GO) -C bench test -count=1 ./...
	@$(MAKE) --no-print-directory lint

# The transport conformance suite on both transports, with its counts (go test
# shows t.Logf only with -v). Needs the broker: run it through make test.
conformance:
	@$(GO) test -count=1 -run '^TestConformance$$' -v ./transport/memory/ ./transport/rabbitmq/ | grep -E 'behaviours ran|^(ok|FAIL|---)'

# The chaos harness (internal/chaos, docs/reliability.md): numbered, confirmed
# messages through a separate consumer process while faults are injected, then
# every one accounted for. `make test` runs the short run with every package;
# chaos-short runs it alone, chaos the full scenarios (20 kills, 10 forced
# closes, 3 broker restarts) with their reports.
#
# chaos runs on a node of its own (never the test node), because the restart
# scenario stops and starts it: the harness runs `scripts/rabbitmq.sh stop`
# and `scripts/rabbitmq.sh` with this environment. Not through
# `rabbitmq.sh run`: that keeps the script's lock for the whole command, and
# the harness's own start would wait on it.
CHAOS_BROKER := RABBITMQ_NODENAME=acemq-chaos@localhost RABBITMQ_NODE_PORT=5691 \
	ACEMQ_RABBITMQ_MGMT_PORT=15691 ACEMQ_RABBITMQ_DIR=$(CURDIR)/.rabbitmq/chaos \
	ACEMQ_TEST_URL=amqp://guest:guest@localhost:5691/ \
	ACEMQ_TEST_MANAGEMENT_URL=http://guest:guest@localhost:15691
.PHONY: chaos chaos-short chaos-alarm chaos-cluster
chaos-short:
	$(TEST_BROKER) bash scripts/rabbitmq.sh run $(GO) test -count=1 -run '^TestChaosShort$$' -v ./internal/chaos/

# Two memory alarms (docs/reliability.md), with the chaos tag, which keeps
# them out of `go test ./...`. Needs the broker: run it through make test.
chaos-alarm:
	$(GO) test -tags chaos -count=1 -run '^TestChaosAlarm$$' -v ./internal/chaos/

# The failover scenario (a quorum queue's leader node killed) on the
# three-node cluster of scripts/cluster.sh (nodes acemq-c1..c3@localhost,
# AMQP 5681-5683, data in .rabbitmq/cluster), started for the run and
# stopped after it. CLUSTER_TEST picks the run: the short one by default.
CLUSTER_URLS := amqp://guest:guest@localhost:5681/ amqp://guest:guest@localhost:5682/ amqp://guest:guest@localhost:5683/
CLUSTER_TEST ?= TestChaosFailover
chaos-cluster:
	bash scripts/cluster.sh start >/dev/null
	status=0; ACEMQ_CLUSTER_URLS='$(CLUSTER_URLS)' $(GO) test -tags chaos -count=1 -timeout 30m -run '^$(CLUSTER_TEST)$$' -v ./internal/chaos/ || status=$$?; \
	bash scripts/cluster.sh stop; exit $$status

chaos:
	$(CHAOS_BROKER) bash scripts/rabbitmq.sh >/dev/null
	status=0; $(CHAOS_BROKER) CHAOS_RESTART=yes $(GO) test -tags chaos -count=1 -timeout 30m -run '^TestChaosFull$$' -v ./internal/chaos/ || status=$$?; \
	$(CHAOS_BROKER) bash scripts/rabbitmq.sh stop; \
	$(MAKE) --no-print-directory chaos-cluster CLUSTER_TEST='(TestChaosFailoverFull|TestRungHopIsAtMostOnce)' || status=$$?; exit $$status

# No broker: integration tests skip when ACEMQ_TEST_URL is unset.
test-unit:
	env -u ACEMQ_TEST_URL $(GO) test -race ./...

lint:
	@unformatted=$$($(GOFILES) | xargs -r gofmt -l); \
	if [ -n "$$unformatted" ]; then echo "gofmt -l: not formatted:"; echo "$$unformatted"; exit 1; fi
	@# The core stays free of telemetry SDKs: only the adapters import them.
	@sdks=$$($(GO) list -deps . ./transport/... ./acemqtest ./deadletter ./admin | grep -E '^(github.com/prometheus|go.opentelemetry.io)/' || true); \
	if [ -n "$$sdks" ]; then echo "the core imports a telemetry SDK:"; echo "$$sdks"; exit 1; fi
	$(GO) vet ./...
	$(STATICCHECK) ./...
	$(GO) -C bench vet ./...
	cd bench && $(GO) tool -modfile=../tools/go.mod staticcheck ./...

# Runs every Fuzz* target of every package for FUZZTIME each; new targets are
# found by `go test -list`, so nothing here needs editing when one is added.
fuzz:
	@pkgs=$$($(GO) list ./...); \
	for pkg in $$pkgs; do \
	  fns=$$($(GO) test -list '^Fuzz' "$$pkg"); \
	  for fn in $$(grep '^Fuzz' <<<"$$fns" || true); do \
	    echo "== $$fn ($$pkg, $(FUZZTIME))"; \
	    $(GO) test -run '^$$' -fuzz "^$$fn\$$" -fuzztime '$(FUZZTIME)' "$$pkg"; \
	  done; \
	done

tidy:
	$(GO) mod tidy
	cd tools && $(GO) mod tidy

rabbitmq:
	@bash scripts/rabbitmq.sh

rabbitmq-stop:
	@bash scripts/rabbitmq.sh stop

# Benchmarks (bench/, a module of its own so Watermill stays out of go.mod;
# docs/benchmarks.md): raw amqp091-go, AceMQ and Watermill in alternating
# rounds on the test node, then the root package's micro benchmarks. A
# Markdown table on stdout, the JSON in bench/results/latest.json.
# bench-quick is the small run (under two minutes).
.PHONY: bench bench-quick
bench:
	$(TEST_BROKER) bash scripts/rabbitmq.sh run $(GO) -C bench run ./cmd/acemq-bench

bench-quick:
	$(TEST_BROKER) bash scripts/rabbitmq.sh run $(GO) -C bench run ./cmd/acemq-bench -quick
