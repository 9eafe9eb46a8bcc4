# AceMQ developer entry points. `make test` is what CI runs (.ci/run).
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c

GO ?= go
FUZZTIME ?= 30s
# This checkout's private servers (docs/testing.md), so that two checkouts
# run make test at once: every node name, port, data directory and lock
# file derives from the checkout's absolute path. TEST_TAG, six hex digits
# of its cksum, is in every node's name (acemq-tTAG-NAME@localhost), and so
# in the nodes' lock files and 4.x data directories. ACEMQ_TEST_SLOT (the
# same cksum mod 100, unless set) picks a block of 20 AMQP ports from
# 10000 + 20 * slot; a node's management port is its AMQP port + 10000 and
# its Erlang distribution port + 20000 (RabbitMQ's default), all below the
# kernel's ephemeral ports (32768). `make test` moves on to the next slot
# whose ports are all free (scripts/freeslot.sh) unless ACEMQ_TEST_SLOT is
# set; a port taken anyway stops the start with an error naming it. `make
# test-ports` prints the checkout's own slot.
TEST_HASH := $(shell printf %s '$(CURDIR)' | cksum | cut -d' ' -f1)
TEST_TAG := t$(shell printf %06x $$(($(TEST_HASH) % 16777216)))
ACEMQ_TEST_SLOT ?= $(shell echo $$(($(TEST_HASH) % 100)))
TEST_PORT0 := $(shell echo $$((10000 + 20 * $(ACEMQ_TEST_SLOT))))
# $(call port,N): the block's Nth AMQP port (the table is below);
# $(call mgmt,PORT): the management port of the node on AMQP PORT.
port = $(shell echo $$(($(TEST_PORT0) + $(1))))
mgmt = $(shell echo $$(($(1) + 10000)))
# $(call node,NAME,SERIES,AMQP_PORT): scripts/rabbitmq.sh's environment for
# the node acemq-TAG-NAME of RabbitMQ SERIES (3.10's data in
# .rabbitmq/NAME, 4.x's in its chroot: ACEMQ_RABBITMQ_DIR empty, so that a
# 3.10 node's, exported by test-env in the caller's shell, is not
# inherited), and the tests' URLs of it.
node = ACEMQ_RABBITMQ_SERIES=$(2) RABBITMQ_NODENAME=acemq-$(TEST_TAG)-$(1)@localhost \
	RABBITMQ_NODE_PORT=$(3) ACEMQ_RABBITMQ_MGMT_PORT=$(call mgmt,$(3)) \
	ACEMQ_RABBITMQ_DIR=$(if $(filter 3.10,$(2)),$(CURDIR)/.rabbitmq/$(1)) \
	ACEMQ_TEST_URL=amqp://guest:guest@localhost:$(3)/ \
	ACEMQ_TEST_MANAGEMENT_URL=http://guest:guest@localhost:$(call mgmt,$(3))
# $(call tls,PORT): an amqps:// listener on PORT with the certificates of
# TLS_CERTS, and the tests' URL of it (TestRealTLSListener).
tls = ACEMQ_RABBITMQ_TLS_DIR=$(TLS_CERTS) ACEMQ_RABBITMQ_TLS_PORT=$(1) \
	ACEMQ_TEST_TLS_URL=amqps://guest:guest@localhost:$(1)/ ACEMQ_TEST_TLS_CERTS=$(TLS_CERTS)
# The block: the test nodes (AMQP, amqps://), PostgreSQL, the 3.10 cluster,
# the chaos nodes, the scheduler's node, the 4.3 cluster.
PORT_TEST_310 := $(call port,0)
PORT_TLS_310 := $(call port,1)
PORT_TEST_40 := $(call port,2)
PORT_TLS_40 := $(call port,3)
PORT_TEST_43 := $(call port,4)
PORT_TLS_43 := $(call port,5)
PORT_POSTGRES := $(call port,6)
PORTS_CLUSTER := $(call port,7) $(call port,8) $(call port,9)
PORT_CHAOS_310 := $(call port,10)
PORT_CHAOS_40 := $(call port,11)
PORT_CHAOS_43 := $(call port,12)
PORT_SCHED := $(call port,13)
PORTS_CLUSTER43 := $(call port,14) $(call port,15) $(call port,16)

# The test nodes send an unconfirmed at-least-once dead letter again after 5s
# instead of RabbitMQ's 180s, so that the conformance behaviour that waits
# for one takes seconds (the chaos nodes keep the default, as users run it).
TEST_DEAD_LETTER_RETRY_MS := 5000
# The development certificates of the test nodes' amqps:// listeners
# (target tls-certs).
TLS_CERTS := $(CURDIR)/.rabbitmq/tls-certs
# The test run's private RabbitMQ nodes, one of each version, each with an
# amqps:// listener: 3.10 (Debian bookworm's, on the host), 4.0 (Debian
# trixie's) and 4.3 (Debian sid's), each from the chroot scripts/rabbitmq.sh
# makes and reuses.
TEST_BROKER := ACEMQ_RABBITMQ_DEAD_LETTER_RETRY_MS=$(TEST_DEAD_LETTER_RETRY_MS) \
	$(call node,test,3.10,$(PORT_TEST_310)) $(call tls,$(PORT_TLS_310))
TEST_BROKER4 := ACEMQ_RABBITMQ_DEAD_LETTER_RETRY_MS=$(TEST_DEAD_LETTER_RETRY_MS) \
	$(call node,test4,4.0,$(PORT_TEST_40)) $(call tls,$(PORT_TLS_40))
TEST_BROKER43 := ACEMQ_RABBITMQ_DEAD_LETTER_RETRY_MS=$(TEST_DEAD_LETTER_RETRY_MS) \
	$(call node,test43,4.3,$(PORT_TEST_43)) $(call tls,$(PORT_TLS_43))
# The console's browser tests start their own headless Chromium (Debian's,
# installed when missing by scripts/chromium.sh) from this path.
TEST_CHROMIUM = ACEMQ_TEST_CHROMIUM=$$(bash scripts/chromium.sh path)
# The test run's private PostgreSQL server (scripts/postgres.sh), for the SQL
# schema registry's tests: its own port and data directory.
TEST_POSTGRES := ACEMQ_POSTGRES_PORT=$(PORT_POSTGRES) ACEMQ_POSTGRES_DIR=$(CURDIR)/.postgres/test
# The pattern packages, built on the root: held to the core's dependency
# rules (make lint).
PATTERN_PKGS := ./slip ./pipeline ./saga ./partition ./stream ./schedule
# staticcheck is pinned in its own module (tools/go.mod) so the library's go.mod
# stays free of tool dependencies; `go tool` builds it from the module proxy.
STATICCHECK := $(GO) tool staticcheck
# The workspace's packages (go.work ties the repository's modules together;
# ./... would stop at a nested module's go.mod), less the benchmark harness
# and the tool pins: what make test, lint and fuzz check. (No quotes: it is
# used inside a part's bash -c '...'.)
LIB_PKGS = $$(GO=$(GO) bash scripts/packages.sh)
# Go files as `go list ./...` sees them: skip testdata, _* and .* dirs (.rabbitmq).
GOFILES = find . -type d \( -name testdata -o -name '_*' -o -name '.?*' \) -prune -o -type f -name '*.go' -print

.PHONY: demo test conformance tls-certs test-unit lint rules fuzz tidy rabbitmq rabbitmq-stop postgres postgres-stop

demo:
	$(GO) run ./cmd/acemq demo

# Everything, in two phases (docs/testing.md says why so), after compiling
# what they build once (test-compile):
# 1. At the same time, each on a private node of its version, with one
#    private PostgreSQL server (Debian's, installed when missing) for the
#    three, each printing its output once all three are done:
#    RabbitMQ 4.3 (what users run now): every test (go test -race ./...)
#    and the conformance counts of memory:// and the node; RabbitMQ 4.0
#    and 3.10: the tests of CORE_PKGS and the node's conformance count,
#    and on 3.10 the console's outage tests and health in an alarm alone on
#    that node (they disturb it). Each node has an amqps://
#    listener on development certificates (TestRealTLSListener), the
#    console's browser tests a headless Chromium (TEST_CHROMIUM). Beside
#    them, the benchmark harness's own tests (bench/, a module of its own)
#    and lint, which use what the 4.3 part's last packages leave of the
#    cores.
# 2. At the same time (docs/reliability.md, "Cluster scale"): the short
#    failover scenario on the library's defaults and a memory alarm on one
#    node, on a three-node 3.10 cluster; the same failover on a three-node
#    4.3 cluster; the short partitions on a three-node 4.3 cluster in
#    network namespaces; the short restart scenario (a quorum source,
#    at-least-once rungs) and disk alarms on a 3.10 and a 4.3 chaos node;
#    any loss fails them. (make chaos runs the waits in the consumer's
#    failover, the restarts on 4.0 and the partitions on 3.10.) Their nodes
#    resend a held at-least-once dead letter after CHAOS_SHORT_RETRY_MS, not
#    180s: that changes how soon it comes home, not whether it does (make
#    chaos keeps the default).
# Every part runs even when an earlier one failed; make test fails at the
# end, naming those that failed. The time of each part is printed with its
# output, and the phases' at the end. Every node and server a part starts is stopped
# when the part ends, also when it fails or make is interrupted: a TERM or
# INT to make (which passes TERM on to this recipe's shell) sends TERM to
# every process of the run, which runs in a session of its own (setsid; the
# nodes and servers in sessions of theirs), and waits while each script's
# `run` stops what it started.
CHAOS_SHORT_RETRY_MS := 20000
TEST_LOGS := $(CURDIR)/.test-logs
test: tls-certs
	@trap 'trap "" INT TERM; echo "make test: interrupted; stopping its nodes and servers"; \
	  kill -TERM -- -$$run 2>/dev/null || true; t=$$SECONDS; \
	  while kill -0 -- -$$run 2>/dev/null && ((SECONDS - t < 300)); do sleep 0.2; done; exit 143' INT TERM; \
	slot=$(ACEMQ_TEST_SLOT); $(if $(filter file,$(origin ACEMQ_TEST_SLOT)),slot=$$(bash scripts/freeslot.sh $$slot);) \
	setsid $(MAKE) --no-print-directory test-phases ACEMQ_TEST_SLOT=$$slot & run=$$!; wait $$run

# $(call parallel,TARGET...,MAKE_ARGS): `make TARGET MAKE_ARGS` for every
# TARGET at once, each into its own log in TEST_LOGS, printed in order once
# all are done; exits 1 naming those that failed. Runs in a shell of its own
# (a subshell or bash -c), as it exits.
parallel = mkdir -p $(TEST_LOGS); pids=(); for t in $(1); do \
	  bash scripts/cputime.sh "make test: $$t" $(MAKE) --no-print-directory $$t $(2) >$(TEST_LOGS)/$$t.log 2>&1 & pids+=($$!); done; \
	bad=(); i=0; for t in $(1); do wait $${pids[i]} || bad+=($$t); i=$$((i + 1)); done; \
	for t in $(1); do cat $(TEST_LOGS)/$$t.log; done; \
	[ -z "$${bad[*]}" ] || { echo "make test: failed: $${bad[*]}"; exit 1; }

.PHONY: test-phases test-compile test-ports
test-phases:
	@t0=$$SECONDS; failed=(); \
	echo "make test: slot $(ACEMQ_TEST_SLOT): AMQP ports $(TEST_PORT0)-$(call port,19), management +10000, Erlang distribution +20000; nodes acemq-$(TEST_TAG)-*@localhost"; \
	bash scripts/cputime.sh "make test: test-compile" $(MAKE) --no-print-directory test-compile || failed+=(test-compile); \
	$(TEST_POSTGRES) bash scripts/postgres.sh run bash -c '$(call parallel,test-4.3 test-4.0 test-3.10 test-bench lint)' || failed+=("RabbitMQ 4.3/4.0/3.10 parts, bench or lint"); \
	t1=$$SECONDS; echo "make test: RabbitMQ 4.3, 4.0 and 3.10, bench and lint, at the same time, took $$((t1 - t0))s"; \
	($(call parallel,test-failover test-failover-4.3 test-partitions test-restart-3.10 test-restart-4.3,CHAOS_DEAD_LETTER_RETRY_MS=$(CHAOS_SHORT_RETRY_MS))) \
	  || failed+=("failover, partitions or restarts"); \
	echo "make test: RabbitMQ 4.3, 4.0 and 3.10, bench and lint $$((t1 - t0))s, then failover, partitions and restarts at the same time $$((SECONDS - t1))s; $$((SECONDS - t0))s in all"; \
	[ -z "$${failed[*]}" ] || { echo "make test: FAILED: $${failed[*]}"; exit 1; }

# Compiles, once and before the parts start, every package they build
# (go list -export compiles without linking): parts that start together
# would each compile the same packages at the same time, since Go's build
# cache shares only what is already done. The race detector's build for
# the 4.3 part, the plain one for the 4.0 and 3.10 parts, the chaos tag's
# for the second phase.
test-compile:
	@$(GO) list -race -test -export -deps -f '' $(ALL_PKGS) >/dev/null
	@$(GO) list -test -export -deps -f '' $(CORE_PKGS) >/dev/null
	@$(GO) list -tags chaos -test -export -deps -f '' ./internal/testing/chaos/ >/dev/null

# Phase 2's parts: on the 3.10 cluster the short failover on the
# library's defaults and the memory alarm on one node, on the 4.3 cluster
# the same failover, the short partitions on 4.3 (what users run now),
# on the 3.10 and 4.3 chaos nodes the short restart and disk alarms, and
# the benchmark harness's own tests.
.PHONY: test-failover test-failover-4.3 test-partitions test-restart-3.10 test-restart-4.3 test-bench
test-failover:
	@$(MAKE) --no-print-directory chaos-cluster CLUSTER_TEST='(TestChaosFailoverLadder|TestChaosClusterMemoryAlarm)'
test-failover-4.3:
	@$(MAKE) --no-print-directory chaos-cluster CLUSTER_SERIES=4.3 CLUSTER_TEST=TestChaosFailoverLadder
test-partitions:
	@$(MAKE) --no-print-directory chaos-partition-short PARTITION_SERIES=4.3
# Named, not a pattern: make searches no pattern rule for a phony target.
test-restart-3.10 test-restart-4.3:
	@$(MAKE) --no-print-directory chaos-restart CHAOS_SERIES=$(@:test-restart-%=%) CHAOS_RESTART_TEST='TestChaosRestartShort|TestChaosDiskAlarm|TestDiskAlarmKeepsConsumersRunning'
test-bench:
	$(GO) -C bench test -count=1 ./...

# This checkout's ports and node names (see the top of this file).
test-ports:
	@echo "slot $(ACEMQ_TEST_SLOT), node names acemq-$(TEST_TAG)-NAME@localhost; AMQP (management +10000, Erlang distribution +20000):"
	@echo "  test 3.10 $(PORT_TEST_310) (amqps $(PORT_TLS_310)), test 4.0 $(PORT_TEST_40) (amqps $(PORT_TLS_40)), test 4.3 $(PORT_TEST_43) (amqps $(PORT_TLS_43))"
	@echo "  cluster $(PORTS_CLUSTER), chaos 3.10 $(PORT_CHAOS_310), 4.0 $(PORT_CHAOS_40), 4.3 $(PORT_CHAOS_43), scheduler $(PORT_SCHED)"
	@echo "  cluster 4.3 $(PORTS_CLUSTER43)"
	@echo "  PostgreSQL $(PORT_POSTGRES)"

# make test's three broker parts, each on its own node (and PostgreSQL,
# when not already answering: make test starts it once for the three).
# Each runs all its steps and fails if any failed. TestConformance runs in
# `make conformance` only, which prints its counts; memory:// is counted in
# the 4.3 part (it does not depend on the node). CORE_PKGS, the 3.10 part's,
# are those whose behaviour follows the broker's version most: the root
# package (the consumer, rungs, the put-back, the poison-loop guard), the
# RabbitMQ transport, deadletter, the command (dlq's reasons), stream
# (argument normalisation) and the console (a view counts no delivery):
# the 4.0 part's too. The other packages' broker tests run on 4.3, with
# the race detector, where what they test does not differ between 4.x
# versions: the 4.0 part ran them as well until make test outgrew its
# 15 minutes. ALL_PKGS is the 4.3 part's (a smaller set on the command
# line makes a quick run of the same machinery).
CORE_PKGS ?= . ./transport/rabbitmq ./deadletter ./cmd/acemq ./stream ./console
ALL_PKGS ?= $(LIB_PKGS)
# Each part: its node (PART_NODE), its packages (PART_PKGS), then the
# conformance suite on PART_CONFORMANCE and whatever PART_MORE runs.
.PHONY: test-4.3 test-4.0 test-3.10
test-4.3: PART_NODE = $(TEST_BROKER43)
test-4.3: PART_PKGS = $(ALL_PKGS)
test-4.3: PART_CONFORMANCE = $(CONFORMANCE)
test-4.0: PART_NODE = $(TEST_BROKER4)
test-4.0: PART_PKGS = $(CORE_PKGS)
test-3.10: PART_NODE = $(TEST_BROKER)
test-3.10: PART_PKGS = $(CORE_PKGS)
# The alarm and the console's outage tests disturb their node, so they run
# after the rest of a part; on 3.10's, whose part ends minutes before 4.3's.
test-3.10: PART_MORE = $(MAKE) --no-print-directory console-outage || s=1; $(MAKE) --no-print-directory actuator-alarm || s=1;
PART_CONFORMANCE ?= ./transport/rabbitmq/
# The console's browser tests whose pages do not depend on the node's
# version (its layout, sign-in, cross-site refusals): Chromium is the
# heaviest thing a part runs, so only the 4.3 part runs them.
VERSIONLESS_BROWSER_TESTS := TestBrowserLayoutAt800|TestBrowserSignInAndSignOut|TestBrowserCrossSiteRequestsAreRefused
test-4.0 test-3.10: PART_SKIP = |$(VERSIONLESS_BROWSER_TESTS)
# The race detector runs in the 4.3 part, over every package: a data race
# does not depend on the node's version, and instrumented tests take
# several times the CPU, which the three parts share. The 4.0 and 3.10
# parts test the broker's behaviour, uninstrumented.
test-4.3: PART_RACE = -race
test-4.3 test-4.0 test-3.10:
	@$(TEST_CHROMIUM) $(PART_NODE) $(TEST_POSTGRES) bash scripts/rabbitmq.sh run bash scripts/postgres.sh run bash -c 's=0; \
	  $(GO) test $(PART_RACE) -count=1 -timeout 30m -skip "^(TestConformance$(PART_SKIP))$$" $(PART_PKGS) || s=1; \
	  $(MAKE) --no-print-directory conformance CONFORMANCE="$(PART_CONFORMANCE)" CONFORMANCE_RACE="$(PART_RACE)" || s=1; $(PART_MORE) exit $$s'

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
# test. CONFORMANCE picks the packages (the 4.0 run needs only RabbitMQ's),
# CONFORMANCE_RACE the race detector (make test's 4.0 and 3.10 parts run
# without it, as their other tests do).
# -v's lines of tests that ran and passed are left out; what a failure said
# stays.
CONFORMANCE ?= ./transport/memory/ ./transport/rabbitmq/
CONFORMANCE_RACE ?= -race
conformance:
	@$(GO) test $(CONFORMANCE_RACE) -count=1 -run '^TestConformance$$' -v $(CONFORMANCE) | grep -vE '^ *(=== (RUN|PAUSE|CONT|NAME)|--- (PASS|SKIP))'

# The chaos harness (internal/testing/chaos, docs/reliability.md): numbered, confirmed
# messages through a separate consumer process while faults are injected, then
# every one accounted for. `make test` runs the short run with every package;
# chaos-short runs it alone, chaos the full scenarios with their reports: 20
# kills, 10 forced closes, 5 alarms, 3 broker restarts under a quorum source
# with each kind of rung on RabbitMQ 3.10, 4.0 and 4.3, and on the cluster 5
# leader kills with the waits in the consumer and with each kind of rung.
#
# The restart scenario runs on nodes of their own (never the test nodes),
# because it stops and starts them: the harness runs `scripts/rabbitmq.sh
# stop` and `scripts/rabbitmq.sh` with this environment, inside
# `rabbitmq.sh run --no-lock` (which does not hold the node's lock while the
# harness runs, and stops the node at the end, also when interrupted).
#
# CHAOS_DEAD_LETTER_RETRY_MS, when set, is the chaos nodes' and the
# cluster's dead_letter_worker_publisher_confirm_timeout: how long an
# at-least-once rung holds a dead letter its source queue has not confirmed
# before sending it again. make chaos leaves RabbitMQ's default (180000), as
# users run it; the short runs of make test may shorten it (losses do not
# depend on it, the time a held dead letter takes to come home does).
CHAOS_DEAD_LETTER_RETRY_MS ?=
CHAOS_ENV := ACEMQ_RABBITMQ_DEAD_LETTER_RETRY_MS=$(CHAOS_DEAD_LETTER_RETRY_MS)
# The chaos nodes of RabbitMQ 3.10, 4.0 and 4.3.
CHAOS_BROKER := $(call node,chaos,3.10,$(PORT_CHAOS_310)) $(CHAOS_ENV)
CHAOS_BROKER4 := $(call node,chaos4,4.0,$(PORT_CHAOS_40)) $(CHAOS_ENV)
CHAOS_BROKER43 := $(call node,chaos43,4.3,$(PORT_CHAOS_43)) $(CHAOS_ENV)
.PHONY: chaos chaos-short chaos-alarm chaos-cluster chaos-restart chaos-idempotent
chaos-short: tls-certs
	$(TEST_BROKER) bash scripts/rabbitmq.sh run $(GO) test -count=1 -run '^TestChaosShort$$' -v ./internal/testing/chaos/

# Two memory alarms on the 3.10 test node (docs/reliability.md), with the
# chaos tag, which keeps them out of `go test ./...`. make test leaves it
# out for time: the 3.10 cluster's memory alarm runs there (test-failover).
chaos-alarm: tls-certs
	$(TEST_BROKER) bash scripts/rabbitmq.sh run $(GO) test -tags chaos -count=1 -run '^TestChaosAlarm$$' -v ./internal/testing/chaos/

# The console with its broker paused (SIGSTOP), stopped (stop_app) and in
# a memory alarm (console/outage_test.go), with the chaos tag,
# which keeps them out of `go test ./...`: every page answers within its
# bound saying what is wrong, a job waiting on the alarm says so. Needs the
# broker, which it disturbs: run it through make test, after the rest.
.PHONY: console-outage
console-outage:
	$(GO) test -race -tags chaos -count=1 -run '^(TestConsolePausedBroker|TestConsoleStoppedBroker|TestConsoleJobBlockedByAnAlarm)$$' -v ./console/

# /acemq-health and /readyz during a real memory alarm (actuator/alarm_test.go):
# 200, up, the family's sentence (section 21). The chaos tag keeps it out of
# `go test ./...`, as the alarm blocks every publisher of the node: run it
# through make test, after the rest.
.PHONY: actuator-alarm
actuator-alarm:
	$(GO) test -race -tags chaos -count=1 -run '^TestHealthDuringAMemoryAlarm$$' -v ./actuator/

# The screenshots of docs/console.md (console/internal/screenshots): dead
# letters of every format and reason on a vhost of the 4.3 test node, a
# console on it, a headless Chromium through its pages, a PNG of each in
# docs/console/.
.PHONY: console-screenshots
console-screenshots: tls-certs
	$(TEST_CHROMIUM) $(TEST_BROKER43) bash scripts/rabbitmq.sh run $(GO) run ./console/internal/screenshots -out docs/console

# The restart scenario on the chaos node of CHAOS_SERIES (3.10, the default,
# 4.0 or 4.3), started for the run and stopped after it; chaos-restart-4.3
# is chaos-restart CHAOS_SERIES=4.3. CHAOS_RESTART_TEST picks the run: by
# default the short one (one restart, a quorum source, at-least-once rungs;
# any loss fails it), TestChaosRestart the full one.
CHAOS_SERIES ?= 3.10
CHAOS_RESTART_TEST ?= TestChaosRestartShort
CHAOS_NODE = $(if $(filter 4.3,$(CHAOS_SERIES)),$(CHAOS_BROKER43),$(if $(filter 4.0,$(CHAOS_SERIES)),$(CHAOS_BROKER4),$(CHAOS_BROKER)))
chaos-restart:
	$(CHAOS_NODE) CHAOS_RESTART=yes bash scripts/rabbitmq.sh run --no-lock \
	  $(GO) test -tags chaos -count=1 -timeout 60m -run '^($(CHAOS_RESTART_TEST))$$' -v ./internal/testing/chaos/
chaos-restart-%:
	@$(MAKE) --no-print-directory chaos-restart CHAOS_SERIES=$*

# Alarms (docs/reliability.md, "Alarms on a cluster"), under load with the
# consumer running and nothing confirmed lost: disk alarms (the free-disk
# limit raised above what is free, then put back) on the chaos node of
# CHAOS_SERIES (3.10, the default, or 4.3), started for the run and stopped
# after it; a memory alarm on the third node of the 3.10 cluster while the
# publisher and the consumer are on the first (chaos-cluster-alarm). The
# short runs (1 alarm each) by default; ALARM_RUN=Full runs 5 (make
# chaos). chaos-disk-alarm also runs TestDiskAlarmKeepsConsumersRunning (a
# Transport that published consumes and acks during a disk alarm). test-alarms
# is the short runs one after the other, with their duration (make test
# runs them within test-restart-3.10, -4.3 and test-failover instead).
ALARM_RUN ?=
.PHONY: chaos-disk-alarm chaos-cluster-alarm test-alarms chaos-alarms
chaos-disk-alarm:
	$(CHAOS_NODE) bash scripts/rabbitmq.sh run \
	  $(GO) test -tags chaos -count=1 -timeout 30m -run '^(TestChaosDiskAlarm$(ALARM_RUN)|TestDiskAlarmKeepsConsumersRunning)$$' -v ./internal/testing/chaos/
chaos-disk-alarm-%:
	@$(MAKE) --no-print-directory chaos-disk-alarm CHAOS_SERIES=$*
chaos-cluster-alarm:
	@$(MAKE) --no-print-directory chaos-cluster CLUSTER_TEST='TestChaosClusterMemoryAlarm$(ALARM_RUN)'
test-alarms:
	@s=$$SECONDS; status=0; \
	for t in chaos-disk-alarm-3.10 chaos-disk-alarm-4.3 chaos-cluster-alarm; do \
	  $(MAKE) --no-print-directory $$t || status=1; done; \
	echo "make test-alarms: took $$((SECONDS - s))s"; exit $$status
chaos-alarms:
	@$(MAKE) --no-print-directory test-alarms ALARM_RUN=Full

# Delayed send across a broker restart (docs/scheduling.md): 300 messages
# due in 90s, the node stopped and started again while they wait on the
# scheduler's 1m rung, every one counted (any loss fails it) and its
# lateness reported; on a node of its own (acemq-TAG-sched@localhost, on
# PORT_SCHED; 3.10's data in .rabbitmq/sched, 4.x's in the chroot), started
# for the run and stopped after it. SCHED_SERIES picks RabbitMQ 3.10 (the
# default), 4.0 or 4.3. About two and a half minutes.
SCHED_SERIES ?= 3.10
SCHED_NODE = $(call node,sched,$(SCHED_SERIES),$(PORT_SCHED))
# The outage scenario (docs/reliability.md, "A dependency's outage"): a
# steady load, the handler's dependency down for 30s, with the default
# circuit breaker and without one, side by side; on the chaos node of
# CHAOS_SERIES (3.10, the default, 4.0 or 4.3), started for the run and
# stopped after it. About three minutes. Its short run (a 4s outage) is
# TestChaosOutageShort, among the harness's tests in make test.
.PHONY: chaos-outage
chaos-outage:
	$(CHAOS_NODE) bash scripts/rabbitmq.sh run \
	  $(GO) test -tags chaos -count=1 -timeout 20m -run '^TestChaosOutage$$' -v ./internal/testing/chaos/
chaos-outage-%:
	@$(MAKE) --no-print-directory chaos-outage CHAOS_SERIES=$*

.PHONY: chaos-schedule
chaos-schedule:
	$(SCHED_NODE) CHAOS_RESTART=yes bash scripts/rabbitmq.sh run --no-lock \
	  $(GO) test -tags chaos -count=1 -timeout 10m -run '^TestChaosScheduleRestart$$' -v ./internal/testing/chaos/

# The failover scenario (a quorum queue's leader node killed) on a
# three-node cluster of scripts/cluster.sh of CLUSTER_SERIES: 3.10 (the
# default: the host's, nodes acemq-TAG-c1..c3@localhost, AMQP on
# PORTS_CLUSTER, data in .rabbitmq/cluster) or 4.3 (the sid chroot's, nodes
# acemq-TAG-d1..d3@localhost, AMQP on PORTS_CLUSTER43, data in the chroot's
# /srv/acemq/acemq-TAG-cluster43), management on the AMQP ports + 10000,
# started for the run and stopped after it (cluster.sh run);
# chaos-cluster-4.3 is chaos-cluster CLUSTER_SERIES=4.3. CLUSTER_TEST picks
# the run: the short one by default (TestChaosFailoverLadder is the short
# run with at-least-once rungs). The tests reach only the cluster's nodes:
# their management APIs are found from ACEMQ_CLUSTER_URLS (AMQP port +
# 10000), and what they name is deleted there, never at
# ACEMQ_TEST_MANAGEMENT_URL. The series is CLUSTER_SERIES, whatever series a
# `make test-env` left in the caller's shell.
CLUSTER_SERIES ?= 3.10
SID_ROOT := $(or $(ACEMQ_SID_ROOT),/var/cache/acemq/sid)
# $(call cluster_env,SERIES,LETTER,PORTS,DIR): cluster.sh's environment for
# the nodes acemq-TAG-LETTER1..3 on PORTS, and the tests' URLs of them.
cluster_env = ACEMQ_RABBITMQ_SERIES=$(1) ACEMQ_CLUSTER_NODES='$(foreach i,1 2 3,acemq-$(TEST_TAG)-$(2)$(i)@localhost)' \
	ACEMQ_CLUSTER_PORTS='$(3)' ACEMQ_CLUSTER_MGMT_PORTS='$(foreach p,$(3),$(call mgmt,$(p)))' ACEMQ_CLUSTER_DIR=$(4) \
	ACEMQ_CLUSTER_URLS='$(foreach p,$(3),amqp://guest:guest@localhost:$(p)/)' $(CHAOS_ENV)
CLUSTER_ENV = $(if $(filter 4.3,$(CLUSTER_SERIES)),$(call cluster_env,4.3,d,$(PORTS_CLUSTER43),$(SID_ROOT)/srv/acemq/acemq-$(TEST_TAG)-cluster43),$(call cluster_env,3.10,c,$(PORTS_CLUSTER),$(CURDIR)/.rabbitmq/cluster))
CLUSTER_TEST ?= TestChaosFailover
.PHONY: chaos-cluster
chaos-cluster:
	$(CLUSTER_ENV) bash scripts/cluster.sh run \
	  $(GO) test -tags chaos -count=1 -timeout 90m -run '^$(CLUSTER_TEST)$$' -v ./internal/testing/chaos/
chaos-cluster-%:
	@$(MAKE) --no-print-directory chaos-cluster CLUSTER_SERIES=$*

# Every full run, one after the other: the 3.10 chaos node's (kill, close,
# alarm, restart, and the restart with the library's defaults), the 4.0 and
# 4.3 chaos nodes' (the two restart runs), the 3.10 cluster's
# (failover and TestRungHopIsAtMostOnce) and the 4.3 cluster's (failover),
# the idempotent consumer's
# (chaos-idempotent), the scheduler's restart on 3.10 and 4.0
# (chaos-schedule), the outage with and without a circuit breaker on 3.10
# and 4.3 (chaos-outage), the partitions on 3.10 and 4.3 (chaos-partition), the family's soak of the standing load (chaos-soak). Fails if any of them fails; the contract rungs'
# expected losses are printed (EXPECTED LOSS), not failures.
RESTART_TESTS := TestChaosRestart|TestChaosRestartDefaults
chaos:
	status=0; $(CHAOS_BROKER) CHAOS_RESTART=yes bash scripts/rabbitmq.sh run --no-lock \
	  $(GO) test -tags chaos -count=1 -timeout 90m -run '^(TestChaosFull|$(RESTART_TESTS))$$' -v ./internal/testing/chaos/ || status=$$?; \
	$(MAKE) --no-print-directory chaos-restart CHAOS_SERIES=4.0 CHAOS_RESTART_TEST='$(RESTART_TESTS)' || status=$$?; \
	$(MAKE) --no-print-directory chaos-restart CHAOS_SERIES=4.3 CHAOS_RESTART_TEST='$(RESTART_TESTS)' || status=$$?; \
	$(MAKE) --no-print-directory chaos-cluster CLUSTER_TEST='(TestChaosFailoverFull|TestRungHopIsAtMostOnce)' || status=$$?; \
	$(MAKE) --no-print-directory chaos-cluster CLUSTER_SERIES=4.3 CLUSTER_TEST=TestChaosFailoverFull || status=$$?; \
	$(MAKE) --no-print-directory chaos-idempotent || status=$$?; \
	$(MAKE) --no-print-directory chaos-schedule || status=$$?; \
	$(MAKE) --no-print-directory chaos-schedule SCHED_SERIES=4.0 || status=$$?; \
	$(MAKE) --no-print-directory chaos-outage CHAOS_SERIES=3.10 || status=$$?; \
	$(MAKE) --no-print-directory chaos-outage CHAOS_SERIES=4.3 || status=$$?; \
	$(MAKE) --no-print-directory chaos-alarms || status=$$?; \
	$(MAKE) --no-print-directory chaos-partition PARTITION_SERIES=3.10 || status=$$?; \
	$(MAKE) --no-print-directory chaos-partition PARTITION_SERIES=4.3 || status=$$?; \
	$(MAKE) --no-print-directory chaos-soak || status=$$?; exit $$status

# The family's endurance soak, scaled to fit (docs/reliability.md, "The
# family's standing load"): examples/standing-load as a process on the
# chaos node of SOAK_SERIES (4.3, the default, 4.0 or 3.10), started for the
# run and stopped after it; its connections closed through the management
# API SOAK_CLOSES times, SOAK_EVERY apart (the family's own: 240, 15s);
# judged by the family's allowances (descriptors and threads at most +16,
# RSS at most 2x, medians of 3 readings before and after) and 0 lost.
SOAK_SERIES ?= 4.3
SOAK_CLOSES ?= 20
SOAK_EVERY ?= 5s
.PHONY: chaos-soak
chaos-soak: CHAOS_SERIES = $(SOAK_SERIES)
chaos-soak:
	$(CHAOS_NODE) ACEMQ_SOAK_CLOSES=$(SOAK_CLOSES) ACEMQ_SOAK_EVERY=$(SOAK_EVERY) bash scripts/rabbitmq.sh run \
	  $(GO) test -tags chaos -count=1 -timeout 90m -run '^TestChaosSoak$$' -v ./internal/testing/chaos/soak/

# The idempotent consumer's full runs (docs/reliability.md): 20 kills and
# 10 forced closes on SQLite and on PostgreSQL, with idempotency.Handler
# and with sqlstore.TxHandler, on the chaos node and the test PostgreSQL
# server (each started for the run and stopped after it). IDEM_NODE names
# another node (a helper's own: RABBITMQ_NODENAME=... RABBITMQ_NODE_PORT=...
# and the rest, as CHAOS_BROKER does).
IDEM_NODE ?= $(CHAOS_BROKER)
chaos-idempotent:
	$(IDEM_NODE) $(TEST_POSTGRES) bash scripts/rabbitmq.sh run --no-lock bash scripts/postgres.sh run \
	  $(GO) test -tags chaos -count=1 -timeout 60m -run '^TestChaosIdempotentFull$$' -v ./internal/testing/chaos/

# Network partitions (docs/reliability.md, "Network partitions"): the
# cluster of scripts/netns-cluster.sh (each node in a network namespace of
# its own, on 10.77.SLOT.0/24, net_ticktime 10s), started for the run and
# stopped after it with every namespace, veth and bridge it made.
# PARTITION_SERIES picks RabbitMQ 3.10 (the default) or 4.3.
# chaos-partition-short cuts off the consumer's node, then the publisher's,
# then the quorum leader's node from its peers, each once under load (a
# quorum source, at-least-once rungs), and prints how long it took;
# chaos-partition makes each cut three times. Any loss fails them.
PARTITION_SERIES ?= 3.10
PARTITION_ENV = ACEMQ_NETNS_SERIES=$(PARTITION_SERIES) ACEMQ_NETNS_SLOT=$(ACEMQ_TEST_SLOT) $(CHAOS_ENV)
.PHONY: chaos-partition chaos-partition-short
chaos-partition-short: PARTITION_TEST = TestChaosPartitionShort
chaos-partition: PARTITION_TEST = TestChaosPartition
chaos-partition chaos-partition-short:
	@s=$$SECONDS; $(PARTITION_ENV) bash scripts/netns-cluster.sh run \
	  $(GO) test -tags chaos -count=1 -timeout 60m -run '^$(PARTITION_TEST)$$' -v ./internal/testing/chaos/ && r=0 || r=$$?; \
	echo "make $@ (RabbitMQ $(PARTITION_SERIES)) took $$((SECONDS - s))s"; exit $$r

# No broker and no PostgreSQL: their tests skip when ACEMQ_TEST_URL and
# ACEMQ_TEST_POSTGRES_URL are unset.
test-unit:
	env -u ACEMQ_TEST_URL -u ACEMQ_TEST_POSTGRES_URL $(GO) test -race $(LIB_PKGS)

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
	@# chromedp drives the console's browser tests only (internal/testing/browsertest
	@# and _test files) and the screenshots tool of make console-screenshots:
	@# no package of the library or the command links it.
	@browser=$$($(GO) list -deps $$(GO=$(GO) bash scripts/packages.sh | grep -v -E '/(internal/testing/browsertest|console/internal/screenshots)$$') | grep -E '^github.com/chromedp/' || true); \
	if [ -n "$$browser" ]; then echo "a non-test package links chromedp:"; echo "$$browser"; exit 1; fi
	$(GO) vet $(LIB_PKGS)
	$(GO) vet -tags chaos ./internal/testing/chaos/... ./console/... ./actuator/
	$(STATICCHECK) $(LIB_PKGS)
	$(GO) -C bench vet ./...
	cd bench && $(GO) tool staticcheck ./...

# The Prometheus alert rules of dashboards/ (docs/observability.md), checked
# by promtool, from Debian's prometheus package (installed when missing,
# never its service: scripts/promtool.sh), and their unit tests (a paused
# consumer fires none). The Go tests of acemqprom check that the rules and
# the Grafana dashboard use only metrics it exports.
rules:
	@bash scripts/promtool.sh check rules dashboards/acemq-alerts.yml
	@bash scripts/promtool.sh test rules dashboards/acemq-alerts.test.yml

# Runs every Fuzz* target of every package for FUZZTIME each; new targets are
# found by `go test -list`, so nothing here needs editing when one is added.
fuzz:
	@pkgs=$(LIB_PKGS); \
	for pkg in $$pkgs; do \
	  fns=$$($(GO) test -list '^Fuzz' "$$pkg"); \
	  for fn in $$(grep '^Fuzz' <<<"$$fns" || true); do \
	    echo "== $$fn ($$pkg, $(FUZZTIME))"; \
	    $(GO) test -run '^$$' -fuzz "^$$fn\$$" -fuzztime '$(FUZZTIME)' "$$pkg"; \
	  done; \
	done

# Each module of go.work on its own (its replaces name the others).
tidy:
	@for dir in $$($(GO) list -m -f '{{.Dir}}'); do (cd "$$dir" && GOWORK=off $(GO) mod tidy) || exit 1; done

# The environment of this checkout's test node of SERIES (3.10, 4.0 or
# 4.3) and of its PostgreSQL, as export lines: for running a few packages
# by hand, e.g.
#   eval "$$(make -s test-env SERIES=4.3)"; bash scripts/rabbitmq.sh; bash scripts/postgres.sh
#   go test -race ./console/; bash scripts/rabbitmq.sh stop; bash scripts/postgres.sh stop
SERIES ?= 4.3
TEST_NODE = $(if $(filter 4.3,$(SERIES)),$(TEST_BROKER43),$(if $(filter 4.0,$(SERIES)),$(TEST_BROKER4),$(TEST_BROKER)))
.PHONY: test-env
test-env: tls-certs
	@for kv in $(TEST_NODE) $(TEST_POSTGRES) 'ACEMQ_TEST_POSTGRES_URL=postgres://acemq@localhost:$(PORT_POSTGRES)/acemq?sslmode=disable'; do echo "export $$kv"; done

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
