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
func (c *AttachCmd) Run(ctx context.Context, ios *iostreams.IO) error {
	home, err := daemonHome(ios, c.Home)
	if err != nil {
		return err
	}
	var chain *approve.Chain
	if len(c.Policy) > 0 || c.Approver != "" || c.Prompt {
		chain, err = approvalChain(ios, SpawnFlags{Policy: c.Policy, Approver: c.Approver, ApproverFormat: c.ApproverFormat, NoPrompt: !c.Prompt}, ios.Dir, nil, nil, nil)
		if err != nil {
			return err
		}
		defer chain.Close()
	}
	var (
		mu      sync.Mutex
		lastSeq int64 = -1
		ended   bool
		seen    int64
		finish  = make(chan struct{})
		once    sync.Once
	)
	check := func() {
		if ended && lastSeq >= 0 && seen >= lastSeq {
			once.Do(func() { close(finish) })
		}
	}
	handler := func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		switch req.Method {
		case "session.event":
			var ev daemon.Event
			if json.Unmarshal(req.Params, &ev) != nil || ev.SessionID != c.Session {
				return nil, nil
			}
			if ev.Kind == "agent.line" {
				var p daemon.AgentLinePayload
				if json.Unmarshal(ev.Payload, &p) == nil {
					fmt.Fprintf(ios.Out, "%s\n", p.Line)
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
			if chain == nil {
				return nil, &jsonrpc.Error{Code: -32000, Message: "attach answers no approvals (use --policy, --approver or --prompt)"}
			}
			var a daemon.ApprovalInfo
			if err := json.Unmarshal(req.Params, &a); err != nil {
				return nil, err
			}
			return jsonrpc.Async(func() (any, error) {
				v, _ := chain.Decide(ctx, &approve.Request{RequestID: a.RequestID, CanUseTool: protocol.CanUseTool{
					ToolName: a.Tool, Input: a.Input, PermissionSuggestions: a.Suggestions}})
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
	if !c.Live {
		after := c.AfterSeq
		p.AfterSeq = &after
	}
	var res daemon.SubscribeResult
	if err := conn.Call(ctx, "session.subscribe", p, &res); err != nil {
		return err
	}
	mu.Lock()
	if res.Ended {
		ended, lastSeq = true, res.LastSeq
		if c.AfterSeq >= res.LastSeq {
			seen = res.LastSeq
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
