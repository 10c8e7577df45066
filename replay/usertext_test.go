package replay

import "testing"

// A client's turn is compared with the recorded one as text; content of
// another shape compares as its raw JSON.
func TestUserText(t *testing.T) {
	for line, want := range map[string]string{
		`{"type":"user","message":{"role":"user","content":"hello"}}`:                                                                "hello",
		`{"type":"user","message":{"content":[{"type":"text","text":"a"},{"type":"image","source":{}},{"type":"text","text":"b"}]}}`: "a\n[image]\nb",
		`{"type":"user","message":{"content":[{"type":"text","text":"a","cache_control":{"type":"ephemeral"}}]}}`:                    "a",
		`{"type":"user","message":{"content":{"odd":1}}}`:                                                                            `{"odd":1}`,
		`{"type":"user","message":{"content":["a"]}}`:                                                                                `["a"]`,
		`{"type":"user","message":{"content":[{"type":"text","text":7}]}}`:                                                           `[{"type":"text","text":7}]`,
		`{"type":"user","message":{}}`:                                                                                               "",
	} {
		if got := userText([]byte(line)); got != want {
			t.Errorf("userText(%s) = %q, want %q", line, got, want)
		}
	}
}
