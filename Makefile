# lab: see README.md. `make demo` sets up what the demo needs and runs it;
# `make test` sets up everything (era kernels too) and runs the tests.

GO       ?= go
BIN      ?= bin
PREFIX   ?= /usr/local
GOFLAGS_GUEST = -trimpath -ldflags='-s -w'
ARCHES   = i386 x86_64
GOARCH_i386   = 386
GOARCH_x86_64 = amd64
CC_i386   = i686-linux-gnu-gcc
CC_x86_64 = gcc
PLUGINS  = forkbench threadbench printfbench netbench

.PHONY: all build agents plugins proto setup setup-all deps deps-boot images era-kernels demo test test-short bench install clean fmt vet

all: build

build: $(BIN)/lab agents plugins

# `lab --version` prints the version (git describe) and the commit.
$(BIN)/lab: FORCE
	$(GO) build -ldflags "-X main.version=$$(git describe --tags --always --dirty 2>/dev/null || echo dev) -X main.commit=$$(git rev-parse HEAD 2>/dev/null)" -o $@ ./cmd/lab

agents: $(foreach a,$(ARCHES),$(BIN)/agent-$(a))

$(BIN)/agent-%: FORCE
	CGO_ENABLED=0 GOOS=linux GOARCH=$(GOARCH_$*) GO386=softfloat $(GO) build $(GOFLAGS_GUEST) -o $@ ./guest/agent

# Each plugin, through `lab plugin build` as users build theirs: its
# description.json validated, the Go binary per guest arch plus its C
# workloads built static (and once more per choice of a `build` parameter:
# docs/plugins.md), and the
# description recorded beside each binary with its sha256.
plugins: $(BIN)/lab
	@set -e; for p in $(PLUGINS); do $(BIN)/lab plugin build --out $(BIN)/plugins plugins/$$p; done

# proto regenerates plugins/wire from benchmark.proto with the pinned
# generators (protoc from Debian's protobuf-compiler, see setup-deps.sh).
# plugins/wire's tests fail when the committed code differs.
PROTOC_GEN_GO      = google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.6
PROTOC_GEN_GO_GRPC = google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.3.0

proto:
	GOBIN=$(abspath $(BIN))/tools $(GO) install $(PROTOC_GEN_GO)
	GOBIN=$(abspath $(BIN))/tools $(GO) install $(PROTOC_GEN_GO_GRPC)
	PATH=$(abspath $(BIN))/tools:$$PATH protoc -I plugins/wire \
	  --go_out=plugins/wire --go_opt=paths=source_relative \
	  --go-grpc_out=plugins/wire --go-grpc_opt=paths=source_relative \
	  plugins/wire/benchmark.proto

FORCE:

# deps installs the host packages (idempotent; apt is only asked when
# something is missing); deps-boot only those booting guests and building
# lab need, not the kernel build tools, protoc or chromium. images fetches
# kernels and busybox into the cache.
deps:
	./scripts/setup-deps.sh

deps-boot:
	./scripts/setup-deps.sh boot

images: $(BIN)/lab
	$(BIN)/lab image fetch

# era-kernels builds the kernels of the built-in era profiles from Debian's
# kernel source (minutes each the first time, niced; a cache hit in seconds
# after that: `lab image build` keys them by source, fragments, toolchain).
# Without it lab builds an era kernel the first time a profile boots it.
era-kernels: $(BIN)/lab
	nice -n 19 $(BIN)/lab image build --profiles

# setup is what the profiles booting Debian's kernels need; setup-all adds
# every host package and the era kernels, which the tests and benchmarks
# boot (without them lab builds an era kernel the first time a profile
# boots it). demo sets up only what celeron-2.4 needs.
setup: deps-boot build images

setup-all: deps setup era-kernels

demo: deps-boot build
	$(BIN)/lab image fetch debian-6.1-686
	$(BIN)/lab down --all
	$(BIN)/lab up celeron-2.4
	$(BIN)/lab exec celeron-2.4 -- sh -c 'uname -a; grep -m1 "model name" /proc/cpuinfo; echo "CPUs online: $$(cat /sys/devices/system/cpu/online)"; grep MemTotal /proc/meminfo; echo "ulimit -s: $$(ulimit -s)"'
	$(BIN)/lab run forkbench --vm celeron-2.4 -e create -p m=10000 --repeat 5 || { $(BIN)/lab down celeron-2.4; exit 1; }
	$(BIN)/lab down celeron-2.4

# The tests boot real QEMU guests under TCG: -p 1 keeps packages from
# booting guests at the same time (two TCG guests on 2 cores can starve
# each other's timer calibration).
# The packages with goroutines of their own (the agent, the link, the
# supervisor and machine, the plugin runner) run under the race detector.
RACE_PKGS = ./guest/agent/ ./vm/... ./plugins/...
test: setup-all
	$(GO) vet ./...
	LAB_LIBDIR=$(CURDIR)/$(BIN) $(GO) test -p 1 -race -timeout 60m $(RACE_PKGS)
	LAB_LIBDIR=$(CURDIR)/$(BIN) $(GO) test -p 1 -timeout 60m $$($(GO) list ./... | grep -v -e '/guest/agent$$' -e '/vm$$' -e '/vm/' -e '/plugins$$' -e '/plugins/')

test-short: build
	$(GO) test -short ./...

bench: setup-all
	LAB_LIBDIR=$(CURDIR)/$(BIN) $(GO) test -p 1 -run '^$$' -bench . -benchtime 1x -timeout 60m ./results/history/ ./vm/ ./cmd/lab/ ./engine/

install: build
	install -d $(PREFIX)/bin $(PREFIX)/lib/lab
	install -m 0755 $(BIN)/lab $(PREFIX)/bin/lab
	cp -r $(BIN)/agent-* $(BIN)/plugins $(PREFIX)/lib/lab/

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf $(BIN)
