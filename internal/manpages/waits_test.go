package manpages

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentjq/agentjq/internal/roff"
)

// agentjq-protocol(7) has the waits table, every row with its bound.
func TestProtocolPageListsWaits(t *testing.T) {
	page := roff.Text(protocolPage().String(), 10000)
	if !strings.Contains(page, "\nWAITS\n") {
		t.Fatal("agentjq-protocol(7) has no WAITS section")
	}
	section := page[strings.Index(page, "\nWAITS\n"):]
	for _, w := range Waits {
		if w.Peer == "" || w.What == "" || w.Commands == "" || w.Bound == "" || w.Code == "" {
			t.Errorf("row %+v lacks a field", w)
			continue
		}
		for _, want := range []string{w.Peer, w.What, "Bound: " + w.Bound} {
			if !strings.Contains(section, want) {
				t.Errorf("the WAITS section lacks %q", want)
			}
		}
		if w.AtBound != "" && !strings.Contains(section, "At the bound: "+w.AtBound) {
			t.Errorf("the WAITS section lacks the outcome of %q: %q", w.What, w.AtBound)
		}
	}
	for _, want := range []string{"a line that is not an answer", "--approval-timeout", "--idle-timeout", "initialize"} {
		if !strings.Contains(section, want) {
			t.Errorf("the WAITS section does not mention %q", want)
		}
	}
}

// Each row names code that exists: a wait moved or renamed makes its row
// fail here until the table follows.
func TestWaitsNameTheirCode(t *testing.T) {
	root := filepath.Join("..", "..")
	for _, w := range Waits {
		file, fn, ok := strings.Cut(w.Code, ":")
		if !ok {
			t.Errorf("%s: Code %q is not FILE:FUNCTION", w.What, w.Code)
			continue
		}
		src, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Errorf("%s: %v", w.What, err)
			continue
		}
		if !regexp.MustCompile(`(?m)^func (\([^)]*\) )?` + regexp.QuoteMeta(fn) + `\(`).Match(src) {
			t.Errorf("%s: %s has no function %s", w.What, file, fn)
		}
	}
}
