package approve

import (
	"context"
	"testing"

	"github.com/agentjq/agentjq/internal/protocol"
)

// denyingPerson holds "always reject" rules by exact Bash command.
type denyingPerson struct {
	denied map[string]bool
	asked  int
}

func (p *denyingPerson) Decide(context.Context, *Request) (Verdict, error) {
	p.asked++
	return Verdict{Behavior: protocol.Allow, Source: protocol.ByTTY, Rule: "editor"}, nil
}

func (p *denyingPerson) SessionDenies(req *Request) (Verdict, bool) {
	if !p.denied[commandOf(req)] {
		return Verdict{}, false
	}
	return Verdict{Source: protocol.ByTTY, Rule: "editor: deny always"}, true
}

// TestSessionDenyScreensEveryCall: a person's session deny rule is
// enforced when the call is screened (the agent would run it unasked) and
// when it is asked about, before any policy, even one that allows it; a
// chain with such a person and no policy screens every call but passes on
// what no rule denies, so the person is asked only what the agent asks.
func TestSessionDenyScreensEveryCall(t *testing.T) {
	person := &denyingPerson{denied: map[string]bool{"touch x": true}}
	bare, err := NewChain(ChainOptions{Cwd: "/p", Person: person})
	if err != nil {
		t.Fatal(err)
	}
	defer bare.Close()
	withPolicy := screenChain(t, `{"allow":["Bash(touch:*)"],"default":"ask"}`, ChainOptions{Cwd: "/p", Person: person})
	plainPerson, err := NewChain(ChainOptions{Cwd: "/p", Person: DeciderFunc(person.Decide)})
	if err != nil {
		t.Fatal(err)
	}
	defer plainPerson.Close()

	if !bare.Guards() || !bare.PassesUndecided() {
		t.Errorf("no policy, a denying person: Guards %v PassesUndecided %v, want both", bare.Guards(), bare.PassesUndecided())
	}
	if !withPolicy.Guards() || withPolicy.PassesUndecided() {
		t.Errorf("a policy: Guards %v PassesUndecided %v, want guards, undecided asks", withPolicy.Guards(), withPolicy.PassesUndecided())
	}
	if plainPerson.Guards() {
		t.Errorf("a person without session deny rules and no policy: Guards, want no screening")
	}
	for _, c := range []*Chain{bare, withPolicy} {
		if v := c.Screen(context.Background(), bashReq("touch x")); v.Behavior != protocol.Deny || v.Message == "" {
			t.Errorf("Screen of a call rejected always: %+v, want a deny with a message", v)
		}
		person.asked = 0
		if v, _ := c.Decide(context.Background(), bashReq("touch x")); v.Behavior != protocol.Deny || person.asked != 0 {
			t.Errorf("Decide of a call rejected always: %s (asked %d), want deny unasked", v.Behavior, person.asked)
		}
	}
	if v := bare.Screen(context.Background(), bashReq("touch y")); v.Behavior == protocol.Deny {
		t.Errorf("Screen of another command: %+v, want it passed on", v)
	}
	if v, _ := withPolicy.Decide(context.Background(), bashReq("touch y")); v.Behavior != protocol.Allow {
		t.Errorf("the policy's allow of another command: %s", v.Behavior)
	}
}
