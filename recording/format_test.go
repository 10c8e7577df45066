package recording

import (
	"bytes"
	"testing"
)

func TestEntryRoundTrip(t *testing.T) {
	cases := []Entry{
		{Seq: 1, MS: 0.5, Dir: In, Msg: []byte(`{"type":"user","message":{"role":"user","content":"hi"}}`)},
		{Seq: 2, MS: 812.25, Dir: Out, Msg: []byte(`{"b":1, "a" : "x\"msg\":"}`)},
		{Seq: 3, MS: 900, Dir: Err, Text: "warning: \"quoted\"\ttab"},
		{Seq: 4, MS: 1e6, Dir: Event, Msg: []byte(`{"type":"agentjq","subtype":"exit"}`)},
	}
	for _, want := range cases {
		line := AppendEntry(nil, want)
		got, err := ParseEntry(line)
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		if got.Seq != want.Seq || got.MS != want.MS || got.Dir != want.Dir || !bytes.Equal(got.Msg, want.Msg) || got.Text != want.Text {
			t.Errorf("round trip of %s: got %+v", line, got)
		}
	}
}

func TestIsHeader(t *testing.T) {
	if !IsHeader([]byte(`{"agentjq_recording":1,"agent":"claude"}`)) {
		t.Error("header not recognised")
	}
	if IsHeader([]byte(`{"type":"system","text":"agentjq_recording"}`)) {
		t.Error("an event taken for a header")
	}
}
