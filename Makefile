# agentjq: a boring, honest Makefile.
PREFIX     ?= /usr/local
DESTDIR    ?=
BINDIR      = $(DESTDIR)$(PREFIX)/bin
MANDIR      = $(DESTDIR)$(PREFIX)/share/man
BASHCOMPDIR = $(DESTDIR)$(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR  = $(DESTDIR)$(PREFIX)/share/zsh/site-functions
FISHCOMPDIR = $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d
SHAREDIR    = $(DESTDIR)$(PREFIX)/share/agentjq
GO         ?= go
VERSION    ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
LDFLAGS     = -s -w -X github.com/agentjq/agentjq/internal/buildinfo.version=$(VERSION)
FUZZTIME   ?= 30s

# The pinned staticcheck of make lint (2026.2.x knows go 1.26).
STATICCHECK_VERSION ?= v0.8.2
STATICCHECK_DIR     ?= $(HOME)/.cache/agentjq/staticcheck-$(STATICCHECK_VERSION)
STATICCHECK          = $(STATICCHECK_DIR)/staticcheck

# The pinned gocyclo of make lint: no function above complexity 40.
GOCYCLO_VERSION ?= v0.6.0
GOCYCLO_DIR     ?= $(HOME)/.cache/agentjq/gocyclo-$(GOCYCLO_VERSION)
GOCYCLO          = $(GOCYCLO_DIR)/gocyclo
GOCYCLO_OVER    ?= 40

# The claude CLI versions agentjq is checked against: internal/protocol/cli-versions.txt
# is their one list (protocol embeds it too). make claude installs each from
# npm into $(HOME)/.cache/agentjq/claude-VERSION; make test runs the live
# suite against each. CLAUDE_VERSION (the newest by default) is the one
# make fixtures records with, into fixtures/recordings/claude-code-VERSION.
CLAUDE_VERSIONS := $(shell awk '/^[0-9]/ { print $$1 }' internal/protocol/cli-versions.txt)
CLAUDE_VERSION  ?= $(lastword $(CLAUDE_VERSIONS))
claude_bin       = $(HOME)/.cache/agentjq/claude-$(1)/node_modules/.bin/claude
CLAUDE_BIN       = $(call claude_bin,$(CLAUDE_VERSION))

.PHONY: sandbox-deps node-clients all build install test test-short tour lint staticcheck gocyclo fuzz bench man protocol fixtures transcripts claude cli-schema cli-drift gitleaks-rules clean

all: build

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/agentjq .

install: build
	install -d $(BINDIR) $(MANDIR)/man1 $(MANDIR)/man5 $(MANDIR)/man7
	install -m 0755 bin/agentjq $(BINDIR)/agentjq
	for p in man/*.1; do [ -e "$$p" ] && install -m 0644 $$p $(MANDIR)/man1/; done; true
	for p in man/*.5; do [ -e "$$p" ] && install -m 0644 $$p $(MANDIR)/man5/; done; true
	for p in man/*.7; do [ -e "$$p" ] && install -m 0644 $$p $(MANDIR)/man7/; done; true
	install -d $(BASHCOMPDIR) $(ZSHCOMPDIR) $(FISHCOMPDIR)
	bin/agentjq completion bash > $(BASHCOMPDIR)/agentjq
	bin/agentjq completion zsh > $(ZSHCOMPDIR)/_agentjq
	bin/agentjq completion fish > $(FISHCOMPDIR)/agentjq.fish
	install -d $(SHAREDIR)
	install -m 0644 daemon/protocol.json sdk/protocol.ts $(SHAREDIR)/

# The README's test command. It installs the checked claude CLIs first so
# the live tests run; set AGENTJQ_REQUIRE_LIVE=1 (CI does) to fail, not
# skip, when one cannot be found. The whole suite runs once against the
# newest CLI, with the race detector; then the live tests (TestLive*) once
# against each older CLI, without it: what that run checks is the other
# CLI's protocol, and the race detector has seen the same code under the
# same tests already. NORACE_TESTS are long single flows (secret scanning of
# multi-MB lines, replays through this race-built test binary as the agent)
# that -race slows 10 to 40 times and where it finds nothing the rest of the
# suite does not: they run in the same suite, without -race. The start and
# the total time are printed, so that CI's log shows the duration.
# The live tests wait on claude, its scripted model and real clients far
# more than they compute: four run at once in a package (go test's default
# is one per core).
TEST_PARALLEL ?= 4
NORACE_TESTS = ^(TestRecordSecretCorpus|TestRecordHeldOutSecretCorpus|TestFixtureRecordingsReplayThroughSpawn|TestCaptureRecordingsReplayThroughSpawn|TestCheckAgainstAsAgent|TestCheckFolderSummary|TestCheckGradesThroughAsAgent)$$
TEST_START  := $(shell date +%s)

test: claude node-clients sandbox-deps
	@date -u +'make test: started %Y-%m-%dT%H:%M:%SZ'
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))" || { gofmt -l .; echo 'gofmt: files above need formatting'; exit 1; }
	AGENTJQ_LIVE_CLAUDE=$(call claude_bin,$(lastword $(CLAUDE_VERSIONS))) $(GO) test -race -count=1 -parallel $(TEST_PARALLEL) -timeout 40m -skip '$(NORACE_TESTS)' ./...
	AGENTJQ_LIVE_CLAUDE=$(call claude_bin,$(lastword $(CLAUDE_VERSIONS))) $(GO) test -count=1 -parallel $(TEST_PARALLEL) -timeout 40m -run '$(NORACE_TESTS)' ./cmd
	@set -e; for v in $(filter-out $(lastword $(CLAUDE_VERSIONS)),$(CLAUDE_VERSIONS)); do \
		echo "live tests against claude $$v"; \
		AGENTJQ_LIVE_CLAUDE=$(call claude_bin,$$v) $(GO) test -count=1 -parallel $(TEST_PARALLEL) -timeout 40m -run '^TestLive' ./...; \
	done
	@echo "make test: passed in $$(( $$(date +%s) - $(TEST_START) ))s"

# The README's tour, offline: a shell whose claude talks to the scripted
# model (scripts/tour.sh).
tour: claude sandbox-deps
	./scripts/tour.sh

test-short:
	$(GO) test -short ./...

# Claude Code's sandbox, which agentjq turns on for every session, needs
# bubblewrap and socat on Linux: installed with apt-get when missing and
# this is a Debian or Ubuntu machine run as root; otherwise say what to
# install.
sandbox-deps:
	@if [ "$$(uname -s)" = Linux ] && ! { command -v bwrap && command -v socat; } >/dev/null; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap socat; \
		else echo "the sandbox needs bubblewrap and socat: apt-get install bubblewrap socat (or your system's packages)"; exit 1; fi; \
	fi

# The real clients the proxy, serve and acp tests drive (the Agent SDK, the
# ACP SDK, a WebSocket client, a JSON Schema validator), pinned, installed
# from npm into a cache; the tests find them through AGENTJQ_NODE_MODULES.
NODE_CLIENTS     = @anthropic-ai/claude-agent-sdk@0.3.332 @agentclientprotocol/sdk@2.4.0 ws@8.23.0 ajv@8.20.0 typescript@5.9.3 acpx@0.19.1
NODE_CLIENTS_DIR = $(HOME)/.cache/agentjq/node-clients
NODE_STAMP       = $(NODE_CLIENTS_DIR)/.installed-$(shell echo '$(NODE_CLIENTS)' | cksum | cut -d' ' -f1)
export AGENTJQ_NODE_MODULES ?= $(NODE_CLIENTS_DIR)/node_modules

node-clients: $(NODE_STAMP)

$(NODE_STAMP):
	@command -v npm >/dev/null || { echo "npm is needed to install the node clients for the live tests"; exit 1; }
	npm install --no-audit --no-fund --loglevel=error --prefix $(NODE_CLIENTS_DIR) $(NODE_CLIENTS)
	@touch $@

# Every checked CLI version, and CLAUDE_VERSION when it is another.
claude: $(foreach v,$(sort $(CLAUDE_VERSIONS) $(CLAUDE_VERSION)),$(call claude_bin,$(v)))

$(HOME)/.cache/agentjq/claude-%/node_modules/.bin/claude:
	@command -v npm >/dev/null || { echo "npm is needed to install the claude CLI for the live tests"; exit 1; }
	npm install --no-audit --no-fund --loglevel=error --prefix $(HOME)/.cache/agentjq/claude-$* @anthropic-ai/claude-code@$*
	@test -x $@ && $@ --version

# go.mod tidy, gofmt, vet and the pinned staticcheck, which the Makefile
# installs into a cache as it does the CLI (go install with GOBIN set).
lint: staticcheck gocyclo
	$(GO) mod tidy -diff
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))" || { gofmt -l .; echo 'gofmt: files above need formatting'; exit 1; }
	$(GO) vet ./...
	$(STATICCHECK) ./...
	@out="$$($(GOCYCLO) -over $(GOCYCLO_OVER) -ignore '_test.go' .)"; test -z "$$out" || { echo "$$out"; echo 'gocyclo: the functions above are over complexity $(GOCYCLO_OVER): split them'; exit 1; }

staticcheck: $(STATICCHECK)

$(STATICCHECK):
	GOBIN=$(STATICCHECK_DIR) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

gocyclo: $(GOCYCLO)

$(GOCYCLO):
	GOBIN=$(GOCYCLO_DIR) $(GO) install github.com/fzipp/gocyclo/cmd/gocyclo@$(GOCYCLO_VERSION)

# Every fuzz target (go test -list '^Fuzz' per package) for FUZZTIME each;
# the first crash fails the run.
fuzz:
	GO=$(GO) FUZZTIME=$(FUZZTIME) ./scripts/fuzz.sh

bench: build
	./scripts/bench.sh | tee BENCHMARKS.md.new && mv BENCHMARKS.md.new BENCHMARKS.md

man:
	$(GO) run ./internal/tools/genman -o man

# Bumps gitleaks' rule set: make gitleaks-rules GITLEAKS_VERSION=v8.x.y pins
# that version in go.mod and regenerates redact/gitleaks_rules.go from it
# (internal/tools/gengitleaks); the record page counts the rules.
GITLEAKS_VERSION ?= latest
gitleaks-rules:
	$(GO) get github.com/zricethezav/gitleaks/v8@$(GITLEAKS_VERSION)
	$(GO) mod tidy
	$(GO) generate ./redact
	$(GO) run ./internal/tools/genman -o man

# The daemon's protocol files, generated from its Go method table:
# daemon/protocol.json, sdk/protocol.ts and agentjq-daemon(7).
protocol:
	$(GO) run ./internal/tools/genprotocol
	$(GO) run ./internal/tools/genman -o man

# Records every fixture scenario with CLI CLAUDE_VERSION into
# fixtures/recordings/claude-code-$(CLAUDE_VERSION).
fixtures: $(CLAUDE_BIN)
	AGENTJQ_LIVE_CLAUDE=$(CLAUDE_BIN) AGENTJQ_UPDATE=1 $(GO) test ./cmd/ -run '^TestRegenerateFixtures$$' -count=1 -v

# Runs the real claude CLAUDE_VERSION offline under the scripted API and
# keeps the session files it writes itself (~/.claude/projects/...) in
# fixtures/transcripts/claude-code-$(CLAUDE_VERSION): a plain session, tool
# rounds, a subagent, a resumed session and a /compact (see its manifest).
transcripts: $(CLAUDE_BIN)
	AGENTJQ_LIVE_CLAUDE=$(CLAUDE_BIN) AGENTJQ_UPDATE=1 $(GO) test ./fixtures/ -run '^TestRegenerateTranscripts$$' -count=1 -v

# The newest checked version other than CLAUDE_VERSION: what a new CLI is
# compared with.
BASE_VERSION ?= $(lastword $(filter-out $(CLAUDE_VERSION),$(CLAUDE_VERSIONS)))

# The control subtypes and request fields CLI CLAUDE_VERSION knows, read
# from the schema text in its binary, against internal/protocol/tables.go and what
# changed since BASE_VERSION. See internal/tools/clischema for what it can
# and cannot see.
cli-schema: $(CLAUDE_BIN) $(if $(BASE_VERSION),$(call claude_bin,$(BASE_VERSION)))
	$(GO) run ./internal/tools/clischema $(if $(BASE_VERSION),-base $(call claude_bin,$(BASE_VERSION))) $(CLAUDE_BIN)

# Replays BASE_VERSION's fixtures against CLI CLAUDE_VERSION (one replay
# --check of their folder, live, offline) and prints the graded report and
# its summary table; fails on breaking drift.
cli-drift: $(CLAUDE_BIN)
	AGENTJQ_LIVE_CLAUDE=$(CLAUDE_BIN) AGENTJQ_FIXTURES_OF=$(BASE_VERSION) AGENTJQ_REQUIRE_LIVE=1 \
		$(GO) test ./cmd/ -run '^TestLiveFixtureCheck$$' -count=1 -v

clean:
	rm -rf bin
