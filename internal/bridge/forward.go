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

	"github.com/agentjq/agentjq/internal/asyncq"
	"github.com/agentjq/agentjq/internal/protocol"
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
// registered are answered by agentjq, all others by the client; agentjq's
// PreToolUse guard (Options.Guard) is one of those hooks, so the policy
// also sees the calls the agent runs without asking. Every
// agent request gets exactly one answer: a second one is dropped with a
// warning. The session's stdin closes when the client's has and agentjq
// owes the agent no answer (forwardReadyToClose), its exit status is the
// agent's, and SIGINT, SIGTERM and SIGHUP are passed on to the agent (a
// third in a row kills it).
type Forward struct {
	// Events receives agentjq's own events, a line each; nil drops them
	// (the tap still sees them).
	Events io.Writer
	// TapParty, when set, replaces Tap for the lines whose party is known
	// (see protocol.Party): every line written to the agent, the agent's
	// lines the client never saw, and agentjq's events.
	TapParty func(dir protocol.Direction, party protocol.Party, line []byte, known protocol.Known)
}

// forwarder is proxy mode, beside the session it forwards for (s): the
// client's lines to the agent, the agent's requests to the client, and
// what agentjq answers itself on the way.
type forwarder struct {
	s    *session
	opts Forward
	// own is agentjq's own initialize body, nil when agentjq registers no
	// hook and no server.
	own []byte
	// events writes Forward.Events; lossy, so that an events reader that
	// stops never holds the session up.
	events *asyncq.Writer

	mu        sync.Mutex
	sawClient bool // the client's first line has come
	ownSent   bool // agentjq's initialize went in a request of its own
	ids       InitIDs
	atClient  map[string]*atClient // agent requests the client is answering
	closed    map[string]bool      // agent requests answered or withdrawn
	// byAgentjq are the agent requests agentjq answered itself, so that a
	// late control_cancel_request for one stays agentjq's too.
	byAgentjq map[string]bool
	// recheck: a look at forwardReadyToClose is scheduled.
	recheck bool
}

// atClient is an agent request forwarded to the client.
type atClient struct {
	subtype string
	req     *protocol.ToolRequest // can_use_tool only
	policy  protocol.Verdict
	start   time.Time
	raw     json.RawMessage // the request id as the agent sent it
}

// newForwarder takes agentjq's own initialize out of opts: in a proxy it
// is merged into the client's, or sent just before the client's first line
// when that is not an initialize.
func newForwarder(opts *Options) *forwarder {
	f := &forwarder{opts: *opts.Forward, atClient: map[string]*atClient{}, closed: map[string]bool{},
		byAgentjq: map[string]bool{}, ids: InitIDs{Hooks: map[string]string{}, Servers: map[string]string{}}}
	if f.opts.Events != nil {
		f.events = asyncq.NewWriter(f.opts.Events, asyncq.WriterOptions{Limit: 1 << 20, Lossy: true, DropNote: dropNote})
	}
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

func (f *forwarder) tap(s *session, dir protocol.Direction, party protocol.Party, line []byte, known protocol.Known) {
	if f.opts.TapParty != nil {
		if !s.ended.Load() {
			f.opts.TapParty(dir, party, line, known)
		}
		return
	}
	s.tap(dir, line, known)
}

// event records one of agentjq's events and queues it for Events.
func (f *forwarder) event(s *session, party protocol.Party, b []byte) {
	f.tap(s, protocol.DirEvent, party, b, 0)
	if f.events != nil {
		f.events.Send(append(b[:len(b):len(b)], '\n'), nil)
	}
}

// drainEvents writes out the queued events, waiting at most d.
func (f *forwarder) drainEvents(d, stalled time.Duration) {
	if f.events != nil {
		f.events.Drain(d, stalled)
	}
}

// proxyWarn says on stderr what the client should know (it never sees
// agentjq's events) and records it as an event.
func (f *forwarder) proxyWarn(code, msg string) {
	s := f.s
	fmt.Fprintf(s.opts.Stderr, "agentjq proxy: warning: %s\n", msg)
	s.warn(code, msg)
}

// clientLine sends one line of the client to the agent.
func (f *forwarder) clientLine(line []byte) {
	s := f.s
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 {
		return
	}
	// Only the input reader waits for room in the agent's stdin: that is
	// what holds a fast client back.
	s.stdin.q.WaitRoom(len(trimmed)+1, 0, nil)
	if trimmed[0] == '{' && json.Valid(trimmed) {
		fs := protocol.Fields(trimmed, "type", "request_id", "request", "response")
		typ, _ := protocol.String(fs[0])
		switch typ {
		case protocol.TypeControlRequest:
			sub, _ := protocol.String(protocol.Fields(fs[2], "subtype")[0])
			if sub == protocol.SubInitialize {
				f.clientInit(fs[1], fs[2], trimmed)
				return
			}
		case protocol.TypeControlResp:
			f.clientAnswer(fs[3], trimmed)
			return
		case protocol.TypeUser:
			s.mu.Lock()
			s.turns.sentLocked(turnID(trimmed))
			s.mu.Unlock()
		}
	}
	// A line that is not JSON goes on too: the agent reports it as it
	// would without agentjq, and its answer is a turn's.
	if trimmed[0] != '{' {
		s.mu.Lock()
		s.turns.sentLocked("")
		s.mu.Unlock()
	}
	f.ownInitFirst()
	f.writeClient(trimmed)
}

func (f *forwarder) writeClient(line []byte) {
	s := f.s
	if err := s.stdin.writeAs(protocol.PartyClient, line); err != nil {
		f.proxyWarn(protocol.WarnInternal, "could not pass the client's line on: "+err.Error())
	}
}

// ownInitFirst sends agentjq's own initialize before the client's first
// line, when that line is not an initialize of its own.
func (f *forwarder) ownInitFirst() {
	s := f.s
	f.mu.Lock()
	first := !f.sawClient
	f.sawClient = true
	send := first && f.own != nil && !f.ownSent
	if send {
		f.ownSent = true
	}
	f.mu.Unlock()
	if !send {
		return
	}
	body, ids, err := MergeInitialize(nil, f.own)
	if err != nil {
		f.proxyWarn(protocol.WarnInternal, "agentjq's initialize: "+err.Error())
		return
	}
	f.addIDs(ids)
	s.ctl.sendOwnRequest("init", json.RawMessage(body))
}

// clientInit passes the client's initialize on, merged with agentjq's
// registrations unless those went already.
func (f *forwarder) clientInit(rawID, request, line []byte) {
	f.mu.Lock()
	f.sawClient = true
	merge := f.own != nil && !f.ownSent
	if merge {
		f.ownSent = true
	}
	f.mu.Unlock()
	if !merge {
		f.writeClient(line)
		return
	}
	merged, ids, err := MergeInitialize(request, f.own)
	if err != nil {
		// The agent will refuse the client's request as it is; agentjq's
		// registrations still go in a request of their own.
		f.proxyWarn(protocol.WarnBadInput, err.Error()+"; sent as it is, agentjq's hooks and servers separately")
		f.writeClient(line)
		f.mu.Lock()
		f.sawClient, f.ownSent = false, false
		f.mu.Unlock()
		f.ownInitFirst()
		return
	}
	f.addIDs(ids)
	f.writeClient(controlRequestRaw(rawID, merged))
}

// controlRequestRaw is a control_request line with the request id as the
// JSON value it came as.
func controlRequestRaw(rawID, request json.RawMessage) []byte {
	if len(rawID) == 0 {
		rawID = json.RawMessage(`""`)
	}
	b := make([]byte, 0, len(rawID)+len(request)+64)
	b = append(b, `{"type":"control_request","request_id":`...)
	b = append(b, rawID...)
	b = append(b, `,"request":`...)
	b = append(b, request...)
	return append(b, '}')
}

// clientAnswer passes on the client's answer to an agent request, once.
func (f *forwarder) clientAnswer(response, line []byte) {
	id, _, ok := protocol.RequestKey(protocol.Fields(response, "request_id")[0])
	if !ok {
		f.proxyWarn(protocol.WarnBadInput, "dropped a control_response of the client's without a string or number request_id")
		return
	}
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
		f.proxyWarn(protocol.WarnBadInput, fmt.Sprintf("dropped the client's control_response for request %q: %s", id, why))
		return
	}
	if p.subtype == protocol.SubCanUseTool && f.clientPermission(id, p, response) {
		return
	}
	f.writeClient(line)
}

// clientPermission records the client's answer to a permission request.
// It reports true when agentjq answered instead: the client allowed the
// call with an input the policy denies.
func (f *forwarder) clientPermission(id string, p *atClient, response []byte) bool {
	s := f.s
	var r struct {
		Subtype  string `json:"subtype"`
		Error    string `json:"error"`
		Response struct {
			Behavior     string          `json:"behavior"`
			Message      string          `json:"message"`
			UpdatedInput json.RawMessage `json:"updatedInput"`
		} `json:"response"`
	}
	_ = json.Unmarshal(response, &r)
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
		if v := f.forwardDecide(context.Background(), &edited); agentjqDenies(v) {
			res := protocol.DenyResult(&edited.CanUseTool, v.Message)
			f.markAgentjqs(id)
			s.ctl.respondPermission(id, p.rawID(id), &edited, res, v.Source, v.Rule, p.start)
			return true
		}
	}
	if behavior == protocol.Deny {
		s.ctl.denied(p.req.ToolUseID, id)
	}
	f.event(s, protocol.PartyClient, protocol.Marshal(protocol.Decision{
		Type: protocol.TypeAgentjq, Subtype: protocol.EventDecision,
		RequestID: id, Tool: p.req.ToolName, ToolUseID: p.req.ToolUseID,
		Behavior: behavior, DecidedBy: protocol.ByClient, Via: protocol.ViaPermission, Rule: p.policy.Rule, Message: msg,
		LatencyUS: time.Since(p.start).Microseconds(),
	}))
	return false
}

// rawID is the request id as the agent sent it.
func (p *atClient) rawID(key string) json.RawMessage {
	if p.raw != nil {
		return p.raw
	}
	b, _ := json.Marshal(key)
	return b
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

// agentjqDenies reports whether a verdict is agentjq's answer in a proxy:
// a deny that something other than the fail-closed default gave. The rest
// is the client's to decide.
func agentjqDenies(v protocol.Verdict) bool {
	return v.Behavior == protocol.Deny && v.Source != protocol.ByDefault
}

// forwardDecide asks the approval chain, within --approval-timeout.
func (f *forwarder) forwardDecide(ctx context.Context, req *protocol.ToolRequest) protocol.Verdict {
	s := f.s
	if s.opts.ApprovalTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.opts.ApprovalTimeout)
		defer cancel()
	}
	if s.opts.Approver == nil {
		return protocol.Verdict{} // no opinion: the client's to decide
	}
	v, err := s.opts.Approver.Decide(ctx, req)
	if err != nil {
		return protocol.Verdict{Behavior: protocol.Deny, Source: protocol.ByError,
			Message: "agentjq: the approval chain failed, so the call was denied: " + err.Error()}
	}
	return v
}

// markAgentjqs notes that agentjq answered request key itself.
func (f *forwarder) markAgentjqs(key string) {
	f.mu.Lock()
	f.byAgentjq[key] = true
	f.closed[key] = true
	f.mu.Unlock()
}

// forwardAgentLine routes one agent line of a proxied session; it reports
// false for the lines the session handles as usual (results, system).
// withNL is the line as it lies in the buffer.
func (f *forwarder) forwardAgentLine(ctx context.Context, kind lineKind, head protocol.Head, line, withNL []byte) bool {
	s := f.s
	switch kind {
	case lineBlank:
		s.passOut(withNL)
		return true
	case lineBad:
		// Not agentjq's to judge: the client gets it as the agent wrote it.
		s.tap(protocol.DirErr, line, 0)
		s.passOut(withNL)
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
	switch typ {
	case protocol.TypeControlResp:
		key, _, _ := protocol.RequestKey(protocol.Fields(protocol.Fields(line, "response")[0], "request_id")[0])
		s.mu.Lock()
		_, ours := s.ctl.ours[key]
		s.mu.Unlock()
		if ours {
			f.tap(s, protocol.DirOut, protocol.PartyAgentjq, line, head.Known)
			s.ctl.control(ctx, typ, line)
			return true
		}
	case protocol.TypeControlCancel:
		key, _, _ := protocol.RequestKey(protocol.Fields(line, "request_id")[0])
		s.mu.Lock()
		held := s.ctl.withdraw[key] != nil
		s.mu.Unlock()
		f.mu.Lock()
		agentjqs := f.byAgentjq[key]
		f.mu.Unlock()
		if held || agentjqs {
			// agentjq holds it (or answered it): the client never saw
			// the request, so it does not see it withdrawn either.
			f.tap(s, protocol.DirOut, protocol.PartyAgentjq, line, head.Known)
			s.ctl.control(ctx, typ, line)
			return true
		}
		f.mu.Lock()
		p := f.atClient[key]
		delete(f.atClient, key)
		if p != nil {
			f.closed[key] = true
		}
		f.mu.Unlock()
		if p != nil && p.req != nil {
			f.event(s, protocol.PartyAgentjq, protocol.Marshal(protocol.Decision{
				Type: protocol.TypeAgentjq, Subtype: protocol.EventDecision, RequestID: key,
				Tool: p.req.ToolName, ToolUseID: p.req.ToolUseID, Behavior: "cancelled",
				DecidedBy: protocol.ByCancel, Via: protocol.ViaPermission, Message: "the agent withdrew the request",
				LatencyUS: time.Since(p.start).Microseconds(),
			}))
		}
	case protocol.TypeControlRequest:
		if f.holdRequest(ctx, line) {
			return true
		}
	}
	s.tap(protocol.DirOut, line, head.Known)
	s.passOut(withNL)
	return true
}

// holdRequest answers an agent request that is agentjq's (a policy deny,
// agentjq's own hooks and servers) and reports true; any other it
// registers as the client's and reports false.
func (f *forwarder) holdRequest(ctx context.Context, line []byte) bool {
	s := f.s
	cr, ok := protocol.ReadControlRequest(line)
	if !ok {
		// Nobody can answer it; the client sees it as the agent wrote it.
		return false
	}
	key, rawID, request, sub := cr.Key, cr.ID, cr.Request, cr.Subtype
	p := &atClient{subtype: sub, start: time.Now(), raw: rawID}
	switch sub {
	case protocol.SubCanUseTool:
		req := &protocol.ToolRequest{RequestID: key, Cwd: s.opts.Dir}
		if err := json.Unmarshal(request, &req.CanUseTool); err != nil {
			// The policy cannot read it, so nobody may allow it.
			f.tap(s, protocol.DirOut, protocol.PartyAgentjq, line, 0)
			f.markAgentjqs(key)
			s.ctl.respondPermission(key, rawID, req, protocol.DenyResult(&req.CanUseTool, "agentjq could not read this permission request: "+err.Error()), protocol.ByError, "", p.start)
			return true
		}
		s.mu.Lock()
		req.SessionID = s.sessionID
		s.mu.Unlock()
		v := f.forwardDecide(ctx, req)
		if agentjqDenies(v) {
			f.tap(s, protocol.DirOut, protocol.PartyAgentjq, line, 0)
			msg := v.Message
			if msg == "" {
				msg = "agentjq: denied by policy."
			}
			res := protocol.DenyResult(&req.CanUseTool, msg)
			res.Interrupt = v.Interrupt
			f.markAgentjqs(key)
			s.ctl.respondPermission(key, rawID, req, res, v.Source, v.Rule, p.start)
			return true
		}
		if v.Behavior == protocol.Allow {
			p.policy = v
		}
		p.req = req
	case protocol.SubHookCallback, protocol.SubMCPMessage:
		name := "callback_id"
		names := f.ids.Hooks
		if sub == protocol.SubMCPMessage {
			name, names = "server_name", f.ids.Servers
		}
		wire, _ := protocol.String(protocol.Fields(request, name)[0])
		f.mu.Lock()
		orig, ours := names[wire]
		f.mu.Unlock()
		if ours {
			var body map[string]json.RawMessage
			if json.Unmarshal(request, &body) == nil {
				body[name], _ = json.Marshal(orig)
				request, _ = json.Marshal(body)
			}
			f.tap(s, protocol.DirOut, protocol.PartyAgentjq, line, 0)
			f.markAgentjqs(key)
			cr.Request = request
			s.ctl.startAnswer(ctx, cr)
			return true
		}
	}
	f.mu.Lock()
	f.atClient[key] = p
	f.mu.Unlock()
	s.notify() // a client whose input ended will not answer it
	return false
}

// forwardReadyToClose closes the agent's stdin once the client's is
// closed and agentjq owes the agent nothing: the agent then ends as it
// would with the client alone. It never starts a staged shutdown.
//
// What agentjq owes are the answers it gives itself (a policy deny, its
// own hooks and MCP servers): while a turn of the client's runs, the agent
// may still ask for one, so the agent's stdin stays open until the turn's
// result. The hold ends sooner when the agent asks what only the client
// could answer (it never will now: the agent gets its EOF, as it would
// without agentjq), and when the agent has been silent for forwardQuiet
// graces with nothing pending (a turn whose result never comes).
func (f *forwarder) forwardReadyToClose() bool {
	s := f.s
	s.mu.Lock()
	done := s.inputDone && len(s.ctl.pending) == 0
	hold := done && s.turns.inFlightLocked() > 0 && time.Since(s.lastOutput) < forwardQuiet*s.opts.Grace
	s.mu.Unlock()
	if hold {
		f.mu.Lock()
		hold = len(f.atClient) == 0
		recheck := hold && !f.recheck
		f.recheck = f.recheck || recheck
		f.mu.Unlock()
		if recheck {
			// Look again when the agent may have gone quiet.
			time.AfterFunc(s.opts.Grace, func() {
				f.mu.Lock()
				f.recheck = false
				f.mu.Unlock()
				s.notify()
			})
		}
	}
	if done && !hold {
		s.stdin.close()
	}
	return false
}

// forwardQuiet is, in graces, how long the agent may be silent in a turn
// of a client whose input ended before agentjq stops holding the agent's
// stdin open for it.
const forwardQuiet = 2

// forwardSignal passes a signal to the agent; SIGPIPE (our stdout gone)
// stays agentjq's.
func (f *forwarder) forwardSignal(sig os.Signal) bool {
	s := f.s
	if sig == syscall.SIGPIPE {
		return false
	}
	if ss, ok := sig.(syscall.Signal); ok {
		_ = s.cmd.Signal(ss)
	}
	return true
}

// forwardStatusLocked is the agent's exit status as a shell reports it:
// 128+N when signal N killed it, 0 when agentjq ended it after its work
// was done. s.mu is held.
func (f *forwarder) forwardStatusLocked() int {
	s := f.s
	if s.reaped {
		return 0
	}
	ps := s.cmd.ProcessState
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// passOnly are the starts of the lines a proxy never acts on (see also
// systemPrefix). The CLI writes "type" first in these (JSON.stringify
// keeps insertion order, and it has no duplicate keys); any other line, a
// control line with its keys in another order too, is scanned.
var passOnly = [][]byte{[]byte(`{"type":"assistant"`), []byte(`{"type":"user"`), []byte(`{"type":"stream_event"`)}

// classifyForward is classify without scanning the lines that start as a
// pass-only line does.
func classifyForward(line []byte) (lineKind, protocol.Head) {
	if startsPassOnly(line) {
		return linePlain, protocol.Head{}
	}
	return classify(line)
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
