package daemon

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/agentjq/agentjq/internal/testkit/apistub"
	"github.com/agentjq/agentjq/internal/testkit/livetest"
	"github.com/agentjq/agentjq/jsonrpc"
)

// testClient is a JSON-RPC client of a daemon under test: it keeps every
// session.event and notification, and answers approval.request with answer.
type testClient struct {
	t    testing.TB
	conn *jsonrpc.Conn
	raw  *traffic

	mu       sync.Mutex
	events   map[string][]testEvent
	notes    []jsonrpc.Message
	requests []ApprovalInfo
	changed  chan struct{}
	answer   func(ApprovalInfo) (any, error)
	// For the benchmarks, which drop events as they go.
	counts      int
	lastSeq     int64
	sawTurnDone bool
}

// traffic records every message both ways, for the schema test.
type traffic struct {
	off  bool // the benchmarks keep nothing
	mu   sync.Mutex
	msgs [][]byte
}

type recordingStream struct {
	jsonrpc.Stream
	tr *traffic
}

func (r recordingStream) Read(ctx context.Context) ([]byte, error) {
	b, err := r.Stream.Read(ctx)
	if err == nil {
		r.tr.add(b)
	}
	return b, err
}

func (r recordingStream) Write(ctx context.Context, b []byte) error {
	r.tr.add(b)
	return r.Stream.Write(ctx, b)
}

func (t *traffic) add(b []byte) {
	if t.off {
		return
	}
	t.mu.Lock()
	t.msgs = append(t.msgs, append([]byte(nil), b...))
	t.mu.Unlock()
}

func connect(t *testing.T, srv *Server, auth bool) *testClient {
	t.Helper()
	return connectWith(t, srv, auth, &traffic{})
}

func connectWith(t testing.TB, srv *Server, auth bool, tr *traffic) *testClient {
	t.Helper()
	x, y := net.Pipe()
	go srv.ServeStream(context.Background(), jsonrpc.NewLineStream(x, x, x), auth)
	tc := &testClient{t: t, events: map[string][]testEvent{}, changed: make(chan struct{}, 1), raw: tr}
	tc.conn = jsonrpc.NewConn(recordingStream{jsonrpc.NewLineStream(y, y, y), tr}, jsonrpc.Options{Handler: tc.handle, Logf: t.Logf})
	go tc.conn.Run(context.Background())
	t.Cleanup(func() {
		tc.conn.Close()
		if tt, ok := t.(*testing.T); ok && !t.Failed() && !tr.off {
			validateTraffic(tt, tr)
		}
	})
	return tc
}

func (tc *testClient) handle(ctx context.Context, req *jsonrpc.Request) (any, error) {
	tc.mu.Lock()
	defer func() {
		tc.mu.Unlock()
		select {
		case tc.changed <- struct{}{}:
		default:
		}
	}()
	switch req.Method {
	case "session.event":
		var ev testEvent
		if err := json.Unmarshal(req.Params, &ev.Event); err != nil {
			return nil, err
		}
		ev.receivedAt = time.Now()
		if ev.Kind == "turn.done" {
			tc.sawTurnDone = true
		}
		tc.events[ev.SessionID] = append(tc.events[ev.SessionID], ev)
		return nil, nil
	case "approval.request":
		var a ApprovalInfo
		if err := json.Unmarshal(req.Params, &a); err != nil {
			return nil, err
		}
		tc.requests = append(tc.requests, a)
		if tc.answer == nil {
			return jsonrpc.Async(func() (any, error) { <-ctx.Done(); return nil, ctx.Err() }), nil
		}
		f := tc.answer
		return jsonrpc.Async(func() (any, error) { return f(a) }), nil
	}
	tc.notes = append(tc.notes, jsonrpc.Message{Method: req.Method, Params: req.Params})
	return nil, nil
}

func (tc *testClient) call(method string, params, result any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return tc.conn.Call(ctx, method, params, result)
}

func (tc *testClient) must(method string, params, result any) {
	tc.t.Helper()
	if err := tc.call(method, params, result); err != nil {
		tc.t.Fatalf("%s: %v", method, err)
	}
}

func (tc *testClient) hello(token string) {
	tc.t.Helper()
	tc.must("system.hello", HelloParams{Token: token, ClientVersion: "test", ProtocolVersion: ProtocolVersion}, nil)
}

// waitFor waits until cond holds over the client's state.
// waitFor waits until cond holds. It fails when d passes with no message
// from the daemon (something hung): a slow machine that still delivers
// makes it wait longer, never fail.
func (tc *testClient) waitFor(what string, d time.Duration, cond func() bool) {
	tc.t.Helper()
	quiet := time.NewTimer(d)
	defer quiet.Stop()
	for {
		tc.mu.Lock()
		ok := cond()
		tc.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-tc.changed:
			quiet.Reset(d)
		case <-time.After(50 * time.Millisecond):
		case <-quiet.C:
			tc.t.Fatalf("timed out waiting for %s (nothing from the daemon for %s)", what, d)
		}
	}
}

func (tc *testClient) kinds(sid string) []string {
	var out []string
	for _, e := range tc.events[sid] {
		out = append(out, e.Kind)
	}
	return out
}

func hasKind(evs []testEvent, kind string, n int) bool {
	c := 0
	for _, e := range evs {
		if e.Kind == kind {
			c++
		}
	}
	return c >= n
}

// checkSeqs asserts strictly increasing by one from first.
func checkSeqs(t *testing.T, who string, evs []testEvent, first int64) {
	t.Helper()
	for i, e := range evs {
		if e.Seq != first+int64(i) {
			t.Fatalf("%s: event %d has seq %d, want %d (gap or duplicate)", who, i, e.Seq, first+int64(i))
		}
	}
}

// liveFollowed is a live server's session and a client that follows it
// from its first event and allows every call.
func liveFollowed(t *testing.T) (a *testClient, sid, wd string) {
	t.Helper()
	srv, wd := liveServer(t, Options{})
	a = connect(t, srv, true)
	a.hello(srv.Token())
	a.answer = func(ApprovalInfo) (any, error) { return Decision{Decision: "allow"}, nil }
	var cr CreateResult
	a.must("session.create", CreateParams{Workdir: wd}, &cr)
	zero := int64(0)
	a.must("session.subscribe", SubscribeParams{SessionID: cr.SessionID, AfterSeq: &zero}, nil)
	return a, cr.SessionID, wd
}

func liveServer(t *testing.T, opts Options) (*Server, string) {
	t.Helper()
	bin := livetest.Claude(t)
	api := apistub.Start(t)
	opts.AgentBin = bin
	opts.Env = livetest.Env(t, api.URL())
	if opts.Home == "" {
		opts.Home = t.TempDir()
	}
	opts.ServerVersion = "test"
	opts.Logf = t.Logf
	opts.Build = testBuild(opts)
	srv, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	return srv, livetest.Workdir(t)
}

const bashTurn = "TOOL Bash {\"command\":\"touch {{cwd}}/ran-it && echo daemon-ok\",\"description\":\"mark\"}\nSAY finished"

// Two clients on one session see every event with the same seqs; both
// answer the one approval and exactly one answer wins; a third client
// that resumes from the middle gets exactly the rest.
func TestLiveTwoClientsOneApprovalResume(t *testing.T) {
	t.Parallel()
	srv, wd := liveServer(t, Options{})
	a, b := connect(t, srv, true), connect(t, srv, true)
	a.hello(srv.Token())
	b.hello(srv.Token())
	var answers sync.WaitGroup
	answers.Add(2)
	allow := func(ApprovalInfo) (any, error) { answers.Done(); return Decision{Decision: "allow"}, nil }
	a.answer, b.answer = allow, allow

	var cr CreateResult
	a.must("session.create", CreateParams{Workdir: wd}, &cr)
	sid := cr.SessionID
	var sr SubscribeResult
	zero := int64(0)
	a.must("session.subscribe", SubscribeParams{SessionID: sid, AfterSeq: &zero}, &sr)
	b.must("session.subscribe", SubscribeParams{SessionID: sid, AfterSeq: &zero}, &sr)
	var pr PromptResult
	a.must("session.prompt", PromptParams{SessionID: sid, Text: bashTurn}, &pr)
	if pr.FirstSeq < 1 {
		t.Fatalf("firstSeq %d", pr.FirstSeq)
	}
	done := func(tc *testClient) func() bool {
		return func() bool { return hasKind(tc.events[sid], "turn.done", 1) }
	}
	a.waitFor("turn.done on a", 90*time.Second, done(a))
	b.waitFor("turn.done on b", 30*time.Second, done(b))
	waitGroup(t, &answers, 10*time.Second)

	a.mu.Lock()
	ea := append([]testEvent(nil), a.events[sid]...)
	a.mu.Unlock()
	b.mu.Lock()
	eb := append([]testEvent(nil), b.events[sid]...)
	b.mu.Unlock()
	checkSeqs(t, "a", ea, 1)
	checkSeqs(t, "b", eb, 1)
	if len(ea) != len(eb) {
		t.Fatalf("a saw %d events, b %d", len(ea), len(eb))
	}
	for i := range ea {
		if ea[i].Kind != eb[i].Kind || string(ea[i].Payload) != string(eb[i].Payload) {
			t.Fatalf("event %d differs: %s vs %s", ea[i].Seq, ea[i].Kind, eb[i].Kind)
		}
	}
	for _, k := range []string{"agent.line", "turn.started", "message.done", "tool.call", "tool.result", "turn.done", "usage", "approval.pending", "approval.resolved"} {
		if !hasKind(ea, k, 1) {
			t.Errorf("no %s event in %v", k, a.kinds(sid))
		}
	}
	// Exactly one resolution, and the tool ran (the allow reached claude).
	if n := countKind(ea, "approval.resolved"); n != 1 {
		t.Errorf("%d approval.resolved events, want 1", n)
	}
	var ran bool
	for _, e := range ea {
		if e.Kind == "tool.result" && json.Valid(e.Payload) && contains(e.Payload, "daemon-ok") {
			ran = true
		}
	}
	if !ran {
		t.Errorf("the allowed Bash call did not run: %v", a.kinds(sid))
	}

	// A client that joins later resumes from the middle: exactly the rest.
	c := connect(t, srv, true)
	c.hello(srv.Token())
	mid := int64(len(ea) / 2)
	var rr SubscribeResult
	c.must("session.resume", ResumeParams{SessionID: sid, AfterSeq: mid}, &rr)
	want := rr.LastSeq - mid
	c.waitFor("replayed events", 10*time.Second, func() bool { return int64(len(c.events[sid])) >= want })
	c.mu.Lock()
	checkSeqs(t, "resumed", c.events[sid], mid+1)
	for i, e := range c.events[sid] {
		if int(mid)+i < len(ea) && string(e.Payload) != string(ea[int(mid)+i].Payload) {
			t.Fatalf("replayed seq %d differs from the live one", e.Seq)
		}
	}
	c.mu.Unlock()

	// The recording is the event log: agentjq's own format, 0600.
	st, err := os.Stat(filepath.Join(srv.opts.Home, "sessions", sid+".rec"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("recording: %v %v", st, err)
	}
	// A second answer to the approval is refused: first answer wins.
	var id string
	for _, r := range a.requests {
		id = r.ID
	}
	err = b.call("approval.respond", RespondParams{ID: id, Decision: "deny"}, nil)
	if jsonrpc.DataCode(err) != CodeApprovalResolved {
		t.Fatalf("late respond: %v", err)
	}
}

func countKind(evs []testEvent, kind string) int {
	n := 0
	for _, e := range evs {
		if e.Kind == kind {
			n++
		}
	}
	return n
}

func contains(b []byte, s string) bool { return len(s) == 0 || indexOf(string(b), s) >= 0 }

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

func waitGroup(t *testing.T, wg *sync.WaitGroup, d time.Duration) {
	t.Helper()
	ch := make(chan struct{})
	go func() { wg.Wait(); close(ch) }()
	select {
	case <-ch:
	case <-time.After(d):
		t.Fatal("timed out waiting for both clients to answer")
	}
}

// testEvent is an event as a test client received it.
type testEvent struct {
	Event
	receivedAt time.Time
}
