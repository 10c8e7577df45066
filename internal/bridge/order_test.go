package bridge

import (
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentjq/agentjq/approve"
	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/internal/testkit/livetest"
)

// orderDecider records the order it is asked in and holds each decision a
// while, so that a second request arriving meanwhile would overtake a
// decider that was asked concurrently.
type orderDecider struct {
	mu      sync.Mutex
	order   []string
	busy    bool
	overlap bool
}

func (d *orderDecider) Decide(ctx context.Context, req *approve.Request) (approve.Verdict, error) {
	d.mu.Lock()
	d.order = append(d.order, req.RequestID)
	if d.busy {
		d.overlap = true
	}
	d.busy = true
	d.mu.Unlock()
	time.Sleep(30 * time.Millisecond)
	d.mu.Lock()
	d.busy = false
	d.mu.Unlock()
	return approve.Verdict{Behavior: protocol.Deny, Message: "no", Source: protocol.ByApprover}, nil
}

// TestPermissionRequestsInArrivalOrder: the agent asks three permissions
// at once; the decider is asked one at a time, in the order they came,
// and each gets its one answer.
func TestPermissionRequestsInArrivalOrder(t *testing.T) {
	livetest.SkipShort(t, "runs a shell as the agent")
	var reqs strings.Builder
	for _, id := range []string{"p1", "p2", "p3"} {
		reqs.WriteString(`{"type":"control_request","request_id":"` + id + `","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"rm x"},"tool_use_id":"t` + id + `"}}\n`)
	}
	// Ask all three, wait for three answers, then end the turn.
	agent := `read -r turn; printf '` + strings.ReplaceAll(reqs.String(), "\n", `\n`) + `'; ` +
		`for i in 1 2 3; do read -r a; done; ` +
		`echo '{"type":"result","subtype":"success","is_error":false,"num_turns":1}'; cat >/dev/null`
	d := &orderDecider{}
	var out strings.Builder
	var mu sync.Mutex
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rep, err := Run(ctx, Options{
		Profile: Profiles["claude"], Path: "/bin/sh", Args: []string{"-c", agent},
		Prompt: "go", HasPrompt: true, Approver: d,
		Stdout: writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return out.Write(p) }),
		Stderr: io.Discard, Grace: time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.ExitCode != protocol.ExitDenied {
		t.Errorf("exit %d (%s)", rep.ExitCode, rep.Outcome)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if strings.Join(d.order, " ") != "p1 p2 p3" || d.overlap {
		t.Errorf("asked %v (overlapping: %v), want p1 p2 p3 one at a time", d.order, d.overlap)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
