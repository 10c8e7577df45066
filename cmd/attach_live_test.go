package cmd

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentjq/agentjq/daemon"
	"github.com/agentjq/agentjq/internal/testkit/apistub"
	"github.com/agentjq/agentjq/internal/testkit/livetest"
	"github.com/agentjq/agentjq/iostreams"
	"github.com/agentjq/agentjq/jsonrpc"
)

// liveDaemon runs `agentjq serve` (Unix socket only) with the real claude
// against the scripted API; it returns the daemon's environment (for
// call and attach) and stops the daemon at the end of the test.
func liveDaemon(t *testing.T, args ...string) (*apistub.Server, []string) {
	t.Helper()
	bin := livetest.Claude(t)
	api := apistub.Start(t)
	home := filepath.Join(t.TempDir(), "h")
	env := append(livetest.Env(t, api.URL()), "AGENTJQ_HOME="+home)
	ios, _, _, errb := iostreams.Test()
	ios.Environ = env
	served := make(chan int, 1)
	go func() { served <- Main(append([]string{"serve", "--listen", "", "--bin", bin}, args...), ios) }()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(home, "daemon.json")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no daemon.json; serve's stderr:\n%s", errb)
		}
	}
	t.Cleanup(func() {
		c, err := daemon.Dial(context.Background(), home, "cleanup", nil)
		if err == nil {
			c.Call(context.Background(), "system.shutdown", nil, nil)
			c.Close()
		}
		select {
		case code := <-served:
			if code != 0 {
				t.Errorf("serve exit %d: %s", code, errb)
			}
		case <-time.After(30 * time.Second):
			t.Error("serve did not end")
		}
	})
	return api, env
}

// watcher is a client that never answers approvals: it keeps the
// approval notifications every client gets.
type watcher struct {
	conn     *jsonrpc.Conn
	mu       sync.Mutex
	pending  []daemon.ApprovalInfo
	resolved []daemon.ResolvedParams
	events   []daemon.Event
}

func watch(t *testing.T, env []string) *watcher {
	t.Helper()
	w := &watcher{}
	home := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "AGENTJQ_HOME="); ok {
			home = v
		}
	}
	conn, err := daemon.Dial(context.Background(), home, "watcher", func(_ context.Context, req *jsonrpc.Request) (any, error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		switch req.Method {
		case "approval.pending":
			var a daemon.ApprovalInfo
			json.Unmarshal(req.Params, &a)
			w.pending = append(w.pending, a)
		case "approval.resolved":
			var r daemon.ResolvedParams
			json.Unmarshal(req.Params, &r)
			w.resolved = append(w.resolved, r)
		case "session.event":
			var e daemon.Event
			json.Unmarshal(req.Params, &e)
			w.events = append(w.events, e)
		}
		return nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	w.conn = conn
	return w
}

func (w *watcher) waitFor(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(d); ; time.Sleep(20 * time.Millisecond) {
		w.mu.Lock()
		ok := cond()
		w.mu.Unlock()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// attach --policy answers a session's approvals with spawn's chain: a
// daemon session with no policy of its own leaves two calls to its
// clients; they are pending (no client is attached yet) until attach
// starts, gets them again on subscribing, and answers them from its
// policy, relative rules anchored at the session's workdir (not attach's
// directory): the allowed touch runs, the denied rm does not, and
// approval.resolved names attach as who.
func TestLiveAttachAnswersApprovals(t *testing.T) {
	_, env := liveDaemon(t)
	w := watch(t, env)
	wd := livetest.Workdir(t)
	keep := filepath.Join(wd, "keep.txt")
	os.WriteFile(keep, []byte("keep\n"), 0o644)
	// ./** is the session's workdir; from attach's directory (the
	// workdir's parent) it would cover outside.txt too.
	outside := filepath.Join(filepath.Dir(wd), "outside.txt")
	policy := writePolicy(t, "attach.json", `{"allow":["Bash(touch:*)","Edit(./**)"],"deny":["Bash(rm:*)"]}`)

	var cr daemon.CreateResult
	if err := w.conn.Call(context.Background(), "session.create", daemon.CreateParams{Workdir: wd}, &cr); err != nil {
		t.Fatal(err)
	}
	prompt := toolLines(bashCall("touch ./made.txt"), bashCall("touch "+outside), bashCall("rm -f "+keep)) + "\nSAY attached"
	if err := w.conn.Call(context.Background(), "session.prompt", daemon.PromptParams{SessionID: cr.SessionID, Text: prompt}, nil); err != nil {
		t.Fatal(err)
	}
	w.waitFor(t, "the first approval.pending", 60*time.Second, func() bool { return len(w.pending) > 0 })

	ios, _, out, errb := iostreams.Test()
	ios.Environ = env
	ios.Dir = filepath.Dir(wd)
	attached := make(chan int, 1)
	go func() { attached <- Main([]string{"attach", cr.SessionID, "--policy", policy}, ios) }()
	w.waitFor(t, "three approvals resolved", 60*time.Second, func() bool { return len(w.resolved) >= 3 })
	if err := w.conn.Call(context.Background(), "session.close", daemon.SessionRef{SessionID: cr.SessionID}, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-attached:
		if code != 0 {
			t.Fatalf("attach exit %d: %s", code, errb)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("attach did not end with the session")
	}

	w.mu.Lock()
	defer w.mu.Unlock()
	want := []string{"allow", "deny", "deny"}
	for i, r := range w.resolved {
		if i >= len(want) || r.Decision != want[i] || !strings.Contains(r.Who, "agentjq attach") {
			t.Errorf("approval.resolved %d: %+v, want %s by agentjq attach", i, r, want[i])
		}
	}
	if _, err := os.Stat(filepath.Join(wd, "made.txt")); err != nil {
		t.Errorf("the allowed touch did not run: %v", err)
	}
	if _, err := os.Stat(outside); err == nil {
		t.Errorf("touch %s ran: the rule was anchored at attach's directory", outside)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("the denied rm ran: %v", err)
	}
	if !strings.Contains(out.String(), `"result":"attached`) {
		t.Errorf("attach did not print the session's lines: %.300s", out)
	}
}
