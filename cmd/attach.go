package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/agentjq/agentjq/approve"
	"github.com/agentjq/agentjq/daemon"
	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/iostreams"
	"github.com/agentjq/agentjq/jsonrpc"
)

// AttachCmd is the attach subcommand: a session's agent lines as NDJSON.
type AttachCmd struct {
	Home           string   `placeholder:"DIR" help:"The daemon's home (default as serve)."`
	Session        string   `arg:"" help:"The session id."`
	AfterSeq       int64    `placeholder:"N" help:"Start after event seq N (0: from the start)."`
	Live           bool     `help:"Start at the live end instead of the start."`
	Policy         []string `placeholder:"FILE" help:"Answer the session's approvals with these policies (as spawn)."`
	Approver       string   `placeholder:"CMD" help:"Answer approvals with an approver command (as spawn)."`
	ApproverFormat string   `enum:"control,hook" default:"control" help:"How the approver speaks."`
	Prompt         bool     `help:"Answer approvals on the terminal."`
}

// Run prints each agent.line event's line, resumably (--after-seq), and
// ends with the session; approvals are answered only when asked to.
//
// Answering, attach is spawn's chain at the end of the session's own: it
// gets what the session's policies left undecided and answers every one
// (its policies, its approver, the terminal, then the fail-closed deny),
// judged as spawn would judge it: relative rules anchored at the
// session's workdir (not attach's directory), the Bash tool's directory
// followed from every Bash call of the session, which is why an
// answering attach reads the event log from the start whatever it prints.
func (c *AttachCmd) Run(ctx context.Context, ios *iostreams.IO) error {
	home, err := daemonHome(ios, c.Home)
	if err != nil {
		return err
	}
	answering := len(c.Policy) > 0 || c.Approver != "" || c.Prompt
	at := &attachRun{c: c, ios: ios, answering: answering, lastSeq: -1, finish: make(chan struct{}),
		printAbv: c.AfterSeq, ready: make(chan struct{})}
	conn, err := daemon.Dial(ctx, home, "agentjq attach", at.handle)
	if err != nil {
		return err
	}
	defer conn.Close()
	p := daemon.SubscribeParams{SessionID: c.Session}
	if answering {
		var list daemon.ListResult
		if err := conn.Call(ctx, "session.list", nil, &list); err != nil {
			return err
		}
		found := false
		for _, s := range list.Sessions {
			if s.SessionID == c.Session {
				at.sess, at.mode, found = s, s.Mode, true
			}
		}
		if !found {
			return fmt.Errorf("no session %q on the daemon of %s", c.Session, home)
		}
		chain, err := approvalChain(ios, SpawnFlags{Policy: c.Policy, Approver: c.Approver, ApproverFormat: c.ApproverFormat, NoPrompt: !c.Prompt},
			at.sess.Workdir, nil, nil, nil)
		if err != nil {
			return err
		}
		defer chain.Close()
		at.chain = chain
		if c.Live {
			at.printAbv = at.sess.LastSeq
		}
		zero := int64(0)
		p.AfterSeq = &zero
	} else if !c.Live {
		after := c.AfterSeq
		p.AfterSeq = &after
	}
	close(at.ready)
	var res daemon.SubscribeResult
	if err := conn.Call(ctx, "session.subscribe", p, &res); err != nil {
		return err
	}
	at.mu.Lock()
	if res.Ended {
		at.ended, at.lastSeq = true, res.LastSeq
		if p.AfterSeq == nil || *p.AfterSeq >= res.LastSeq {
			// Nothing is replayed (--live starts at the last seq).
			at.seen = max(at.seen, res.LastSeq)
		}
	}
	at.check()
	at.mu.Unlock()
	select {
	case <-at.finish:
	case <-conn.Done():
		return fmt.Errorf("the daemon closed the connection: %v", conn.Err())
	case <-ctx.Done():
	}
	return nil
}

// attachRun is the state of one attach: what the handler of the daemon's
// calls shares with Run.
type attachRun struct {
	c         *AttachCmd
	ios       *iostreams.IO
	answering bool
	mu        sync.Mutex
	lastSeq   int64
	ended     bool
	seen      int64
	finish    chan struct{}
	once      sync.Once
	printAbv  int64 // agent lines after this seq are printed
	chain     *approve.Chain
	ready     chan struct{} // chain and session facts are set
	sess      daemon.SessionInfo
	mode      string
}

// check ends the attach once the session ended and every event was seen
// (mu held).
func (a *attachRun) check() {
	if a.ended && a.lastSeq >= 0 && a.seen >= a.lastSeq {
		a.once.Do(func() { close(a.finish) })
	}
}

func (a *attachRun) handle(ctx context.Context, req *jsonrpc.Request) (any, error) {
	select {
	case <-a.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	switch req.Method {
	case "session.event":
		a.event(req)
	case "approval.request":
		return a.approval(ctx, req)
	}
	return nil, nil
}

func (a *attachRun) event(req *jsonrpc.Request) {
	var ev daemon.Event
	if json.Unmarshal(req.Params, &ev) != nil || ev.SessionID != a.c.Session {
		return
	}
	switch ev.Kind {
	case "agent.line":
		var p daemon.AgentLinePayload
		if ev.Seq > a.printAbv && json.Unmarshal(ev.Payload, &p) == nil {
			fmt.Fprintf(a.ios.Out, "%s\n", p.Line)
		}
	case "tool.call":
		var p daemon.ToolCallPayload
		if a.chain != nil && json.Unmarshal(ev.Payload, &p) == nil && p.Name == "Bash" {
			// claude runs some Bash calls (cd) without asking: the
			// shell may be elsewhere when the next one asks.
			a.chain.ObserveBash(a.sess.Workdir, p.ToolUseID, p.Input)
		}
	case "mode.changed":
		var p daemon.ModeChangedPayload
		if json.Unmarshal(ev.Payload, &p) == nil {
			a.mu.Lock()
			a.mode = p.Mode
			a.mu.Unlock()
		}
	}
	a.mu.Lock()
	a.seen = ev.Seq
	if ev.Kind == "session.ended" {
		a.ended, a.lastSeq = true, ev.Seq
	}
	a.check()
	a.mu.Unlock()
}

func (a *attachRun) approval(ctx context.Context, req *jsonrpc.Request) (any, error) {
	if !a.answering {
		return nil, &jsonrpc.Error{Code: -32000, Message: "attach answers no approvals (use --policy, --approver or --prompt)"}
	}
	var in daemon.ApprovalInfo
	if err := json.Unmarshal(req.Params, &in); err != nil {
		return nil, err
	}
	return jsonrpc.Async(func() (any, error) {
		cwd := in.Cwd
		if cwd == "" {
			cwd = a.sess.Workdir
		}
		a.mu.Lock()
		r := &approve.Request{RequestID: in.RequestID, Cwd: cwd, SessionID: a.sess.AgentSessionID, PermissionMode: a.mode,
			CanUseTool: protocol.CanUseTool{Subtype: protocol.SubCanUseTool, ToolName: in.Tool, Input: in.Input,
				ToolUseID: in.ToolUseID, PermissionSuggestions: in.Suggestions}}
		a.mu.Unlock()
		v, _ := a.chain.Decide(ctx, r)
		if v.Behavior != protocol.Allow && v.Behavior != protocol.Deny {
			return nil, &jsonrpc.Error{Code: -32000, Message: "no decision"}
		}
		return daemon.Decision{Decision: v.Behavior, Scope: "once", Message: v.Message, UpdatedInput: v.UpdatedInput}, nil
	}), nil
}
