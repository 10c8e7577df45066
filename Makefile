# agentjq: a boring, honest Makefile.
PREFIX     ?= /usr/local
DESTDIR    ?=
BINDIR      = $(DESTDIR)$(PREFIX)/bin
MANDIR      = $(DESTDIR)$(PREFIX)/share/man
BASHCOMPDIR = $(DESTDIR)$(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR  = $(DESTDIR)$(PREFIX)/share/zsh/site-functions
FISHCOMPDIR = $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d
GO         ?= go
VERSION    ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
LDFLAGS     = -s -w -X github.com/agentjq/agentjq/internal/buildinfo.version=$(VERSION)
FUZZTIME   ?= 30s

# The real agent CLI the live tests drive, installed from npm.
CLAUDE_VERSION ?= 2.1.328
CLAUDE_DIR     ?= $(HOME)/.cache/agentjq/claude-$(CLAUDE_VERSION)
CLAUDE_BIN      = $(CLAUDE_DIR)/node_modules/.bin/claude
export AGENTJQ_LIVE_CLAUDE ?= $(CLAUDE_BIN)

.PHONY: all build install test test-short lint fuzz bench man protocol fixtures claude clean

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

# The README's test command. It installs the pinned claude CLI first so the
# live tests run; set AGENTJQ_REQUIRE_LIVE=1 (CI does) to fail, not skip,
# when it cannot be found.
test: claude
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))" || { gofmt -l .; echo 'gofmt: files above need formatting'; exit 1; }
	$(GO) test -race -count=1 -timeout 20m ./...

test-short:
	$(GO) test -short ./...

claude: $(CLAUDE_BIN)

$(CLAUDE_BIN):
	@command -v npm >/dev/null || { echo "npm is needed to install the claude CLI for the live tests"; exit 1; }
	npm install --no-audit --no-fund --loglevel=error --prefix $(CLAUDE_DIR) @anthropic-ai/claude-code@$(CLAUDE_VERSION)
	@test -x $(CLAUDE_BIN) && $(CLAUDE_BIN) --version

lint:
	$(GO) vet ./...
	@test -z "$$(gofmt -l .)" || { gofmt -l .; exit 1; }
	@if command -v staticcheck >/dev/null; then staticcheck ./...; else echo "staticcheck not installed; skipped"; fi

fuzz:
	@for spec in $$($(GO) run ./internal/tools/listfuzz 2>/dev/null); do \
		pkg=$${spec%%:*}; fn=$${spec##*:}; \
		echo "fuzz $$pkg $$fn"; \
		$(GO) test $$pkg -run '^$$' -fuzz "^$$fn$$" -fuzztime $(FUZZTIME) || exit 1; \
	done

bench: build
	./scripts/bench.sh | tee BENCHMARKS.md.new && mv BENCHMARKS.md.new BENCHMARKS.md

man:
	$(GO) run ./internal/tools/genman -o man

protocol:
	$(GO) run ./internal/tools/genprotocol
	$(GO) run ./internal/tools/genman -o man

fixtures: claude
	AGENTJQ_UPDATE=1 $(GO) test ./cmd/ -run TestRegenerateFixtures -count=1 -v

clean:
	rm -rf bin
