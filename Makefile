# kbroker: build, run and test. `make test` is what CI runs (.ci/run).
GO          ?= go
FUZZTIME    ?= 10s
STATICCHECK ?= $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2
# compat and compat/cluster drive real processes; everything else is a unit test.
UNIT_PKGS    = $(shell $(GO) list ./... | grep -v -e '^github.com/kbroker/kbroker/compat$$' -e '^github.com/kbroker/kbroker/compat/cluster$$')

.PHONY: all build run deps vet staticcheck unit compat kgo-suite fuzz test clean

all: build

build:
	$(GO) build -o bin/kbroker ./cmd/kbroker

# DATA and RUN_ARGS let tests run the same command elsewhere.
DATA     ?= ./data
RUN_ARGS ?=
run: build
	bin/kbroker config/server.properties --override log.dirs=$(DATA) $(RUN_ARGS)

deps:
	scripts/deps.sh

# Apache Kafka 3.9.1 in compat/lib39: the oracle the transaction tests can
# record against (KBROKER_ORACLE=kafka39).
.PHONY: deps-kafka39
deps-kafka39:
	scripts/deps-kafka39.sh

vet:
	$(GO) vet ./...

staticcheck:
	$(STATICCHECK) ./...

unit:
	$(GO) test -count=1 -timeout 10m $(UNIT_PKGS)

# Stock tools and clients against real broker processes.
compat: deps build
	$(GO) test -count=1 -timeout 20m ./compat/

# Cluster mode: a private ZooKeeper (scripts/zk.sh) and several broker
# processes per test.
.PHONY: compat-cluster
compat-cluster: deps deps-kafka39 build
	$(GO) test -count=1 -timeout 30m ./compat/cluster/

# A seeded chaos run (compat/cluster/chaos_seeded_test.go): ZooKeeper and
# three brokers in network namespaces (root needed), a producer, a
# consumer group and a transactional copy loop (TXN=0 leaves the loop
# out), FAULTS faults drawn from SEED (default: a fresh seed,
# printed), then the checks and a one-line summary. The same SEED replays
# the same schedule; QUIET=min-max (default 1s-3s) is the quiet gap drawn
# before each fault; REPORT=path writes a markdown report. TARGET=kafka39
# runs the same schedule and workload against Apache Kafka 3.9.1 brokers
# (ZooKeeper mode, compat/lib39). compat-cluster (make test) runs it with
# its default of 20 faults against kbroker. `make chaos-compare` runs one
# seed against both and writes both reports into OUT.
SEED    ?= $(shell date +%s)
FAULTS  ?= 20
REPORT  ?=
QUIET   ?= 1s-3s
TARGET  ?= kbroker
OUT     ?= chaos-compare-$(SEED).md
TXN     ?=
.PHONY: chaos chaos-compare
chaos: deps build $(if $(filter kafka39,$(TARGET)),deps-kafka39)
	CHAOS_SEED=$(SEED) CHAOS_FAULTS=$(FAULTS) CHAOS_QUIET=$(QUIET) CHAOS_REPORT=$(REPORT) CHAOS_TARGET=$(TARGET) CHAOS_TXN=$(TXN) \
		$(GO) test -count=1 -timeout 180m -run '^TestChaosSeeded$$' -v ./compat/cluster/

chaos-compare: deps build deps-kafka39
	CHAOS_QUIET=$(QUIET) CHAOS_TXN=$(TXN) scripts/chaos-compare.sh $(SEED) $(FAULTS) $(OUT)

# A local cluster: ZooKeeper on 127.0.0.1:2181 (data under data/zk) and
# brokers 1-3 from config/cluster/ on 9092-9094, in the background. Pids and
# logs are data/broker-N.pid and data/broker-N.log (ZooKeeper's in data/zk).
# The target returns once every broker listens and one of them is the
# controller; `make cluster-stop` ends exactly those processes, by pid.
CLUSTER_BROKERS      = 1 2 3
CLUSTER_ZK_PORT      = 2181
CLUSTER_START_TIMEOUT ?= 60
.PHONY: cluster cluster-stop
cluster: SHELL := /bin/bash
cluster: build
	@mkdir -p data
	@for n in $(CLUSTER_BROKERS); do \
		if [ -f data/broker-$$n.pid ] && kill -0 $$(cat data/broker-$$n.pid) 2>/dev/null; then \
			echo "broker $$n already runs (pid $$(cat data/broker-$$n.pid)); make cluster-stop first" >&2; exit 1; \
		fi; \
	done
	scripts/zk.sh start data/zk $(CLUSTER_ZK_PORT)
	@for n in $(CLUSTER_BROKERS); do \
		setsid bin/kbroker config/cluster/broker-$$n.properties >data/broker-$$n.log 2>&1 </dev/null & \
		echo $$! >data/broker-$$n.pid; \
		echo "broker $$n: pid $$!, log data/broker-$$n.log"; \
	done
	@deadline=$$((SECONDS + $(CLUSTER_START_TIMEOUT))); \
	for n in $(CLUSTER_BROKERS); do \
		port=$$(sed -n 's/^listeners=.*:\([0-9]*\)$$/\1/p' config/cluster/broker-$$n.properties); \
		until (exec 3<>/dev/tcp/127.0.0.1/$$port) 2>/dev/null; do \
			if ! kill -0 $$(cat data/broker-$$n.pid) 2>/dev/null; then \
				echo "broker $$n exited; last log lines:" >&2; tail -n 20 data/broker-$$n.log >&2; \
				$(MAKE) --no-print-directory cluster-stop; exit 1; \
			fi; \
			if [ $$SECONDS -ge $$deadline ]; then \
				echo "broker $$n does not answer on port $$port" >&2; \
				$(MAKE) --no-print-directory cluster-stop; exit 1; \
			fi; \
			sleep 0.2; \
		done; \
		echo "broker $$n answers on 127.0.0.1:$$port"; \
	done; \
	metrics=$$(sed -n 's|^metrics.listener=\(.*\)|http://\1/metrics|p' $(foreach n,$(CLUSTER_BROKERS),config/cluster/broker-$(n).properties)); \
	until curl -s $$metrics 2>/dev/null | grep -q '^kafka_controller_kafkacontroller_activecontrollercount 1'; do \
		if [ $$SECONDS -ge $$deadline ]; then echo "no controller elected in time" >&2; $(MAKE) --no-print-directory cluster-stop; exit 1; fi; \
		sleep 0.2; \
	done; \
	echo "cluster up: bootstrap 127.0.0.1:9092,127.0.0.1:9093,127.0.0.1:9094"

# SIGTERM is a controlled shutdown: leadership moves off each broker before
# it exits. A broker still alive after 60 s is killed.
cluster-stop:
	@for n in $(CLUSTER_BROKERS); do \
		f=data/broker-$$n.pid; [ -f $$f ] || continue; pid=$$(cat $$f); \
		if kill -TERM $$pid 2>/dev/null; then \
			for i in $$(seq 1 600); do kill -0 $$pid 2>/dev/null || break; sleep 0.1; done; \
			if kill -0 $$pid 2>/dev/null; then echo "broker $$n (pid $$pid) still alive; killing" >&2; kill -KILL $$pid; fi; \
			echo "broker $$n stopped"; \
		fi; \
		rm -f $$f; \
	done
	scripts/zk.sh stop data/zk $(CLUSTER_ZK_PORT)

# franz-go's own pkg/kgo integration tests, the allow-listed ones.
kgo-suite: deps build
	compat/kgo-suite.sh

# The same against three cluster-mode brokers (a private ZooKeeper) with
# replication factor 3: compat/kgo-allowlist-cluster.txt.
.PHONY: kgo-suite-cluster
kgo-suite-cluster: build
	compat/kgo-suite.sh --cluster

fuzz:
	FUZZTIME=$(FUZZTIME) scripts/fuzz.sh

test: deps vet staticcheck unit microbench compat compat-cluster kgo-suite kgo-suite-cluster fuzz bench-smoke

clean:
	rm -rf bin data

# Side by side with Apache Kafka on this machine (issue 5): fetches Kafka and
# its tools (deps), builds kbroker, runs every workload and writes
# bench/results/<date>.md. Not part of test: it takes 10-15 minutes.
.PHONY: bench
bench: deps build
	bench/run.sh

# The same machinery on tiny workloads, into a temporary directory: shows in
# CI that make bench runs unattended, covers every workload on both brokers
# and leaves no server running (about 4-6 minutes with the SASL_SSL workloads;
# the figures mean nothing).
.PHONY: bench-smoke
bench-smoke: deps build
	bench/smoke.sh

# The Go micro-benchmarks, once each, so they keep compiling and running.
.PHONY: microbench
microbench:
	$(GO) test -count=1 -run '^$$' -bench . -benchtime=1x $(UNIT_PKGS)
