package cmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentjq/agentjq/fixtures"
	"github.com/agentjq/agentjq/iostreams"
)

// TestFilterCommand runs `agentjq filter` through Main, as a user would.
// House rules for every successful row: stderr is empty and stdout has no
// escape codes (it is not a terminal).
func TestFilterCommand(t *testing.T) {
	t.Parallel()
	hello, err := fixtures.Capture("hello", "out")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	events := filepath.Join(dir, "events.ndjson")
	if err := os.WriteFile(events, []byte(`{"type":"result","num_turns":2}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		args    []string
		env     []string
		stdin   string
		out     string // exact stdout, unless outHas is set
		outHas  string
		errHas  string
		code    int
		outTTY  bool
		noRules bool // the row checks escape codes on purpose
	}{
		{name: "help", args: []string{"filter", "--help"}, outHas: "--argjson NAME JSON"},
		{name: "help lists agentlib", args: []string{"filter", "-h"}, outHas: "assistant_text"},
		{name: "help shows exit statuses", args: []string{"filter", "--help"}, outHas: "4  with -e: the program wrote no value"},
		{name: "identity keeps the bytes", args: []string{"filter"}, stdin: `{"b":1,"a":"\u00e9"}` + "\n", out: `{"b":1,"a":"\u00e9"}` + "\n"},
		{name: "compact by default", args: []string{"filter", ".a"}, stdin: `{"a":{"x":[1, 2]}}`, out: `{"x":[1,2]}` + "\n"},
		{name: "flags after the program", args: []string{"filter", ".a", "-r"}, stdin: `{"a":"s"}`, out: "s\n"},
		{name: "bundled short flags", args: []string{"filter", "-nr", `"x"`}, out: "x\n"},
		{name: "arg takes two values", args: []string{"filter", "-n", "--arg", "who", "world", `"hello \($who)"`}, out: "\"hello world\"\n"},
		{name: "args after the program", args: []string{"filter", "-n", "-c", "$ARGS.positional", "--args", "a", "--", "-b"}, out: `["a","-b"]` + "\n"},
		{name: "file argument", args: []string{"filter", ".num_turns", events}, out: "2\n"},
		{name: "agentlib", args: []string{"filter", "-r", "assistant_text"}, stdin: string(hello), out: "Hello from the scripted model.\n"},
		{name: "env", args: []string{"filter", "-n", "-r", "$ENV.AGENTJQ_TEST"}, env: []string{"AGENTJQ_TEST=yes"}, out: "yes\n"},
		{name: "bad line keeps going", args: []string{"filter", ".n"}, stdin: "{\"n\":1}\n{oops\n{\"n\":3}\n", out: "1\n3\n",
			errHas: "agentjq: <stdin>:2: invalid JSON", code: 5},
		{name: "usage error", args: []string{"filter", "--nope"}, errHas: "unknown flag --nope", code: 2},
		{name: "missing --arg value", args: []string{"filter", "--arg", "x"}, errHas: "--arg takes 2 arguments", code: 2},
		{name: "bad --color", args: []string{"filter", "--color=pink"}, errHas: "--color takes auto, always or never", code: 2},
		{name: "compile error", args: []string{"filter", ".a | | .b"}, errHas: "compile error: unexpected token \"|\"\n    .a | | .b\n         ^", code: 3},
		{name: "exit status", args: []string{"filter", "-e", ".ok"}, stdin: `{"ok":false}`, out: "false\n", code: 1},
		{name: "no output with -e", args: []string{"filter", "-e", "empty"}, stdin: `{}`, code: 4},
		{name: "missing file", args: []string{"filter", ".", filepath.Join(dir, "none.ndjson")}, errHas: "none.ndjson: no such file or directory", code: 2},
		{name: "no colour on a pipe", args: []string{"filter", "--color=auto", ".a"}, stdin: `{"a":1}`, out: "1\n"},
		{name: "colour on a terminal", args: []string{"filter", ".a"}, stdin: `{"a":1}`, outTTY: true, out: "\x1b[0;39m1\x1b[0m\n", noRules: true},
		{name: "NO_COLOR on a terminal", args: []string{"filter", ".a"}, env: []string{"NO_COLOR=1"}, stdin: `{"a":1}`, outTTY: true, out: "1\n"},
		{name: "-M on a terminal", args: []string{"filter", "-M", ".a"}, stdin: `{"a":1}`, outTTY: true, out: "1\n"},
		{name: "-C on a pipe", args: []string{"filter", "-C", ".a"}, stdin: `{"a":null}`, out: "\x1b[1;30mnull\x1b[0m\n", noRules: true},
		{name: "view", args: []string{"filter", "--view"}, stdin: string(hello), outHas: "Hello from the scripted model."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, in, out, errOut := iostreams.Test()
			ios.Environ = tt.env
			ios.OutTTY = tt.outTTY
			in.WriteString(tt.stdin)
			code := Main(tt.args, ios)
			if code != tt.code {
				t.Errorf("exit %d, want %d; stderr %q", code, tt.code, errOut.String())
			}
			if tt.outHas != "" {
				if !strings.Contains(out.String(), tt.outHas) {
					t.Errorf("stdout %q lacks %q", out.String(), tt.outHas)
				}
			} else if out.String() != tt.out {
				t.Errorf("stdout %q, want %q", out.String(), tt.out)
			}
			if tt.errHas != "" && !strings.Contains(errOut.String(), tt.errHas) {
				t.Errorf("stderr %q lacks %q", errOut.String(), tt.errHas)
			}
			if code == 0 && !tt.noRules {
				if errOut.Len() != 0 {
					t.Errorf("a successful run wrote to stderr: %q", errOut.String())
				}
				if !tt.outTTY && bytes.Contains(out.Bytes(), []byte("\x1b[")) {
					t.Errorf("escape codes on a non-terminal stdout: %q", out.String())
				}
			}
		})
	}
}

// TestFilterViewExitStatus: filter --view shows a recording of an unknown
// version, garbage, or a recording with a bad middle line as far as it
// can, then exits 5; a good recording, and one whose last line is cut
// off (a warning), exit 0.
func TestFilterViewExitStatus(t *testing.T) {
	t.Parallel()
	good, err := os.ReadFile(fixtureRec(t, "hello"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(good), "\n")
	for name, c := range map[string]struct {
		text string
		code int
	}{
		"good":          {string(good), 0},
		"cut off":       {string(good) + `{"seq":99,"ms":1,"dir":"out","msg":{"ty`, 0},
		"newer version": {strings.Replace(string(good), `{"agentjq_recording":1,`, `{"agentjq_recording":7,`, 1), 5},
		"garbage":       {"garbage\x00\n", 5},
		"bad middle":    {strings.Join(lines[:2], "") + "{\"seq\":\n" + strings.Join(lines[2:], ""), 5},
	} {
		path := filepath.Join(t.TempDir(), "s.rec")
		os.WriteFile(path, []byte(c.text), 0o644)
		ios, out, errb := fixtureIO("")
		if code := Main([]string{"filter", "--view", path}, ios); code != c.code {
			t.Errorf("%s: exit %d, want %d\n%s\nstderr: %s", name, code, c.code, out, errb)
		}
		if out.Len() == 0 {
			t.Errorf("%s: nothing shown", name)
		}
	}
}
