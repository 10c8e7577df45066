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
	var (
		mu       sync.Mutex
		lastSeq  int64 = -1
		ended    bool
		seen     int64
		finish   = make(chan struct{})
		once     sync.Once
		printAbv = c.AfterSeq // agent lines after this seq are printed
		chain    *approve.Chain
		ready    = make(chan struct{}) // chain and session facts are set
		sess     daemon.SessionInfo
		mode     string
	)
	check := func() {
		if ended && lastSeq >= 0 && seen >= lastSeq {
			once.Do(func() { close(finish) })
		}
	}
	handler := func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		select {
		case <-ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		switch req.Method {
		case "session.event":
			var ev daemon.Event
			if json.Unmarshal(req.Params, &ev) != nil || ev.SessionID != c.Session {
				return nil, nil
			}
			switch ev.Kind {
			case "agent.line":
				var p daemon.AgentLinePayload
				if ev.Seq > printAbv && json.Unmarshal(ev.Payload, &p) == nil {
					fmt.Fprintf(ios.Out, "%s\n", p.Line)
				}
			case "tool.call":
				var p daemon.ToolCallPayload
				if chain != nil && json.Unmarshal(ev.Payload, &p) == nil && p.Name == "Bash" {
					// claude runs some Bash calls (cd) without asking: the
					// shell may be elsewhere when the next one asks.
					chain.ObserveBash(sess.Workdir, p.ToolUseID, p.Input)
				}
			case "mode.changed":
				var p daemon.ModeChangedPayload
				if json.Unmarshal(ev.Payload, &p) == nil {
					mu.Lock()
					mode = p.Mode
					mu.Unlock()
				}
			}
			mu.Lock()
			seen = ev.Seq
			if ev.Kind == "session.ended" {
				ended, lastSeq = true, ev.Seq
			}
			check()
			mu.Unlock()
		case "approval.request":
			if !answering {
				return nil, &jsonrpc.Error{Code: -32000, Message: "attach answers no approvals (use --policy, --approver or --prompt)"}
			}
			var a daemon.ApprovalInfo
			if err := json.Unmarshal(req.Params, &a); err != nil {
				return nil, err
			}
			return jsonrpc.Async(func() (any, error) {
				cwd := a.Cwd
				if cwd == "" {
					cwd = sess.Workdir
				}
				mu.Lock()
				r := &approve.Request{RequestID: a.RequestID, Cwd: cwd, SessionID: sess.AgentSessionID, PermissionMode: mode,
					CanUseTool: protocol.CanUseTool{Subtype: protocol.SubCanUseTool, ToolName: a.Tool, Input: a.Input,
						ToolUseID: a.ToolUseID, PermissionSuggestions: a.Suggestions}}
				mu.Unlock()
				v, _ := chain.Decide(ctx, r)
				if v.Behavior != protocol.Allow && v.Behavior != protocol.Deny {
					return nil, &jsonrpc.Error{Code: -32000, Message: "no decision"}
				}
				return daemon.Decision{Decision: v.Behavior, Scope: "once", Message: v.Message, UpdatedInput: v.UpdatedInput}, nil
			}), nil
		}
		return nil, nil
	}
	conn, err := daemon.Dial(ctx, home, "agentjq attach", handler)
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
				sess, mode, found = s, s.Mode, true
			}
		}
		if !found {
			return fmt.Errorf("no session %q on the daemon of %s", c.Session, home)
		}
		chain, err = approvalChain(ios, SpawnFlags{Policy: c.Policy, Approver: c.Approver, ApproverFormat: c.ApproverFormat, NoPrompt: !c.Prompt},
			sess.Workdir, nil, nil, nil)
		if err != nil {
			return err
		}
		defer chain.Close()
		if c.Live {
			printAbv = sess.LastSeq
		}
		zero := int64(0)
		p.AfterSeq = &zero
	} else if !c.Live {
		after := c.AfterSeq
		p.AfterSeq = &after
	}
	close(ready)
	var res daemon.SubscribeResult
	if err := conn.Call(ctx, "session.subscribe", p, &res); err != nil {
		return err
	}
	mu.Lock()
	if res.Ended {
		ended, lastSeq = true, res.LastSeq
		if p.AfterSeq == nil || *p.AfterSeq >= res.LastSeq {
			// Nothing is replayed (--live starts at the last seq).
			seen = max(seen, res.LastSeq)
		}
	}
	check()
	mu.Unlock()
	select {
	case <-finish:
	case <-conn.Done():
		return fmt.Errorf("the daemon closed the connection: %v", conn.Err())
	case <-ctx.Done():
	}
	return nil
}
