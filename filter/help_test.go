package filter

import (
	"bytes"
	"strings"
	"testing"

	"github.com/agentjq/agentjq/filter/agentlib"
	"github.com/agentjq/agentjq/fixtures"
)

// The examples of --help work: their programs give output on the captures.
func TestHelpExamplesRun(t *testing.T) {
	var stream bytes.Buffer
	for _, name := range []string{"hello", "write-allow", "multi-turn"} {
		b, err := fixtures.Capture(name, "out")
		if err != nil {
			t.Fatal(err)
		}
		stream.Write(b)
	}
	for _, ex := range Examples {
		cmd := ex.Command[strings.LastIndex(ex.Command, "agentjq filter"):]
		parts := strings.Split(cmd, "'")
		if len(parts) < 3 {
			t.Fatalf("example %q has no quoted program", ex.Command)
		}
		args := append(strings.Fields(parts[0])[2:], parts[1])
		out, errOut, code := runFilter(t, stream.String(), args...)
		if code != 0 || errOut != "" || out == "" {
			t.Errorf("example %q: exit %d, stderr %q, stdout %q", ex.Command, code, errOut, out)
		}
	}
}

func TestHelpListsEverything(t *testing.T) {
	var b bytes.Buffer
	WriteHelp(&b)
	help := b.String()
	for _, f := range Flags {
		if !strings.Contains(help, "--"+f.Long) {
			t.Errorf("--help lacks --%s", f.Long)
		}
	}
	for _, d := range agentlib.Docs {
		if !strings.Contains(help, d.Name) {
			t.Errorf("--help lacks agentlib's %s", d.Name)
		}
	}
	for _, r := range ExitTable {
		if !strings.Contains(help, r.Meaning) {
			t.Errorf("--help lacks exit status %d", r.Code)
		}
	}
}
