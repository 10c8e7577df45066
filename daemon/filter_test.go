package daemon

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentjq/agentjq/jsonrpc"
)

// A subscription's filter is compiled by the filter package: agentlib's
// definitions (key_input here, written partly in Go) work on real events,
// and a program that does not compile fails invalid_params naming why.
func TestLiveSubscriptionFilterUsesAgentlib(t *testing.T) {
	t.Parallel()
	srv, wd := liveServer(t, Options{})
	all, some := connect(t, srv, true), connect(t, srv, true)
	all.hello(srv.Token())
	some.hello(srv.Token())
	var cr CreateResult
	all.must("session.create", CreateParams{Workdir: wd}, &cr)
	sid := cr.SessionID
	zero := int64(0)

	for _, bad := range []struct{ program, says string }{
		{`select(.kind ==`, "compile error"},
		{`.payload | no_such_helper`, "no_such_helper/0"},
		{`input`, "input"},
	} {
		err := some.call("session.subscribe", SubscribeParams{SessionID: sid, AfterSeq: &zero, Filter: bad.program}, nil)
		wantCode(t, bad.program, err, CodeInvalidParams)
		var e *jsonrpc.Error
		if !errors.As(err, &e) || !strings.Contains(e.Message, bad.says) || !strings.HasPrefix(e.Message, "filter: ") {
			t.Fatalf("%s: error %v does not name %q", bad.program, err, bad.says)
		}
	}

	all.must("session.subscribe", SubscribeParams{SessionID: sid, AfterSeq: &zero}, nil)
	some.must("session.subscribe", SubscribeParams{SessionID: sid, AfterSeq: &zero,
		Filter: `.kind == "turn.done" or (select(.kind == "tool.call") | .payload | key_input | test("filter-me"))`}, nil)
	all.must("session.prompt", PromptParams{SessionID: sid, Text: "TOOL Bash {\"command\":\"echo filter-me\",\"description\":\"one\"}\n" +
		"TOOL Bash {\"command\":\"echo not-this-one\",\"description\":\"two\"}\nSAY filtered"}, nil)
	all.waitFor("turn.done", 60*time.Second, func() bool { return hasKind(all.events[sid], "turn.done", 1) })
	some.waitFor("filtered turn.done", 10*time.Second, func() bool { return hasKind(some.events[sid], "turn.done", 1) })

	if n := countKind(eventsOf(all, sid), "tool.call"); n != 2 {
		t.Fatalf("the session made %d tool calls, want 2: %v", n, all.kinds(sid))
	}
	got := eventsOf(some, sid)
	if len(got) != 2 || got[0].Kind != "tool.call" || !strings.Contains(string(got[0].Payload), "echo filter-me") || got[1].Kind != "turn.done" {
		var kinds []string
		for _, e := range got {
			kinds = append(kinds, e.Kind+" "+string(e.Payload))
		}
		t.Fatalf("the filtered subscription got %v, want the filter-me tool.call then turn.done", kinds)
	}
}
