package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentjq/agentjq/internal/testkit/apistub"
	"github.com/agentjq/agentjq/internal/testkit/fakeagent"
	"github.com/agentjq/agentjq/internal/testkit/livetest"
	"github.com/agentjq/agentjq/internal/testkit/proctest"
	"github.com/agentjq/agentjq/jsonrpc"
)

func TestMain(m *testing.M) {
	if sc := os.Getenv(fakeagent.Scenario); sc != "" {
		os.Exit(fakeagent.Main(sc))
	}
	if home := os.Getenv("AGENTJQ_TEST_DAEMON_HOME"); home != "" {
		os.Exit(runTestDaemon(home))
	}
	os.Exit(m.Run())
}

// runTestDaemon is a daemon in a process of its own, for the kill test.
func runTestDaemon(home string) int {
	opts := Options{Home: home, ServerVersion: "test", AgentBin: os.Getenv("AGENTJQ_TEST_AGENT_BIN"), Env: os.Environ(), Logf: func(string, ...any) {}}
	opts.Build = testBuild(opts)
	srv, err := New(opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if _, err := srv.ListenUnix(context.Background(), filepath.Join(home, "daemon.sock")); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if _, err := srv.WriteDaemonFile(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	<-srv.Done()
	return 0
}

func eventsOf(tc *testClient, sid string) []testEvent {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	return append([]testEvent(nil), tc.events[sid]...)
}

// An approval asked while no client is connected waits in the queue and
// is answered later by another client via approval.list/respond; a deny
// the same way resolves with reason approval_denied.
func TestLiveUnattendedApproval(t *testing.T) {
	t.Parallel()
	srv, wd := liveServer(t, Options{})
	a := connect(t, srv, true)
	a.hello(srv.Token())
	var cr CreateResult
	a.must("session.create", CreateParams{Workdir: wd}, &cr)
	sid := cr.SessionID
	a.must("session.prompt", PromptParams{SessionID: sid, Text: bashTurn}, nil)
	a.conn.Close() // nobody is connected now

	b := connect(t, srv, true)
	b.hello(srv.Token())
	var l ApprovalListResult
	deadline := time.Now().Add(60 * time.Second)
	for len(l.Approvals) == 0 && time.Now().Before(deadline) {
		b.must("approval.list", nil, &l)
		time.Sleep(50 * time.Millisecond)
	}
	if len(l.Approvals) != 1 {
		t.Fatalf("approvals %+v", l)
	}
	ap := l.Approvals[0]
	if ap.Tool != "Bash" || !strings.Contains(ap.KeyInput, "touch") || ap.SessionID != sid {
		t.Fatalf("approval %+v", ap)
	}
	var r ResolvedParams
	b.must("approval.respond", RespondParams{ID: ap.ID, Decision: "allow"}, &r)
	if r.Who != "client-2" || r.Decision != "allow" {
		t.Fatalf("resolved %+v", r)
	}
	zero := int64(0)
	b.must("session.subscribe", SubscribeParams{SessionID: sid, AfterSeq: &zero}, nil)
	b.waitFor("turn.done", 60*time.Second, func() bool { return hasKind(b.events[sid], "turn.done", 1) })
	if _, err := os.Stat(filepath.Join(wd, "ran-it")); err != nil {
		t.Fatalf("the allowed call did not run: %v", err)
	}
	// A deny from the queue.
	b.must("session.prompt", PromptParams{SessionID: sid, Text: strings.Replace(bashTurn, "ran-it", "denied-it", 1)}, nil)
	b.waitFor("second approval", 60*time.Second, func() bool { return len(b.requests) > 0 })
	// A deny rule for the session is refused (no guard would hold it on
	// the calls claude runs unasked); the approval stays pending.
	for _, scope := range []string{"session", "always"} {
		err := b.call("approval.respond", RespondParams{ID: b.requests[0].ID, Decision: "deny", Scope: scope}, nil)
		wantCode(t, "deny scope "+scope, err, CodeInvalidParams)
		if !strings.Contains(err.Error(), "policy file") {
			t.Fatalf("deny scope %s: %v does not say where a deny rule goes", scope, err)
		}
	}
	if b.must("approval.list", ApprovalListParams{SessionID: sid}, &l); len(l.Approvals) != 1 {
		t.Fatalf("after the refused answers: approvals %+v", l)
	}
	b.must("approval.respond", RespondParams{ID: b.requests[0].ID, Decision: "deny", Message: "not now"}, &r)
	b.waitFor("approval_denied", 10*time.Second, func() bool {
		for _, n := range b.notes {
			if n.Method == "approval.resolved" && strings.Contains(string(n.Params), CodeApprovalDenied) {
				return true
			}
		}
		return false
	})
	b.waitFor("second turn.done", 60*time.Second, func() bool { return hasKind(b.events[sid], "turn.done", 2) })
	if _, err := os.Stat(filepath.Join(wd, "denied-it")); err == nil {
		t.Fatal("the denied call ran")
	}
	checkSeqs(t, "b", eventsOf(b, sid), 1)
}

// A client that drops mid-turn (an approval pending) resumes on a new
// connection from the last seq it saw: no gap, no duplicate, and the
// pending approval is sent again with the same id.
func TestLiveDisconnectMidTurnResume(t *testing.T) {
	t.Parallel()
	srv, wd := liveServer(t, Options{})
	a := connect(t, srv, true)
	a.hello(srv.Token())
	var cr CreateResult
	a.must("session.create", CreateParams{Workdir: wd}, &cr)
	sid := cr.SessionID
	zero := int64(0)
	a.must("session.subscribe", SubscribeParams{SessionID: sid, AfterSeq: &zero}, nil)
	a.must("session.prompt", PromptParams{SessionID: sid, Text: bashTurn}, nil)
	a.waitFor("approval.request", 60*time.Second, func() bool { return len(a.requests) > 0 })
	a.conn.Close()
	got := eventsOf(a, sid)
	last := got[len(got)-1].Seq
	firstID := a.requests[0].ID

	b := connect(t, srv, true)
	b.hello(srv.Token())
	b.answer = func(ApprovalInfo) (any, error) { return Decision{Decision: "allow"}, nil }
	var rr SubscribeResult
	b.must("session.resume", ResumeParams{SessionID: sid, AfterSeq: last}, &rr)
	if len(rr.Pending) != 1 || rr.Pending[0].ID != firstID {
		t.Fatalf("resume result pending %+v, want %s", rr.Pending, firstID)
	}
	b.waitFor("turn.done", 60*time.Second, func() bool { return hasKind(b.events[sid], "turn.done", 1) })
	all := append(got, eventsOf(b, sid)...)
	checkSeqs(t, "a then b", all, 1)
	if b.requests[0].ID != firstID {
		t.Fatalf("re-sent approval id %s, want %s", b.requests[0].ID, firstID)
	}
}

// 50 sessions at once each get their own results. The fake agent stands
// in for claude here (50 claude processes would not fit a CI machine):
// every session's recording holds its own turn and nobody else's.
func TestFiftySessions(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	self, _ := os.Executable()
	srv := offlineServer(t, Options{AgentBin: self, Env: append(os.Environ(), fakeagent.Scenario+"=echo-turns")})
	c := connect(t, srv, true)
	c.hello(srv.Token())
	wd := t.TempDir()
	const n = 50
	ids := make([]string, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			var cr CreateResult
			if err := c.call("session.create", CreateParams{Workdir: wd}, &cr); err != nil {
				errs <- err
				return
			}
			ids[i] = cr.SessionID
			zero := int64(0)
			if err := c.call("session.subscribe", SubscribeParams{SessionID: cr.SessionID, AfterSeq: &zero}, nil); err != nil {
				errs <- err
				return
			}
			if err := c.call("session.prompt", PromptParams{SessionID: cr.SessionID, Text: fmt.Sprintf("turn-of-%d", i)}, nil); err != nil {
				errs <- err
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	c.waitFor("50 turn.done", 60*time.Second, func() bool {
		for _, id := range ids {
			if !hasKind(c.events[id], "turn.done", 1) {
				return false
			}
		}
		return true
	})
	for i, id := range ids {
		evs := eventsOf(c, id)
		checkSeqs(t, id, evs, 1)
		var started []string
		for _, e := range evs {
			if e.SessionID != id {
				t.Fatalf("event of %s in %s", e.SessionID, id)
			}
			if e.Kind == "turn.started" {
				var p TurnStartedPayload
				json.Unmarshal(e.Payload, &p)
				started = append(started, p.Text)
			}
		}
		if len(started) != 1 || started[0] != fmt.Sprintf("turn-of-%d", i) {
			t.Fatalf("session %d turns %v", i, started)
		}
		rec, _ := os.ReadFile(srv.recordingPath(id))
		if !strings.Contains(string(rec), fmt.Sprintf(`"turn-of-%d"`, i)) || strings.Count(string(rec), `"turn-of-`) != 2 {
			t.Fatalf("recording of session %d does not hold exactly its own turn", i)
		}
	}
}

// A daemon killed with SIGKILL leaves no agent process behind: the
// process runner ends the whole tree with the daemon.
func TestLiveKilledDaemonLeavesNoAgent(t *testing.T) {
	t.Parallel()
	bin := livetest.Claude(t)
	api := apistub.Start(t)
	mark := proctest.Marker(t)
	home := t.TempDir()
	self, _ := os.Executable()
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Env = append(livetest.Env(t, api.URL()), "AGENTJQ_TEST_DAEMON_HOME="+home, "AGENTJQ_TEST_AGENT_BIN="+bin, "AGENTJQ_TEST_MARK="+mark)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var conn *jsonrpc.Conn
	var err error
	for ; ctx.Err() == nil; time.Sleep(50 * time.Millisecond) {
		if conn, err = Dial(ctx, home, "kill-test", nil); err == nil {
			break
		}
	}
	if conn == nil {
		t.Fatalf("dial: %v", err)
	}
	defer conn.Close()
	var cr CreateResult
	if err := conn.Call(ctx, "session.create", CreateParams{Workdir: livetest.Workdir(t)}, &cr); err != nil {
		t.Fatal(err)
	}
	// A turn that keeps the agent busy when the daemon dies.
	if err := conn.Call(ctx, "session.prompt", PromptParams{SessionID: cr.SessionID, Text: "DELAY 20s\nSAY late"}, nil); err != nil {
		t.Fatal(err)
	}
	for len(proctest.Find(mark)) < 2 && ctx.Err() == nil { // the daemon and its agent
		time.Sleep(50 * time.Millisecond)
	}
	if n := len(proctest.Find(mark)); n < 2 {
		t.Fatalf("the agent did not start (%d marked processes)", n)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	proctest.None(t, mark, 10*time.Second)
}

// A client's allow that rewrites the call is held to the policy: a
// rewrite that asks to run outside the sandbox is denied, never run. (A
// Bash command's writes to the protected control files are the
// sandbox's to fail, not the chain's.)
func TestLiveRewriteHeldToProtection(t *testing.T) {
	t.Parallel()
	srv, wd := liveServer(t, Options{})
	a := connect(t, srv, true)
	a.hello(srv.Token())
	a.answer = func(ApprovalInfo) (any, error) {
		return Decision{Decision: "allow", UpdatedInput: json.RawMessage(`{"command":"echo evil > .npmrc","description":"x","dangerouslyDisableSandbox":true}`)}, nil
	}
	var cr CreateResult
	a.must("session.create", CreateParams{Workdir: wd}, &cr)
	zero := int64(0)
	a.must("session.subscribe", SubscribeParams{SessionID: cr.SessionID, AfterSeq: &zero}, nil)
	a.must("session.prompt", PromptParams{SessionID: cr.SessionID, Text: bashTurn}, nil)
	a.waitFor("turn.done", 60*time.Second, func() bool { return hasKind(a.events[cr.SessionID], "turn.done", 1) })
	if _, err := os.Stat(filepath.Join(wd, ".npmrc")); err == nil {
		t.Fatal("a rewrite to a protected control file ran")
	}
	if _, err := os.Stat(filepath.Join(wd, "ran-it")); err == nil {
		t.Fatal("the original call ran instead")
	}
}

// scope "always" writes claude's suggested allow rule into the allowlist
// policy file (never the agent's settings); permission.allowlist.* edit
// it, validated as a policy; a later daemon on the same home still reads
// the ended session from its recording.
func TestLiveAlwaysAllowlistAndRestart(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	allow := filepath.Join(home, "allow.json")
	srv, wd := liveServer(t, Options{Home: home, Allowlist: allow})
	a := connect(t, srv, true)
	a.hello(srv.Token())
	var sugg []json.RawMessage
	a.answer = func(ap ApprovalInfo) (any, error) {
		sugg = ap.Suggestions
		return Decision{Decision: "allow", Scope: "always"}, nil
	}
	var cr CreateResult
	a.must("session.create", CreateParams{Workdir: wd}, &cr)
	zero := int64(0)
	a.must("session.subscribe", SubscribeParams{SessionID: cr.SessionID, AfterSeq: &zero}, nil)
	a.must("session.prompt", PromptParams{SessionID: cr.SessionID, Text: bashTurn}, nil)
	a.waitFor("turn.done", 60*time.Second, func() bool { return hasKind(a.events[cr.SessionID], "turn.done", 1) })
	var al AllowlistResult
	a.must("permission.allowlist.list", nil, &al)
	if len(sugg) > 0 {
		if len(al.Allow) == 0 {
			t.Fatalf("scope always wrote no rule; suggestions %s", sugg)
		}
	} else {
		t.Logf("claude made no permission_suggestions for this call")
	}
	a.must("permission.allowlist.add", AllowlistParams{Rule: "Read(./docs/**)"}, &al)
	if !strings.Contains(strings.Join(al.Allow, " "), "Read(./docs/**)") {
		t.Fatalf("add: %v", al.Allow)
	}
	a.must("permission.allowlist.remove", AllowlistParams{Rule: "Read(./docs/**)"}, &al)
	if strings.Contains(strings.Join(al.Allow, " "), "Read(./docs/**)") {
		t.Fatalf("remove: %v", al.Allow)
	}
	wantCode(t, "remove missing", a.call("permission.allowlist.remove", AllowlistParams{Rule: "Nope"}, nil), CodeNotFound)
	if _, err := os.Stat(filepath.Join(wd, ".claude", "settings.local.json")); err == nil {
		t.Fatal("the agent's settings were written")
	}
	a.must("session.close", SessionRef{SessionID: cr.SessionID}, nil)
	s, _ := srv.session(cr.SessionID)
	<-s.done
	last := s.lastSeq()
	srv.Shutdown()

	srv2, err := New(Options{Home: home, ServerVersion: "test", Logf: t.Logf, Build: testBuild(Options{})})
	if err != nil {
		t.Fatal(err)
	}
	b := connect(t, srv2, true)
	b.hello(srv2.Token())
	var rr SubscribeResult
	b.must("session.resume", ResumeParams{SessionID: cr.SessionID, AfterSeq: 0}, &rr)
	if !rr.Ended || rr.LastSeq != last {
		t.Fatalf("after restart: %+v, want last %d", rr, last)
	}
	b.waitFor("replay", 10*time.Second, func() bool { return int64(len(b.events[cr.SessionID])) >= last })
	checkSeqs(t, "after restart", eventsOf(b, cr.SessionID), 1)
	var lr ListResult
	b.must("session.list", nil, &lr)
	if len(lr.Sessions) != 1 || !lr.Sessions[0].Ended {
		t.Fatalf("list after restart %+v", lr)
	}
}
