package main

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/agentjq/agentjq/cmd"
	"github.com/agentjq/agentjq/iostreams"
	"github.com/agentjq/agentjq/man"
)

// helpCommands lists the commands `agentjq --help` prints.
func helpCommands(t *testing.T) []string {
	t.Helper()
	ios, _, out, errb := iostreams.Test()
	if code := cmd.Main([]string{"--help"}, ios); code != 0 {
		t.Fatalf("agentjq --help: exit %d\n%s", code, errb)
	}
	_, list, ok := strings.Cut(out.String(), "\nCommands:\n")
	if !ok {
		t.Fatalf("agentjq --help has no Commands: section:\n%s", out)
	}
	var names []string
	for _, l := range strings.Split(list, "\n") {
		if l == "" {
			break
		}
		if f := strings.Fields(l); len(f) > 1 && strings.HasPrefix(l, "  ") && !strings.HasPrefix(l, "   ") {
			names = append(names, f[0])
		}
	}
	if len(names) < 5 {
		t.Fatalf("agentjq --help lists %d commands:\n%s", len(names), out)
	}
	return names
}

var numberWords = []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"}

// TestDocsMatchTheCommands: the README names every command `agentjq
// --help` lists (and counts them right), its manual-page list is the
// embedded pages, and `agentjq man COMMAND` finds a page for each.
func TestDocsMatchTheCommands(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	commands := helpCommands(t)

	m := regexp.MustCompile(`(?s)One static Go binary, (\w+) subcommands: (.*?)\n\n`).FindStringSubmatch(text)
	if m == nil {
		t.Fatal(`README.md lacks "One static Go binary, N subcommands: ..."`)
	}
	var named []string
	for _, b := range regexp.MustCompile("`([a-z]+)`").FindAllStringSubmatch(m[2], -1) {
		named = append(named, b[1])
	}
	if w := slices.Index(numberWords, m[1]); w != len(commands) {
		t.Errorf("README.md says %q subcommands; agentjq --help lists %d", m[1], len(commands))
	}
	if !sameSet(named, commands) {
		t.Errorf("README.md names the subcommands %q; agentjq --help lists %q", named, commands)
	}

	_, section, ok := strings.Cut(text, "\n## Manual pages\n")
	if !ok {
		t.Fatal("README.md has no ## Manual pages section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var listed []string
	for _, p := range regexp.MustCompile(`\b(agentjq(?:-[a-z]+)?)\(([1-9])\)`).FindAllStringSubmatch(section, -1) {
		if f := p[1] + "." + p[2]; !slices.Contains(listed, f) {
			listed = append(listed, f)
		}
	}
	if !sameSet(listed, man.Files()) {
		t.Errorf("README.md lists the manual pages %q; the pages are %q", listed, man.Files())
	}

	for _, c := range commands {
		ios, _, out, errb := iostreams.Test()
		if code := cmd.Main([]string{"man", c}, ios); code != 0 || out.Len() == 0 {
			t.Errorf("agentjq man %s: exit %d, %d bytes\n%s", c, code, out.Len(), errb)
		}
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}
