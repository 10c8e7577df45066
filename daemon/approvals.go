package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/agentjq/agentjq/approve"
	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/jsonrpc"
)

// ByClient is the decision source of an answer from a daemon client.
const ByClient = "client"

// clientDecider is the session's approver: the policy chain first; what
// it leaves undecided (its fail-closed default) is asked of the clients.
type clientDecider struct{ s *Session }

func (d *clientDecider) Decide(ctx context.Context, req *approve.Request) (approve.Verdict, error) {
	var trace []string
	v, _ := d.s.chain.Explain(ctx, req, func(t string) { trace = append(trace, t) })
	if v.Source != protocol.ByDefault || req.IsQuestion() || ctx.Err() != nil {
		return v, nil
	}
	if n := len(trace); n > 0 {
		trace = trace[:n-1] // the default's deny, which the clients now replace
	}
	v, err := d.s.srv.approvals.ask(ctx, d.s, req, trace)
	if err != nil || v.Behavior != protocol.Allow {
		return v, err
	}
	ran := req
	if len(v.UpdatedInput) > 0 && !bytes.Equal(v.UpdatedInput, req.Input) {
		// A person's rewrite is held to the policy like any input: what
		// the chain denies for the rewritten call (a protected control
		// file, a deny rule) stays denied.
		r := *req
		r.Input = v.UpdatedInput
		if again, _ := d.s.chain.Explain(ctx, &r, nil); again.Source != protocol.ByDefault && again.Behavior != protocol.Allow {
			again.Behavior = protocol.Deny
			again.Message = "agentjq: the rewritten call is not allowed: " + again.Message
			return again, nil
		}
		ran = &r
	}
	if ran.ToolName == "Bash" {
		// The chain did not decide this call: tell its shell tracker, so
		// relative paths after a cd are judged where the shell is.
		d.s.chain.ObserveBash(ran.Cwd, ran.ToolUseID, ran.Input)
	}
	return v, nil
}

type pendingApproval struct {
	info ApprovalInfo
	sess *Session
	ch   chan approve.Verdict
}

type approvals struct {
	srv      *Server
	mu       sync.Mutex
	n        int
	pending  map[string]*pendingApproval
	resolved map[string]ResolvedParams
}

func newApprovals(s *Server) *approvals {
	return &approvals{srv: s, pending: map[string]*pendingApproval{}, resolved: map[string]ResolvedParams{}}
}

func (a *approvals) ask(ctx context.Context, s *Session, req *approve.Request, trace []string) (approve.Verdict, error) {
	a.mu.Lock()
	a.n++
	id := "apr-" + s.ID + "-" + strconv.Itoa(a.n)
	if trace == nil {
		trace = []string{}
	}
	cwd := req.Cwd
	if cwd == "" {
		cwd = s.Workdir
	}
	p := &pendingApproval{sess: s, ch: make(chan approve.Verdict, 1), info: ApprovalInfo{
		ID: id, SessionID: s.ID, RequestID: req.RequestID, Tool: req.ToolName, Input: orNull(req.Input), ToolUseID: req.ToolUseID, Cwd: cwd,
		KeyInput: approve.KeyInput(req), Suggestions: req.PermissionSuggestions, Trace: trace,
		Created: time.Now().UTC().Format(time.RFC3339Nano)}}
	a.pending[id] = p
	a.mu.Unlock()

	s.emit("approval.pending", ApprovalEventPayload{ID: id, Tool: req.ToolName})
	a.srv.broadcast("approval.pending", p.info)
	s.mu.Lock()
	var subscribers []*subscription
	for sub := range s.subs {
		subscribers = append(subscribers, sub)
	}
	s.mu.Unlock()
	msg := approvalRequest(p.info)
	for _, sub := range subscribers {
		sub.ask(id, msg)
	}
	select {
	case v := <-p.ch:
		return v, nil
	case <-ctx.Done():
		who, reason := "agentjq", "withdrawn"
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			who, reason = "timeout", CodeApprovalTimeout
		}
		if a.finish(id, ResolvedParams{ID: id, SessionID: s.ID, Who: who, Decision: protocol.Deny, Reason: reason}) {
			return approve.Verdict{Behavior: protocol.Deny, Source: protocol.ByTimeout, Message: "agentjq: no client answered the approval in time, so the call was denied."}, nil
		}
		// An answer won the race: it is in the channel.
		return <-p.ch, nil
	}
}

// finish resolves id once; false when it was resolved already.
func (a *approvals) finish(id string, r ResolvedParams) bool {
	a.mu.Lock()
	p, ok := a.pending[id]
	if !ok {
		a.mu.Unlock()
		return false
	}
	delete(a.pending, id)
	a.resolved[id] = r
	a.mu.Unlock()
	p.sess.emit("approval.resolved", ApprovalEventPayload{ID: id, Who: r.Who, Decision: r.Decision})
	a.srv.broadcast("approval.resolved", r)
	return true
}

// respond is a client's answer, from approval.respond or a response to
// approval.request: the first valid one wins.
func (a *approvals) respond(id, who string, d Decision) (ResolvedParams, error) {
	if d.Decision != protocol.Allow && d.Decision != protocol.Deny {
		return ResolvedParams{}, rpcErr(CodeInvalidParams, `decision must be "allow" or "deny"`, nil)
	}
	if d.Scope == "" {
		d.Scope = "once"
	}
	if d.Scope != "once" && d.Scope != "session" && d.Scope != "always" {
		return ResolvedParams{}, rpcErr(CodeInvalidParams, `scope must be "once", "session" or "always"`, nil)
	}
	if d.Decision == protocol.Deny && d.Scope != "once" {
		// No deny rule outlives its answer: claude takes none from a
		// permission answer, and one agentjq kept would be asked only
		// about the calls claude asks about, not those it runs unasked
		// (a Read in the workdir, an Edit under acceptEdits) where a
		// session has no policy and so no guard. A deny that must hold
		// belongs in a policy file.
		return ResolvedParams{}, rpcErr(CodeInvalidParams, `a deny is "once": a deny rule for the session or always belongs in a policy file (session.create policy, serve --policy), which puts agentjq's guard before every call`, nil)
	}
	if d.UpdatedInput != nil {
		var m map[string]json.RawMessage
		if json.Unmarshal(d.UpdatedInput, &m) != nil {
			return ResolvedParams{}, rpcErr(CodeInvalidParams, "updatedInput must be a JSON object", nil)
		}
	}
	a.mu.Lock()
	p, ok := a.pending[id]
	if !ok {
		r, was := a.resolved[id]
		a.mu.Unlock()
		if was {
			return r, rpcErr(CodeApprovalResolved, fmt.Sprintf("approval %s was already answered %s by %s", id, r.Decision, r.Who),
				map[string]any{"who": r.Who, "decision": r.Decision})
		}
		return ResolvedParams{}, rpcErr(CodeNotFound, "no approval "+strconv.Quote(id), nil)
	}
	a.mu.Unlock()
	v := approve.Verdict{Behavior: d.Decision, Message: d.Message, Source: ByClient, Rule: who}
	if d.Decision == protocol.Allow {
		v.UpdatedInput = d.UpdatedInput
		if d.Scope != "once" {
			v.UpdatedPermissions = sessionScoped(p.info.Suggestions)
		}
		if d.Scope == "always" {
			rules := suggestedRules(p.info.Suggestions)
			if len(rules) == 0 {
				return ResolvedParams{}, rpcErr(CodeInvalidParams, "claude suggested no rule for this call; add one with permission.allowlist.add", nil)
			}
			if err := a.srv.allowlistEdit(rules, nil); err != nil {
				return ResolvedParams{}, err
			}
		}
	} else if v.Message == "" {
		v.Message = "agentjq: denied by " + who + "."
	}
	r := ResolvedParams{ID: id, SessionID: p.sess.ID, Who: who, Decision: d.Decision, Scope: d.Scope}
	if d.Decision == protocol.Deny {
		r.Reason = CodeApprovalDenied
	}
	if !a.finish(id, r) {
		a.mu.Lock()
		won := a.resolved[id]
		a.mu.Unlock()
		return won, rpcErr(CodeApprovalResolved, fmt.Sprintf("approval %s was already answered %s by %s", id, won.Decision, won.Who),
			map[string]any{"who": won.Who, "decision": won.Decision})
	}
	p.ch <- v
	return r, nil
}

// sessionScoped are claude's suggestions with the session as destination:
// "session" and "always" never write the agent's settings files.
func sessionScoped(sugg []json.RawMessage) []json.RawMessage {
	var out []json.RawMessage
	for _, s := range sugg {
		var m map[string]any
		if json.Unmarshal(s, &m) != nil {
			continue
		}
		if m["type"] != "addRules" || m["behavior"] != "allow" {
			continue
		}
		m["destination"] = "session"
		b, _ := json.Marshal(m)
		out = append(out, b)
	}
	return out
}

// suggestedRules are the allow rules of claude's suggestions, as rule
// strings (Tool or Tool(content)).
func suggestedRules(sugg []json.RawMessage) []string {
	var out []string
	for _, s := range sugg {
		var m struct {
			Type     string `json:"type"`
			Behavior string `json:"behavior"`
			Rules    []struct {
				ToolName    string `json:"toolName"`
				RuleContent string `json:"ruleContent"`
			} `json:"rules"`
		}
		if json.Unmarshal(s, &m) != nil || m.Type != "addRules" || m.Behavior != "allow" {
			continue
		}
		for _, r := range m.Rules {
			if r.ToolName == "" {
				continue
			}
			if r.RuleContent == "" {
				out = append(out, r.ToolName)
			} else {
				out = append(out, r.ToolName+"("+r.RuleContent+")")
			}
		}
	}
	return out
}

func (a *approvals) list(sessionID string) []ApprovalInfo {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []ApprovalInfo
	for _, p := range a.pending {
		if sessionID == "" || p.info.SessionID == sessionID {
			out = append(out, p.info)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Created < out[j].Created })
	return out
}

// endSession denies what the session left pending (its agent is gone).
func (a *approvals) endSession(id string) {
	for _, p := range a.list(id) {
		a.finish(p.ID, ResolvedParams{ID: p.ID, SessionID: id, Who: "agentjq", Decision: protocol.Deny, Reason: CodeSessionEnded})
	}
}

// approvalRequest is the approval.request message. It goes through the
// client's queue like the session's events, never around it: a client
// gets the request after every event before it (the call's tool.call, the
// Bash calls that moved the shell, approval.pending), so what it judges
// the request by is what the session had seen.
func approvalRequest(info ApprovalInfo) []byte {
	p, _ := json.Marshal(info)
	b, _ := json.Marshal(jsonrpc.Message{JSONRPC: jsonrpc.Version, ID: jsonrpc.StringID(info.ID), Method: "approval.request", Params: p})
	return b
}
