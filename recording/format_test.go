package recording

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentjq/agentjq/internal/protocol"
)

func TestEntryRoundTrip(t *testing.T) {
	cases := []Entry{
		{Seq: 1, MS: 0.5, Dir: protocol.DirIn, Msg: []byte(`{"type":"user","message":{"role":"user","content":"hi"}}`)},
		{Seq: 2, MS: 812.25, Dir: protocol.DirOut, Msg: []byte(`{"b":1, "a" : "x\"msg\":"}`)},
		{Seq: 3, MS: 900, Dir: protocol.DirErr, Text: "warning: \"quoted\"\ttab"},
		{Seq: 4, MS: 1e6, Dir: protocol.DirEvent, Msg: []byte(`{"type":"agentjq","subtype":"exit"}`)},
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

func FuzzEntryRoundTrip(f *testing.F) {
	f.Add(int64(1), 1.5, "out", []byte(`{"a":1}`), "")
	f.Add(int64(9), 0.0, "err", []byte(nil), "text \"q\"")
	f.Fuzz(func(t *testing.T, seq int64, ms float64, dir string, msg []byte, text string) {
		// A direction is a short lower-case word (protocol.Direction; an
		// entry without one is refused), which the writer puts in as it is.
		if seq < 0 || ms < 0 || ms > 1e12 || ms != ms || dir == "" || len(dir) > 10 || strings.Trim(dir, "abcdefghijklmnopqrstuvwxyz") != "" {
			return
		}
		e := Entry{Seq: seq, MS: float64(int64(ms*1000)) / 1000, Dir: protocol.Direction(dir)}
		if json.Valid(msg) && bytes.HasPrefix(msg, []byte("{")) {
			e.Msg = msg
		} else {
			e.Text = strings.ToValidUTF8(text, "?")
		}
		line := AppendEntry(nil, e)
		got, err := ParseEntry(line)
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		if got.Seq != e.Seq || got.Dir != e.Dir || !bytes.Equal(got.Msg, e.Msg) || got.Text != e.Text {
			t.Fatalf("%s: got %+v", line, got)
		}
	})
}

// FuzzParseEntryFastPath: whenever the fast path takes a line, decoding
// it as JSON gives the same entry.
func FuzzParseEntryFastPath(f *testing.F) {
	f.Add([]byte(`{"seq":12,"ms":3.500,"dir":"out","msg":{"a":"b"}}`))
	f.Add([]byte(`{"seq":3,"ms":0.000,"dir":"err","text":"x \"y\""}`))
	f.Add([]byte(`{"seq":,"ms":1,"dir":"out","msg":{}}`))
	f.Add([]byte(`{"seq":1,"ms":1,"dir":"out","msg":{"a":1},"x":{"b":2}}`))
	f.Add([]byte(`{"seq":4,"ms":2.000,"dir":"in","party":"client","msg":{}}`))
	f.Add([]byte(`{"seq":4,"ms":2.000,"dir":"in","party":"","msg":{}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		fast, ok := sliceEntry(line)
		if !ok {
			return
		}
		slow, err := decodeEntry(line)
		if err != nil {
			t.Fatalf("%s: the fast path took it, JSON says %v", line, err)
		}
		if fast.Seq != slow.Seq || fast.MS != slow.MS || fast.Dir != slow.Dir || fast.Party != slow.Party || !bytes.Equal(fast.Msg, slow.Msg) || fast.Text != slow.Text {
			t.Fatalf("%s:\n fast %+v\n json %+v", line, fast, slow)
		}
	})
}

// TestParseEntryReadsRewrittenLines: an entry re-serialised by another
// tool (spaces, keys in another order, a key after the payload) is read
// as JSON, with the same meaning.
func TestParseEntryReadsRewrittenLines(t *testing.T) {
	want := Entry{Seq: 7, MS: 1.5, Dir: protocol.DirOut, Msg: []byte(`{"type":"result"}`)}
	for _, line := range []string{
		`{"seq":7,"ms":1.500,"dir":"out","msg":{"type":"result"}}`,
		`{"seq": 7, "ms": 1.5, "dir": "out", "msg": {"type":"result"}}`,
		`{"dir":"out","msg":{"type":"result"},"ms":1.5,"seq":7}`,
		`{"seq":7,"ms":1.5,"dir":"out","msg":{"type":"result"},"note":{"added":"by jq"}}`,
		` {"seq":7,"ms":1.5,"dir":"out","msg":{"type":"result"}} `,
	} {
		got, err := ParseEntry([]byte(line))
		if err != nil {
			t.Errorf("%s: %v", line, err)
			continue
		}
		if got.Seq != want.Seq || got.MS != want.MS || got.Dir != want.Dir || string(got.Msg) != string(want.Msg) {
			t.Errorf("%s: got %+v", line, got)
		}
	}
	got, err := ParseEntry([]byte(`{"text" : "a \"quoted\" line", "dir":"err", "seq":2, "ms":0}`))
	if err != nil || got.Dir != protocol.DirErr || got.Text != `a "quoted" line` || got.Seq != 2 {
		t.Errorf("text entry: %+v, %v", got, err)
	}
	for _, bad := range []string{`{"ms":1,"dir":"out","msg":{}}`, `{"seq":1,"ms":1,"msg":{}}`, `{"seq":1,"dir":"out"}`, `[1]`, `not json`} {
		if _, err := ParseEntry([]byte(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
