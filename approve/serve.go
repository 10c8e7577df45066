package approve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/agentjq/agentjq/internal/protocol"
)

// session tracks the facts of a stream policies see.
type session struct {
	cwd, id, mode string
	// bash follows the Bash calls of the stream (nil: the decider does not
	// track the shell's directory). See Chain.ObserveBash.
	bash bashObserver
}

// bashObserver follows Bash calls the stream shows: Chain.
type bashObserver interface {
	ObserveBash(cwd, toolUseID string, input json.RawMessage)
}

func newSession(cwd string, d Decider) *session {
	s := &session{cwd: cwd}
	s.bash, _ = d.(bashObserver)
	return s
}

func (s *session) observe(env protocol.Envelope, line []byte) {
	if env.Type == protocol.TypeAssistant && s.bash != nil {
		s.observeBash(line)
		return
	}
	if env.Type != protocol.TypeSystem {
		return
	}
	var init struct {
		Subtype        string `json:"subtype"`
		Cwd            string `json:"cwd"`
		SessionID      string `json:"session_id"`
		PermissionMode string `json:"permissionMode"`
	}
	if json.Unmarshal(line, &init) != nil {
		return
	}
	if init.Subtype == "init" && init.Cwd != "" {
		s.cwd = init.Cwd
	}
	if init.SessionID != "" {
		s.id = init.SessionID
	}
	if init.PermissionMode != "" {
		s.mode = init.PermissionMode
	}
}

// observeBash follows the Bash tool_use blocks of an assistant message:
// claude runs some (cd, read-only commands) without asking, and the shell
// stays where they leave it.
func (s *session) observeBash(line []byte) {
	if !bytes.Contains(line, []byte(`"Bash"`)) {
		return
	}
	var m struct {
		Message struct {
			Content []struct {
				Type  string          `json:"type"`
				ID    string          `json:"id"`
				Name  string          `json:"name"`
				Input json.RawMessage `json:"input"`
			} `json:"content"`
		} `json:"message"`
	}
	if json.Unmarshal(line, &m) != nil {
		return
	}
	for _, b := range m.Message.Content {
		if b.Type == "tool_use" && b.Name == "Bash" {
			s.bash.ObserveBash(s.cwd, b.ID, b.Input)
		}
	}
}

// requestOf reads a can_use_tool request from a line, if it is one.
func requestOf(line []byte, s *session) (*Request, bool, error) {
	env, err := protocol.DecodeEnvelope(line)
	if err != nil {
		return tooDeepRequest(line, s, err)
	}
	s.observe(env, line)
	if env.Type != protocol.TypeControlRequest || env.ControlSubtype() != protocol.SubCanUseTool {
		return nil, false, nil
	}
	req := &Request{RequestID: env.RequestID, Cwd: s.cwd, SessionID: s.id, PermissionMode: s.mode}
	if err := json.Unmarshal(env.Request, &req.CanUseTool); err != nil {
		return req, true, fmt.Errorf("can_use_tool: %v", err)
	}
	return req, true, nil
}

// tooDeepRequest reads, from a line encoding/json refused with err, a
// can_use_tool request that is only nested deeper than protocol.MaxDepth:
// valid JSON, whose head and fields the scanner still reads, so that it is
// answered (denied, with the scanner's "nesting deeper than" error)
// rather than left unanswered as "not JSON".
func tooDeepRequest(line []byte, s *session, err error) (*Request, bool, error) {
	head, scanErr := protocol.ScanLine(line)
	var deep *protocol.DepthError
	if !errors.As(scanErr, &deep) {
		return nil, false, err
	}
	typ, _, id := head.Strings()
	f := protocol.Fields(protocol.Fields(line, "request")[0], "subtype", "tool_name", "tool_use_id")
	if sub, _ := protocol.String(f[0]); typ != protocol.TypeControlRequest || sub != protocol.SubCanUseTool {
		return nil, false, scanErr
	}
	req := &Request{RequestID: id, Cwd: s.cwd, SessionID: s.id, PermissionMode: s.mode}
	req.Subtype = protocol.SubCanUseTool
	req.ToolName, _ = protocol.String(f[1])
	req.ToolUseID, _ = protocol.String(f[2])
	return req, true, fmt.Errorf("can_use_tool: %v", scanErr)
}

// ServeOptions configure Serve.
type ServeOptions struct {
	Cwd     string        // until the stream's system/init says otherwise
	Timeout time.Duration // per request; 0 means none
	Stderr  io.Writer
	Name    string // the input's name in messages
}

// Serve reads the agent's NDJSON and writes one control_response line for
// each can_use_tool request, and nothing else, flushing each. It returns
// the number of lines it could not read (reported on stderr).
func Serve(ctx context.Context, r io.Reader, w io.Writer, d Decider, opts ServeOptions) (int, error) {
	if opts.Stderr == nil {
		opts.Stderr = io.Discard
	}
	if opts.Name == "" {
		opts.Name = "stdin"
	}
	br := bufio.NewReaderSize(r, 64<<10)
	bw := bufio.NewWriter(w)
	s := newSession(opts.Cwd, d)
	bad := 0
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			req, ok, perr := requestOf(line, s)
			switch {
			case perr != nil && !ok:
				bad++
				fmt.Fprintf(opts.Stderr, "agentjq: %s:%d: %v\n", opts.Name, n, perr)
			case ok:
				var v Verdict
				if perr != nil {
					v = Verdict{Behavior: protocol.Deny, Message: "agentjq: the request could not be read: " + perr.Error()}
					fmt.Fprintf(opts.Stderr, "agentjq: %s:%d: %v\n", opts.Name, n, perr)
				} else {
					v = decideWithin(ctx, d, req, opts.Timeout)
				}
				bw.Write(protocol.SuccessResponse(req.RequestID, v.Result(&req.CanUseTool)))
				bw.WriteByte('\n')
				if ferr := bw.Flush(); ferr != nil {
					return bad, ferr
				}
			}
		}
		if err == io.EOF {
			return bad, nil
		}
		if err != nil {
			return bad, err
		}
		if ctx.Err() != nil {
			return bad, ctx.Err()
		}
	}
}

func decideWithin(ctx context.Context, d Decider, req *Request, timeout time.Duration) Verdict {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	v, err := d.Decide(ctx, req)
	if err != nil || (v.Behavior != protocol.Allow && v.Behavior != protocol.Deny) {
		msg := NoApprover
		if err != nil {
			msg = "agentjq: the decision failed: " + err.Error()
		}
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return Verdict{Behavior: protocol.Deny, Source: protocol.ByTimeout, Message: "agentjq: no decision came within the approval timeout, so the call was denied."}
		}
		return Verdict{Behavior: protocol.Deny, Source: protocol.ByError, Message: msg}
	}
	return v
}

// TestResult is one request of a recording and what the policy decided.
type TestResult struct {
	File      string
	Line      int
	RequestID string
	ToolUseID string
	Tool      string
	Key       string // the key input: command, file path, URL...
	Verdict   Verdict
}

// String renders the result as one line of `approve test` output.
func (r TestResult) String() string {
	by := r.Verdict.Source
	if r.Verdict.Rule != "" {
		by += " " + r.Verdict.Rule
	}
	return fmt.Sprintf("%s:%d\t%s\t%s\t%s\t%s", r.File, r.Line, r.Tool, r.Key, r.Verdict.Behavior, by)
}

// A Tester runs a decider over the can_use_tool requests of one
// recording or capture, line by line: `approve test`. Reading the file
// (a raw capture or a recording) is the caller's, so the chain knows
// nothing of the recording format.
type Tester struct {
	ctx     context.Context
	name    string
	s       *session
	d       Decider
	stderr  io.Writer
	Results []TestResult
}

// NewTester tests d over the stream called name; cwd applies until the
// stream names one.
func NewTester(ctx context.Context, name string, d Decider, cwd string, stderr io.Writer) *Tester {
	return &Tester{ctx: ctx, name: name, s: newSession(cwd, d), d: d, stderr: stderr}
}

// SetCwd sets the working directory the requests are judged in (a
// recording's header names it).
func (t *Tester) SetCwd(cwd string) { t.s.cwd = cwd }

// Line looks at one line of the agent's stdout, numbered num.
func (t *Tester) Line(num int, text []byte) {
	if len(bytes.TrimSpace(text)) == 0 {
		return
	}
	req, ok, perr := requestOf(text, t.s)
	if perr != nil {
		fmt.Fprintf(t.stderr, "agentjq: %s:%d: %v\n", t.name, num, perr)
	}
	if ok && perr == nil {
		v := decideWithin(t.ctx, t.d, req, time.Minute)
		t.Results = append(t.Results, TestResult{File: t.name, Line: num, RequestID: req.RequestID, ToolUseID: req.ToolUseID,
			Tool: req.ToolName, Key: KeyInput(req), Verdict: v})
	}
}

// KeyInput is the one input field that says what a call does, on one
// line: protocol.ToolKey, as the view and agentlib's key_input show it.
func KeyInput(req *Request) string {
	return protocol.ToolKeyJSON(req.ToolName, req.Input).Short(120)
}

// Expectation is one line of an --expect file: a request (by tool_use_id,
// request_id, or FILE:LINE) and the behavior it must get.
type Expectation struct {
	Selector, Behavior string
	Line               int
}

// ParseExpectations reads an --expect file: "SELECTOR BEHAVIOR" per line,
// # comments and blank lines ignored.
func ParseExpectations(name string, data []byte) ([]Expectation, error) {
	var out []Expectation
	for i, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		f := strings.Fields(l)
		if len(f) != 2 || (f[1] != protocol.Allow && f[1] != protocol.Deny) {
			return nil, &PolicyError{File: name, Line: i + 1, Col: 1, Msg: `want "SELECTOR allow|deny" (SELECTOR: a tool_use_id, a request_id or FILE:LINE)`}
		}
		out = append(out, Expectation{Selector: f[0], Behavior: f[1], Line: i + 1})
	}
	return out, nil
}

// CheckExpectations compares results with expectations and returns one
// message per difference.
func CheckExpectations(results []TestResult, exp []Expectation) []string {
	var diffs []string
	for _, e := range exp {
		found := false
		for _, r := range results {
			if e.Selector != r.ToolUseID && e.Selector != r.RequestID && e.Selector != fmt.Sprintf("%s:%d", r.File, r.Line) {
				continue
			}
			found = true
			if r.Verdict.Behavior != e.Behavior {
				diffs = append(diffs, fmt.Sprintf("%s: %s %s: got %s (%s %s), want %s", e.Selector, r.Tool, r.Key, r.Verdict.Behavior, r.Verdict.Source, r.Verdict.Rule, e.Behavior))
			}
		}
		if !found {
			diffs = append(diffs, fmt.Sprintf("%s: no such request in the recordings (expect line %d)", e.Selector, e.Line))
		}
	}
	return diffs
}

// ReadRequest reads one request for `approve explain`: a control_request
// line, or the can_use_tool body alone ({"tool_name":..,"input":..}).
func ReadRequest(r io.Reader, cwd string) (*Request, error) {
	data, err := io.ReadAll(io.LimitReader(r, 256<<20))
	if err != nil {
		return nil, err
	}
	data = bytes.TrimSpace(data)
	s := &session{cwd: cwd}
	if req, ok, err := requestOf(data, s); ok || err != nil {
		if err != nil {
			return nil, err
		}
		return req, nil
	}
	req := &Request{Cwd: cwd}
	var extra struct {
		Cwd            string `json:"cwd"`
		SessionID      string `json:"session_id"`
		PermissionMode string `json:"permission_mode"`
	}
	if err := json.Unmarshal(data, &req.CanUseTool); err != nil {
		return nil, fmt.Errorf("not a can_use_tool request: %v", err)
	}
	_ = json.Unmarshal(data, &extra)
	if req.ToolName == "" {
		return nil, errors.New("not a can_use_tool request: no tool_name")
	}
	if extra.Cwd != "" {
		req.Cwd = extra.Cwd
	}
	req.SessionID, req.PermissionMode = extra.SessionID, extra.PermissionMode
	if len(req.Input) == 0 {
		req.Input = json.RawMessage(`{}`)
	}
	return req, nil
}
