package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/agentjq/agentjq/approve"
	"github.com/agentjq/agentjq/protocol"
)

// Forward makes a session a proxy between the agent and a client that
// speaks the protocol itself (an Agent SDK, an IDE plugin) on Stdin and
// Stdout. The client sees the agent's stdout byte for byte, except the
// control requests agentjq answers itself and the replies to agentjq's own
// requests; agentjq's events never reach Stdout. The client's lines go to
// the agent as they are, except its initialize, merged with agentjq's own
// (MergeInitialize). can_use_tool goes through the approval chain first: a
// policy deny is answered by agentjq; anything else is the client's to
// answer. hook_callback and mcp_message for the hooks and servers agentjq
// registered are answered by agentjq, all others by the client. Every
// agent request gets exactly one answer: a second one is dropped with a
// warning. The session's stdin closes when the client's does, its exit
// status is the agent's, and SIGINT, SIGTERM and SIGHUP are passed on to
// the agent.
type Forward struct {
	// Events receives agentjq's own events, a line each; nil drops them
	// (the tap still sees them).
	Events io.Writer
	// TapParty, when set, replaces Tap for the lines whose party is known
	// (see protocol.Party): every line written to the agent, the agent's
	// lines the client never saw, and agentjq's events.
	TapParty func(dir protocol.Direction, party protocol.Party, line []byte)
}

// forwarder is the proxy state of a session.
type forwarder struct {
	opts Forward
	// own is agentjq's own initialize body, nil when agentjq registers no
	// hook and no server.
	own []byte

	mu        sync.Mutex
	sawClient bool
	ids       InitIDs
	atClient  map[string]*atClient // agent requests the client is answering
	closed    map[string]bool      // agent requests answered or withdrawn

	eventsMu sync.Mutex
}

// atClient is an agent request forwarded to the client.
type atClient struct {
	subtype string
	req     *approve.Request // can_use_tool only
	policy  approve.Verdict
	start   time.Time
}

// newForwarder takes agentjq's own initialize out of opts: in a proxy it
// is merged into the client's, or sent just before the client's first line
// when that is not an initialize.
func newForwarder(opts *Options) *forwarder {
	f := &forwarder{opts: *opts.Forward, atClient: map[string]*atClient{}, closed: map[string]bool{},
		ids: InitIDs{Hooks: map[string]string{}, Servers: map[string]string{}}}
	if opts.Init != nil {
		b, err := json.Marshal(opts.Init)
		var reg struct {
			Hooks   map[string]json.RawMessage `json:"hooks"`
			Servers []string                   `json:"sdkMcpServers"`
		}
		if err == nil && json.Unmarshal(b, &reg) == nil && (len(reg.Hooks) > 0 || len(reg.Servers) > 0) {
			f.own = b
		}
		opts.Init = nil
	}
	return f
}

func (f *forwarder) addIDs(ids InitIDs) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for k, v := range ids.Hooks {
		f.ids.Hooks[k] = v
	}
	for k, v := range ids.Servers {
		f.ids.Servers[k] = v
	}
}

func (f *forwarder) tap(s *session, dir protocol.Direction, party protocol.Party, line []byte) {
	if f.opts.TapParty != nil {
		f.opts.TapParty(dir, party, line)
		return
	}
	s.tap(dir, line)
}

// event records one of agentjq's events and writes it to Events.
func (f *forwarder) event(s *session, party protocol.Party, b []byte) {
	f.tap(s, protocol.DirEvent, party, b)
	if f.opts.Events == nil {
		return
	}
	f.eventsMu.Lock()
	defer f.eventsMu.Unlock()
	f.opts.Events.Write(append(append(make([]byte, 0, len(b)+1), b...), '\n'))
}

// writeAgentAs writes one line to the agent's stdin, tapped with its party.
func (s *session) writeAgentAs(party protocol.Party, line []byte) error {
	s.stdinMu.Lock()
	defer s.stdinMu.Unlock()
	if s.stdin == nil {
		return fmt.Errorf("the agent's stdin is closed")
	}
	s.fwd.tap(s, protocol.DirIn, party, line)
	buf := make([]byte, 0, len(line)+1)
	buf = append(append(buf, line...), '\n')
	_, err := s.stdin.Write(buf)
	return err
}

// proxyWarn says on stderr what the client should know (it never sees
// agentjq's events) and records it as an event.
func (s *session) proxyWarn(code, msg string) {
	fmt.Fprintf(s.opts.Stderr, "agentjq proxy: warning: %s\n", msg)
	s.warn(code, msg)
}

// clientLine sends one line of the client to the agent.
func (s *session) clientLine(line []byte) {
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 {
		return
	}
	env, err := protocol.DecodeEnvelope(trimmed)
	if err == nil {
		switch env.Type {
		case protocol.TypeControlRequest:
			if env.ControlSubtype() == protocol.SubInitialize {
				s.clientInit(env, trimmed)
				return
			}
		case protocol.TypeControlResp:
			s.clientAnswer(env, trimmed)
			return
		case protocol.TypeUser:
			s.mu.Lock()
			s.turns++
			s.mu.Unlock()
		}
	}
	// A line that is not JSON goes on too: the agent reports it as it
	// would without agentjq.
	s.ownInitFirst()
	s.writeClient(trimmed)
}

func (s *session) writeClient(line []byte) {
	if err := s.writeAgentAs(protocol.PartyClient, line); err != nil {
		s.proxyWarn(protocol.WarnInternal, "could not pass the client's line on: "+err.Error())
	}
}

// ownInitFirst sends agentjq's own initialize before the client's first
// line, when that line is not an initialize of its own.
func (s *session) ownInitFirst() {
	f := s.fwd
	f.mu.Lock()
	first := !f.sawClient
	f.sawClient = true
	f.mu.Unlock()
	if !first || f.own == nil {
		return
	}
	body, ids, err := MergeInitialize(nil, f.own)
	if err != nil {
		s.proxyWarn(protocol.WarnInternal, "agentjq's initialize: "+err.Error())
		return
	}
	f.addIDs(ids)
	s.sendOwnRequest("init", json.RawMessage(body))
}

// clientInit passes the client's initialize on, merged with agentjq's.
func (s *session) clientInit(env protocol.Envelope, line []byte) {
	f := s.fwd
	f.mu.Lock()
	f.sawClient = true
	f.mu.Unlock()
	if f.own == nil {
		s.writeClient(line)
		return
	}
	merged, ids, err := MergeInitialize(env.Request, f.own)
	if err != nil {
		// The agent will refuse the client's request as it is; agentjq's
		// registrations still go in a request of their own.
		s.proxyWarn(protocol.WarnBadInput, err.Error()+"; sent as it is, agentjq's hooks and servers separately")
		s.writeClient(line)
		f.mu.Lock()
		f.sawClient = false
		f.mu.Unlock()
		s.ownInitFirst()
		return
	}
	f.addIDs(ids)
	s.writeClient(protocol.ControlRequest(env.RequestID, json.RawMessage(merged)))
}

// clientAnswer passes on the client's answer to an agent request, once.
func (s *session) clientAnswer(env protocol.Envelope, line []byte) {
	f := s.fwd
	id := env.ResponseID()
	f.mu.Lock()
	p := f.atClient[id]
	delete(f.atClient, id)
	done := f.closed[id]
	f.closed[id] = true
	f.mu.Unlock()
	if p == nil {
		why := "no such request is pending"
		if done {
			why = "it was answered or withdrawn already"
		}
		s.proxyWarn(protocol.WarnBadInput, fmt.Sprintf("dropped the client's control_response for request %q: %s", id, why))
		return
	}
	if p.subtype == protocol.SubCanUseTool && s.clientPermission(id, p, env) {
		return
	}
	s.writeClient(line)
}

// clientPermission records the client's answer to a permission request.
// It reports true when agentjq answered instead: the client allowed the
// call with an input the policy denies.
func (s *session) clientPermission(id string, p *atClient, env protocol.Envelope) bool {
	var r struct {
		Subtype  string `json:"subtype"`
		Error    string `json:"error"`
		Response struct {
			Behavior     string          `json:"behavior"`
			Message      string          `json:"message"`
			UpdatedInput json.RawMessage `json:"updatedInput"`
		} `json:"response"`
	}
	_ = json.Unmarshal(env.Response, &r)
	behavior, msg := protocol.Deny, r.Response.Message
	if r.Subtype == "success" && r.Response.Behavior == protocol.Allow {
		behavior = protocol.Allow
	} else if r.Subtype != "success" {
		msg = r.Error
	}
	if behavior == protocol.Allow && len(r.Response.UpdatedInput) > 0 && !sameJSON(r.Response.UpdatedInput, p.req.Input) &&
		string(bytes.TrimSpace(r.Response.UpdatedInput)) != "{}" {
		// The policy saw another input: the one the tool will run with
		// must pass it too.
		edited := *p.req
		edited.Input = append(json.RawMessage(nil), r.Response.UpdatedInput...)
		if v := s.forwardDecide(context.Background(), &edited); v.Behavior == protocol.Deny && v.Source != protocol.ByDefault {
			res := protocol.DenyResult(&edited.CanUseTool, v.Message)
			s.respondPermission(id, &edited, res, v.Source, v.Rule, p.start)
			return true
		}
	}
	if behavior == protocol.Deny {
		key := p.req.ToolUseID
		if key == "" {
			key = "request-" + id
		}
		s.mu.Lock()
		s.denied[key] = true
		s.mu.Unlock()
	}
	s.fwd.event(s, protocol.PartyClient, protocol.Marshal(protocol.Decision{
		Type: protocol.TypeAgentjq, Subtype: protocol.EventDecision,
		RequestID: id, Tool: p.req.ToolName, ToolUseID: p.req.ToolUseID,
		Behavior: behavior, DecidedBy: protocol.ByClient, Rule: p.policy.Rule, Message: msg,
		LatencyUS: time.Since(p.start).Microseconds(),
	}))
	return false
}

func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return bytes.Equal(ja, jb)
}

// forwardDecide asks the approval chain. Only a deny that something other
// than the fail-closed default gave is agentjq's answer; the rest is the
// client's to decide.
func (s *session) forwardDecide(ctx context.Context, req *approve.Request) approve.Verdict {
	if s.opts.ApprovalTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.opts.ApprovalTimeout)
		defer cancel()
	}
	v, err := s.opts.Approver.Decide(ctx, req)
	if err != nil {
		return approve.Verdict{Behavior: protocol.Deny, Source: protocol.ByError,
			Message: "agentjq: the approval chain failed, so the call was denied: " + err.Error()}
	}
	return v
}

// forwardAgentLine routes one agent line of a proxied session; it reports
// false for the lines the session handles as usual (results, system).
func (s *session) forwardAgentLine(ctx context.Context, kind lineKind, head protocol.Head, line []byte, flush bool) bool {
	switch kind {
	case lineBlank:
		s.out.line(line, flush)
		return true
	case lineBad:
		// Not agentjq's to judge: the client gets it as the agent wrote it.
		s.tap(protocol.DirErr, line)
		s.out.line(line, flush)
		return true
	case linePlain:
		return false
	}
	typ := string(head.Type)
	if head.Escaped {
		typ, _, _ = head.Strings()
	}
	switch typ {
	case protocol.TypeControlRequest, protocol.TypeControlResp, protocol.TypeControlCancel:
	default:
		return false
	}
	env, err := protocol.DecodeEnvelope(line)
	if err != nil {
		return false
	}
	f := s.fwd
	switch typ {
	case protocol.TypeControlResp:
		s.mu.Lock()
		ours := s.ours[env.ResponseID()]
		s.mu.Unlock()
		if ours {
			f.tap(s, protocol.DirOut, protocol.PartyAgentjq, line)
			s.control(ctx, env)
			return true
		}
	case protocol.TypeControlCancel:
		s.mu.Lock()
		held := s.withdraw[env.RequestID] != nil
		s.mu.Unlock()
		if held {
			f.tap(s, protocol.DirOut, protocol.PartyAgentjq, line)
			s.control(ctx, env)
			return true
		}
		f.mu.Lock()
		p := f.atClient[env.RequestID]
		delete(f.atClient, env.RequestID)
		if p != nil {
			f.closed[env.RequestID] = true
		}
		f.mu.Unlock()
		if p != nil && p.req != nil {
			s.fwd.event(s, protocol.PartyAgentjq, protocol.Marshal(protocol.Decision{
				Type: protocol.TypeAgentjq, Subtype: protocol.EventDecision, RequestID: env.RequestID,
				Tool: p.req.ToolName, ToolUseID: p.req.ToolUseID, Behavior: "cancelled",
				DecidedBy: protocol.ByCancel, Message: "the agent withdrew the request",
				LatencyUS: time.Since(p.start).Microseconds(),
			}))
		}
	case protocol.TypeControlRequest:
		if s.holdRequest(ctx, env, line) {
			return true
		}
	}
	s.tap(protocol.DirOut, line)
	s.out.line(line, flush)
	return true
}

// holdRequest answers an agent request that is agentjq's (a policy deny,
// agentjq's own hooks and servers) and reports true; any other it
// registers as the client's and reports false.
func (s *session) holdRequest(ctx context.Context, env protocol.Envelope, line []byte) bool {
	f := s.fwd
	id := env.RequestID
	sub := env.ControlSubtype()
	p := &atClient{subtype: sub, start: time.Now()}
	switch sub {
	case protocol.SubCanUseTool:
		req := &approve.Request{RequestID: id, Cwd: s.opts.Dir}
		if err := json.Unmarshal(env.Request, &req.CanUseTool); err != nil {
			// The policy cannot read it, so nobody may allow it.
			f.tap(s, protocol.DirOut, protocol.PartyAgentjq, line)
			s.respondPermission(id, req, protocol.DenyResult(&req.CanUseTool, "agentjq could not read this permission request: "+err.Error()), protocol.ByError, "", p.start)
			return true
		}
		s.mu.Lock()
		req.SessionID = s.sessionID
		s.mu.Unlock()
		v := s.forwardDecide(ctx, req)
		if v.Behavior == protocol.Deny && v.Source != protocol.ByDefault {
			f.tap(s, protocol.DirOut, protocol.PartyAgentjq, line)
			res := protocol.DenyResult(&req.CanUseTool, v.Message)
			res.Interrupt = v.Interrupt
			s.respondPermission(id, req, res, v.Source, v.Rule, p.start)
			return true
		}
		if v.Behavior == protocol.Allow {
			p.policy = v
		}
		p.req = req
	case protocol.SubHookCallback, protocol.SubMCPMessage:
		key, names := "callback_id", f.ids.Hooks
		if sub == protocol.SubMCPMessage {
			key, names = "server_name", f.ids.Servers
		}
		var fields map[string]json.RawMessage
		_ = json.Unmarshal(env.Request, &fields)
		var wire string
		_ = json.Unmarshal(fields[key], &wire)
		f.mu.Lock()
		orig, ours := names[wire]
		f.mu.Unlock()
		if ours {
			fields[key], _ = json.Marshal(orig)
			env.Request, _ = json.Marshal(fields)
			f.tap(s, protocol.DirOut, protocol.PartyAgentjq, line)
			s.control(ctx, env)
			return true
		}
	}
	f.mu.Lock()
	f.atClient[id] = p
	f.mu.Unlock()
	return false
}

// forwardReadyToClose closes the agent's stdin once the client's is
// closed and agentjq has answered what it holds: the agent then ends as
// it would with the client alone. It never starts a staged shutdown.
func (s *session) forwardReadyToClose() bool {
	s.mu.Lock()
	ready := s.inputDone && len(s.pending) == 0
	s.mu.Unlock()
	if ready {
		s.closeStdin()
	}
	return false
}

// forwardSignal passes a signal to the agent; SIGPIPE (our stdout gone)
// stays agentjq's.
func (s *session) forwardSignal(sig os.Signal) bool {
	if sig == syscall.SIGPIPE {
		return false
	}
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Signal(sig)
	}
	return true
}

// forwardStatus is the agent's exit status as a shell reports it: 128+N
// when signal N killed it, 0 when agentjq ended it after its work was
// done. s.mu is held.
func (s *session) forwardStatusLocked() int {
	if s.reaped {
		return 0
	}
	ps := s.cmd.ProcessState
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// classifier is classify, except in a proxy with no tap: there a line is
// passed on as it is whatever it holds, so only a line that may need
// routing is scanned. A tapped session keeps validating every line (the
// recorder relies on it).
func (s *session) classifier() func(*chunk) {
	if s.fwd != nil && s.opts.Tap == nil {
		return classifyForward
	}
	return classify
}

// passOnly are the starts of the lines a proxy never acts on (see also
// systemPrefix). The CLI
// writes "type" first in these (JSON.stringify keeps insertion order, and
// it has no duplicate keys); any other line, a control line with its keys
// in another order too, is scanned.
var passOnly = [][]byte{[]byte(`{"type":"assistant"`), []byte(`{"type":"user"`), []byte(`{"type":"stream_event"`)}

// classifyForward is classify without scanning the lines that start as a
// pass-only line does.
func classifyForward(c *chunk) {
	c.plain = true
	rest := c.buf
	for len(rest) > 0 {
		i := bytes.IndexByte(rest, '\n')
		var line []byte
		if i < 0 {
			line, rest = rest, nil
		} else {
			line, rest = rest[:i], rest[i+1:]
		}
		kind, head := linePlain, protocol.Head{}
		if !startsPassOnly(line) {
			var ok bool
			head, ok = protocol.Scan(line)
			switch {
			case !ok && len(bytes.TrimSpace(line)) == 0:
				kind = lineBlank
			case !ok:
				kind = lineBad
			case routed(head):
				kind = lineRouted
			}
		}
		if kind != linePlain {
			c.plain = false
		}
		c.lines = append(c.lines, line)
		c.kinds = append(c.kinds, kind)
		c.heads = append(c.heads, head)
	}
	close(c.ready)
}

// systemPrefix starts a system line; of those a proxy acts on init only
// (the session id its policies see).
var systemPrefix = []byte(`{"type":"system","subtype":"`)

func startsPassOnly(line []byte) bool {
	for _, p := range passOnly {
		if bytes.HasPrefix(line, p) {
			return true
		}
	}
	if rest, ok := bytes.CutPrefix(line, systemPrefix); ok {
		return !bytes.HasPrefix(rest, []byte(`init"`))
	}
	return false
}
