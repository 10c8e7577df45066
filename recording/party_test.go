package recording

import (
	"bytes"
	"testing"

	"github.com/agentjq/agentjq/internal/protocol"
)

func TestEntryPartyRoundTrip(t *testing.T) {
	for _, e := range []Entry{
		{Seq: 1, MS: 1.5, Dir: protocol.DirIn, Party: protocol.PartyClient, Msg: []byte(`{"type":"user"}`)},
		{Seq: 2, MS: 2, Dir: protocol.DirOut, Party: protocol.PartyAgentjq, Msg: []byte(`{"type":"control_request","x":"\",\"msg\":"}`)},
		{Seq: 3, MS: 3, Dir: protocol.DirErr, Party: protocol.PartyAgentjq, Text: `a "quoted" line`},
		{Seq: 4, MS: 4, Dir: protocol.DirOut, Msg: []byte(`{"type":"result"}`)},
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
