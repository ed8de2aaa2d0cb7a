# anima — make targets. `make test` is the test command CI runs.
GO      ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X github.com/anima-bot/anima/bot.Version=$(VERSION)
# Fuzzing runs a fixed number of inputs per target, not a duration: with -fuzztime as a
# duration, go test can report "context deadline exceeded" when time runs out while a
# worker is busy, a false failure on a loaded 2-core machine.
FUZZN ?= 20000
FUZZN_CONFIG ?= 5000
FUZZFLAGS := -fuzzminimizetime 3s

.PHONY: build test fuzz bench lint rules unit docker stack stack-check run loadtest soak clean

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o bin/anima ./cmd/anima
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/anima-sim ./cmd/anima-sim

# Most end-to-end tests wait on anima's loop ticks and the fake servers, not on the CPU, so
# more of them run at once than the machine has cores: TESTPARALLEL tests per package
# (go test's default -parallel is GOMAXPROCS: 2 on a 2-core machine) and TESTP packages
# (-p, also GOMAXPROCS by default).
TESTPARALLEL ?= 8
TESTP ?= 4

# vet runs inside go test with every analyzer (-vet=all: the checks of `go vet ./...`, on
# every package, test files included, packages without tests too), so each package is
# compiled once, with -race, instead of once for vet and again for the tests.
test:
	$(GO) test -race -vet=all -count=1 -parallel $(TESTPARALLEL) -p $(TESTP) ./...

# Each fuzz target for FUZZN inputs (go test -fuzz takes one target at a time; YAML
# parsing is slower, so the config target gets FUZZN_CONFIG).
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzLoadConfig$$' -fuzztime $(FUZZN_CONFIG)x $(FUZZFLAGS) ./bot/config
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeUpdate$$' -fuzztime $(FUZZN)x $(FUZZFLAGS) ./channels/telegram
	$(GO) test -run '^$$' -fuzz '^FuzzToHTML$$' -fuzztime $(FUZZN)x $(FUZZFLAGS) ./channels/telegram
	$(GO) test -run '^$$' -fuzz '^FuzzSplit$$' -fuzztime $(FUZZN)x $(FUZZFLAGS) ./channels/telegram
	$(GO) test -run '^$$' -fuzz '^FuzzPlanCron$$' -fuzztime $(FUZZN)x $(FUZZFLAGS) ./brain/schedule
	$(GO) test -run '^$$' -fuzz '^FuzzRepairJSON$$' -fuzztime $(FUZZN)x $(FUZZFLAGS) ./brain/cognition
	$(GO) test -run '^$$' -fuzz '^FuzzParseAnswer$$' -fuzztime $(FUZZN)x $(FUZZFLAGS) ./brain/cognition
	$(GO) test -run '^$$' -fuzz '^FuzzDraftText$$' -fuzztime $(FUZZN)x $(FUZZFLAGS) ./brain/cognition
	$(GO) test -run '^$$' -fuzz '^FuzzParseAnswerLoose$$' -fuzztime $(FUZZN)x $(FUZZFLAGS) ./brain/cognition
	$(GO) test -run '^$$' -fuzz '^FuzzStrictSchema$$' -fuzztime $(FUZZN)x $(FUZZFLAGS) ./plugins/mcp

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

lint:
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# The alerting rules in deploy/prometheus: promtool check rules and test rules (promtool is
# installed from Debian's prometheus package when missing).
rules:
	scripts/promtool-check

# deploy/systemd/anima.service through systemd-analyze verify and security.
unit:
	scripts/systemd-check

# The image, stamped with the version git describes.
docker:
	docker build -t anima:$(VERSION) -t anima --build-arg VERSION=$(VERSION) .

# anima, Prometheus (with the alert rules) and Grafana (with the dashboard) in Docker:
# deploy/compose.yaml. Grafana on http://127.0.0.1:3000, Prometheus on :9090.
stack:
	ANIMA_VERSION=$(VERSION) docker compose -f deploy/compose.yaml up -d --build

# A real Prometheus with the shipped scrape config and rules against the real binary and
# the in-repo fakes: the target is up and every dashboard query returns data.
stack-check: build
	scripts/stack-check

# The configuration every command finds without FILE: $ANIMA_CONFIG, else ./anima.yaml
# (what `anima init` writes), else config.yaml (the rule is in `anima --help`).
run: build
	./bin/anima run

# The real binary against the in-repo fake Telegram and OpenAI servers on loopback.
loadtest: build
	$(GO) run ./cmd/loadtest --binary bin/anima

# 100,000 messages through the real store and memory code, no Telegram pacing: bytes
# written, CPU, file and live size per message, Recall/search latency, start-up and RSS.
# SOAKFLAGS=-n=10000 for a shorter run.
SOAKFLAGS ?=
soak:
	$(GO) run ./cmd/soak $(SOAKFLAGS)

clean:
	rm -rf bin
