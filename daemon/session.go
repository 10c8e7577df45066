package daemon

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/agentjq/agentjq/approve"
	"github.com/agentjq/agentjq/internal/bridge"
	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/jsonrpc"
	"github.com/agentjq/agentjq/recording"
	"github.com/agentjq/agentjq/redact"
)

// DirDaemon is the recording direction of the daemon's events: the
// session.event params, byte for byte as sent (agentjq-recording(5)).
// Readers that do not know it skip it.
const DirDaemon protocol.Direction = "daemon"

// Session is one agent session.
type Session struct {
	srv      *Server
	ID       string
	Workdir  string
	Agent    string
	Model    string
	created  time.Time
	path     string
	partial  bool
	readOnly bool // an ended session of an earlier daemon

	stdin *io.PipeWriter
	sigs  chan os.Signal
	chain *approve.Chain
	rec   *recording.Writer
	red   *redact.Redactor
	file  *os.File

	// mu is the append lock: an event is given its seq, written to the
	// recording and handed to the subscribers under it, so a subscriber
	// registered under it sees every later event and the file every
	// earlier one.
	mu     sync.Mutex
	seq    int64
	subs   map[*subscription]struct{}
	isEnd  bool
	report bridge.Report

	// From the agent's stream.
	infoMu    sync.Mutex
	mode      string
	agentSID  string
	tools     []string
	commands  []CommandInfo
	subagents subagents
	ownReqs   map[string]string
	waiting   map[string]chan controlAnswer // own requests whose answer a method waits for
	reqSeq    int
	params    CreateParams // what it was created with (a fork's defaults)
	title     string       // session.titled's
	firstText string       // the first prompt's first line, the title without one
	modeSeen  atomic.Bool
	closeOnce sync.Once

	done chan struct{}
}

func newSessionID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b)
}

func (s *Session) ended() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.isEnd
}

// seqAndOffset is the last seq and where the recording stood then: every
// later event is written past that offset (events are written whole,
// under the append lock). 0 when the file is not at hand (an ended
// session).
func (s *Session) seqAndOffset() (int64, int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var off int64
	if s.file != nil && !s.isEnd {
		if o, err := s.file.Seek(0, io.SeekCurrent); err == nil {
			off = o
		}
	}
	return s.seq, off
}

func (s *Session) lastSeq() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seq
}

func (s *Session) info() SessionInfo {
	s.mu.Lock()
	seq, ended, outcome := s.seq, s.isEnd, string(s.report.Outcome)
	s.mu.Unlock()
	s.infoMu.Lock()
	mode, asid, title := s.mode, s.agentSID, s.title
	if title == "" {
		title = s.firstText
	}
	s.infoMu.Unlock()
	return SessionInfo{SessionID: s.ID, Workdir: s.Workdir, Agent: s.Agent, Model: s.Model, Mode: mode,
		Created: s.created.UTC().Format(time.RFC3339Nano), Ended: ended, Outcome: outcome, LastSeq: seq,
		Recording: s.path, Pending: len(s.srv.approvals.list(s.ID)), AgentSessionID: asid, Title: title}
}

// start creates and runs a session.
func (srv *Server) startSession(p CreateParams) (*Session, error) {
	if srv.closing.Load() {
		return nil, rpcErr(CodeSessionEnded, "the daemon is shutting down", nil)
	}
	if srv.liveCount() >= srv.opts.MaxSessions {
		return nil, rpcErr(CodeOverloaded, fmt.Sprintf("%d sessions are running (serve --max-sessions)", srv.opts.MaxSessions), nil)
	}
	if p.Agent == "" {
		p.Agent = "claude"
	}
	if p.Agent != "claude" {
		return nil, rpcErr(CodeInvalidParams, "unknown agent "+p.Agent, nil)
	}
	if p.Workdir == "" || !filepath.IsAbs(p.Workdir) {
		return nil, rpcErr(CodeInvalidParams, "workdir must be an absolute path", nil)
	}
	if st, err := os.Stat(p.Workdir); err != nil || !st.IsDir() {
		return nil, rpcErr(CodeInvalidParams, "workdir "+p.Workdir+": not a directory", nil)
	}
	if p.Mode != "" && !validMode(p.Mode) {
		return nil, rpcErr(CodeInvalidParams, "unknown mode "+p.Mode, nil)
	}
	built := p
	built.Policy = srv.policyFiles(p.Policy)
	opts, chain, err := srv.opts.Build(built)
	if err != nil {
		return nil, rpcErr(CodeInvalidParams, err.Error(), nil)
	}
	s := &Session{srv: srv, ID: newSessionID(), Workdir: p.Workdir, Agent: p.Agent, Model: p.Model, created: time.Now(),
		partial: p.Partial, params: p, subs: map[*subscription]struct{}{}, chain: chain, mode: p.Mode,
		ownReqs: map[string]string{}, waiting: map[string]chan controlAnswer{}, done: make(chan struct{}), sigs: make(chan os.Signal, 4)}
	s.path = srv.recordingPath(s.ID)
	f, err := os.OpenFile(s.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		chain.Close()
		return nil, rpcErr(CodeInternal, err.Error(), nil)
	}
	s.file = f
	lookup := func(k string) (string, bool) {
		for _, kv := range srv.opts.Env {
			if v, ok := cutEnv(kv, k); ok {
				return v, true
			}
		}
		return "", false
	}
	s.red, err = redact.NewRedactor(redact.RedactSpec{Builtin: true}, lookup)
	if err != nil {
		f.Close()
		chain.Close()
		return nil, rpcErr(CodeInternal, err.Error(), nil)
	}
	// Synchronous writes: an event is on disk before any client sees it.
	s.rec, err = recording.NewWriter(f, recording.Header{Agent: p.Agent, AgentjqVersion: srv.opts.ServerVersion,
		Argv: append([]string{opts.Path}, opts.Args...), Cwd: p.Workdir}, recording.WriterOptions{Redactor: s.red})
	if err != nil {
		f.Close()
		chain.Close()
		return nil, rpcErr(CodeInternal, err.Error(), nil)
	}
	pr, pw := io.Pipe()
	s.stdin = pw
	// The session's own ends: turns from the clients, events to them, no
	// terminal. The builder's hooks, hosted tools and guard stay.
	opts.Approver = &clientDecider{s: s}
	opts.Tap, opts.TapErr = s.tap, nil
	opts.Stdin, opts.Stdout, opts.Stderr = pr, io.Discard, io.Discard
	opts.Signals = s.sigs
	opts.Gate, opts.Echo, opts.NoEvents = nil, false, false
	opts.Prompt, opts.HasPrompt = "", false
	opts.ApprovalTimeout = srv.opts.ApprovalTimeout
	if srv.opts.Grace != 0 {
		opts.Grace = srv.opts.Grace
	}
	// The create is answered once the agent has started: an agent that
	// cannot start fails it, as spawn exits 127.
	started := make(chan error, 1)
	opts.OnStart = func(err error) { started <- err }
	detach := srv.opts.Lifecycle.Attach(s.sigs)
	srv.mu.Lock()
	srv.sessions[s.ID] = s
	srv.mu.Unlock()
	srv.wg.Add(1)
	go func() {
		defer srv.wg.Done()
		defer detach()
		rep, err := bridge.Run(context.Background(), opts)
		pr.Close()
		var serr *bridge.StartError
		if errors.As(err, &serr) {
			rep.ExitCode = serr.ExitCode()
		}
		if err != nil && rep.Err == "" {
			rep.Err = err.Error()
		}
		s.end(rep)
	}()
	var serr error
	select {
	case serr = <-started:
	case <-s.done:
		serr = errors.New("the session ended before its agent started")
	}
	if serr != nil {
		<-s.done
		srv.mu.Lock()
		delete(srv.sessions, s.ID)
		srv.mu.Unlock()
		_ = os.Remove(s.path)
		return nil, rpcErr(CodeInternal, fmt.Sprintf("%v (serve --bin names the agent binary; spawn would exit %d)", serr, protocol.ExitNotFound), nil)
	}
	return s, nil
}

func cutEnv(kv, k string) (string, bool) {
	if len(kv) > len(k) && kv[:len(k)] == k && kv[len(k)] == '=' {
		return kv[len(k)+1:], true
	}
	return "", false
}

func validMode(m string) bool {
	switch m {
	case "default", "acceptEdits", "plan", "bypassPermissions", "dontAsk":
		return true
	}
	return false
}

func (s *Session) end(rep bridge.Report) {
	s.srv.approvals.endSession(s.ID)
	s.emit("session.ended", SessionEndedPayload{Outcome: string(rep.Outcome), ExitCode: rep.ExitCode, Error: rep.Err})
	s.mu.Lock()
	s.isEnd = true
	s.report = rep
	subs := s.subs
	s.mu.Unlock()
	_ = s.rec.Close()
	_ = s.file.Close()
	s.chain.Close()
	_ = subs
	close(s.done)
}

// tap sees every line of the session in order (the bridge's Tap): it
// records it and derives the daemon's events from the agent's lines.
func (s *Session) tap(dir protocol.Direction, line []byte, known protocol.Known) {
	s.rec.Tap(dir, line, known)
	switch dir {
	case protocol.DirOut:
		s.fromAgent(line)
	case protocol.DirEvent:
		s.fromBridge(line)
	}
}

// emit appends one event: seq, recording, subscribers, under the append lock.
func (s *Session) emit(kind string, payload any) int64 {
	p, err := json.Marshal(payload)
	if err != nil {
		p = []byte("null")
	}
	return s.emitRaw(kind, p)
}

func (s *Session) emitRaw(kind string, payload []byte) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.isEnd {
		return s.seq
	}
	s.seq++
	ev := Event{SessionID: s.ID, Seq: s.seq, Kind: kind, Payload: payload, TS: time.Now().UTC().Format(time.RFC3339Nano)}
	line, _ := json.Marshal(ev)
	// What the file holds is what is sent: redact first, then record and
	// send the same bytes (the Writer's own redaction leaves them as they are).
	line = s.red.Line(DirDaemon, line)
	s.rec.Tap(DirDaemon, line, 0)
	if len(s.subs) > 0 {
		msg := eventMessage(line)
		for sub := range s.subs {
			sub.deliver(s.seq, kind, line, msg)
		}
	}
	return s.seq
}

func eventMessage(params []byte) []byte {
	b := make([]byte, 0, len(params)+48)
	b = append(b, `{"jsonrpc":"2.0","method":"session.event","params":`...)
	b = append(b, params...)
	return append(b, '}')
}

// write sends a line to the agent's stdin (through the bridge).
func (s *Session) write(line []byte) error {
	if s.ended() {
		return rpcErr(CodeSessionEnded, "session "+s.ID+" has ended", nil)
	}
	_, err := s.stdin.Write(append(append([]byte(nil), line...), '\n'))
	if err != nil {
		return rpcErr(CodeSessionEnded, "session "+s.ID+" no longer takes input", nil)
	}
	return nil
}

// turn sends a user message and returns the seq of its turn.started.
func (s *Session) turn(text string, message json.RawMessage) (int64, error) {
	var line []byte
	if message != nil {
		var m map[string]json.RawMessage
		if json.Unmarshal(message, &m) != nil {
			return 0, rpcErr(CodeInvalidParams, "message must be a JSON object", nil)
		}
		line, _ = json.Marshal(map[string]any{"type": "user", "message": message, "parent_tool_use_id": nil, "session_id": ""})
	} else {
		if text == "" {
			return 0, rpcErr(CodeInvalidParams, "text or message is required", nil)
		}
		line = protocol.UserTurn(text)
	}
	if s.ended() {
		return 0, rpcErr(CodeSessionEnded, "session "+s.ID+" has ended", nil)
	}
	s.noteText(text)
	seq := s.emit("turn.started", TurnStartedPayload{Text: text})
	if err := s.write(line); err != nil {
		return 0, err
	}
	return seq, nil
}

// noteText keeps the first prompt's first line, cut at 80 characters:
// the title of a session nobody named.
func (s *Session) noteText(text string) {
	line, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	line = strings.TrimSpace(line)
	if r := []rune(line); len(r) > 80 {
		line = string(r[:79]) + "…"
	}
	s.infoMu.Lock()
	if s.firstText == "" {
		s.firstText = line
	}
	s.infoMu.Unlock()
}

// setTitle names the session: a session.titled event, so that the
// recording keeps it.
func (s *Session) setTitle(t string) {
	s.infoMu.Lock()
	s.title = t
	s.infoMu.Unlock()
	s.emit("session.titled", TitledPayload{Title: t})
}

// controlAnswer is claude's control_response to one of the daemon's own
// requests.
type controlAnswer struct {
	ok   bool
	err  string
	body json.RawMessage
}

// steer writes a user message with a uuid, then claude's interrupt with
// send_now for it (the send-now key of claude's own terminal): the
// running turn takes the message in rather than queueing it for a turn
// of its own. It waits, bounded, for claude's answer.
func (s *Session) steer(ctx context.Context, text string) (SteerResult, error) {
	uuid := protocol.NewUUID()
	line, _ := json.Marshal(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": text},
		"parent_tool_use_id": nil, "session_id": "", "uuid": uuid})
	if s.ended() {
		return SteerResult{}, rpcErr(CodeSessionEnded, "session "+s.ID+" has ended", nil)
	}
	s.noteText(text)
	seq := s.emit("turn.steered", TurnStartedPayload{Text: text})
	if err := s.write(line); err != nil {
		return SteerResult{}, err
	}
	ch := make(chan controlAnswer, 1)
	if err := s.controlWith(protocol.SubInterrupt, map[string]any{"send_now": true, "message_uuid": uuid}, ch); err != nil {
		return SteerResult{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, steerWait)
	defer cancel()
	select {
	case a := <-ch:
		if !a.ok {
			return SteerResult{}, rpcErr(CodeInternal, "claude refused the send-now: "+a.err, nil)
		}
		var r struct {
			SendNow string `json:"send_now"`
		}
		_ = json.Unmarshal(a.body, &r)
		return SteerResult{FirstSeq: seq, SendNow: r.SendNow}, nil
	case <-s.done:
		return SteerResult{}, rpcErr(CodeSessionEnded, "session "+s.ID+" has ended", nil)
	case <-ctx.Done():
		return SteerResult{}, rpcErr(CodeInternal, fmt.Sprintf("claude did not answer the send-now within %s", steerWait), nil)
	}
}

// steerWait bounds session.steer's wait for claude's answer.
const steerWait = 30 * time.Second

func (s *Session) control(subtype string, body map[string]any) error {
	return s.controlWith(subtype, body, nil)
}

// controlWith sends one of the daemon's own control requests; its answer
// goes to answer, when not nil.
func (s *Session) controlWith(subtype string, body map[string]any, answer chan controlAnswer) error {
	s.infoMu.Lock()
	s.reqSeq++
	id := fmt.Sprintf("agentjq-daemon-%s-%d", subtype, s.reqSeq)
	if answer != nil {
		s.waiting[id] = answer
	}
	s.ownReqs[id] = subtype
	if m, ok := body["mode"].(string); ok {
		s.ownReqs[id] = subtype + ":" + m
	}
	s.infoMu.Unlock()
	body["subtype"] = subtype
	return s.write(protocol.ControlRequest(id, body))
}

// interrupt stops the running turn: an interrupt control request of the
// daemon's own, which claude answers and which ends the turn (its result
// comes, error_during_execution), never the session. It is not the
// bridge's SIGINT: that is the start of the session's staged shutdown
// (interrupt, then close stdin once the turn and every background task
// are over, or after a grace), which ended the session, exit 130, once
// a backgrounded command finished (issue 25). serve's own signals still
// reach the session that way (Lifecycle).
func (s *Session) interrupt() error {
	if s.ended() {
		return rpcErr(CodeSessionEnded, "session "+s.ID+" has ended", nil)
	}
	return s.control(protocol.SubInterrupt, map[string]any{})
}

// close ends the session: stdin closed (the bridge ends it when nothing
// is in flight), and a SIGTERM (the staged shutdown) if it is busy.
func (s *Session) close() {
	s.closeOnce.Do(func() {
		s.stdin.Close()
		go func() {
			select {
			case <-s.done:
			case <-time.After(2 * time.Second):
				if s.srv.opts.Lifecycle.Signals() > 0 {
					return // serve's signals reach the session already
				}
				select {
				case s.sigs <- syscall.SIGTERM:
				default:
				}
			}
		}()
	})
}

// fromBridge turns agentjq's own events (warnings) into error events.
func (s *Session) fromBridge(line []byte) {
	var ev struct {
		Subtype string `json:"subtype"`
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	if json.Unmarshal(line, &ev) != nil {
		return
	}
	switch ev.Subtype {
	case "warning":
		s.emit("error", ErrorPayload{Code: ev.Code, Message: ev.Message})
	case protocol.EventSandbox:
		// What the OS sandbox stopped a call from doing.
		var sb protocol.Sandboxed
		json.Unmarshal(line, &sb)
		s.emit("error", ErrorPayload{Code: "sandbox_blocked", Message: "the sandbox blocked " + sb.Tool + " " + sb.ToolUseID + ": " + protocol.BlockedText(sb.Blocked)})
	}
}

// subscription is one client's interest in one session.
type subscription struct {
	sess  *Session
	c     *client
	kinds map[string]bool
	jq    *jqMatcher
	sent  atomic.Int64

	mu        sync.Mutex
	live      bool
	held      [][]byte
	heldBytes int
	// asked are the approvals sent (or held) on this subscription: each
	// approval.request reaches a subscriber once.
	asked map[string]bool
}

func (sub *subscription) wants(kind string, line []byte) bool {
	if sub.kinds != nil && !sub.kinds[kind] {
		return false
	}
	if sub.jq != nil {
		ok, err := sub.jq.Matches(line)
		return err == nil && ok
	}
	return true
}

// deliver is called under the session's append lock: never waits.
func (sub *subscription) deliver(seq int64, kind string, line, msg []byte) {
	if !sub.wants(kind, line) {
		return
	}
	sub.mu.Lock()
	defer sub.mu.Unlock()
	sub.queue(msg)
}

// queue sends msg, or holds it while the log is replayed (a full hold
// drops the client as a full queue does). Called under sub.mu.
func (sub *subscription) queue(msg []byte) {
	if !sub.live {
		if sub.heldBytes+len(msg) > sub.c.srv.opts.QueueBytes*hardCap {
			sub.c.overflow()
			return
		}
		sub.held = append(sub.held, msg)
		sub.heldBytes += len(msg)
		return
	}
	sub.c.send(msg)
}

// ask sends an approval.request in the order of the session's events:
// held with them while the log is replayed. Never waits.
func (sub *subscription) ask(id string, msg []byte) {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	if sub.asked[id] {
		return
	}
	sub.asked[id] = true
	sub.queue(msg)
}

func (s *Session) unsubscribe(sub *subscription) {
	s.mu.Lock()
	delete(s.subs, sub)
	s.mu.Unlock()
}

// subscribe registers c at the current seq, then replays the log from
// afterSeq up to that seq and turns live: no gap, no duplicate. A call
// that fails (a bad filter, a gap, a log that cannot be read) leaves the
// client's subscription to s, if any, as it was: the log is read, and
// the gap checked, before the old subscription is replaced.
func (s *Session) subscribe(ctx context.Context, c *client, afterSeq int64, kinds []string, jq string) (SubscribeResult, error) {
	sub := &subscription{sess: s, c: c, asked: map[string]bool{}}
	if len(kinds) > 0 {
		sub.kinds = map[string]bool{}
		for _, k := range kinds {
			sub.kinds[k] = true
		}
	}
	if jq != "" {
		p, err := compileMatcher(jq)
		if err != nil {
			return SubscribeResult{}, rpcErr(CodeInvalidParams, "filter: "+err.Error(), nil)
		}
		sub.jq = p
	}
	// The log up to the seq of now, read with nothing registered yet.
	upTo, off := s.seqAndOffset()
	gap := func(msg string, last int64) error {
		return rpcErr(CodeResumeGap, msg, map[string]any{"lastSeq": last})
	}
	if afterSeq > upTo {
		return SubscribeResult{}, gap(fmt.Sprintf("afterSeq %d is beyond the session's last seq %d", afterSeq, upTo), upTo)
	}
	var events []loggedEvent
	if afterSeq < upTo {
		var err error
		events, off, err = readEventsFrom(s.path, 0, afterSeq, upTo)
		if err == nil && len(events) != int(upTo-afterSeq) {
			err = fmt.Errorf("the log holds %d of the events %d..%d", len(events), afterSeq+1, upTo)
		}
		if err != nil {
			return SubscribeResult{}, gap(err.Error(), upTo)
		}
	}
	// Then, under the append lock, the events written since (the lines
	// past off, where the log stood at upTo: the synchronous writer has
	// them on disk), and the swap of the old subscription for the new one
	// at that seq.
	c.mu.Lock()
	old := c.subs[s.ID]
	c.mu.Unlock()
	s.mu.Lock()
	if s.seq > upTo {
		more, _, err := readEventsFrom(s.path, off, upTo, s.seq)
		if err == nil && len(more) != int(s.seq-upTo) {
			err = fmt.Errorf("the log holds %d of the events %d..%d", len(more), upTo+1, s.seq)
		}
		if err != nil {
			last := s.seq
			s.mu.Unlock()
			return SubscribeResult{}, gap(err.Error(), last)
		}
		events, upTo = append(events, more...), s.seq
	}
	ended := s.isEnd
	if old != nil {
		delete(s.subs, old)
	}
	if !ended {
		s.subs[sub] = struct{}{}
	}
	s.mu.Unlock()
	c.mu.Lock()
	c.subs[s.ID] = sub
	c.mu.Unlock()

	for _, ev := range events {
		if sub.wants(ev.kind, ev.line) && !c.sendWait(ctx, eventMessage(ev.line)) {
			return SubscribeResult{}, jsonrpc.ErrClosed
		}
	}
	sub.mu.Lock()
	for _, m := range sub.held {
		c.send(m)
	}
	sub.held, sub.heldBytes = nil, 0
	sub.live = true
	// A pending approval outlives the connection that carried it: a
	// subscriber gets it again, with the same id, after the events.
	pending := s.srv.approvals.list(s.ID)
	for _, a := range pending {
		if !sub.asked[a.ID] {
			sub.asked[a.ID] = true
			c.send(approvalRequest(a))
		}
	}
	sub.mu.Unlock()
	if pending == nil {
		pending = []ApprovalInfo{}
	}
	return SubscribeResult{SessionID: s.ID, LastSeq: upTo, Ended: ended, Pending: pending}, nil
}

type loggedEvent struct {
	seq  int64
	kind string
	line []byte
}

// readEvents reads the daemon events after, up to upTo, from a recording.
func readEvents(path string, after, upTo int64) ([]loggedEvent, error) {
	out, _, err := readEventsFrom(path, 0, after, upTo)
	return out, err
}

// readEventsFrom is readEvents from byte offset off; it returns the
// offset past the last event up to upTo (off when there is none), where
// the events after upTo start.
func readEventsFrom(path string, off, after, upTo int64) ([]loggedEvent, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, off, err
	}
	defer f.Close()
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return nil, off, err
	}
	r := bufio.NewReaderSize(f, 1<<16)
	var out []loggedEvent
	needle := []byte(`"dir":"` + string(DirDaemon) + `"`)
	at, last := off, off
	for {
		line, err := r.ReadBytes('\n')
		at += int64(len(line))
		if len(line) > 0 && bytes.Contains(line, needle) {
			e, perr := recording.ParseEntry(line)
			if perr == nil && e.Dir == DirDaemon && e.Msg != nil {
				var ev struct {
					Seq  int64  `json:"seq"`
					Kind string `json:"kind"`
				}
				if json.Unmarshal(e.Msg, &ev) == nil && ev.Seq <= upTo {
					if err == nil {
						last = at
					}
					if ev.Seq > after {
						out = append(out, loggedEvent{seq: ev.Seq, kind: ev.Kind, line: append([]byte(nil), e.Msg...)})
					}
				}
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return out, last, nil
			}
			return out, last, err
		}
	}
}

// loadEnded makes an ended session of an earlier daemon readable.
func (srv *Server) loadEnded(id, path string) (*Session, error) {
	events, err := readEvents(path, 0, 1<<62)
	if err != nil {
		return nil, rpcErr(CodeInternal, err.Error(), nil)
	}
	s := &Session{srv: srv, ID: id, path: path, readOnly: true, isEnd: true, subs: map[*subscription]struct{}{}, done: make(chan struct{})}
	if n := len(events); n > 0 {
		s.seq = events[n-1].seq
	}
	for _, ev := range events {
		var e struct {
			Payload struct {
				Text  string `json:"text"`
				Title string `json:"title"`
			} `json:"payload"`
		}
		switch ev.kind {
		case "turn.started":
			if json.Unmarshal(ev.line, &e) == nil && e.Payload.Text != "" {
				s.noteText(e.Payload.Text)
			}
		case "session.titled":
			if json.Unmarshal(ev.line, &e) == nil {
				s.title = e.Payload.Title
			}
		case "agent.line":
			if s.agentSID == "" && bytes.Contains(ev.line, []byte(`"subtype":"init"`)) {
				var l struct {
					Payload struct {
						Line agentLine `json:"line"`
					} `json:"payload"`
				}
				if json.Unmarshal(ev.line, &l) == nil && l.Payload.Line.Type == "system" && l.Payload.Line.Subtype == "init" {
					s.agentSID = l.Payload.Line.SessionID
				}
			}
		}
	}
	if f, err := os.Open(path); err == nil {
		line, _ := bufio.NewReader(f).ReadBytes('\n')
		f.Close()
		if h, err := recording.ParseHeader(line); err == nil {
			s.Workdir, s.Agent, s.created = h.Cwd, h.Agent, h.Started
		}
	}
	close(s.done)
	return s, nil
}
