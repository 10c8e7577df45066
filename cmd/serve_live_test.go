package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentjq/agentjq/daemon"
	"github.com/agentjq/agentjq/hooks"
	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/internal/testkit/apistub"
	"github.com/agentjq/agentjq/internal/testkit/livetest"
	"github.com/agentjq/agentjq/iostreams"
	"github.com/agentjq/agentjq/jsonrpc"
	"github.com/agentjq/agentjq/recording"
)

// serveLiveRead runs serveLive with the model reading the planted .env
// inside the workdir (a call claude runs without asking); no client is
// asked anything.
func serveLiveRead(t *testing.T, policy string) (*apistub.Server, []byte) {
	t.Helper()
	api, _, rec := serveLive(t, policy, toolCall("Read", map[string]any{"file_path": "{{cwd}}/.env"}), nil)
	return api, rec
}

// serveLive runs `agentjq serve --stdio` with the real claude, creates a
// session under policy ("" : none) in a workdir with a planted .env, and runs one turn
// of prompt, answering each approval.request with answer (nil: none may
// come). It returns the stub API, the workdir and the session's recording.
func serveLive(t *testing.T, policy, prompt string, answer func(daemon.ApprovalInfo) daemon.Decision) (*apistub.Server, string, []byte) {
	t.Helper()
	bin := livetest.Claude(t)
	api := apistub.Start(t)
	dir := livetest.Workdir(t)
	plantEnv(dir)
	var policies []string
	if policy != "" {
		policies = []string{writePolicy(t, "rules.json", policy)}
	}

	ios, _, _, errb := iostreams.Test()
	ios.Environ = livetest.Env(t, api.URL())
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ios.In, ios.Out = inR, outW
	served := make(chan int, 1)
	go func() {
		served <- Main([]string{"serve", "--stdio", "--home", t.TempDir(), "--bin", bin}, ios)
		outW.Close()
	}()

	events := make(chan daemon.Event, 256)
	conn := jsonrpc.NewConn(jsonrpc.NewLineStream(outR, inW, inW), jsonrpc.Options{Logf: t.Logf,
		Handler: func(_ context.Context, req *jsonrpc.Request) (any, error) {
			if req.Method == "session.event" {
				var ev daemon.Event
				if json.Unmarshal(req.Params, &ev) == nil {
					events <- ev
				}
				return nil, nil
			}
			if req.Method == "approval.request" && answer != nil {
				var info daemon.ApprovalInfo
				if err := json.Unmarshal(req.Params, &info); err != nil {
					return nil, err
				}
				return answer(info), nil
			}
			if req.IsNotification() {
				return nil, nil
			}
			t.Errorf("unexpected %s from the daemon: %s", req.Method, req.Params)
			return daemon.Decision{Decision: protocol.Deny}, nil
		}})
	go conn.Run(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	call := func(method string, params, result any) {
		t.Helper()
		if err := conn.Call(ctx, method, params, result); err != nil {
			t.Fatalf("%s: %v\nserve's stderr:\n%s", method, err, errb)
		}
	}
	var cr daemon.CreateResult
	call("session.create", daemon.CreateParams{Workdir: dir, Policy: policies}, &cr)
	call("session.subscribe", daemon.SubscribeParams{SessionID: cr.SessionID}, nil)
	call("session.prompt", daemon.PromptParams{SessionID: cr.SessionID, Text: prompt}, nil)
	for done := false; !done; {
		select {
		case ev := <-events:
			done = ev.Kind == "turn.done"
		case <-ctx.Done():
			t.Fatalf("no turn.done\nserve's stderr:\n%s", errb)
		}
	}
	call("session.close", daemon.SessionRef{SessionID: cr.SessionID}, nil)
	call("system.shutdown", nil, nil)
	conn.Close()
	inW.Close()
	select {
	case code := <-served:
		if code != 0 {
			t.Errorf("serve exit %d: %s", code, errb)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not end")
	}
	rec, err := os.ReadFile(cr.Recording)
	if err != nil || filepath.Dir(cr.Recording) == "" {
		t.Fatalf("recording %q: %v", cr.Recording, err)
	}
	return api, dir, rec
}

// A daemon session is built like spawn's: agentjq's PreToolUse guard is in
// its initialize, so a deny rule holds for a Read claude runs without a
// permission request, and the model never sees the secret.
func TestLiveServeDaemonGuardBlocksReadOfDeniedEnv(t *testing.T) {
	// Not parallel: its last part turns screenEveryCall off.
	api, rec := serveLiveRead(t, `{"deny":["Read(.env)"]}`)
	r := liveRun{api: api}
	if r.modelSaw(planted) {
		t.Errorf("the model read the planted secret: %+v", api.ToolResults())
	}
	if !r.modelSaw("denied by policy rule Read(.env)") {
		t.Errorf("the model was not told why: %+v", api.ToolResults())
	}
	lines := strings.Split(strings.TrimSpace(string(rec)), "\n")
	h, err := recording.ParseHeader([]byte(lines[0]))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(h.Argv, "--setting-sources") {
		t.Errorf("argv %q: no --setting-sources (not spawn's builder)", h.Argv)
	}
	var decisions []protocol.Decision
	for _, l := range lines[1:] {
		e, err := recording.ParseEntry([]byte(l))
		if err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		var d protocol.Decision
		if e.Dir == protocol.DirEvent && json.Unmarshal(e.Msg, &d) == nil && d.Subtype == "decision" {
			decisions = append(decisions, d)
		}
	}
	if len(decisions) != 1 || decisions[0].Via != protocol.ViaHook || decisions[0].Behavior != protocol.Deny ||
		decisions[0].Tool != "Read" || !strings.HasSuffix(decisions[0].Rule, " Read(.env)") {
		t.Errorf("decisions %+v", decisions)
	}

	if !bytes.Contains(rec, []byte(hooks.GuardID)) {
		t.Error("the session's initialize registers no guard")
	}
	// Without the guard the same session reads .env unasked. (What this
	// test would catch.)
	t.Run("without the guard", func(t *testing.T) {
		screenEveryCall = false
		defer func() { screenEveryCall = true }()
		api, _ := serveLiveRead(t, `{"deny":["Read(.env)"]}`)
		if !(liveRun{api: api}).modelSaw(planted) {
			t.Skipf("the CLI no longer reads .env without asking (%+v)", api.ToolResults())
		}
	})
}

// Under spawn's builder the clients are still the last asker: a call the
// policy leaves to "ask" comes to the client (after the guard passed it
// on: the trace starts at the hook), and the client's allow runs it.
func TestLiveServeDaemonClientsAnswerWhatThePolicyAsks(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var asked []daemon.ApprovalInfo
	allow := func(info daemon.ApprovalInfo) daemon.Decision {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, info)
		return daemon.Decision{Decision: protocol.Allow}
	}
	_, dir, _ := serveLive(t, `{"allow":["Read"],"deny":["Read(.env)"],"default":"ask"}`, bashCall("touch asked.txt"), allow)
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 1 || asked[0].Tool != "Bash" || !slices.ContainsFunc(asked[0].Trace, func(s string) bool { return strings.HasPrefix(s, "hook: ") }) {
		t.Errorf("approvals asked %+v", asked)
	}
	if _, err := os.Stat(filepath.Join(dir, "asked.txt")); err != nil {
		t.Errorf("the allowed call did not run: %v", err)
	}
}

// A daemon session with no policy has no guard, as claude has none: its
// clients are asked what claude asks and nothing more (a Read inside the
// workdir runs unasked; serveLive fails on any approval.request), and
// its initialize registers no hook of agentjq's. A policy (session's,
// serve --policy, --allowlist) puts the guard before every call (the test
// above). No client can make a deny rule the missing guard would have to
// hold: approval.respond takes a deny only as "once" (daemon's tests).
func TestLiveServeNoPolicyNoGuard(t *testing.T) {
	t.Parallel()
	api, _, rec := serveLive(t, "", toolCall("Read", map[string]any{"file_path": "{{cwd}}/.env"}), nil)
	if !(liveRun{api: api}).modelSaw(planted) {
		t.Errorf("the Read claude runs unasked did not run: %+v", api.ToolResults())
	}
	if bytes.Contains(rec, []byte(hooks.GuardID)) {
		t.Error("a session with no policy registered agentjq's guard")
	}
}
