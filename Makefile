# lab: see README.md. `make demo` sets up and runs the main job; `make test`
# sets up and runs the tests.

GO       ?= go
BIN      ?= bin
PREFIX   ?= /usr/local
GOFLAGS_GUEST = -trimpath -ldflags='-s -w'
ARCHES   = i386 x86_64
GOARCH_i386   = 386
GOARCH_x86_64 = amd64
CC_i386   = i686-linux-gnu-gcc
CC_x86_64 = gcc
PLUGINS  = forkbench

.PHONY: all build agents plugins setup deps images demo test test-short bench install clean fmt vet

all: build

build: $(BIN)/lab agents plugins

# `lab --version` prints the version (git describe) and the commit.
$(BIN)/lab: FORCE
	$(GO) build -ldflags "-X main.version=$$(git describe --tags --always --dirty 2>/dev/null || echo dev) -X main.commit=$$(git rev-parse HEAD 2>/dev/null)" -o $@ ./cmd/lab

agents: $(foreach a,$(ARCHES),$(BIN)/agent-$(a))

$(BIN)/agent-%: FORCE
	CGO_ENABLED=0 GOOS=linux GOARCH=$(GOARCH_$*) GO386=softfloat $(GO) build $(GOFLAGS_GUEST) -o $@ ./images/agent

# Each plugin: the Go binary per guest arch plus its C workloads, built
# static (the guests have no libc of their own).
plugins: $(foreach p,$(PLUGINS),$(foreach a,$(ARCHES),$(BIN)/plugins/$(p)/$(a)/$(p) $(BIN)/plugins/$(p)/$(a)/workload))

$(BIN)/plugins/%: FORCE
	@set -e; p=$$(echo $* | cut -d/ -f1); a=$$(echo $* | cut -d/ -f2); what=$$(echo $* | cut -d/ -f3); \
	out=$(BIN)/plugins/$$p/$$a; mkdir -p $$out/workload; \
	if [ "$$what" = workload ]; then \
	  cc=$(CC_i386); [ $$a = x86_64 ] && cc=$(CC_x86_64); \
	  for src in plugins/$$p/workload/*.c; do \
	    $$cc -static -O2 -pthread -o $$out/workload/$$(basename $$src .c) $$src; \
	  done; \
	else \
	  ga=386; [ $$a = x86_64 ] && ga=amd64; \
	  CGO_ENABLED=0 GOOS=linux GOARCH=$$ga GO386=softfloat $(GO) build $(GOFLAGS_GUEST) -o $$out/$$p ./plugins/$$p; \
	fi

FORCE:

# deps installs the host packages (idempotent; apt is only asked when
# something is missing). images fetches kernels and busybox into the cache.
deps:
	./scripts/setup-deps.sh

images: $(BIN)/lab
	$(BIN)/lab image fetch

setup: deps build images

demo: setup
	$(BIN)/lab down --all
	$(BIN)/lab up celeron-2.4
	$(BIN)/lab exec celeron-2.4 -- sh -c 'uname -a; grep -m1 "model name" /proc/cpuinfo; echo "CPUs online: $$(cat /sys/devices/system/cpu/online)"; grep MemTotal /proc/meminfo; echo "ulimit -s: $$(ulimit -s)"'
	$(BIN)/lab run forkbench --vm celeron-2.4 --repeat 3 || { $(BIN)/lab down celeron-2.4; exit 1; }
	$(BIN)/lab down celeron-2.4

# The tests boot real QEMU guests under TCG: -p 1 keeps packages from
# booting guests at the same time (two TCG guests on 2 cores can starve
# each other's timer calibration).
# The packages with goroutines of their own (the agent, the link, the
# supervisor and machine, the plugin runner) run under the race detector.
RACE_PKGS = ./images/agent/ ./vm/... ./plugins/...
test: setup
	$(GO) vet ./...
	LAB_LIBDIR=$(CURDIR)/$(BIN) $(GO) test -p 1 -race -timeout 60m $(RACE_PKGS)
	LAB_LIBDIR=$(CURDIR)/$(BIN) $(GO) test -p 1 -timeout 60m $$($(GO) list ./... | grep -v -e '/images/agent$$' -e '/vm$$' -e '/vm/' -e '/plugins$$' -e '/plugins/')

test-short: build
	$(GO) test -short ./...

bench: setup
	LAB_LIBDIR=$(CURDIR)/$(BIN) $(GO) test -p 1 -run '^$$' -bench . -benchtime 1x -timeout 60m ./vm/ ./cmd/lab/

install: build
	install -d $(PREFIX)/bin $(PREFIX)/lib/lab
	install -m 0755 $(BIN)/lab $(PREFIX)/bin/lab
	cp -r $(BIN)/agent-* $(BIN)/plugins $(PREFIX)/lib/lab/

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf $(BIN)
