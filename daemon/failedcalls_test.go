package daemon

import (
	"testing"
	"time"
)

// A call that fails leaves every subscription of its connection as it
// was (issue 25): a session.resume past the last seq (resume_gap), a
// session.subscribe that fails the same way, one with a filter that does
// not compile, and one on a session that does not exist. After each, a
// prompt from another client still reaches the connection, with no gap,
// and a filtered subscription keeps its filter.
func TestLiveFailedCallsKeepEventsFlowing(t *testing.T) {
	t.Parallel()
	srv, wd := liveServer(t, Options{})
	a, f, b := connect(t, srv, true), connect(t, srv, true), connect(t, srv, true)
	a.hello(srv.Token())
	f.hello(srv.Token())
	b.hello(srv.Token())
	var cr CreateResult
	b.must("session.create", CreateParams{Workdir: wd}, &cr)
	sid := cr.SessionID
	zero := int64(0)
	a.must("session.subscribe", SubscribeParams{SessionID: sid, AfterSeq: &zero}, nil)
	f.must("session.subscribe", SubscribeParams{SessionID: sid, AfterSeq: &zero, Kinds: []string{"turn.done"}}, nil)

	turns := 0
	prompt := func() {
		t.Helper()
		turns++
		n := turns
		b.must("session.prompt", PromptParams{SessionID: sid, Text: "SAY hello"}, nil)
		a.waitFor("turn.done on a", 60*time.Second, func() bool { return hasKind(a.events[sid], "turn.done", n) })
		f.waitFor("turn.done on f", 60*time.Second, func() bool { return hasKind(f.events[sid], "turn.done", n) })
	}
	prompt()
	big := int64(1 << 40)
	fails := []struct {
		what   string
		method string
		params any
		code   string
	}{
		{"resume past the last seq", "session.resume", ResumeParams{SessionID: sid, AfterSeq: big}, CodeResumeGap},
		{"subscribe past the last seq", "session.subscribe", SubscribeParams{SessionID: sid, AfterSeq: &big}, CodeResumeGap},
		{"subscribe with a bad filter", "session.subscribe", SubscribeParams{SessionID: sid, Filter: ".kind =="}, CodeInvalidParams},
		{"subscribe to no session", "session.subscribe", SubscribeParams{SessionID: "nope"}, CodeNotFound},
		{"resume with a bad afterSeq", "session.resume", ResumeParams{SessionID: sid, AfterSeq: -1}, CodeInvalidParams},
	}
	for _, fc := range fails {
		for _, c := range []*testClient{a, f} {
			wantCode(t, fc.what, c.call(fc.method, fc.params, nil), fc.code)
		}
		prompt()
	}
	checkSeqs(t, "a", eventsOf(a, sid), 1)
	for _, e := range eventsOf(f, sid) {
		if e.Kind != "turn.done" {
			t.Fatalf("f's filter was lost: it got %s", e.Kind)
		}
	}
	if got := len(eventsOf(f, sid)); got != turns {
		t.Fatalf("f got %d turn.done, want %d", got, turns)
	}
}

// Subscribes and resumes while the session writes fast: each new
// subscription replays the log from its afterSeq and goes live with no
// gap, no duplicate and no spurious resume_gap, whatever the session
// wrote between the read of the log and the switch to live. On a loaded
// machine the ticker may finish before the last switches: those then
// wait for the turn's end (the last event there is), not for events that
// never come.
func TestResumeWhileWriting(t *testing.T) {
	srv := tickerServer(t, "ticker:3000:200us")
	a := connect(t, srv, true)
	a.hello(srv.Token())
	var cr CreateResult
	a.must("session.create", CreateParams{Workdir: t.TempDir()}, &cr)
	sid := cr.SessionID
	a.must("session.prompt", PromptParams{SessionID: sid, Text: "go"}, nil)
	s, _ := srv.session(sid)
	for i := 0; i < 12; i++ {
		after := s.lastSeq() / 2
		c := connect(t, srv, true)
		c.hello(srv.Token())
		method, params := "session.resume", any(ResumeParams{SessionID: sid, AfterSeq: after})
		if i%2 == 1 {
			method, params = "session.subscribe", SubscribeParams{SessionID: sid, AfterSeq: &after}
		}
		var r SubscribeResult
		c.must(method, params, &r)
		want := r.LastSeq + 20
		c.waitFor("events past the switch", 60*time.Second, func() bool {
			evs := c.events[sid]
			if len(evs) == 0 {
				return false
			}
			last := evs[len(evs)-1]
			return last.Seq >= want || last.Kind == "turn.done" || last.Kind == "session.ended"
		})
		checkSeqs(t, method, eventsOf(c, sid), after+1)
		c.conn.Close()
	}
}
