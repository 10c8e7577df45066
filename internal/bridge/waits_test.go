package bridge

import (
	"context"
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

// The time an answer takes is not the agent's silence: once the request
// is answered, the idle clock starts again from the answer, however long
// before it the idle check last looked (its tick is up to a second).
func TestIdleClockRestartsAtTheAnswer(t *testing.T) {
	s := &session{turns: turnBook{queuedHint: -1},
		ctl: controls{pending: map[string]context.CancelFunc{}, withdraw: map[string]context.CancelFunc{}, ours: map[string]*time.Timer{"init": nil}}}
	s.ctl.s = s
	s.lastOutput = time.Now().Add(-time.Hour) // the agent asked, then was quiet
	s.ctl.pending["ask"] = func() {}
	if d := s.idleFor(); d != 0 {
		t.Fatalf("idle %v while a request is being answered, want 0", d)
	}
	s.owedSince = time.Now().Add(-time.Hour) // the idle check last looked long ago
	s.ctl.answered("ask")
	if d := s.idleFor(); d > time.Minute {
		t.Errorf("idle %v right after the answer: the answer's time counted as the agent's silence", d)
	}
}
