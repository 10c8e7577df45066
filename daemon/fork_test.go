package daemon

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// session.fork starts a new session from a session's conversation
// (claude --resume --fork-session): the fork's claude session is a new
// one whose transcript holds the source's turn, the source goes on
// without the fork's, the fork is titled after the source; a fork at a
// message (atMessage, claude --resume-session-at) holds the conversation
// up to it only; an ended session forks too.
func TestLiveForkSession(t *testing.T) {
	t.Parallel()
	srv, wd := liveServer(t, Options{})
	a := connect(t, srv, true)
	a.hello(srv.Token())
	turn := func(sid, text string, n int) {
		t.Helper()
		a.must("session.prompt", PromptParams{SessionID: sid, Text: text}, nil)
		a.waitFor("turn.done", 60*time.Second, func() bool { return hasKind(a.events[sid], "turn.done", n) })
	}
	create := func(method string, params any) string {
		t.Helper()
		var cr CreateResult
		a.must(method, params, &cr)
		zero := int64(0)
		a.must("session.subscribe", SubscribeParams{SessionID: cr.SessionID, AfterSeq: &zero}, nil)
		return cr.SessionID
	}
	src := create("session.create", CreateParams{Workdir: wd})
	turn(src, "SAY remember-kiwi", 1)
	fork := create("session.fork", ForkParams{SessionID: src})
	turn(fork, "SAY in-the-fork", 1)
	turn(src, "SAY back-in-the-source", 2)

	info := map[string]SessionInfo{}
	var lr ListResult
	a.must("session.list", ListParams{}, &lr)
	for _, s := range lr.Sessions {
		info[s.SessionID] = s
	}
	if info[fork].Title != "SAY remember-kiwi (fork)" || info[fork].Workdir != wd {
		t.Errorf("the fork: %+v", info[fork])
	}
	home := ""
	for _, kv := range srv.opts.Env {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = v
		}
	}
	transcript := func(id string) string {
		t.Helper()
		if id == "" {
			t.Fatal("no agentSessionId")
		}
		m, _ := filepath.Glob(filepath.Join(home, ".claude", "projects", "*", id+".jsonl"))
		if len(m) != 1 {
			t.Fatalf("transcript of %s: %v", id, m)
		}
		b, err := os.ReadFile(m[0])
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	sa, fa := info[src].AgentSessionID, info[fork].AgentSessionID
	if sa == fa {
		t.Fatalf("the fork has the source's claude session %s", sa)
	}
	ft, st := transcript(fa), transcript(sa)
	if !strings.Contains(ft, "remember-kiwi") || !strings.Contains(ft, "in-the-fork") {
		t.Error("the fork's transcript lacks the source's turn or its own")
	}
	if strings.Contains(st, "in-the-fork") || !strings.Contains(st, "back-in-the-source") {
		t.Error("the source's transcript has the fork's turn, or lacks its own")
	}

	// A fork at the source's first answer has the first turn only.
	var first string
	for _, e := range eventsOf(a, src) {
		var p struct {
			Line struct {
				Type string `json:"type"`
				UUID string `json:"uuid"`
			} `json:"line"`
		}
		if e.Kind == "agent.line" && json.Unmarshal(e.Payload, &p) == nil && p.Line.Type == "assistant" && first == "" {
			first = p.Line.UUID
		}
	}
	// atMessage becomes claude's argument: only a message uuid is taken.
	for _, bad := range []string{"--dangerously-skip-permissions", "x --permission-mode=bypassPermissions", first + " "} {
		if err := a.call("session.fork", ForkParams{SessionID: src, AtMessage: bad}, nil); err == nil || !strings.Contains(err.Error(), "atMessage") {
			t.Errorf("session.fork with atMessage %q: %v, want an invalid-params error", bad, err)
		}
	}
	at := create("session.fork", ForkParams{SessionID: src, AtMessage: first})
	turn(at, "SAY at-the-first", 1)
	a.must("session.list", ListParams{}, &lr)
	for _, s := range lr.Sessions {
		if s.SessionID == at {
			tr := transcript(s.AgentSessionID)
			if !strings.Contains(tr, "remember-kiwi") || strings.Contains(tr, "back-in-the-source") || !strings.Contains(tr, "at-the-first") {
				t.Errorf("the fork at %s does not hold the first turn only", first)
			}
		}
	}

	// An ended session forks from its recording's init.
	a.must("session.close", SessionRef{SessionID: src}, nil)
	a.waitFor("source ended", 60*time.Second, func() bool { return hasKind(a.events[src], "session.ended", 1) })
	again := create("session.fork", ForkParams{SessionID: src, Title: "second fork"})
	turn(again, "SAY from-the-ended", 1)
	a.must("session.list", ListParams{}, &lr)
	for _, s := range lr.Sessions {
		if s.SessionID == again {
			if s.Title != "second fork" || !strings.Contains(transcript(s.AgentSessionID), "back-in-the-source") {
				t.Errorf("the fork of the ended session: %+v", s)
			}
		}
	}
}
