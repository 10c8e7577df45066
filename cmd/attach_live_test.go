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
	conn, err := daemon.Dial(context.Background(), home, "watcher", func(ctx context.Context, req *jsonrpc.Request) (any, error) {
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
		case "approval.request":
			return jsonrpc.Async(func() (any, error) { <-ctx.Done(); return nil, ctx.Err() }), nil
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

// startAttach runs `agentjq attach` in dir; wait waits for it to end
// (with the session) and returns its stdout.
func startAttach(t *testing.T, env []string, dir string, args ...string) (wait func() string) {
	t.Helper()
	ios, _, out, errb := iostreams.Test()
	ios.Environ = env
	if dir != "" {
		ios.Dir = dir
	}
	attached := make(chan int, 1)
	go func() { attached <- Main(append([]string{"attach"}, args...), ios) }()
	return func() string {
		t.Helper()
		select {
		case code := <-attached:
			if code != 0 {
				t.Fatalf("attach exit %d: %s", code, errb)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("attach did not end with the session")
		}
		return out.String()
	}
}

// attach --policy answers a session's approvals with spawn's chain: a
// daemon session with no policy of its own leaves its calls to its
// clients; they are pending (no client answers yet) until attach starts,
// gets them again on subscribing, and answers them from its policy as
// spawn would. The allowed touch runs; the touch outside, the rm and the
// touch after the cd are denied (no rule allows them: what a Bash command
// writes is the sandbox's, so the policy names the one touch it allows);
// approval.resolved names attach.
func TestLiveAttachAnswersApprovals(t *testing.T) {
	t.Parallel()
	_, env := liveDaemon(t)
	w := watch(t, env)
	wd := livetest.Workdir(t)
	parent := filepath.Dir(wd)
	keep := filepath.Join(wd, "keep.txt")
	os.WriteFile(keep, []byte("keep\n"), 0o644)
	outside := filepath.Join(parent, "outside.txt")
	policy := writePolicy(t, "attach.json", `{"allow":["Bash(touch ./made.txt)","Edit(./**)"],"deny":["Bash(rm:*)"]}`)

	var cr daemon.CreateResult
	ctx := context.Background()
	if err := w.conn.Call(ctx, "session.create", daemon.CreateParams{Workdir: wd}, &cr); err != nil {
		t.Fatal(err)
	}
	if err := w.conn.Call(ctx, "session.subscribe", daemon.SubscribeParams{SessionID: cr.SessionID, Kinds: []string{"turn.done", "tool.call"}}, nil); err != nil {
		t.Fatal(err)
	}
	prompt := toolLines(bashCall("touch ./made.txt"), bashCall("touch "+outside), bashCall("rm -f "+keep),
		bashCall("cd "+parent), bashCall("touch ./after-cd.txt")) + "\nSAY attached"
	if err := w.conn.Call(ctx, "session.prompt", daemon.PromptParams{SessionID: cr.SessionID, Text: prompt}, nil); err != nil {
		t.Fatal(err)
	}
	w.waitFor(t, "the first approval.pending", 60*time.Second, func() bool { return len(w.pending) > 0 })

	wait := startAttach(t, env, parent, cr.SessionID, "--policy", policy)
	w.waitFor(t, "turn.done", 60*time.Second, func() bool {
		for _, e := range w.events {
			if e.Kind == "turn.done" {
				return true
			}
		}
		return false
	})
	if err := w.conn.Call(ctx, "session.close", daemon.SessionRef{SessionID: cr.SessionID}, nil); err != nil {
		t.Fatal(err)
	}
	out := wait()

	w.mu.Lock()
	defer w.mu.Unlock()
	calls := 0
	for _, e := range w.events {
		if e.Kind == "tool.call" {
			calls++
		}
	}
	if calls != 5 {
		t.Fatalf("%d tool calls, want 5", calls)
	}
	key := map[string]string{}
	for _, a := range w.pending {
		key[a.ID] = a.KeyInput
		if a.Cwd != wd || a.ToolUseID == "" {
			t.Errorf("approval %s: cwd %q, toolUseId %q (want the workdir and the call's id)", a.ID, a.Cwd, a.ToolUseID)
		}
	}
	decided := map[string]string{}
	for _, r := range w.resolved {
		if !strings.Contains(r.Who, "agentjq attach") {
			t.Errorf("approval.resolved %+v: not by agentjq attach", r)
		}
		decided[key[r.ID]] = r.Decision
	}
	t.Logf("decisions: %v", decided)
	for cmd, want := range map[string]string{"touch ./made.txt": "allow", "touch " + outside: "deny", "rm -f " + keep: "deny", "touch ./after-cd.txt": "deny"} {
		if decided[cmd] != want {
			t.Errorf("%s: %q, want %s", cmd, decided[cmd], want)
		}
	}
	if _, err := os.Stat(filepath.Join(wd, "made.txt")); err != nil {
		t.Errorf("the allowed touch did not run: %v", err)
	}
	for _, f := range []string{outside, filepath.Join(parent, "after-cd.txt"), filepath.Join(wd, "after-cd.txt")} {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("%s was made: a denied call ran", f)
		}
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("the denied rm ran: %v", err)
	}
	if !strings.Contains(out, `"result":"attached`) {
		t.Errorf("attach did not print the session's lines: %.300s", out)
	}
}
