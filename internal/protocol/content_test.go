package protocol

import (
	"encoding/json"
	"testing"
)

func TestContentText(t *testing.T) {
	for _, c := range []struct {
		content       string
		plain, marked string
	}{
		{`"ok\nmore"`, "ok\nmore", "ok\nmore"},
		{`[{"type":"text","text":"a"},{"type":"text","text":"b"}]`, "a\nb", "a\nb"},
		{`[{"type":"text","text":"see"},{"type":"image","source":{}}]`, "see", "see\n[image]"},
		// A wrong-typed field empties that field only: the view shows what
		// a newer CLI's shape still says.
		{`[{"type":"text","text":"a","is_error":"yes"},{"type":"text","text":"b"}]`, "a\nb", "a\nb"},
		{`[{"type":"text","text":7},{"type":"text","text":"b"}]`, "\nb", "\nb"},
		{`null`, "", ""},
		{``, "", ""},
		{`{"type":"text","text":"not an array"}`, "", ""},
	} {
		raw := json.RawMessage(c.content)
		if got := ContentText(raw, false); got != c.plain {
			t.Errorf("ContentText(%s, false) = %q, want %q", c.content, got, c.plain)
		}
		if got := ContentText(raw, true); got != c.marked {
			t.Errorf("ContentText(%s, true) = %q, want %q", c.content, got, c.marked)
		}
	}
}

// A tool_result nested in a user message decodes with its content raw,
// so that ContentText reads it either way it comes.
func TestToolResultBlock(t *testing.T) {
	line := `{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":[{"type":"text","text":"exit 1"}]}]}`
	var m Message
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatal(err)
	}
	var bs []Block
	if err := json.Unmarshal(m.Content, &bs); err != nil || len(bs) != 1 {
		t.Fatalf("blocks %v, %v", bs, err)
	}
	b := bs[0]
	if m.Role != "user" || b.Type != "tool_result" || b.ToolUseID != "t1" || !b.IsError || ContentText(b.Content, false) != "exit 1" {
		t.Errorf("decoded %+v from %+v", b, m)
	}
}
