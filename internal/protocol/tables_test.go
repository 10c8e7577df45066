package protocol

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
)

// constants reads the package's string constants named with prefix.
func constants(t *testing.T, prefix string) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, e.Name(), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	out := map[string]string{}
	for _, f := range files {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if !strings.HasPrefix(n.Name, prefix) || i >= len(vs.Values) {
						continue
					}
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						v, _ := strconv.Unquote(lit.Value)
						out[n.Name] = v
					}
				}
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("no %s* constants found", prefix)
	}
	return out
}

func names(docs []SubtypeDoc) map[string]bool {
	m := map[string]bool{}
	for _, d := range docs {
		m[d.Name] = true
	}
	return m
}

// TestTablesMatchCode ties the protocol reference (agentjq-protocol(7),
// generated from the tables) to the code: every message type, control
// request subtype, result subtype and event subtype the code names is
// documented, and every control request the bridge answers and every
// event agentjq writes is one the code names.
func TestTablesMatchCode(t *testing.T) {
	types := map[string]bool{}
	subtypes := map[string]map[string]bool{}
	for _, td := range MessageTypes {
		types[td.Type] = true
		if subtypes[td.Type] == nil {
			subtypes[td.Type] = map[string]bool{}
		}
		for _, s := range td.Subtypes {
			subtypes[td.Type][s.Name] = true
		}
	}
	for name, v := range constants(t, "Type") {
		if !types[v] {
			t.Errorf("%s = %q is not in MessageTypes", name, v)
		}
	}
	for name, v := range constants(t, "Result") {
		if !subtypes[TypeResult][v] {
			t.Errorf("%s = %q is not a documented result subtype", name, v)
		}
	}
	agent, client := names(AgentRequests), names(ClientRequests)
	for name, v := range constants(t, "Sub") {
		if !agent[v] && !client[v] {
			t.Errorf("%s = %q is in neither AgentRequests nor ClientRequests", name, v)
		}
	}
	events := constants(t, "Event")
	for name, v := range events {
		if !names(AgentjqEvents)[v] {
			t.Errorf("%s = %q is not in AgentjqEvents", name, v)
		}
	}

	// The other way: what agentjq answers or writes must be a constant.
	subs := map[string]bool{}
	for _, v := range constants(t, "Sub") {
		subs[v] = true
	}
	for _, d := range AgentRequests {
		if d.Name != "(any other)" && !subs[d.Name] {
			t.Errorf("AgentRequests documents %q, which no Sub* constant names", d.Name)
		}
		if d.Answer == "" {
			t.Errorf("AgentRequests %q has no response shape", d.Name)
		}
	}
	evs := map[string]bool{}
	for _, v := range events {
		evs[v] = true
	}
	for _, d := range AgentjqEvents {
		if !evs[d.Name] {
			t.Errorf("AgentjqEvents documents %q, which no Event* constant names", d.Name)
		}
	}
	for _, d := range ClientRequests {
		if d.Answer == "" {
			t.Errorf("ClientRequests %q has no response shape", d.Name)
		}
	}
	// The control_request entries point at the request tables.
	for _, td := range MessageTypes {
		if td.Type != TypeControlRequest {
			continue
		}
		want := AgentRequests
		if td.Sender == ToAgent {
			want = ClientRequests
		}
		if len(td.Subtypes) != len(want) {
			t.Errorf("control_request (%s) lists %d subtypes, the table %d", td.Sender, len(td.Subtypes), len(want))
		}
	}
}
