# AceMQ developer entry points. `make test` is what CI runs (.ci/run).
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c

GO ?= go
FUZZTIME ?= 30s
# The test nodes send an unconfirmed at-least-once dead letter again after 5s
# instead of RabbitMQ's 180s, so that the conformance behaviour that waits
# for one takes seconds (the chaos nodes keep the default, as users run it).
TEST_DEAD_LETTER_RETRY_MS := 5000
# The development certificates of the test nodes' amqps:// listeners
# (target tls-certs).
TLS_CERTS := $(CURDIR)/.rabbitmq/tls-certs
# The test run's private RabbitMQ node: its own name, ports and data
# directory, and an amqps:// listener on the certificates of TLS_CERTS.
TEST_BROKER := ACEMQ_RABBITMQ_DEAD_LETTER_RETRY_MS=$(TEST_DEAD_LETTER_RETRY_MS) \
	RABBITMQ_NODENAME=acemq-test@localhost RABBITMQ_NODE_PORT=5673 \
	ACEMQ_RABBITMQ_MGMT_PORT=15673 ACEMQ_RABBITMQ_DIR=$(CURDIR)/.rabbitmq/test \
	ACEMQ_RABBITMQ_TLS_DIR=$(TLS_CERTS) ACEMQ_RABBITMQ_TLS_PORT=5675 \
	ACEMQ_TEST_URL=amqp://guest:guest@localhost:5673/ \
	ACEMQ_TEST_MANAGEMENT_URL=http://guest:guest@localhost:15673 \
	ACEMQ_TEST_TLS_URL=amqps://guest:guest@localhost:5675/ ACEMQ_TEST_TLS_CERTS=$(TLS_CERTS)
# The same for RabbitMQ 4.0 (Debian trixie's 4.0.5, from the chroot
# scripts/rabbitmq.sh makes and reuses; its data directory lives in there).
TEST_BROKER4 := ACEMQ_RABBITMQ_DEAD_LETTER_RETRY_MS=$(TEST_DEAD_LETTER_RETRY_MS) \
	ACEMQ_RABBITMQ_SERIES=4.0 RABBITMQ_NODENAME=acemq-test4@localhost RABBITMQ_NODE_PORT=5674 \
	ACEMQ_RABBITMQ_MGMT_PORT=15674 ACEMQ_RABBITMQ_LOCK=/tmp/acemq-rabbitmq-test4.lock \
	ACEMQ_RABBITMQ_TLS_DIR=$(TLS_CERTS) ACEMQ_RABBITMQ_TLS_PORT=5676 \
	ACEMQ_TEST_URL=amqp://guest:guest@localhost:5674/ \
	ACEMQ_TEST_MANAGEMENT_URL=http://guest:guest@localhost:15674 \
	ACEMQ_TEST_TLS_URL=amqps://guest:guest@localhost:5676/ ACEMQ_TEST_TLS_CERTS=$(TLS_CERTS)
# The console's browser tests start their own headless Chromium (Debian's,
# installed when missing by scripts/chromium.sh) from this path.
TEST_CHROMIUM = ACEMQ_TEST_CHROMIUM=$$(bash scripts/chromium.sh path)
# The test run's private PostgreSQL server (scripts/postgres.sh), for the SQL
# schema registry's tests: its own port and data directory.
TEST_POSTGRES := ACEMQ_POSTGRES_PORT=5433 ACEMQ_POSTGRES_DIR=$(CURDIR)/.postgres/test
# The pattern packages, built on the root: held to the core's dependency
# rules (make lint).
PATTERN_PKGS := ./slip ./pipeline ./saga ./partition ./stream ./schedule
# staticcheck is pinned in its own module (tools/go.mod) so the library's go.mod
# stays free of tool dependencies; `go tool` builds it from the module proxy.
STATICCHECK := $(GO) tool -modfile=tools/go.mod staticcheck
# Go files as `go list ./...` sees them: skip testdata, _* and .* dirs (.rabbitmq).
GOFILES = find . -type d \( -name testdata -o -name '_*' -o -name '.?*' \) -prune -o -type f -name '*.go' -print

.PHONY: demo test conformance tls-certs test-unit lint rules fuzz tidy rabbitmq rabbitmq-stop postgres postgres-stop

demo:
	$(GO) run ./cmd/acemq demo

# Everything: every test against a private RabbitMQ 3.10 node (installed
# when missing, started for the run and stopped after it), with its
# conformance counts and the short memory alarm scenario alone on that node
# (an alarm blocks every publisher on it); at the same time, on a private
# RabbitMQ 4.0 node, the tests of the packages whose tests reach the broker
# (scripts/broker-packages.sh) with its conformance counts: the two parts
# wait on their brokers more than they use the two cores, and each prints
# its output when both are done (test-3.10, test-4.0). Both use one private
# PostgreSQL server (Debian's, installed when missing), each node has an
# amqps:// listener on development certificates (TestRealTLSListener), and
# the console's browser tests a headless Chromium (TEST_CHROMIUM). Then the
# short failover scenarios on a three-node cluster (the waits in the
# consumer, and at-least-once rungs) and the short restart scenario (a
# quorum source, at-least-once rungs) on a 3.10 and a 4.0 chaos node, each
# failing on any loss; then the benchmark harness's own tests (bench/, a
# module of its own), then lint. The time each part took is printed at the
# end. The short scenarios' nodes resend a held at-least-once dead letter
# after CHAOS_SHORT_RETRY_MS, not 180s: that changes how soon it comes home,
# not whether it does (make chaos keeps the default).
CHAOS_SHORT_RETRY_MS := 20000
TEST_LOGS := $(CURDIR)/.test-logs
test: tls-certs
	@t0=$$SECONDS; mkdir -p $(TEST_LOGS); \
	status=0; $(TEST_POSTGRES) bash scripts/postgres.sh run bash -c '\
	  $(MAKE) --no-print-directory test-3.10 >$(TEST_LOGS)/3.10.log 2>&1 & a=$$!; \
	  $(MAKE) --no-print-directory test-4.0 >$(TEST_LOGS)/4.0.log 2>&1 & b=$$!; \
	  sa=0; wait $$a || sa=$$?; sb=0; wait $$b || sb=$$?; \
	  cat $(TEST_LOGS)/3.10.log $(TEST_LOGS)/4.0.log; exit $$((sa | sb))' || status=$$?; \
	t1=$$SECONDS; \
	echo "make test: RabbitMQ 3.10 and 4.0, at the same time, took $$((t1 - t0))s"; \
	[ $$status = 0 ] || exit $$status; \
	$(MAKE) --no-print-directory chaos-cluster CLUSTER_TEST='(TestChaosFailover|TestChaosFailoverLadder)' CHAOS_DEAD_LETTER_RETRY_MS=$(CHAOS_SHORT_RETRY_MS); \
	$(MAKE) --no-print-directory chaos-restart CHAOS_DEAD_LETTER_RETRY_MS=$(CHAOS_SHORT_RETRY_MS); \
	$(MAKE) --no-print-directory chaos-restart CHAOS_SERIES=4.0 CHAOS_DEAD_LETTER_RETRY_MS=$(CHAOS_SHORT_RETRY_MS); \
	t2=$$SECONDS; \
	echo "make test: the failover and restart scenarios took $$((t2 - t1))s"; \
	$(GO) -C bench test -count=1 ./...; \
	$(MAKE) --no-print-directory lint; \
	echo "make test: RabbitMQ 3.10 and 4.0 $$((t1 - t0))s, failover and restart scenarios $$((t2 - t1))s, bench and lint $$((SECONDS - t2))s; $$((SECONDS - t0))s in all"

# make test's two broker parts, each on its own node (and PostgreSQL, when
# not already answering: make test starts it once for both). TestConformance
# runs once, in `make conformance`, which prints its counts.
.PHONY: test-3.10 test-4.0
test-3.10:
	@t0=$$SECONDS; \
	$(TEST_CHROMIUM) $(TEST_BROKER) $(TEST_POSTGRES) bash scripts/rabbitmq.sh run bash scripts/postgres.sh run bash -c '$(GO) test -race -count=1 -skip "^TestConformance$$" ./... && $(MAKE) --no-print-directory conformance chaos-alarm'; \
	echo "make test: RabbitMQ 3.10 and PostgreSQL took $$((SECONDS - t0))s"
test-4.0:
	@t0=$$SECONDS; \
	$(TEST_CHROMIUM) $(TEST_BROKER4) $(TEST_POSTGRES) bash scripts/rabbitmq.sh run bash scripts/postgres.sh run bash -c '$(GO) test -race -count=1 -skip "^TestConformance$$" $$(GO=$(GO) bash scripts/broker-packages.sh) && $(MAKE) --no-print-directory conformance CONFORMANCE=./transport/rabbitmq/'; \
	echo "make test: RabbitMQ 4.0 and PostgreSQL took $$((SECONDS - t0))s"

# TLS_CERTS (TestRealTLSListener, of the root package and of the command,
# connects to the test nodes' amqps:// listeners on them): made by `acemq certs` when missing, and again once a month old
# (they are valid 90 days). A node still running with older files is
# refused by rabbitmq.sh, which says to stop it.
tls-certs:
	@if [ -z "$$(find $(TLS_CERTS)/server_certificate.pem -mtime -30 2>/dev/null)" ]; then \
		$(GO) run ./cmd/acemq certs --out $(TLS_CERTS) --force >/dev/null; fi

# The transport conformance suite, with its counts per target (go test shows
# t.Logf only with -v): memory:// in each RabbitMQ version it emulates, and
# the RabbitMQ node at ACEMQ_TEST_URL. Needs the broker: run it through make
# test. CONFORMANCE picks the packages (the 4.0 run needs only RabbitMQ's).
CONFORMANCE ?= ./transport/memory/ ./transport/rabbitmq/
conformance:
	@$(GO) test -race -count=1 -run '^TestConformance$$' -v $(CONFORMANCE) | grep -E 'behaviours ran|^(ok|FAIL|---)'

# The chaos harness (internal/chaos, docs/reliability.md): numbered, confirmed
# messages through a separate consumer process while faults are injected, then
# every one accounted for. `make test` runs the short run with every package;
# chaos-short runs it alone, chaos the full scenarios with their reports: 20
# kills, 10 forced closes, 5 alarms, 3 broker restarts under a quorum source
# with each kind of rung on RabbitMQ 3.10 and on 4.0, and on the cluster 5
# leader kills with the waits in the consumer and with each kind of rung.
#
# The restart scenario runs on nodes of their own (never the test nodes),
# because it stops and starts them: the harness runs `scripts/rabbitmq.sh
# stop` and `scripts/rabbitmq.sh` with this environment. Not through
# `rabbitmq.sh run`: that keeps the script's lock for the whole command, and
# the harness's own start would wait on it; and with a lock file of their
# own, so that no other checkout's `rabbitmq.sh run` holds up a restart.
#
# CHAOS_DEAD_LETTER_RETRY_MS, when set, is the chaos nodes' and the
# cluster's dead_letter_worker_publisher_confirm_timeout: how long an
# at-least-once rung holds a dead letter its source queue has not confirmed
# before sending it again. make chaos leaves RabbitMQ's default (180000), as
# users run it; the short runs of make test may shorten it (losses do not
# depend on it, the time a held dead letter takes to come home does).
CHAOS_DEAD_LETTER_RETRY_MS ?=
CHAOS_ENV := ACEMQ_RABBITMQ_LOCK=/tmp/acemq-rabbitmq-chaos.lock ACEMQ_RABBITMQ_DEAD_LETTER_RETRY_MS=$(CHAOS_DEAD_LETTER_RETRY_MS)
CHAOS_BROKER := RABBITMQ_NODENAME=acemq-chaos@localhost RABBITMQ_NODE_PORT=5691 \
	ACEMQ_RABBITMQ_MGMT_PORT=15691 ACEMQ_RABBITMQ_DIR=$(CURDIR)/.rabbitmq/chaos $(CHAOS_ENV) \
	ACEMQ_TEST_URL=amqp://guest:guest@localhost:5691/ \
	ACEMQ_TEST_MANAGEMENT_URL=http://guest:guest@localhost:15691
# RabbitMQ 4.0's chaos node (its data directory lives in the chroot).
CHAOS_BROKER4 := ACEMQ_RABBITMQ_SERIES=4.0 RABBITMQ_NODENAME=acemq-chaos4@localhost RABBITMQ_NODE_PORT=5692 \
	ACEMQ_RABBITMQ_MGMT_PORT=15692 $(CHAOS_ENV) \
	ACEMQ_TEST_URL=amqp://guest:guest@localhost:5692/ \
	ACEMQ_TEST_MANAGEMENT_URL=http://guest:guest@localhost:15692
.PHONY: chaos chaos-short chaos-alarm chaos-cluster chaos-restart chaos-idempotent
chaos-short: tls-certs
	$(TEST_BROKER) bash scripts/rabbitmq.sh run $(GO) test -count=1 -run '^TestChaosShort$$' -v ./internal/chaos/

# Two memory alarms (docs/reliability.md), with the chaos tag, which keeps
# them out of `go test ./...`. Needs the broker: run it through make test.
chaos-alarm:
	$(GO) test -tags chaos -count=1 -run '^TestChaosAlarm$$' -v ./internal/chaos/

# The restart scenario on the chaos node of CHAOS_SERIES (3.10, the default,
# or 4.0), started for the run and stopped after it. CHAOS_RESTART_TEST
# picks the run: by default the short one (two restarts, a quorum source,
# at-least-once rungs; any loss fails it), TestChaosRestart the full one.
CHAOS_SERIES ?= 3.10
CHAOS_RESTART_TEST ?= TestChaosRestartShort
CHAOS_NODE = $(if $(filter 4.0,$(CHAOS_SERIES)),$(CHAOS_BROKER4),$(CHAOS_BROKER))
chaos-restart:
	$(CHAOS_NODE) bash scripts/rabbitmq.sh >/dev/null
	status=0; $(CHAOS_NODE) CHAOS_RESTART=yes $(GO) test -tags chaos -count=1 -timeout 60m -run '^$(CHAOS_RESTART_TEST)$$' -v ./internal/chaos/ || status=$$?; \
	$(CHAOS_NODE) bash scripts/rabbitmq.sh stop; exit $$status

# Delayed send across a broker restart (docs/scheduling.md): 300 messages
# due in 90s, the node stopped and started again while they wait on the
# scheduler's 1m rung, every one counted (any loss fails it) and its
# lateness reported; on a node of its own (acemq-sched@localhost, AMQP
# 5690, management 15690; 3.10's data in .rabbitmq/sched, 4.0's in the
# chroot) with a lock file of its own, started for the run and stopped
# after it. SCHED_SERIES picks RabbitMQ 3.10 (the default) or 4.0. About
# two and a half minutes.
SCHED_SERIES ?= 3.10
SCHED_ENV := RABBITMQ_NODENAME=acemq-sched@localhost RABBITMQ_NODE_PORT=5690 ACEMQ_RABBITMQ_MGMT_PORT=15690 \
	ACEMQ_RABBITMQ_LOCK=/tmp/acemq-rabbitmq-sched.lock \
	ACEMQ_TEST_URL=amqp://guest:guest@localhost:5690/ \
	ACEMQ_TEST_MANAGEMENT_URL=http://guest:guest@localhost:15690
SCHED_NODE = $(if $(filter 4.0,$(SCHED_SERIES)),ACEMQ_RABBITMQ_SERIES=4.0 $(SCHED_ENV),ACEMQ_RABBITMQ_DIR=$(CURDIR)/.rabbitmq/sched $(SCHED_ENV))
.PHONY: chaos-schedule
chaos-schedule:
	$(SCHED_NODE) bash scripts/rabbitmq.sh >/dev/null
	status=0; $(SCHED_NODE) CHAOS_RESTART=yes $(GO) test -tags chaos -count=1 -timeout 10m -run '^TestChaosScheduleRestart$$' -v ./internal/chaos/ || status=$$?; \
	$(SCHED_NODE) bash scripts/rabbitmq.sh stop; exit $$status

# The failover scenario (a quorum queue's leader node killed) on the
# three-node cluster of scripts/cluster.sh (nodes acemq-c1..c3@localhost,
# AMQP 5681-5683, management 15681-15683, data in .rabbitmq/cluster),
# started for the run and stopped after it. CLUSTER_TEST picks the run: the
# short one by default (TestChaosFailoverLadder is the short run with
# at-least-once rungs). The tests reach only the cluster's nodes: their
# management APIs are found from ACEMQ_CLUSTER_URLS (AMQP port + 10000), and
# what they name is deleted there, never at ACEMQ_TEST_MANAGEMENT_URL.
CLUSTER_URLS := amqp://guest:guest@localhost:5681/ amqp://guest:guest@localhost:5682/ amqp://guest:guest@localhost:5683/
CLUSTER_TEST ?= TestChaosFailover
chaos-cluster:
	$(CHAOS_ENV) bash scripts/cluster.sh start >/dev/null
	status=0; $(CHAOS_ENV) ACEMQ_CLUSTER_URLS='$(CLUSTER_URLS)' $(GO) test -tags chaos -count=1 -timeout 90m -run '^$(CLUSTER_TEST)$$' -v ./internal/chaos/ || status=$$?; \
	$(CHAOS_ENV) bash scripts/cluster.sh stop; exit $$status

# Every full run, one after the other: the 3.10 chaos node's (kill, close,
# alarm, restart), the 4.0 chaos node's (restart), the cluster's (failover
# and TestRungHopIsAtMostOnce), the idempotent consumer's (chaos-idempotent),
# the scheduler's restart on 3.10 and 4.0 (chaos-schedule). Fails if any of them fails; the contract
# rungs' expected losses are printed (EXPECTED LOSS), not failures.
chaos:
	$(CHAOS_BROKER) bash scripts/rabbitmq.sh >/dev/null
	status=0; $(CHAOS_BROKER) CHAOS_RESTART=yes $(GO) test -tags chaos -count=1 -timeout 90m -run '^(TestChaosFull|TestChaosRestart)$$' -v ./internal/chaos/ || status=$$?; \
	$(CHAOS_BROKER) bash scripts/rabbitmq.sh stop; \
	$(MAKE) --no-print-directory chaos-restart CHAOS_SERIES=4.0 CHAOS_RESTART_TEST=TestChaosRestart || status=$$?; \
	$(MAKE) --no-print-directory chaos-cluster CLUSTER_TEST='(TestChaosFailoverFull|TestRungHopIsAtMostOnce)' || status=$$?; \
	$(MAKE) --no-print-directory chaos-idempotent || status=$$?; \
	$(MAKE) --no-print-directory chaos-schedule || status=$$?; \
	$(MAKE) --no-print-directory chaos-schedule SCHED_SERIES=4.0 || status=$$?; exit $$status

# The idempotent consumer's full runs (docs/reliability.md): 20 kills and
# 10 forced closes on SQLite and on PostgreSQL, with idempotency.Handler
# and with sqlstore.TxHandler, on the chaos node (started for the run and
# stopped after it) and the test PostgreSQL server. IDEM_NODE names another
# node (a helper's own: RABBITMQ_NODENAME=... RABBITMQ_NODE_PORT=... and
# the rest, as CHAOS_BROKER does).
IDEM_NODE ?= $(CHAOS_BROKER)
chaos-idempotent:
	$(IDEM_NODE) bash scripts/rabbitmq.sh >/dev/null
	status=0; $(IDEM_NODE) $(TEST_POSTGRES) ACEMQ_TEST_POSTGRES_URL=postgres://acemq@localhost:5433/acemq?sslmode=disable \
	  bash scripts/postgres.sh run $(GO) test -tags chaos -count=1 -timeout 60m -run '^TestChaosIdempotentFull$$' -v ./internal/chaos/ || status=$$?; \
	$(IDEM_NODE) bash scripts/rabbitmq.sh stop; exit $$status

# No broker and no PostgreSQL: their tests skip when ACEMQ_TEST_URL and
# ACEMQ_TEST_POSTGRES_URL are unset.
test-unit:
	env -u ACEMQ_TEST_URL -u ACEMQ_TEST_POSTGRES_URL $(GO) test -race ./...

lint: rules
	@unformatted=$$($(GOFILES) | xargs -r gofmt -l); \
	if [ -n "$$unformatted" ]; then echo "gofmt -l: not formatted:"; echo "$$unformatted"; exit 1; fi
	@# The core (and the actuator, which takes the metrics as a handler) stays
	@# free of telemetry SDKs: only the adapters import them.
	@sdks=$$($(GO) list -deps . ./transport/... ./acemqtest ./deadletter ./admin ./actuator $(PATTERN_PKGS) | grep -E '^(github.com/prometheus|go.opentelemetry.io)/' || true); \
	if [ -n "$$sdks" ]; then echo "the core imports a telemetry SDK:"; echo "$$sdks"; exit 1; fi
	@# The core links no format library: codec/protobuf and codec/avro each
	@# bring their own, to a service that imports them.
	@formats=$$($(GO) list -deps . ./transport/... ./acemqtest ./deadletter ./admin ./schemaregistry $(PATTERN_PKGS) | grep -E '^(google.golang.org/protobuf|github.com/hamba/avro)/' || true); \
	if [ -n "$$formats" ]; then echo "the core imports a format library:"; echo "$$formats"; exit 1; fi
	@# A service that only uses amqp:// does not link the in-process broker
	@# (nor through a pattern package).
	@inproc=$$($(GO) list -deps . $(PATTERN_PKGS) | grep -E '/transport/(memory|transporttest)$$' || true); \
	if [ -n "$$inproc" ]; then echo "the root package (or a pattern package) links the in-process broker:"; echo "$$inproc"; exit 1; fi
	@# Database drivers only in the packages that open a database with them.
	@drivers=$$($(GO) list -deps . ./transport/... ./acemqtest ./acemqprom ./deadletter ./admin ./schemaregistry ./schemaregistry/sqlregistry ./idempotency ./idempotency/sqlstore ./outbox ./outbox/sqlstore $(PATTERN_PKGS) | grep -E '^(modernc\.org|github\.com/jackc)/' || true); \
	if [ -n "$$drivers" ]; then echo "a package outside the sqlite and postgres driver sub-packages links a database driver:"; echo "$$drivers"; exit 1; fi
	@# chromedp drives the console's browser tests only (internal/browsertest
	@# and _test files): no package of the library or the command links it.
	@browser=$$($(GO) list -deps $$($(GO) list ./... | grep -v '/internal/browsertest$$') | grep -E '^github.com/chromedp/' || true); \
	if [ -n "$$browser" ]; then echo "a non-test package links chromedp:"; echo "$$browser"; exit 1; fi
	$(GO) vet ./...
	$(STATICCHECK) ./...
	$(GO) -C bench vet ./...
	cd bench && $(GO) tool -modfile=../tools/go.mod staticcheck ./...

# The Prometheus alert rules of dashboards/ (docs/observability.md), checked
# by promtool, from Debian's prometheus package (installed when missing,
# never its service: scripts/promtool.sh). The Go tests of acemqprom check
# that the rules and the Grafana dashboard use only metrics it exports.
rules:
	@bash scripts/promtool.sh check rules dashboards/acemq-alerts.yml

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

postgres:
	@$(TEST_POSTGRES) bash scripts/postgres.sh

postgres-stop:
	@$(TEST_POSTGRES) bash scripts/postgres.sh stop

# Benchmarks (bench/, a module of its own so Watermill stays out of go.mod;
# docs/benchmarks.md): raw amqp091-go, AceMQ and Watermill in alternating
# rounds on the test node, then the root package's micro benchmarks. A
# Markdown table on stdout, the JSON in bench/results/latest.json.
# bench-quick is the small run (under two minutes).
.PHONY: bench bench-quick
bench: tls-certs
	$(TEST_BROKER) bash scripts/rabbitmq.sh run $(GO) -C bench run ./cmd/acemq-bench

bench-quick: tls-certs
	$(TEST_BROKER) bash scripts/rabbitmq.sh run $(GO) -C bench run ./cmd/acemq-bench -quick
