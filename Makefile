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
compat-cluster: deps build
	$(GO) test -count=1 -timeout 20m ./compat/cluster/

# franz-go's own pkg/kgo integration tests, the allow-listed ones.
kgo-suite: build
	compat/kgo-suite.sh

fuzz:
	FUZZTIME=$(FUZZTIME) scripts/fuzz.sh

test: deps vet staticcheck unit compat kgo-suite fuzz

clean:
	rm -rf bin data
