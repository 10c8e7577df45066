package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/agentjq/agentjq/internal/bridge"
	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/jsonrpc"
)

// session is one ACP session: one bridge.Run session of claude.
type session struct {
	a   *Agent
	id  string
	cfg SessionConfig // how it was started; a restart resumes it

	inMu  sync.Mutex     // one line at a time to the bridge
	stdin *io.PipeWriter // turns and control requests for the bridge (mu)
	// stdinR is the bridge's end, made with the session so that a prompt
	// right after session/new has somewhere to go.
	stdinR *io.PipeReader

	mu      sync.Mutex
	mode    string
	turn    *turn
	ended   bool
	endErr  string
	perms   map[int]context.CancelCauseFunc // open request_permission calls
	permSeq int
	ctrlSeq int
	ctrl    map[string]chan string // our control requests → error text ("" ok)
	rules   map[string]string      // "always" answers: rule key → allow or deny
	denied  map[string]bool        // "always reject" answers by denyKey
	endedC  chan struct{}
	signals chan os.Signal // to the bridge: SIGTERM ends the session
	// gen counts the agents the session ran: a cancel the agent ignored
	// stops it, and the session goes on in a new one (resumed). Lines of
	// an earlier agent answer no turn.
	gen     int
	restart bool // the agent is being stopped for a new one
	closed  bool // close was called: no restart
}

type turn struct {
	done      chan turnEnd
	cancelled bool
}

// finish answers the turn once: a result, a cancel that ran out of
// patience, and the session's end may race.
func (t *turn) finish(e turnEnd) {
	select {
	case t.done <- e:
	default:
	}
}

type turnEnd struct {
	stop string
	err  error
}

// errCancelled is the cause of a permission request the client's
// session/cancel withdrew.
var errCancelled = errors.New("the turn was cancelled")

func newSession(a *Agent, id string) *session {
	r, w := io.Pipe()
	return &session{stdin: w, stdinR: r, a: a, id: id, mode: a.opts.Mode, perms: map[int]context.CancelCauseFunc{},
		ctrl: map[string]chan string{}, rules: map[string]string{}, denied: map[string]bool{}, endedC: make(chan struct{}),
		signals: make(chan os.Signal, 4)}
}

func (s *session) modes() sessionModeState {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := sessionModeState{CurrentModeID: s.mode, AvailableModes: []sessionMode{
		{ID: "default", Name: "Default", Description: "Ask for what the policies leave undecided"},
		{ID: "acceptEdits", Name: "Accept edits", Description: "claude accepts file edits without asking (agentjq's policies still screen every call)"},
		{ID: "plan", Name: "Plan", Description: "Plan only: no edits, no commands"},
		{ID: "dontAsk", Name: "Don't ask", Description: "Deny what is not already allowed, without asking"},
	}}
	if s.a.opts.AllowBypass {
		m.AvailableModes = append(m.AvailableModes, sessionMode{ID: "bypassPermissions", Name: "Bypass permissions",
			Description: "claude asks nothing (enabled with --allow-bypass-permissions)"})
	}
	return m
}

// run runs the bridge session and maps its stdout until it ends. When a
// cancel had to stop the agent (it ignored the interrupt), the session
// goes on in a new agent that resumes it; if that cannot start, the
// session ends saying why.
func (s *session) run(opts bridge.Options, done func() error) {
	detach := s.a.life.Attach(s.signals)
	defer detach()
	for {
		rep, err := s.runOnce(opts, done)
		why := "the agent's session ended"
		switch {
		case err != nil:
			why = err.Error()
		case rep.Err != "":
			why = fmt.Sprintf("the agent's session ended (%s): %s", rep.Outcome, rep.Err)
		}
		s.mu.Lock()
		again := s.restart && !s.closed
		s.restart = false
		s.mu.Unlock()
		if !again {
			s.end(why)
			return
		}
		// Signals meant for the agent stopped are not the new one's.
		for len(s.signals) > 0 {
			<-s.signals
		}
		cfg := s.cfg
		cfg.Resume, cfg.ForkOf = true, ""
		s.mu.Lock()
		cfg.Mode = s.mode
		s.mu.Unlock()
		if s.a.opts.RecordDir != "" {
			cfg.Record = nextSegment(s.a.opts.RecordDir, s.id)
		}
		var serr error
		opts, done, serr = s.a.opts.Start(cfg)
		if serr != nil {
			why = fmt.Sprintf("the agent ignored session/cancel and was stopped; starting a new one failed: %v", serr)
			s.mu.Lock()
			r := s.stdinR
			s.mu.Unlock()
			r.CloseWithError(errors.New(why))
			s.end(why)
			return
		}
	}
}

// runOnce runs one agent for the session.
func (s *session) runOnce(opts bridge.Options, done func() error) (bridge.Report, error) {
	s.mu.Lock()
	inR, gen := s.stdinR, s.gen
	s.mu.Unlock()
	outR, outW := io.Pipe()
	opts.Stdin, opts.Stdout = inR, outW
	opts.Signals = s.signals
	if opts.Stderr == nil {
		opts.Stderr = s.a.opts.Stderr
	}
	mapped := make(chan struct{})
	go func() { defer close(mapped); s.mapOutput(outR, gen) }()
	rep, err := bridge.Run(context.Background(), opts)
	outW.Close()
	inR.Close()
	<-mapped
	if done != nil {
		if derr := done(); derr != nil {
			fmt.Fprintf(s.a.opts.Stderr, "agentjq acp: session %s: %v\n", s.id, derr)
		}
	}
	return rep, err
}

func (s *session) end(why string) {
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return
	}
	s.ended, s.endErr = true, why
	t := s.turn
	s.turn = nil
	for _, c := range s.perms {
		c(errCancelled)
	}
	for id, ch := range s.ctrl {
		ch <- why
		delete(s.ctrl, id)
	}
	close(s.endedC)
	s.mu.Unlock()
	if t != nil {
		stop := turnEnd{err: errCode(jsonrpc.CodeInternalError, "%s", why)}
		if t.cancelled {
			stop = turnEnd{stop: StopCancelled}
		}
		t.finish(stop)
	}
}

// close ends the session with the bridge's staged shutdown (interrupt,
// close stdin, SIGTERM, SIGKILL, a grace period each), as SIGTERM does
// for spawn: a running turn has nobody left to read it, and an agent that
// ignores the interrupt must not keep the session, or agentjq, alive.
// With no turn running, closing stdin is the session's normal end. When
// the front end's signals started the end, the session has them already.
func (s *session) close() {
	s.mu.Lock()
	running := s.turn != nil
	s.closed = true
	s.mu.Unlock()
	term := func() {
		if s.a.life.Signals() == 0 {
			select {
			case s.signals <- syscall.SIGTERM:
			default:
			}
		}
	}
	if running {
		term()
	} else {
		// An agent that goes on writing after its stdin closed (the
		// bridge waits while it does) is stopped a grace later.
		time.AfterFunc(s.a.opts.Grace, func() {
			select {
			case <-s.endedC:
			default:
				term()
			}
		})
	}
	s.mu.Lock()
	w := s.stdin
	s.mu.Unlock()
	w.Close()
}

// closeWait is session/close: the session ends as close ends it (a
// running turn is interrupted and answered cancelled), and the response
// waits for that, at most the shutdown's bound.
func (s *session) closeWait() (any, error) {
	s.mu.Lock()
	if t := s.turn; t != nil {
		t.cancelled = true
	}
	s.mu.Unlock()
	s.close()
	select {
	case <-s.endedC:
	case <-time.After(s.a.life.Bound()):
		return nil, errCode(jsonrpc.CodeInternalError, "session %s did not end within %s", s.id, s.a.life.Bound())
	}
	// Closed means gone: later requests naming it find no session.
	s.a.forget(s)
	return struct{}{}, nil
}

func (s *session) mapOutput(r io.Reader, gen int) {
	m := NewMapper()
	br := newLineReader(r)
	for {
		line, err := br()
		if len(line) > 0 {
			s.handleLine(m, line, gen)
		}
		if err != nil {
			// Whatever the bridge writes must be read, or it stalls.
			io.Copy(io.Discard, r)
			return
		}
	}
}

func (s *session) handleLine(m *Mapper, line []byte, gen int) {
	out := m.Line(protocol.DirOut, line)
	s.mu.Lock()
	stale := gen != s.gen
	s.mu.Unlock()
	if stale {
		// The agent a cancel stopped: its late lines answer no turn.
		return
	}
	for _, u := range out.Updates {
		s.a.notify(s.id, u)
	}
	switch {
	case out.Result != nil:
		s.mu.Lock()
		t := s.turn
		s.turn = nil
		s.mu.Unlock()
		if t != nil {
			stop, err := StopReason(out.Result, t.cancelled)
			if err != nil {
				err = errCode(jsonrpc.CodeInternalError, "%v", err)
			}
			t.finish(turnEnd{stop: stop, err: err})
		}
	case out.ControlID != "":
		s.mu.Lock()
		ch := s.ctrl[out.ControlID]
		delete(s.ctrl, out.ControlID)
		s.mu.Unlock()
		if ch != nil {
			ch <- out.ControlErr
		}
	case out.Init != nil && out.Init.PermissionMode != "":
		s.mu.Lock()
		s.mode = out.Init.PermissionMode
		s.mu.Unlock()
	}
}

func newLineReader(r io.Reader) func() ([]byte, error) {
	buf := make([]byte, 0, 64<<10)
	tmp := make([]byte, 64<<10)
	var pending []byte
	return func() ([]byte, error) {
		for {
			if i := bytes.IndexByte(pending, '\n'); i >= 0 {
				line := append(buf[:0], pending[:i]...)
				pending = pending[i+1:]
				return line, nil
			}
			n, err := r.Read(tmp)
			pending = append(pending, tmp[:n]...)
			if err != nil {
				line := pending
				pending = nil
				return line, err
			}
		}
	}
}

func (s *session) writeLine(line []byte) error {
	s.inMu.Lock()
	defer s.inMu.Unlock()
	s.mu.Lock()
	w := s.stdin
	s.mu.Unlock()
	_, err := w.Write(append(line, '\n'))
	return err
}

// prompt sends one turn and waits for its result.
func (s *session) prompt(ctx context.Context, blocks []json.RawMessage) (any, error) {
	content, err := turnContent(blocks)
	if err != nil {
		return nil, err
	}
	t := &turn{done: make(chan turnEnd, 1)}
	s.mu.Lock()
	switch {
	case s.ended:
		s.mu.Unlock()
		return nil, errCode(jsonrpc.CodeInternalError, "%s", s.endErr)
	case s.turn != nil:
		s.mu.Unlock()
		return nil, errCode(jsonrpc.CodeInvalidRequest, "a prompt is already running in session %s", s.id)
	}
	s.turn = t
	s.mu.Unlock()
	line, _ := json.Marshal(map[string]any{
		"type": "user", "parent_tool_use_id": nil, "session_id": "",
		"message": map[string]any{"role": "user", "content": content},
	})
	if err := s.writeLine(line); err != nil {
		s.mu.Lock()
		if s.turn == t {
			s.turn = nil
		}
		s.mu.Unlock()
		return nil, errCode(jsonrpc.CodeInternalError, "sending the turn: %v", err)
	}
	select {
	case e := <-t.done:
		if e.err != nil {
			return nil, e.err
		}
		return promptResponse{StopReason: e.stop}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// turnContent turns ACP content blocks into claude's: text as it is, a
// resource link as a mention of its URI, an embedded text resource as
// text naming its URI, an image as an image block (base64). Audio is not
// offered in initialize.
func turnContent(blocks []json.RawMessage) ([]any, error) {
	var out []any
	for i, raw := range blocks {
		var b struct {
			Type     string `json:"type"`
			Text     string `json:"text"`
			URI      string `json:"uri"`
			Name     string `json:"name"`
			Data     string `json:"data"`
			MimeType string `json:"mimeType"`
			Resource struct {
				URI  string  `json:"uri"`
				Text *string `json:"text"`
			} `json:"resource"`
		}
		if err := json.Unmarshal(raw, &b); err != nil {
			return nil, errCode(jsonrpc.CodeInvalidParams, "prompt[%d]: %v", i, err)
		}
		var text string
		switch b.Type {
		case "text":
			text = b.Text
		case "resource_link":
			text = "@" + b.URI
		case "resource":
			if b.Resource.Text == nil {
				return nil, errCode(jsonrpc.CodeInvalidParams, "prompt[%d]: only text resources are supported", i)
			}
			text = fmt.Sprintf("<context ref=%q>\n%s\n</context>", b.Resource.URI, *b.Resource.Text)
		case "image":
			if b.Data == "" || b.MimeType == "" {
				return nil, errCode(jsonrpc.CodeInvalidParams, "prompt[%d]: an image needs its data (base64) and mimeType", i)
			}
			out = append(out, map[string]any{"type": "image",
				"source": map[string]string{"type": "base64", "media_type": b.MimeType, "data": b.Data}})
			continue
		default:
			return nil, errCode(jsonrpc.CodeInvalidParams, "prompt[%d]: %q content is not supported (see the prompt capabilities)", i, b.Type)
		}
		out = append(out, map[string]string{"type": "text", "text": text})
	}
	if len(out) == 0 {
		return nil, errCode(jsonrpc.CodeInvalidParams, "an empty prompt")
	}
	return out, nil
}

// cancel interrupts the running turn; every open permission request is
// answered as cancelled (a deny that stops the turn). An agent that does
// not end the turn within a grace is stopped as spawn's second SIGINT
// stops it (close its stdin, SIGTERM, then SIGKILL), the prompt is
// answered cancelled at once, and the session goes on in a new agent
// that resumes it (run).
func (s *session) cancel() {
	s.mu.Lock()
	if s.turn == nil || s.ended {
		s.mu.Unlock()
		return
	}
	t := s.turn
	t.cancelled = true
	for _, c := range s.perms {
		c(errCancelled)
	}
	s.ctrlSeq++
	id := "acp-interrupt-" + strconv.Itoa(s.ctrlSeq)
	s.mu.Unlock()
	line, _ := json.Marshal(map[string]any{"type": "control_request", "request_id": id,
		"request": map[string]string{"subtype": protocol.SubInterrupt}})
	s.writeLine(line)
	time.AfterFunc(s.a.opts.Grace, func() { s.cancelOverdue(t) })
}

// cancelOverdue stops an agent that did not end turn t after session/cancel.
func (s *session) cancelOverdue(t *turn) {
	s.mu.Lock()
	if s.turn != t || s.ended || s.closed {
		s.mu.Unlock()
		return
	}
	s.turn = nil
	s.restart = true
	s.gen++
	s.mu.Unlock()
	fmt.Fprintf(s.a.opts.Stderr, "agentjq acp: session %s: the agent did not end the turn within %s of session/cancel; stopping it and resuming the session in a new one\n", s.id, s.a.opts.Grace)
	t.finish(turnEnd{stop: StopCancelled})
	// Later prompts go to the new agent; the old one's input ends.
	r, w := io.Pipe()
	s.mu.Lock()
	old := s.stdin
	s.stdin, s.stdinR = w, r
	s.mu.Unlock()
	old.Close()
	// spawn's first and second SIGINT: interrupt, then SIGTERM (and the
	// bridge's SIGKILL a grace later).
	for range 2 {
		select {
		case s.signals <- syscall.SIGINT:
		default:
		}
	}
}

// setMode is set_permission_mode on the agent, then current_mode_update.
func (s *session) setMode(ctx context.Context, mode string) (any, error) {
	ok := false
	for _, m := range s.modes().AvailableModes {
		ok = ok || m.ID == mode
	}
	if !ok {
		return nil, errCode(jsonrpc.CodeInvalidParams, "unknown mode %q", mode)
	}
	ch := make(chan string, 1)
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return nil, errCode(jsonrpc.CodeInternalError, "%s", s.endErr)
	}
	s.ctrlSeq++
	id := "acp-mode-" + strconv.Itoa(s.ctrlSeq)
	s.ctrl[id] = ch
	s.mu.Unlock()
	line, _ := json.Marshal(map[string]any{"type": "control_request", "request_id": id,
		"request": map[string]string{"subtype": "set_permission_mode", "mode": mode}})
	if err := s.writeLine(line); err != nil {
		return nil, errCode(jsonrpc.CodeInternalError, "%v", err)
	}
	t := time.NewTimer(s.a.opts.ControlTimeout)
	defer t.Stop()
	select {
	case e := <-ch:
		if e != "" {
			return nil, errCode(jsonrpc.CodeInternalError, "set_permission_mode %s: %s", mode, e)
		}
	case <-t.C:
		s.mu.Lock()
		delete(s.ctrl, id)
		s.mu.Unlock()
		return nil, errCode(jsonrpc.CodeInternalError, "the agent did not answer set_permission_mode within %s", s.a.opts.ControlTimeout)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	s.mu.Lock()
	s.mode = mode
	s.mu.Unlock()
	s.a.notify(s.id, Update{SessionUpdate: "current_mode_update", CurrentModeID: mode})
	return struct{}{}, nil
}
