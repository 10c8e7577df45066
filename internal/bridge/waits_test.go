package bridge

import (
	"strings"
	"testing"
	"time"

	"github.com/agentjq/agentjq/internal/protocol"
)

// An agent that never answers agentjq's initialize, in -p mode where the
// turn's result does come: the session does not wait out the control
// timeout (here far longer than the test's own bound) once the agent has
// finished the turn sent after the request. It warns and succeeds.
func TestInitUnansweredAfterResult(t *testing.T) {
	r := runFake(t, "no-init", "", func(o *Options) {
		o.Init = map[string]string{"subtype": "initialize"}
		o.ControlTimeout = time.Hour
		o.Prompt, o.HasPrompt, o.Stdin = "hello", true, nil
	})
	if r.rep.Outcome != protocol.OutcomeSuccess || r.rep.ExitCode != 0 {
		t.Fatalf("outcome %s (exit %d), want success\nstdout:\n%s", r.rep.Outcome, r.rep.ExitCode, r.stdout)
	}
	var warned bool
	for _, w := range events(t, r.stdout, "warning") {
		msg, _ := w["message"].(string)
		warned = warned || w["code"] == protocol.WarnUnanswered && strings.Contains(msg, "did not answer agentjq's init request")
	}
	if !warned {
		t.Errorf("no warning about the unanswered initialize:\n%s", r.stdout)
	}
}
