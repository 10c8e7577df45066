package filter

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/recording"
)

// runFilter runs filter with args over stdin and returns stdout, stderr
// and the exit status.
func runFilter(t testing.TB, stdin string, args ...string) (string, string, int) {
	t.Helper()
	return runFilterOpts(t, stdin, nil, args...)
}

func runFilterOpts(t testing.TB, stdin string, tweak func(*Options), args ...string) (string, string, int) {
	t.Helper()
	o, err := ParseArgs(args)
	if err != nil {
		return "", err.Error(), exitCode(err)
	}
	o.Environ = []string{"HOME=/home/test", "AGENT=claude"}
	if tweak != nil {
		tweak(o)
	}
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err = Run(ctx, strings.NewReader(stdin), &out, &errOut, o)
	if err != nil {
		var fe *Error
		if errors.As(err, &fe) && !fe.Reported {
			errOut.WriteString(err.Error() + "\n")
		}
	}
	return out.String(), errOut.String(), exitCode(err)
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var fe *Error
	if errors.As(err, &fe) {
		return fe.Code
	}
	return 1
}

func TestRun(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	slurp := write("slurp.json", "1 [2]\n{\"a\":3}")
	raw := write("raw.txt", "hello\n")
	prog := write("prog.jq", ".a\n| . + 1")
	write("m.jq", `def double: . * 2;`)
	events := write("events.ndjson", `{"type":"a","n":1}`+"\n"+`{"type":"b","n":2}`+"\n")

	tests := []struct {
		name   string
		args   []string
		stdin  string
		out    string
		errOut string
		code   int
	}{
		{"identity keeps bytes", []string{"."}, `{"b":1, "a":1.50,"c":"\u00e9"}` + "\n", `{"b":1,"a":1.50,"c":"\u00e9"}` + "\n", "", 0},
		{"select keeps bytes", []string{`select(.type=="x")`}, `{"z":1,"type":"x"}` + "\n" + `{"type":"y"}` + "\n", `{"z":1,"type":"x"}` + "\n", "", 0},
		{"built values sort keys", []string{`{z: .a, a: .a}`}, `{"a":1}`, `{"a":1,"z":1}` + "\n", "", 0},
		{"no program is .", nil, "[1, 2]\n", "[1,2]\n", "", 0},
		{"bad line reported, rest processed", []string{".n"}, "{\"n\":1}\n{\"n\":\n{\"n\":3}\n", "1\n3\n",
			"agentjq: <stdin>:2: invalid JSON at column 6: unexpected end of line, looking for a value\n", 5},
		{"too deep for the decoder", []string{"-c", ".a"}, `{"a":1}` + "\n" + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + "\n" + `{"a":2}`, "1\n2\n",
			"agentjq: <stdin>:2: JSON nesting deeper than 10000 at column 10001\n", 5},
		{"deep and broken is not JSON", []string{"-c", ".a"}, strings.Repeat("[", 10001) + "x" + "\n", "",
			"agentjq: <stdin>:1: invalid JSON at column 10002: unexpected 'x', looking for a value\n", 5},
		{"runtime error", []string{".a.b"}, `{"a":"s"}` + "\n" + `{"a":{"b":2}}`, "2\n", "agentjq: <stdin>:1: expected an object but got: string (\"s\")\n", 5},
		{"several values on a line", []string{"."}, "1 2 [3]\n", "1\n2\n[3]\n", "", 0},
		{"blank lines skipped", []string{"."}, "\n  \n1\n", "1\n", "", 0},
		{"big integer survives", []string{".id"}, `{"id":123456789012345678901234567890}`, "123456789012345678901234567890\n", "", 0},
		{"raw output", []string{"-r", ".s"}, `{"s":"a\tb"}`, "a\tb\n", "", 0},
		{"join output", []string{"-j", ".s"}, `{"s":"a"}` + "\n" + `{"s":"b"}`, "ab", "", 0},
		{"ascii output", []string{"-a", ".s"}, `{"s":"é😀"}`, `"\u00e9\ud83d\ude00"` + "\n", "", 0},
		{"ascii pass-through", []string{"-a", "."}, `{"s":"é"}`, `{"s":"\u00e9"}` + "\n", "", 0},
		{"indent", []string{"--indent", "1", "."}, `{"a":[1]}`, "{\n \"a\": [\n  1\n ]\n}\n", "", 0},
		{"tab", []string{"--tab", ".a"}, `{"a":{"b":1}}`, "{\n\t\"b\": 1\n}\n", "", 0},
		{"seq", []string{"--seq", ".a"}, "\x1e{\"a\":1}\n", "\x1e1\n", "", 0},
		{"slurp", []string{"-s", "length"}, "1\n2\n3\n", "3\n", "", 0},
		{"null input with inputs", []string{"-n", "[inputs.n] | add"}, "{\"n\":1}\n{\"n\":2}\n", "3\n", "", 0},
		{"input", []string{"[., input]"}, "1\n2\n3\n4\n", "[1,2]\n[3,4]\n", "", 0},
		{"inputs skip a bad line", []string{"-n", "[inputs]"}, "1\nx\n3\n", "[1,3]\n", "agentjq: <stdin>:2: invalid JSON at column 1: unexpected 'x', looking for a value\n", 5},
		{"raw input", []string{"-R", "length"}, "abc\nde\n", "3\n2\n", "", 0},
		{"raw input slurp", []string{"-Rs", "."}, "a\nb\n", "\"a\\nb\\n\"\n", "", 0},
		{"arg", []string{"-n", "--arg", "x", "1", "$x"}, "", "\"1\"\n", "", 0},
		{"argjson", []string{"-n", "--argjson", "x", `{"a":1}`, "$x.a"}, "", "1\n", "", 0},
		{"args", []string{"-n", "$ARGS", "--args", "a", "b"}, "", `{"named":{},"positional":["a","b"]}` + "\n", "", 0},
		{"jsonargs", []string{"-n", "$ARGS.positional", "--jsonargs", "1", `{"a":2}`}, "", `[1,{"a":2}]` + "\n", "", 0},
		{"named in ARGS", []string{"-n", "--arg", "k", "v", "$ARGS.named"}, "", `{"k":"v"}` + "\n", "", 0},
		{"slurpfile", []string{"-n", "--slurpfile", "s", slurp, "$s"}, "", `[1,[2],{"a":3}]` + "\n", "", 0},
		{"rawfile", []string{"-n", "--rawfile", "r", raw, "$r"}, "", "\"hello\\n\"\n", "", 0},
		{"from file", []string{"-f", prog}, `{"a":1}`, "2\n", "", 0},
		{"library path", []string{"-L", dir, "-n", `import "m" as m; 3 | m::double`}, "", "6\n", "", 0},
		{"env", []string{"-n", "$ENV.AGENT, env.HOME"}, "", "\"claude\"\n\"/home/test\"\n", "", 0},
		{"files", []string{".n", events, events}, "", "1\n2\n1\n2\n", "", 0},
		{"input_filename", []string{"input_filename", events}, "", strings.Repeat(`"`+events+`"`+"\n", 2), "", 0},
		{"missing file", []string{".n", filepath.Join(dir, "nope"), events}, "", "1\n2\n", "agentjq: " + filepath.Join(dir, "nope") + ": no such file or directory\n", 2},
		{"exit status true", []string{"-e", ".a"}, `{"a":1}`, "1\n", "", 0},
		{"exit status false", []string{"-e", ".a"}, `{"a":false}`, "false\n", "", 1},
		{"exit status null", []string{"-e", ".a"}, `{}`, "null\n", "", 1},
		{"exit status no output", []string{"-e", "empty"}, `{}`, "", "", 4},
		{"halt", []string{"., halt"}, "1\n2\n", "1\n", "", 0},
		{"halt_error", []string{`"bye\n" | halt_error`}, "1\n2\n", "", "bye\n", 5},
		{"halt_error code", []string{`{"a":1} | halt_error(3)`}, "1\n", "", "{\"a\":1}\n", 3},
		{"error", []string{`error("boom")`}, "1\n", "", "agentjq: <stdin>:1: error: boom\n", 5},
		{"try catch", []string{`try error("boom") catch .`}, "1\n", "\"boom\"\n", "", 0},
		{"compile error caret", []string{".a | )"}, "", "", "compile error: unexpected token \")\"\n    .a | )\n         ^\n", 3},
		{"undefined function caret", []string{"1 | nope(2)"}, "", "", "compile error: function not defined: nope/1\n    1 | nope(2)\n        ^\n", 3},
		{"misspelt agentlib helper", []string{"-n", "1 | assitant_text"}, "", "", "compile error: function not defined: assitant_text/0 (did you mean assistant_text? agentjq filter --help lists the agent definitions)\n    1 | assitant_text\n        ^\n", 3},
		{"agentlib is in every program", []string{"-r", "assistant_text"},
			`{"type":"assistant","message":{"content":[{"type":"text","text":"hi"}]}}` + "\n" + `{"type":"user"}`, "hi\n", "", 0},
		{"color", []string{"-C", ".a"}, `{"a":null}`, "\x1b[1;30mnull\x1b[0m\n", "", 0},
		{"sort keys disables pass-through", []string{"-S", "."}, `{"b":1,"a":2}`, `{"a":2,"b":1}` + "\n", "", 0},
		{"number spelling of scalars", []string{"."}, "1.0\n1e2\n", "1\n100\n", "", 0},
		{"input_line_number", []string{"input_line_number"}, "1\n\n2\n", "1\n3\n", "", 0},
		{"debug", []string{"debug | .a"}, `{"a":1}`, "1\n", "[\"DEBUG:\",{\"a\":1}]\n", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := runFilterOpts(t, tt.stdin, func(o *Options) {
				if tt.name == "color" {
					o.Color = true
				}
			}, tt.args...)
			if out != tt.out || errOut != tt.errOut || code != tt.code {
				t.Errorf("filter %q\n stdout %q\n   want %q\n stderr %q\n   want %q\n   exit %d want %d", tt.args, out, tt.out, errOut, tt.errOut, code, tt.code)
			}
		})
	}
}

func TestRecordingIsReadAsTheAgentStream(t *testing.T) {
	var rec []byte
	rec = append(rec, `{"agentjq_recording":1,"agent":"claude","argv":["claude"],"cwd":"/p","started":"2026-01-01T00:00:00Z"}`+"\n"...)
	add := func(seq int64, dir protocol.Direction, msg string) {
		e := recording.Entry{Seq: seq, MS: float64(seq), Dir: dir}
		if dir == protocol.DirErr {
			e.Text = msg
		} else {
			e.Msg = []byte(msg)
		}
		rec = recording.AppendEntry(rec, e)
		rec = append(rec, '\n')
	}
	add(1, protocol.DirIn, `{"type":"user","message":{"role":"user","content":"hi"}}`)
	add(2, protocol.DirOut, `{"type":"system","subtype":"init", "z":1}`)
	add(3, protocol.DirErr, `some stderr`)
	add(4, protocol.DirEvent, `{"type":"agentjq","subtype":"exit","code":0}`)
	add(5, protocol.DirMeta, `{"agent_version":"2.1.328"}`)
	rec = append(rec, "{\"seq\":6,broken\n"...)
	out, errOut, code := runFilter(t, string(rec), ".")
	want := `{"type":"system","subtype":"init","z":1}` + "\n" + `{"type":"agentjq","subtype":"exit","code":0}` + "\n"
	if out != want {
		t.Errorf("stdout %q, want %q", out, want)
	}
	if !strings.HasPrefix(errOut, "agentjq: <stdin>:7: ") || code != ExitRuntime {
		t.Errorf("stderr %q exit %d", errOut, code)
	}
	// Fast and sequential paths read recordings the same way.
	out, _, _ = runFilter(t, string(rec), "-c", `.type, input_filename`)
	if out != "\"system\"\nnull\n\"agentjq\"\nnull\n" {
		t.Errorf("sequential: %q", out)
	}
}

func TestLongLine(t *testing.T) {
	long := strings.Repeat("x", 3*readBufSize+17)
	in := `{"s":"` + long + `"}` + "\n" + `{"s":"short"}` + "\n"
	out, errOut, code := runFilter(t, in, ".s | length")
	if out != "786449\n5\n" || errOut != "" || code != 0 {
		t.Fatalf("got %q %q %d", out, errOut, code)
	}
	out, _, _ = runFilter(t, in, "select(.s == \"short\")")
	if out != `{"s":"short"}`+"\n" {
		t.Fatalf("got %q", out)
	}
}

// signalWriter reports each write on a channel.
type signalWriter struct {
	wrote chan string
}

func (w *signalWriter) Write(p []byte) (int, error) {
	w.wrote <- string(p)
	return len(p), nil
}

// On a pipe, each input's output is written before the next input arrives.
func TestLiveOutput(t *testing.T) {
	t.Parallel()
	pr, pw := io.Pipe()
	w := &signalWriter{wrote: make(chan string, 16)}
	o, err := ParseArgs([]string{".n"})
	if err != nil {
		t.Fatal(err)
	}
	o.FlushEachInput = true
	done := make(chan error, 1)
	go func() { done <- Run(context.Background(), pr, w, io.Discard, o) }()
	for i, line := range []string{`{"n":1}`, `{"n":2}`} {
		if _, err := io.WriteString(pw, line+"\n"); err != nil {
			t.Fatal(err)
		}
		select {
		case got := <-w.wrote:
			if want := string(rune('1'+i)) + "\n"; got != want {
				t.Fatalf("wrote %q, want %q", got, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no output for input %d while the stream is open", i+1)
		}
	}
	pw.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after EOF")
	}
}
