package agentlib

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/agentjq/agentjq/fixtures"
	"github.com/itchyny/gojq"
)

// compile builds Source + program the way agentjq filter does.
func compile(t testing.TB, program string) *gojq.Code {
	t.Helper()
	q, err := gojq.Parse(Source + "\n" + program)
	if err != nil {
		t.Fatalf("parse %q: %v", program, err)
	}
	code, err := gojq.Compile(q, Functions...)
	if err != nil {
		t.Fatalf("compile %q: %v", program, err)
	}
	return code
}

func events(t testing.TB, scenario string) []any {
	t.Helper()
	b, err := fixtures.Capture(scenario, "out")
	if err != nil {
		t.Fatal(err)
	}
	var out []any
	for _, line := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
		var v any
		if err := json.Unmarshal(line, &v); err != nil {
			t.Fatalf("%s: %v", scenario, err)
		}
		out = append(out, v)
	}
	return out
}

func collect(t testing.TB, code *gojq.Code, v any) []any {
	t.Helper()
	var out []any
	iter := code.Run(v)
	for {
		x, ok := iter.Next()
		if !ok {
			return out
		}
		if err, ok := x.(error); ok {
			t.Fatalf("run: %v", err)
		}
		out = append(out, x)
	}
}

// perLine runs program on each event of a capture, as agentjq filter does.
func perLine(t testing.TB, scenario, program string) []any {
	t.Helper()
	code := compile(t, program)
	out := []any{}
	for _, ev := range events(t, scenario) {
		out = append(out, collect(t, code, ev)...)
	}
	return out
}

// slurped runs program once on the array of all events (filter -s).
func slurped(t testing.TB, scenario, program string) []any {
	t.Helper()
	out := collect(t, compile(t, program), events(t, scenario))
	if out == nil {
		out = []any{}
	}
	return out
}

func js(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// want compares outputs with a JSON array written in the test.
func want(t *testing.T, got []any, wantJSON string) {
	t.Helper()
	var w any
	if err := json.Unmarshal([]byte(wantJSON), &w); err != nil {
		t.Fatalf("bad expectation %s: %v", wantJSON, err)
	}
	if g, ww := js(t, got), js(t, w); g != ww {
		t.Errorf("\n got %s\nwant %s", g, ww)
	}
}

func compileOnly(src string) (*gojq.Code, error) {
	q, err := gojq.Parse(src)
	if err != nil {
		return nil, err
	}
	return gojq.Compile(q, Functions...)
}

type initLoader struct{ q *gojq.Query }

func (l initLoader) LoadInitModules() ([]*gojq.Query, error) { return []*gojq.Query{l.q}, nil }

func (l initLoader) LoadModule(name string) (*gojq.Query, error) { return l.q, nil }

// The engine may load Source as an init module (like ~/.jq) or as a module
// to import instead of prepending it.
func TestSourceAsModule(t *testing.T) {
	lib, err := gojq.Parse(Source)
	if err != nil {
		t.Fatal(err)
	}
	ev := events(t, "write-allow")
	for _, prog := range []string{`tool_calls | key_input`, `import "agentlib" as a; a::tool_calls | a::key_input`} {
		q, err := gojq.Parse(prog)
		if err != nil {
			t.Fatal(err)
		}
		code, err := gojq.Compile(q, append([]gojq.CompilerOption{gojq.WithModuleLoader(initLoader{lib})}, Functions...)...)
		if err != nil {
			t.Fatalf("%s: %v", prog, err)
		}
		var got []any
		for _, v := range ev {
			got = append(got, collect(t, code, v)...)
		}
		want(t, got, `["/home/user/project/banana.txt"]`)
	}
}
