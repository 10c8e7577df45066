package recording

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentjq/agentjq/protocol"
)

func TestEntryPartyRoundTrip(t *testing.T) {
	for _, e := range []Entry{
		{Seq: 1, MS: 1.5, Dir: In, Party: protocol.PartyClient, Msg: []byte(`{"type":"user"}`)},
		{Seq: 2, MS: 2, Dir: Out, Party: protocol.PartyAgentjq, Msg: []byte(`{"type":"control_request","x":"\",\"msg\":"}`)},
		{Seq: 3, MS: 3, Dir: Err, Party: protocol.PartyAgentjq, Text: `a "quoted" line`},
		{Seq: 4, MS: 4, Dir: Out, Msg: []byte(`{"type":"result"}`)},
	} {
		line := AppendEntry(nil, e)
		got, err := ParseEntry(line)
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		if got.Dir != e.Dir || got.Party != e.Party || !bytes.Equal(got.Msg, e.Msg) || got.Text != e.Text {
			t.Fatalf("%s parsed as %+v", line, got)
		}
		if e.Party == "" && bytes.Contains(line, []byte("party")) {
			t.Fatalf("an entry without a party names one: %s", line)
		}
	}
}

// TestAsAgentProxyRecording: replaying a proxy recording expects only the
// client's lines, keeps what agentjq held from the client, and answers the
// client's initialize, which the recording lacks, from the recorded one.
func TestAsAgentProxyRecording(t *testing.T) {
	entries := []Entry{
		{Seq: 1, Dir: In, Party: protocol.PartyAgentjq, Msg: []byte(`{"type":"control_request","request_id":"agentjq-init-1","request":{"subtype":"initialize","hooks":{}}}`)},
		{Seq: 2, Dir: In, Party: protocol.PartyClient, Msg: []byte(`{"type":"user","message":{"role":"user","content":"WRITE apple"}}`)},
		{Seq: 3, Dir: Out, Party: protocol.PartyAgentjq, Msg: []byte(`{"type":"control_response","response":{"subtype":"success","request_id":"agentjq-init-1","response":{"commands":[],"pid":7}}}`)},
		{Seq: 4, Dir: Out, Party: protocol.PartyAgentjq, Msg: []byte(`{"type":"control_request","request_id":"r1","request":{"subtype":"can_use_tool","tool_name":"Write","input":{}}}`)},
		{Seq: 5, Dir: In, Party: protocol.PartyAgentjq, Msg: []byte(`{"type":"control_response","response":{"subtype":"success","request_id":"r1","response":{"behavior":"deny","message":"no"}}}`)},
		{Seq: 6, Dir: Out, Msg: []byte(`{"type":"result","subtype":"success","is_error":false,"result":"denied"}`)},
	}
	stdin := strings.NewReader(`{"type":"control_request","request_id":"c-9","request":{"subtype":"initialize"}}` + "\n" +
		`{"type":"user","message":{"role":"user","content":"WRITE apple"}}` + "\n")
	var out, errb bytes.Buffer
	err := AsAgent(context.Background(), Header{}, entries, stdin, &out, AgentOptions{Stderr: &errb, Wait: 2 * time.Second})
	if err != nil {
		t.Fatalf("AsAgent: %v\nstdout:\n%s", err, out.String())
	}
	want := `{"type":"control_response","response":{"subtype":"success","request_id":"c-9","response":{"commands":[],"pid":7}}}` + "\n" +
		`{"type":"result","subtype":"success","is_error":false,"result":"denied"}` + "\n"
	if out.String() != want {
		t.Fatalf("the client got:\n%s\nwant:\n%s", out.String(), want)
	}

	// Without --lenient another unrecorded request fails; with it, it is
	// answered.
	extra := `{"type":"control_request","request_id":"c-10","request":{"subtype":"set_model","model":"x"}}` + "\n"
	for _, lenient := range []bool{false, true} {
		out.Reset()
		in := strings.NewReader(`{"type":"user","message":{"role":"user","content":"WRITE apple"}}` + "\n" + extra)
		err := AsAgent(context.Background(), Header{}, entries, in, &out, AgentOptions{Stderr: &errb, Wait: 2 * time.Second, Lenient: lenient})
		if lenient && (err != nil || !strings.Contains(out.String(), `"request_id":"c-10"`)) {
			t.Fatalf("lenient: %v\n%s", err, out.String())
		}
		if !lenient && err == nil {
			t.Fatal("an unrecorded set_model passed without --lenient")
		}
	}
}
