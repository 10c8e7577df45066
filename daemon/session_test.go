package daemon

import (
	"context"
	"encoding/json"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentjq/agentjq/jsonrpc"
)

// setMode reaches claude (set_permission_mode) and comes back as
// mode.changed; tool.list and command.list come from its init; a jq
// filter narrows a subscription; interrupt ends a long turn.
func TestLiveModeToolsFilterInterrupt(t *testing.T) {
	t.Parallel()
	srv, wd := liveServer(t, Options{})
	a, f := connect(t, srv, true), connect(t, srv, true)
	a.hello(srv.Token())
	f.hello(srv.Token())
	var cr CreateResult
	a.must("session.create", CreateParams{Workdir: wd}, &cr)
	sid := cr.SessionID
	zero := int64(0)
	a.must("session.subscribe", SubscribeParams{SessionID: sid, AfterSeq: &zero}, nil)
	f.must("session.subscribe", SubscribeParams{SessionID: sid, AfterSeq: &zero, Filter: `.kind == "turn.done" or .kind == "mode.changed"`}, nil)
	a.must("session.prompt", PromptParams{SessionID: sid, Text: "hello"}, nil)
	a.waitFor("turn.done", 60*time.Second, func() bool { return hasKind(a.events[sid], "turn.done", 1) })
	var tl ToolListResult
	a.must("tool.list", SessionRef{SessionID: sid}, &tl)
	if !strings.Contains(strings.Join(tl.Tools, ","), "Bash") {
		t.Fatalf("tools %v", tl.Tools)
	}
	var cl CommandListResult
	a.must("command.list", SessionRef{SessionID: sid}, &cl)
	if len(cl.Commands) == 0 {
		t.Fatal("no slash commands from init")
	}
	a.must("session.setMode", SetModeParams{SessionID: sid, Mode: "acceptEdits"}, nil)
	a.waitFor("mode.changed acceptEdits", 30*time.Second, func() bool {
		for _, e := range a.events[sid] {
			if e.Kind == "mode.changed" && strings.Contains(string(e.Payload), "acceptEdits") {
				return true
			}
		}
		return false
	})
	// A long turn, interrupted.
	a.must("session.prompt", PromptParams{SessionID: sid, Text: "DELAY 30s\nSAY late"}, nil)
	time.Sleep(500 * time.Millisecond)
	start := time.Now()
	a.must("session.interrupt", SessionRef{SessionID: sid}, nil)
	a.waitFor("interrupted turn.done", 20*time.Second, func() bool { return hasKind(a.events[sid], "turn.done", 2) })
	if time.Since(start) > 15*time.Second {
		t.Fatalf("interrupt took %v", time.Since(start))
	}
	f.waitFor("filtered", 5*time.Second, func() bool { return hasKind(f.events[sid], "turn.done", 2) })
	for _, e := range eventsOf(f, sid) {
		if e.Kind != "turn.done" && e.Kind != "mode.changed" {
			t.Fatalf("the filter let %s through", e.Kind)
		}
	}
	checkSeqs(t, "a", eventsOf(a, sid), 1)
}

// gatedStream stops reading while its gate is closed: a client that
// stopped reading its socket.
type gatedStream struct {
	jsonrpc.Stream
	mu   sync.Mutex
	open chan struct{}
}

func (g *gatedStream) Read(ctx context.Context) ([]byte, error) {
	g.mu.Lock()
	ch := g.open
	g.mu.Unlock()
	<-ch
	return g.Stream.Read(ctx)
}

// A client that falls behind is dropped (the session never waits for
// it) and resumes by seq on a new connection with nothing lost.
func TestSlowClientDroppedThenResumes(t *testing.T) {
	srv := tickerServer(t, "ticker:400:1ms")
	srv.opts.QueueBytes, srv.opts.StallTimeout = 4<<10, 500*time.Millisecond
	x, y := net.Pipe()
	go srv.ServeStream(context.Background(), jsonrpc.NewLineStream(x, x, x), true)
	open := make(chan struct{})
	close(open)
	gs := &gatedStream{Stream: jsonrpc.NewLineStream(y, y, y), open: open}
	var mu sync.Mutex
	var seen []int64
	var disconnect json.RawMessage
	slow := jsonrpc.NewConn(gs, jsonrpc.Options{Logf: t.Logf, Handler: func(ctx context.Context, r *jsonrpc.Request) (any, error) {
		mu.Lock()
		defer mu.Unlock()
		switch r.Method {
		case "session.event":
			var ev Event
			json.Unmarshal(r.Params, &ev)
			seen = append(seen, ev.Seq)
		case "system.disconnect":
			disconnect = r.Params
		}
		return nil, nil
	}})
	go slow.Run(context.Background())
	ctx := context.Background()
	if err := slow.Call(ctx, "system.hello", HelloParams{Token: srv.Token(), ProtocolVersion: ProtocolVersion}, nil); err != nil {
		t.Fatal(err)
	}
	var cr CreateResult
	if err := slow.Call(ctx, "session.create", CreateParams{Workdir: t.TempDir()}, &cr); err != nil {
		t.Fatal(err)
	}
	zero := int64(0)
	if err := slow.Call(ctx, "session.subscribe", SubscribeParams{SessionID: cr.SessionID, AfterSeq: &zero}, nil); err != nil {
		t.Fatal(err)
	}
	// The prompt's response is read, then the client stops reading.
	if err := slow.Call(ctx, "session.prompt", PromptParams{SessionID: cr.SessionID, Text: "go"}, nil); err != nil {
		t.Fatal(err)
	}
	gs.mu.Lock()
	gs.open = make(chan struct{})
	gs.mu.Unlock()
	s, _ := srv.session(cr.SessionID)
	deadline := time.Now().Add(30 * time.Second)
	for !hasTurnDone(s) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !hasTurnDone(s) {
		t.Fatal("the session was held up by a client that does not read")
	}
	close(gs.open)
	select {
	case <-slow.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the slow client was not dropped")
	}
	mu.Lock()
	last := int64(0)
	if n := len(seen); n > 0 {
		last = seen[n-1]
	}
	checkSeqList(t, seen)
	mu.Unlock()
	_ = disconnect // best effort: the pipe may be closed before it is read
	// Resume on a new connection: exactly the rest.
	c := connect(t, srv, true)
	c.hello(srv.Token())
	var rr SubscribeResult
	c.must("session.resume", ResumeParams{SessionID: cr.SessionID, AfterSeq: last}, &rr)
	c.waitFor("the rest", 10*time.Second, func() bool { return int64(len(c.events[cr.SessionID])) >= rr.LastSeq-last })
	checkSeqs(t, "resumed", eventsOf(c, cr.SessionID), last+1)
}

func checkSeqList(t *testing.T, seqs []int64) {
	t.Helper()
	for i, s := range seqs {
		if s != int64(i+1) {
			t.Fatalf("seq %d at %d before the drop", s, i)
		}
	}
}

func hasTurnDone(s *Session) bool {
	evs, _ := readEvents(s.path, 0, s.lastSeq())
	for _, e := range evs {
		if e.kind == "turn.done" {
			return true
		}
	}
	return false
}

// command.run and session.compact send slash commands as turns, and
// backend.set (the model, on claude) is answered by the agent.
func TestLiveCommandRunCompactBackend(t *testing.T) {
	t.Parallel()
	srv, wd := liveServer(t, Options{})
	a := connect(t, srv, true)
	a.hello(srv.Token())
	var cr CreateResult
	a.must("session.create", CreateParams{Workdir: wd}, &cr)
	sid := cr.SessionID
	zero := int64(0)
	a.must("session.subscribe", SubscribeParams{SessionID: sid, AfterSeq: &zero}, nil)
	a.must("session.prompt", PromptParams{SessionID: sid, Text: "hello"}, nil)
	a.waitFor("turn 1", 60*time.Second, func() bool { return hasKind(a.events[sid], "turn.done", 1) })
	var pr PromptResult
	a.must("command.run", CommandRunParams{SessionID: sid, Command: "context"}, &pr)
	a.waitFor("command turn", 60*time.Second, func() bool { return hasKind(a.events[sid], "turn.done", 2) })
	a.must("session.compact", SessionRef{SessionID: sid}, &pr)
	a.waitFor("compact turn", 60*time.Second, func() bool { return hasKind(a.events[sid], "turn.done", 3) })
	a.must("backend.set", BackendSetParams{SessionID: sid, Model: "claude-sonnet-4-5"}, nil)
	a.waitFor("set_model answered", 30*time.Second, func() bool {
		for _, e := range a.events[sid] {
			if e.Kind == "agent.line" && strings.Contains(string(e.Payload), "agentjq-daemon-set_model") {
				return true
			}
		}
		return false
	})
	var started []string
	for _, e := range eventsOf(a, sid) {
		if e.Kind == "turn.started" {
			var p TurnStartedPayload
			json.Unmarshal(e.Payload, &p)
			started = append(started, p.Text)
		}
	}
	if strings.Join(started, "|") != "hello|/context|/compact" {
		t.Fatalf("turns %q", started)
	}
}
