package cmd

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/alecthomas/kong"

	"github.com/agentjq/agentjq/filter"
	"github.com/agentjq/agentjq/internal/manpages"
	"github.com/agentjq/agentjq/internal/testkit/livetest"
	"github.com/agentjq/agentjq/iostreams"
	"github.com/agentjq/agentjq/man"
)

// TestManPagesUpToDate fails when man/ differs from what the code
// generates: run `make man` (or AGENTJQ_UPDATE=1 go test ./cmd -run
// TestManPagesUpToDate) and commit the pages.
func TestManPagesUpToDate(t *testing.T) {
	t.Parallel()
	pages, err := ManPages()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join("..", "man")
	if os.Getenv("AGENTJQ_UPDATE") == "1" {
		old, _ := filepath.Glob(filepath.Join(dir, "agentjq*"))
		for _, f := range old {
			if _, ok := pages[filepath.Base(f)]; !ok {
				os.Remove(f)
			}
		}
		for name, b := range pages {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		t.Log("man pages rewritten; rebuild for agentjq man to embed them")
	}
	onDisk, _ := filepath.Glob(filepath.Join(dir, "agentjq*"))
	var names []string
	for _, f := range onDisk {
		names = append(names, filepath.Base(f))
	}
	if want := manpages.Names(pages); !slices.Equal(names, want) {
		t.Errorf("man/ holds %v, the code makes %v: run make man", names, want)
	}
	for name, want := range pages {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			continue // reported above
		}
		if !bytes.Equal(got, want) {
			t.Errorf("man/%s differs from what the code generates: run make man", name)
		}
	}
	// The binary embeds the committed pages.
	if embedded := man.Files(); !slices.Equal(embedded, manpages.Names(pages)) {
		t.Errorf("embedded pages %v, generated %v", embedded, manpages.Names(pages))
	}
}

// TestManPagesLint formats every page with groff's warnings on (-ww):
// a page man(1) would complain about fails here.
func TestManPagesLint(t *testing.T) {
	t.Parallel()
	livetest.SkipShort(t, "runs groff")
	groff, err := exec.LookPath("groff")
	if err != nil {
		t.Skip("groff not installed (Debian: groff-base)")
	}
	pages, err := ManPages()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range manpages.Names(pages) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		cmd := exec.CommandContext(ctx, groff, "-ww", "-man", "-Tutf8", "-z")
		cmd.Stdin = bytes.NewReader(pages[name])
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		cancel()
		if err != nil || stderr.Len() > 0 {
			t.Errorf("groff -ww %s: %v\n%s", name, err, stderr.String())
		}
	}
}

// TestManPagesContent checks that each page has its sections and that
// every flag of the model, every filter flag and every exit status is in
// its page.
func TestManPagesContent(t *testing.T) {
	t.Parallel()
	pages, err := ManPages()
	if err != nil {
		t.Fatal(err)
	}
	app, err := Model()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range manpages.Commands {
		page := string(pages["agentjq-"+name+".1"])
		for _, sec := range []string{"NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "\"EXIT STATUS\"", "EXAMPLES", "\"SEE ALSO\""} {
			if !strings.Contains(page, ".SH "+sec+"\n") {
				t.Errorf("agentjq-%s.1 has no %s section", name, sec)
			}
		}
		if !strings.Contains(page, ".SH ENVIRONMENT\n") {
			t.Errorf("agentjq-%s.1 has no ENVIRONMENT section", name)
		}
	}
	for _, c := range app.Children {
		if c.Name == "filter" || !slices.Contains(manpages.Commands, c.Name) {
			continue
		}
		page := string(pages["agentjq-"+c.Name+".1"])
		nodes := append([]*kong.Node{c}, c.Children...)
		for _, n := range nodes {
			for _, f := range n.Flags {
				if f.Hidden || f.Name == "help" {
					continue
				}
				if !strings.Contains(page, `\fB\-\-`+strings.ReplaceAll(f.Name, "-", `\-`)+`\fR`) {
					t.Errorf("agentjq-%s.1 does not document --%s", c.Name, f.Name)
				}
			}
		}
	}
	fp := string(pages["agentjq-filter.1"])
	for _, f := range filter.Flags {
		if !strings.Contains(fp, `\fB\-\-`+strings.ReplaceAll(f.Long, "-", `\-`)+`\fR`) {
			t.Errorf("agentjq-filter.1 does not document --%s", f.Long)
		}
	}
	for _, r := range filter.ExitTable {
		if !strings.Contains(fp, ".TP\n\\fB"+string(rune('0'+r.Code))+"\\fR\n") {
			t.Errorf("agentjq-filter.1 lacks exit status %d", r.Code)
		}
	}
	sp := string(pages["agentjq-spawn.1"])
	for _, code := range []string{"0", "1", "2", "3", "4", "124", "125", "127", "130", "141"} {
		if !strings.Contains(sp, ".TP\n\\fB"+code+"\\fR\n") {
			t.Errorf("agentjq-spawn.1 lacks exit status %s", code)
		}
	}
	// Pages never carry a date or a version, so regenerating is stable.
	for name, b := range pages {
		if first, _, _ := strings.Cut(string(b), "\n"); !strings.HasPrefix(first, ".TH ") || !strings.Contains(first, ` "" `) {
			t.Errorf("%s: title line %q", name, first)
		}
	}
}

func TestManCommand(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		args   []string
		outHas []string
		errHas string
		code   int
	}{
		{name: "spawn as text", args: []string{"man", "spawn"}, outHas: []string{"AGENTJQ-SPAWN(1)", "\nOPTIONS\n", "--agent=claude|context", "\nEXIT STATUS\n", "141"}},
		{name: "default page", args: []string{"man"}, outHas: []string{"AGENTJQ(1)", "agentjq spawn"}},
		{name: "protocol", args: []string{"man", "protocol"}, outHas: []string{"AGENTJQ-PROTOCOL(7)", "can_use_tool", "hook_callback", "decision"}},
		{name: "policy by page name", args: []string{"man", "agentjq-policy(5)"}, outHas: []string{"AGENTJQ-POLICY(5)", "RULES FILES"}},
		{name: "recording by file name", args: []string{"man", "agentjq-recording.5"}, outHas: []string{"agentjq_recording"}},
		{name: "filter lists agentlib", args: []string{"man", "filter"}, outHas: []string{"assistant_text", "--slurpfile NAME FILE"}},
		{name: "approve", args: []string{"man", "approve"}, outHas: []string{"approve test", "--expect=FILE"}},
		{name: "list", args: []string{"man", "--list"}, outHas: []string{"agentjq-spawn.1\n", "agentjq-protocol.7\n"}},
		{name: "roff source", args: []string{"man", "--roff", "replay"}, outHas: []string{".TH AGENTJQ\\-REPLAY 1"}},
		{name: "unknown page", args: []string{"man", "nope"}, errHas: "no manual page \"nope\"; the pages: acp, agentjq, approve, daemon, filter, policy, protocol, proxy, record, recording, replay, spawn", code: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, _, out, errOut := iostreams.Test()
			code := Main(tt.args, ios)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr %s", code, tt.code, errOut)
			}
			for _, want := range tt.outHas {
				if !strings.Contains(out.String(), want) {
					t.Errorf("stdout lacks %q:\n%s", want, out)
				}
			}
			if tt.errHas != "" && !strings.Contains(errOut.String(), tt.errHas) {
				t.Errorf("stderr %q lacks %q", errOut, tt.errHas)
			}
			if tt.code == 0 && errOut.Len() > 0 {
				t.Errorf("stderr not empty: %s", errOut)
			}
			if slices.Contains(tt.args, "--roff") {
				return
			}
			// Plain text: no escape codes, no roff left over.
			for _, bad := range []string{"\x1b", `\f`, `\-`, `\&`, `\(aq`, `\(ti`, "\n.TP", "\n.PP", "\n.SH"} {
				if strings.Contains(out.String(), bad) {
					t.Errorf("plain text output holds %q", bad)
				}
			}
		})
	}
}

// TestManEveryPageRenders renders every embedded page as plain text.
func TestManEveryPageRenders(t *testing.T) {
	t.Parallel()
	for _, f := range man.Files() {
		ios, _, out, errOut := iostreams.Test()
		if code := Main([]string{"man", f}, ios); code != 0 || errOut.Len() > 0 {
			t.Errorf("man %s: exit %d, %s", f, code, errOut)
		}
		if out.Len() < 500 || !strings.Contains(out.String(), "\nNAME\n") {
			t.Errorf("man %s: %d bytes, no NAME section", f, out.Len())
		}
	}
}
