package replay

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/recording"
)

// TestAsAgentProxyRecording: replaying a proxy recording expects only the
// client's lines, keeps what agentjq held from the client, and answers the
// client's initialize, which the recording lacks, from the recorded one.
func TestAsAgentProxyRecording(t *testing.T) {
	entries := []recording.Entry{
		{Seq: 1, Dir: protocol.DirIn, Party: protocol.PartyAgentjq, Msg: []byte(`{"type":"control_request","request_id":"agentjq-init-1","request":{"subtype":"initialize","hooks":{}}}`)},
		{Seq: 2, Dir: protocol.DirIn, Party: protocol.PartyClient, Msg: []byte(`{"type":"user","message":{"role":"user","content":"WRITE apple"}}`)},
		{Seq: 3, Dir: protocol.DirOut, Party: protocol.PartyAgentjq, Msg: []byte(`{"type":"control_response","response":{"subtype":"success","request_id":"agentjq-init-1","response":{"commands":[],"pid":7}}}`)},
		{Seq: 4, Dir: protocol.DirOut, Party: protocol.PartyAgentjq, Msg: []byte(`{"type":"control_request","request_id":"r1","request":{"subtype":"can_use_tool","tool_name":"Write","input":{}}}`)},
		{Seq: 5, Dir: protocol.DirIn, Party: protocol.PartyAgentjq, Msg: []byte(`{"type":"control_response","response":{"subtype":"success","request_id":"r1","response":{"behavior":"deny","message":"no"}}}`)},
		{Seq: 6, Dir: protocol.DirOut, Msg: []byte(`{"type":"result","subtype":"success","is_error":false,"result":"denied"}`)},
	}
	stdin := strings.NewReader(`{"type":"control_request","request_id":"c-9","request":{"subtype":"initialize"}}` + "\n" +
		`{"type":"user","message":{"role":"user","content":"WRITE apple"}}` + "\n")
	var out, errb bytes.Buffer
	err := AsAgent(context.Background(), recording.Header{}, entries, stdin, &out, AgentOptions{Stderr: &errb, Wait: 2 * time.Second})
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
		err := AsAgent(context.Background(), recording.Header{}, entries, in, &out, AgentOptions{Stderr: &errb, Wait: 2 * time.Second, AnswerUnrecorded: lenient})
		if lenient && (err != nil || !strings.Contains(out.String(), `"request_id":"c-10"`)) {
			t.Fatalf("lenient: %v\n%s", err, out.String())
		}
		if !lenient && err == nil {
			t.Fatal("an unrecorded set_model passed without --lenient")
		}
	}
}
