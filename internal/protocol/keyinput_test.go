package protocol_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agentjq/agentjq/approve"
	"github.com/agentjq/agentjq/filter"
	"github.com/agentjq/agentjq/fixtures"
	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/view"
)

// fixtureEvents returns every agent event of the captures and the
// recordings under fixtures/, with where it came from.
func fixtureEvents(t *testing.T) (events [][]byte, where []string) {
	t.Helper()
	add := func(name string, data []byte) {
		for i, line := range bytes.Split(data, []byte("\n")) {
			var entry struct {
				Msg json.RawMessage `json:"msg"`
			}
			if json.Unmarshal(line, &entry) == nil && len(entry.Msg) > 0 {
				line = entry.Msg // a recording's entry
			}
			if len(bytes.TrimSpace(line)) > 0 {
				events = append(events, line)
				where = append(where, name+":"+strconv.Itoa(i+1))
			}
		}
	}
	for _, name := range fixtures.Scenarios() {
		b, err := fixtures.Capture(name, "out")
		if err != nil {
			t.Fatal(err)
		}
		add("captures/"+name+".out", b)
	}
	recs, _ := filepath.Glob(filepath.Join(fixtures.Dir(), "recordings", "*", "*.rec*"))
	if len(recs) == 0 {
		t.Fatal("no recordings under fixtures/recordings")
	}
	for _, p := range recs {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(p, ".gz") {
			zr, err := gzip.NewReader(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			if b, err = io.ReadAll(zr); err != nil {
				t.Fatal(err)
			}
		}
		add(filepath.Base(p), b)
	}
	return events, where
}

// call is a tool call found in an event: a tool_use block of an assistant
// message or a can_use_tool request, and the agentlib program that finds
// it.
type call struct {
	tool    string
	input   json.RawMessage
	program string
}

func callsOf(event []byte) []call {
	var ev struct {
		Type    string `json:"type"`
		Message struct {
			Content json.RawMessage `json:"content"`
		} `json:"message"`
		Request struct {
			Subtype  string          `json:"subtype"`
			ToolName string          `json:"tool_name"`
			Input    json.RawMessage `json:"input"`
		} `json:"request"`
	}
	if json.Unmarshal(event, &ev) != nil {
		return nil
	}
	var calls []call
	switch {
	case ev.Type == "assistant":
		var blocks []struct {
			Type  string          `json:"type"`
			Name  string          `json:"name"`
			Input json.RawMessage `json:"input"`
		}
		_ = json.Unmarshal(ev.Message.Content, &blocks)
		for _, b := range blocks {
			if b.Type == "tool_use" {
				calls = append(calls, call{b.Name, b.Input, "tool_calls | key_input"})
			}
		}
	case ev.Type == "control_request" && ev.Request.Subtype == "can_use_tool":
		calls = append(calls, call{ev.Request.ToolName, ev.Request.Input, "permission_requests | key_input"})
	}
	return calls
}

// TestKeyInputAgrees shows that `approve test`, the view and agentlib's
// key_input take the same key from each tool call in the fixtures: the
// one of protocol.ToolKey.
func TestKeyInputAgrees(t *testing.T) {
	events, where := fixtureEvents(t)
	seen := map[string]string{}
	for i, ev := range events {
		for _, c := range callsOf(ev) {
			want := protocol.ToolKeyJSON(c.tool, c.input)
			if want.Text == "" {
				t.Errorf("%s: %s has no key: %s", where[i], c.tool, c.input)
				continue
			}
			seen[c.tool] = want.Text

			req := &approve.Request{CanUseTool: protocol.CanUseTool{ToolName: c.tool, Input: c.input}}
			if got := approve.KeyInput(req); got != want.Short(120) {
				t.Errorf("%s: %s: approve says %q, the table %q", where[i], c.tool, got, want.Short(120))
			}

			o, err := filter.ParseArgs([]string{"-r", c.program})
			if err != nil {
				t.Fatal(err)
			}
			var out, errOut bytes.Buffer
			if err := filter.Run(context.Background(), bytes.NewReader(ev), &out, &errOut, o); err != nil {
				t.Fatalf("%s: filter: %v %s", where[i], err, errOut.String())
			}
			// One line per call of the event; this call's key among them.
			if !strings.Contains(out.String(), want.Text+"\n") {
				t.Errorf("%s: %s: key_input says %q, the table %q", where[i], c.tool, out.String(), want.Text)
			}

			var vb bytes.Buffer
			r := view.New(&vb, view.Options{Width: 100000})
			if err := r.Event(ev); err != nil {
				t.Fatal(err)
			}
			_ = r.Close()
			shown := strings.NewReplacer("\n", " ", "\t", "  ").Replace(want.Text)
			if !strings.Contains(vb.String(), c.tool+"  "+shown) {
				t.Errorf("%s: %s: the view shows %q, the table %q", where[i], c.tool, vb.String(), shown)
			}
		}
	}
	// The case: a Task shows its description everywhere.
	if seen["Task"] != "Say hello" {
		t.Errorf("Task's key is %q, want its description", seen["Task"])
	}
	for _, tool := range []string{"Bash", "Write", "Read", "Task", "AskUserQuestion", "mcp__agentjq__ping"} {
		if _, ok := seen[tool]; !ok {
			t.Errorf("no %s call in the fixtures: the test covers less than it says", tool)
		}
	}
	t.Logf("tools checked: %v", seen)
}

func TestToolKey(t *testing.T) {
	for _, c := range []struct {
		tool, input string
		want        protocol.Key
	}{
		{"Bash", `{"command":"ls -l","description":"list"}`, protocol.Key{Field: "command", Text: "ls -l"}},
		{"Write", `{"file_path":"/p/a.txt","content":"x"}`, protocol.Key{Field: "file_path", Text: "/p/a.txt", Path: true}},
		{"Task", `{"description":"Say hello","prompt":"Say hello to me","subagent_type":"general-purpose"}`, protocol.Key{Field: "description", Text: "Say hello"}},
		{"Task", `{"prompt":"Do it","subagent_type":"general-purpose"}`, protocol.Key{Field: "prompt", Text: "Do it"}},
		{"Grep", `{"pattern":"TODO","path":"src"}`, protocol.Key{Field: "pattern", Text: "TODO"}},
		{"WebFetch", `{"url":"https://example.com","prompt":"summarise"}`, protocol.Key{Field: "url", Text: "https://example.com"}},
		{"AskUserQuestion", `{"questions":[{"question":"Cats?"},{"question":"Dogs?"}]}`, protocol.Key{Field: "questions.0.question", Text: "Cats?"}},
		// A known tool's own fields only: Edit has no "command".
		{"Edit", `{"command":"rm -rf /","old_string":"a"}`, protocol.Key{Text: `{"command":"rm -rf /","old_string":"a"}`}},
		// Unknown tools and no tool name: the generic order.
		{"mcp__x__y", `{"path":"/tmp","url":"http://u"}`, protocol.Key{Field: "url", Text: "http://u"}},
		{"", `{"description":"d","command":"c"}`, protocol.Key{Field: "command", Text: "c"}},
		{"mcp__x__y", `{"note":"<b>&","n":1.50}`, protocol.Key{Text: `{"n":1.50,"note":"<b>&"}`}},
		{"Bash", `{"command":""}`, protocol.Key{Text: `{"command":""}`}},
		{"EnterPlanMode", `{}`, protocol.Key{}},
		{"X", `"text"`, protocol.Key{Text: "text"}},
		{"X", `[1, 2]`, protocol.Key{Text: "[1,2]"}},
		{"X", `not json`, protocol.Key{Text: "not json"}},
	} {
		if got := protocol.ToolKeyJSON(c.tool, json.RawMessage(c.input)); got != c.want {
			t.Errorf("%s %s: %+v, want %+v", c.tool, c.input, got, c.want)
		}
	}
	k := protocol.Key{Text: "line one\nline two é" + strings.Repeat("x", 10)}
	if got := k.Short(15); got != `line one\nline …` {
		t.Errorf("Short: %q", got)
	}
}
