package replay

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/recording"
	"github.com/agentjq/agentjq/redact"
)

// AgentOptions configure AsAgent.
type AgentOptions struct {
	// Stderr receives the agent's recorded stderr lines; nil drops them.
	Stderr io.Writer
	// Wait bounds every wait for a client line (default 30s).
	Wait time.Duration
	// Speed and IdleLimit pace the output as in Play (0: as fast as possible).
	Speed     float64
	IdleLimit time.Duration
	Faults    []Fault
	// LookupEnv resolves the values of the recording's --redact-env names,
	// so the client's lines are redacted as the recording was.
	LookupEnv func(string) (string, bool)
	Sleep     func(ctx context.Context, d time.Duration) error
	Now       func() time.Time
	// AnswerUnrecorded (replay --lenient) answers any client control
	// request the recording lacks with a success instead of failing. An
	// initialize the recording lacks is always answered, with the
	// recorded initialize's reply.
	AnswerUnrecorded bool
	// Sandboxed: the client turned the sandbox on (--settings). A
	// recording runs no commands, so it honours any sandbox: a recorded
	// init line that says "sandbox_enabled":false says true.
	Sandboxed bool
}

// MismatchError is a difference between what the client sent and what the
// recording holds. Its message is the report for a client author: the
// recording's seq, what was expected and what came, with a diff.
type MismatchError struct {
	Seq    int64 // the recorded entry concerned; 0 when none
	Reason string
	Want   []byte // the recorded line, if any
	Got    []byte // the client's line, if any
}

func (e *MismatchError) Error() string {
	var b strings.Builder
	if e.Seq > 0 {
		fmt.Fprintf(&b, "replay --as-agent: seq %d: %s", e.Seq, e.Reason)
	} else {
		fmt.Fprintf(&b, "replay --as-agent: %s", e.Reason)
	}
	if e.Want != nil {
		fmt.Fprintf(&b, "\n  recorded: %s", clip(e.Want))
	}
	if e.Got != nil {
		fmt.Fprintf(&b, "\n  received: %s", clip(e.Got))
	}
	if e.Want != nil && e.Got != nil {
		if d := JSONDiff(e.Want, e.Got); d != "" {
			b.WriteString("\n  diff (- recorded, + received):\n")
			for _, l := range strings.Split(strings.TrimRight(d, "\n"), "\n") {
				b.WriteString("    " + l + "\n")
			}
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// ExitCode is 1: the client under test misbehaved.
func (e *MismatchError) ExitCode() int { return protocol.ExitError }

func clip(b []byte) string {
	const n = 400
	if len(b) > n {
		return string(b[:n]) + fmt.Sprintf("... (%d bytes)", len(b))
	}
	return string(b)
}

// agentState is one as-agent session.
type agentState struct {
	entries   []recording.Entry
	satisfied []bool
	kinds     []inbound // decoded inbound entries, by index
	idMap     map[string]string
	red       *redact.Redactor
	lines     <-chan []byte
	readErr   <-chan error
	eof       bool
	wait      time.Duration
	answerAll bool // answer any control request the recording lacks
	stderr    io.Writer
	reply     func([]byte) error // writes a line to the client at once
}

type inbound struct {
	typ, subtype, requestID, responseID string
}

// AsAgent stands in for the agent: it writes the recording's agent output
// to stdout in order and, at each recorded inbound line, waits for the
// client's line on stdin and checks it (see MismatchError). Client control
// requests are matched by subtype and their recorded answers rewritten to
// the client's request_id; the client's control_responses are matched by
// request_id and decision; user turns by their text. It returns nil, an
// *ExitError with the recorded agent's exit code, or a *MismatchError.
//
// The goroutine reading stdin ends when stdin does; close it after
// AsAgent returns.
func AsAgent(ctx context.Context, h recording.Header, entries []recording.Entry, stdin io.Reader, stdout io.Writer, opts AgentOptions) error {
	if opts.Wait <= 0 {
		opts.Wait = 30 * time.Second
	}
	po := PlayOptions{Sleep: opts.Sleep, Now: opts.Now}
	po.defaults()
	s := &agentState{entries: entries, satisfied: make([]bool, len(entries)), kinds: make([]inbound, len(entries)), idMap: map[string]string{}, wait: opts.Wait,
		answerAll: opts.AnswerUnrecorded, stderr: opts.Stderr}
	if h.Redact != nil {
		red, err := redact.NewRedactor(*h.Redact, opts.LookupEnv)
		if err != nil {
			return fmt.Errorf("the recording's redactions: %w", err)
		}
		s.red = red
	}
	for i, e := range entries {
		if e.Dir == protocol.DirIn {
			s.kinds[i] = decodeInbound(e.Msg)
			// agentjq proxy answered these itself: no client sends them.
			s.satisfied[i] = e.Party == protocol.PartyAgentjq
		}
	}
	lines := make(chan []byte)
	readErr := make(chan error, 1)
	done := make(chan struct{})
	defer close(done)
	go func() {
		br := bufio.NewReaderSize(stdin, 64<<10)
		for {
			l, err := br.ReadBytes('\n')
			if len(bytes.TrimSpace(l)) > 0 {
				select {
				case lines <- bytes.TrimRight(l, "\r\n"):
				case <-done:
					return
				}
			}
			if err != nil {
				if err != io.EOF {
					readErr <- err
				}
				close(lines)
				return
			}
		}
	}()
	s.lines, s.readErr = lines, readErr

	bw := bufio.NewWriterSize(stdout, 64<<10)
	em := &emitter{w: bw, faults: opts.Faults, sleep: po.Sleep, flush: true}
	s.reply = func(line []byte) error {
		bw.Write(line)
		bw.WriteByte('\n')
		return bw.Flush()
	}
	p := pacer{speed: opts.Speed, idle: opts.IdleLimit}
	exitCode := -1
	for i, e := range entries {
		switch e.Dir {
		case protocol.DirOut:
			if e.Party == protocol.PartyAgentjq {
				continue // agentjq proxy kept it from the client
			}
			if d := p.wait(po.Now(), e.MS); d > 0 {
				if err := po.Sleep(ctx, d); err != nil {
					return err
				}
			}
			msg := s.rewrite(e.Msg)
			if opts.Sandboxed && bytes.Contains(msg, []byte(`"subtype":"init"`)) {
				msg = bytes.Replace(msg, []byte(`"sandbox_enabled":false`), []byte(`"sandbox_enabled":true`), 1)
			}
			if err := em.writeLine(ctx, e, msg); err != nil {
				return err
			}
		case protocol.DirErr:
			if opts.Stderr != nil {
				fmt.Fprintln(opts.Stderr, e.Text)
			}
		case protocol.DirEvent:
			if c, ok := exitEventCode(e.Msg); ok {
				exitCode = c
			}
		case protocol.DirIn:
			for !s.satisfied[i] {
				if err := s.next(ctx, i); err != nil {
					return err
				}
			}
		}
	}
	// The CLI lives until stdin closes; anything the client sends now was
	// not in the recording.
	if err := s.drain(ctx); err != nil {
		return err
	}
	if exitCode > 0 {
		return &ExitError{Code: exitCode, Reason: fmt.Sprintf("the recorded agent exited with status %d", exitCode)}
	}
	return nil
}

// next takes one client line and matches it; waiting names the entry the
// walker waits for.
func (s *agentState) next(ctx context.Context, waiting int) error {
	want := s.entries[waiting]
	if s.eof {
		return &MismatchError{Seq: want.Seq, Reason: fmt.Sprintf("the recorded input (%s) never came: the client closed stdin", kindOf(want.Msg)), Want: want.Msg}
	}
	t := time.NewTimer(s.wait)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case err := <-s.readErr:
		return fmt.Errorf("reading the client's stdin: %w", err)
	case <-t.C:
		return &MismatchError{Seq: want.Seq, Reason: fmt.Sprintf("the recorded input (%s) never came within %s", kindOf(want.Msg), s.wait), Want: want.Msg}
	case l, ok := <-s.lines:
		if !ok {
			s.eof = true
			return nil
		}
		return s.match(l, waiting)
	}
}

func (s *agentState) drain(ctx context.Context) error {
	t := time.NewTimer(s.wait)
	defer t.Stop()
	for !s.eof {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			return nil // the client keeps stdin open; the session is over anyway
		case l, ok := <-s.lines:
			if !ok {
				s.eof = true
				return nil
			}
			if err := s.match(l, -1); err != nil {
				return err
			}
		}
	}
	return nil
}

// match pairs a client line with a pending recorded inbound line.
func (s *agentState) match(got []byte, waiting int) error {
	if s.red != nil {
		got = s.red.Line(protocol.DirIn, got)
	}
	env, err := protocol.DecodeEnvelope(got)
	var wantSeq int64
	var wantMsg []byte
	if waiting >= 0 {
		wantSeq, wantMsg = s.entries[waiting].Seq, s.entries[waiting].Msg
	}
	if err != nil {
		return &MismatchError{Seq: wantSeq, Reason: "the client sent a line that is not a JSON object: " + err.Error(), Want: wantMsg, Got: got}
	}
	in := decodeInbound(got)
	idx := -1
	switch env.Type {
	case protocol.TypeControlResp:
		idx = s.find(func(k inbound) bool { return k.typ == env.Type && k.responseID == in.responseID })
		if idx < 0 {
			for i, k := range s.kinds {
				if s.entries[i].Dir == protocol.DirIn && k.typ == env.Type && k.responseID == in.responseID {
					return &MismatchError{Seq: s.entries[i].Seq, Reason: fmt.Sprintf("a second control_response for request_id %q", in.responseID), Want: s.entries[i].Msg, Got: got}
				}
			}
			return &MismatchError{Seq: wantSeq, Reason: fmt.Sprintf("a control_response for request_id %q, which the recording never answered (was it the id it was given?)", in.responseID), Want: wantMsg, Got: got}
		}
		want := s.entries[idx].Msg
		if wd, gd := decisionOf(want), decisionOf(got); !redact.MatchRedacted(wd, gd) {
			return &MismatchError{Seq: s.entries[idx].Seq, Reason: fmt.Sprintf("the control_response for %q decides %s, the recording %s", in.responseID, gd, wd), Want: want, Got: got}
		}
	case protocol.TypeControlRequest:
		idx = s.find(func(k inbound) bool { return k.typ == env.Type && k.subtype == in.subtype })
		if idx < 0 && (in.subtype == protocol.SubInitialize || s.answerAll) {
			return s.answerUnrecorded(in)
		}
		if idx < 0 {
			return &MismatchError{Seq: wantSeq, Reason: fmt.Sprintf("an unexpected control_request %s: the recording has no such request pending", in.subtype), Want: wantMsg, Got: got}
		}
		s.idMap[s.kinds[idx].requestID] = in.requestID
	case protocol.TypeUser:
		idx = s.find(func(k inbound) bool { return k.typ == env.Type })
		if idx < 0 {
			return &MismatchError{Seq: wantSeq, Reason: "an unexpected user turn: the recording has no more", Want: wantMsg, Got: got}
		}
		want := s.entries[idx].Msg
		if wt, gt := userText(want), userText(got); !redact.MatchRedacted(wt, gt) {
			return &MismatchError{Seq: s.entries[idx].Seq, Reason: fmt.Sprintf("the user turn says %q, the recording %q", clip([]byte(gt)), clip([]byte(wt))), Want: want, Got: got}
		}
	default:
		idx = s.find(func(k inbound) bool { return k.typ == env.Type })
		if idx < 0 {
			return &MismatchError{Seq: wantSeq, Reason: fmt.Sprintf("an unexpected %q line", env.Type), Want: wantMsg, Got: got}
		}
	}
	s.satisfied[idx] = true
	return nil
}

// find returns the first unsatisfied inbound entry accepted by ok.
func (s *agentState) find(ok func(inbound) bool) int {
	for i, e := range s.entries {
		if e.Dir == protocol.DirIn && !s.satisfied[i] && ok(s.kinds[i]) {
			return i
		}
	}
	return -1
}

// rewrite gives the client's request_id to the recorded answer to one of
// its control requests.
func (s *agentState) rewrite(msg []byte) []byte {
	if len(s.idMap) == 0 || msg == nil || !bytes.Contains(msg, []byte(`"control_response"`)) {
		return msg
	}
	k := decodeInbound(msg)
	to, ok := s.idMap[k.responseID]
	if !ok || to == k.responseID {
		return msg
	}
	from, _ := json.Marshal(k.responseID)
	repl, _ := json.Marshal(to)
	key := append([]byte(`"request_id":`), from...)
	i := bytes.Index(msg, key)
	if i < 0 {
		return msg
	}
	out := append([]byte(nil), msg[:i]...)
	out = append(out, `"request_id":`...)
	out = append(out, repl...)
	return append(out, msg[i+len(key):]...)
}

func decodeInbound(line []byte) inbound {
	env, err := protocol.DecodeEnvelope(line)
	if err != nil {
		return inbound{}
	}
	return inbound{typ: env.Type, subtype: env.ControlSubtype(), requestID: env.RequestID, responseID: env.ResponseID()}
}

// decisionOf summarises a control_response: its subtype and the decision
// it carries (behavior, a hook's permissionDecision, a question's answers).
func decisionOf(line []byte) string {
	var v struct {
		Response struct {
			Subtype  string `json:"subtype"`
			Response struct {
				Behavior     string          `json:"behavior"`
				UpdatedInput json.RawMessage `json:"updatedInput"`
				Hook         struct {
					Decision string `json:"permissionDecision"`
				} `json:"hookSpecificOutput"`
			} `json:"response"`
		} `json:"response"`
	}
	_ = json.Unmarshal(line, &v)
	r := v.Response
	parts := []string{r.Subtype}
	if r.Response.Behavior != "" {
		parts = append(parts, "behavior="+r.Response.Behavior)
	}
	if r.Response.Hook.Decision != "" {
		parts = append(parts, "permissionDecision="+r.Response.Hook.Decision)
	}
	var in struct {
		Answers json.RawMessage `json:"answers"`
	}
	if len(r.Response.UpdatedInput) > 0 && json.Unmarshal(r.Response.UpdatedInput, &in) == nil && len(in.Answers) > 0 {
		parts = append(parts, "answers="+canonicalJSON(in.Answers))
	}
	return strings.Join(parts, " ")
}

// userText is the text of a user turn as protocol.ContentText flattens
// it, blocks of other types marked; content of any other shape is its raw
// JSON, so that two odd turns still compare as what they are.
func userText(line []byte) string {
	var v struct {
		Message protocol.Message `json:"message"`
	}
	_ = json.Unmarshal(line, &v)
	c := v.Message.Content
	var s string
	var blocks []struct{ Type, Text string }
	if json.Unmarshal(c, &s) != nil && json.Unmarshal(c, &blocks) != nil {
		return string(c)
	}
	return protocol.ContentText(c, true)
}

func canonicalJSON(b []byte) string {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return string(b)
	}
	out, _ := json.Marshal(v) // maps come out sorted
	return string(out)
}

func exitEventCode(msg []byte) (int, bool) {
	var v struct {
		Type      string `json:"type"`
		Subtype   string `json:"subtype"`
		AgentExit *int   `json:"agent_exit"`
	}
	if json.Unmarshal(msg, &v) != nil || v.Type != protocol.TypeAgentjq || v.Subtype != protocol.EventExit || v.AgentExit == nil {
		return 0, false
	}
	return *v.AgentExit, true
}

// answerUnrecorded answers a client control request the recording lacks:
// an initialize with the recorded reply to the recording's initialize
// (whoever sent it), anything else with an empty success.
func (s *agentState) answerUnrecorded(in inbound) error {
	reply := protocol.SuccessResponse(in.requestID, nil)
	if in.subtype == protocol.SubInitialize {
		for i, k := range s.kinds {
			if s.entries[i].Dir != protocol.DirIn || k.typ != protocol.TypeControlRequest || k.subtype != protocol.SubInitialize {
				continue
			}
			for _, e := range s.entries {
				if e.Dir == protocol.DirOut && bytes.Contains(e.Msg, []byte(`"control_response"`)) && decodeInbound(e.Msg).responseID == k.requestID {
					s.idMap[k.requestID] = in.requestID
					reply = s.rewrite(e.Msg)
					break
				}
			}
			break
		}
	}
	if s.stderr != nil {
		fmt.Fprintf(s.stderr, "agentjq: replay --as-agent: answered the client's %s, which the recording lacks, from the recording\n", in.subtype)
	}
	return s.reply(reply)
}
