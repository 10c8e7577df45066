package daemon

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/agentjq/agentjq/jsonrpc"
)

func offlineServer(t testing.TB, opts Options) *Server {
	t.Helper()
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
	return srv
}

func wantCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	if got := jsonrpc.DataCode(err); got != code {
		t.Fatalf("%s: error %v, want data.code %s", what, err, code)
	}
}

// The handshake: nothing before hello, a wrong token, another major
// version are refused; after a good hello the same call works.
func TestHelloRefusals(t *testing.T) {
	srv := offlineServer(t, Options{})
	c := connect(t, srv, true)
	wantCode(t, "no hello", c.call("session.list", nil, nil), CodeUnauthorized)
	wantCode(t, "wrong token", c.call("system.hello", HelloParams{Token: wrongToken(srv.Token()), ProtocolVersion: ProtocolVersion}, nil), CodeUnauthorized)
	wantCode(t, "still no hello", c.call("session.list", nil, nil), CodeUnauthorized)
	wantCode(t, "wrong major", c.call("system.hello", HelloParams{Token: srv.Token(), ProtocolVersion: "7.0.0"}, nil), CodeProtocolIncompatible)
	wantCode(t, "pre-1.0 minor", c.call("system.hello", HelloParams{Token: srv.Token(), ProtocolVersion: "0.9.0"}, nil), CodeProtocolIncompatible)
	var hr HelloResult
	c.must("system.hello", HelloParams{Token: srv.Token(), ProtocolVersion: ProtocolVersion, ClientVersion: "t"}, &hr)
	if hr.ProtocolVersion != ProtocolVersion || len(hr.Capabilities) == 0 || len(hr.Agents) == 0 {
		t.Fatalf("hello result %+v", hr)
	}
	for _, cap := range hr.Capabilities {
		if strings.HasPrefix(cap, "provider.") || strings.HasPrefix(cap, "job.") {
			t.Errorf("capability %s is not offered", cap)
		}
	}
	var lr ListResult
	c.must("session.list", nil, &lr)
	// --stdio needs no token.
	s := connect(t, srv, false)
	s.must("session.list", nil, &lr)
}

// The WebSocket endpoint: a browser Origin and a non-loopback Host are
// refused before any JSON-RPC; GET /protocol.json is the committed file.
func TestWebSocketOriginAndHost(t *testing.T) {
	srv := offlineServer(t, Options{})
	hs := httptest.NewServer(srv.HTTPHandler(context.Background(), SchemaJSON(), false))
	defer hs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	url := "ws" + strings.TrimPrefix(hs.URL, "http") + "/ws"

	_, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {"https://evil.example"}}})
	if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("browser Origin: %v %v", resp, err)
	}
	_, resp, err = websocket.Dial(ctx, url, &websocket.DialOptions{Host: "attacker.example:80"})
	if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("rebinding Host: %v %v", resp, err)
	}
	req, _ := http.NewRequest("GET", hs.URL+"/health", nil)
	req.Host = "evil.example"
	if r, err := http.DefaultClient.Do(req); err != nil || r.StatusCode != http.StatusForbidden {
		t.Fatalf("GET /health with a foreign Host: %v %v", r, err)
	}
	r, err := http.Get(hs.URL + "/protocol.json")
	if err != nil {
		t.Fatal(err)
	}
	body := make([]byte, len(SchemaJSON())+1)
	n, _ := ioReadFull(r, body)
	committed, _ := os.ReadFile("protocol.json")
	if string(body[:n]) != string(committed) {
		t.Fatal("GET /protocol.json is not the committed file")
	}

	ws, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonrpc.NewConn(jsonrpc.NewWebSocketStream(ws), jsonrpc.Options{})
	go c.Run(ctx)
	defer c.Close()
	wantCode(t, "ws no hello", c.Call(ctx, "system.info", nil, nil), CodeUnauthorized)
	if err := c.Call(ctx, "system.hello", HelloParams{Token: srv.Token(), ProtocolVersion: ProtocolVersion}, nil); err != nil {
		t.Fatal(err)
	}
	var info InfoResult
	if err := c.Call(ctx, "system.info", nil, &info); err != nil || info.Pid == 0 {
		t.Fatalf("info %+v %v", info, err)
	}
}

func ioReadFull(r *http.Response, b []byte) (int, error) {
	defer r.Body.Close()
	n := 0
	for n < len(b) {
		m, err := r.Body.Read(b[n:])
		n += m
		if err != nil {
			return n, nil
		}
	}
	return n, nil
}

// Every error code the daemon can answer, each from a real call.
func TestLiveEveryErrorCode(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	allow := filepath.Join(home, "allow.json")
	srv, wd := liveServer(t, Options{Home: home, Allowlist: allow, ApprovalTimeout: 1500 * time.Millisecond, MaxSessions: 1})
	c := connect(t, srv, true)
	seen := map[string]bool{}
	code := func(what string, err error, want string) {
		t.Helper()
		wantCode(t, what, err, want)
		seen[want] = true
	}
	code("unauthorized", c.call("session.list", nil, nil), CodeUnauthorized)
	code("incompatible", c.call("system.hello", HelloParams{Token: srv.Token(), ProtocolVersion: "2.0.0"}, nil), CodeProtocolIncompatible)
	c.hello(srv.Token())
	code("not_found", c.call("session.prompt", PromptParams{SessionID: "nope", Text: "x"}, nil), CodeNotFound)
	code("invalid_params", c.call("session.create", map[string]any{"workdir": wd, "bogus": 1}, nil), CodeInvalidParams)
	code("invalid_params relative", c.call("session.create", CreateParams{Workdir: "rel"}, nil), CodeInvalidParams)
	code("not_implemented", c.call("provider.list", nil, nil), CodeNotImplemented)
	code("invalid_params allowlist", c.call("permission.allowlist.add", AllowlistParams{Rule: "Bash(("}, nil), CodeInvalidParams)

	var cr CreateResult
	c.must("session.create", CreateParams{Workdir: wd}, &cr)
	sid := cr.SessionID
	code("overloaded", c.call("session.create", CreateParams{Workdir: wd}, nil), CodeOverloaded)
	code("mode_denied", c.call("session.setMode", SetModeParams{SessionID: sid, Mode: "yolo"}, nil), CodeModeDenied)
	big := int64(1 << 40)
	code("resume_gap", c.call("session.resume", ResumeParams{SessionID: sid, AfterSeq: big}, nil), CodeResumeGap)

	// Nobody answers: the approval times out, a deny (approval_timeout in
	// approval.resolved); a respond after it fails approval_resolved.
	var pr PromptResult
	c.must("session.prompt", PromptParams{SessionID: sid, Text: bashTurn}, &pr)
	var pending ApprovalListResult
	deadline := time.Now().Add(60 * time.Second)
	for len(pending.Approvals) == 0 && time.Now().Before(deadline) {
		c.must("approval.list", ApprovalListParams{SessionID: sid}, &pending)
		time.Sleep(50 * time.Millisecond)
	}
	if len(pending.Approvals) == 0 {
		t.Fatal("no approval pending")
	}
	id := pending.Approvals[0].ID
	c.waitFor("approval_timeout", 30*time.Second, func() bool {
		for _, n := range c.notes {
			if n.Method == "approval.resolved" && strings.Contains(string(n.Params), CodeApprovalTimeout) {
				return true
			}
		}
		return false
	})
	seen[CodeApprovalTimeout] = true
	code("approval_resolved", c.call("approval.respond", RespondParams{ID: id, Decision: "allow"}, nil), CodeApprovalResolved)
	code("invalid_params decision", c.call("approval.respond", RespondParams{ID: id, Decision: "maybe"}, nil), CodeInvalidParams)

	c.must("session.close", SessionRef{SessionID: sid}, nil)
	s, _ := srv.session(sid)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		t.Fatal("session did not end")
	}
	code("session_ended", c.call("session.prompt", PromptParams{SessionID: sid, Text: "again"}, nil), CodeSessionEnded)

	// A log that lost events cannot be resumed from: resume_gap, never a
	// silent hole.
	rec := filepath.Join(home, "sessions", sid+".rec")
	b, _ := os.ReadFile(rec)
	os.WriteFile(rec, b[:strings.IndexByte(string(b), '\n')+1], 0o600)
	code("resume_gap in the log", c.call("session.resume", ResumeParams{SessionID: sid, AfterSeq: 0}, nil), CodeResumeGap)
	c.must("session.deleteSaved", SessionRef{SessionID: sid}, nil)
	code("deleted", c.call("session.resume", ResumeParams{SessionID: sid, AfterSeq: 0}, nil), CodeNotFound)

	// internal: the recording cannot be created.
	os.RemoveAll(filepath.Join(home, "sessions"))
	os.WriteFile(filepath.Join(home, "sessions"), nil, 0o600)
	code("internal", c.call("session.create", CreateParams{Workdir: wd}, nil), CodeInternal)
	for _, ec := range ErrorCodes {
		if ec.Code == CodeApprovalDenied {
			continue // TestLiveUnattendedApproval
		}
		if !seen[ec.Code] {
			t.Errorf("error code %s untested", ec.Code)
		}
	}
}

// wrongToken differs from tok in its last character only.
func wrongToken(tok string) string {
	last := tok[len(tok)-1]
	if last == 'a' {
		return tok[:len(tok)-1] + "b"
	}
	return tok[:len(tok)-1] + "a"
}
