package approve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	"github.com/agentjq/agentjq/protocol"
)

// ApproverOptions describe an approver command.
type ApproverOptions struct {
	Command string // run with sh -c
	Dir     string
	Env     []string
	Stderr  io.Writer
	// Timeout bounds one answer when the request's context has no deadline.
	Timeout time.Duration
}

func (o ApproverOptions) timeout() time.Duration {
	if o.Timeout > 0 {
		return o.Timeout
	}
	return time.Minute
}

func (o ApproverOptions) command(ctx context.Context) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "sh", "-c", o.Command)
	cmd.Dir = o.Dir
	cmd.Env = o.Env
	setProcessGroup(cmd)
	cmd.WaitDelay = 2 * time.Second
	return cmd
}

func approverDeny(format string, a ...any) Verdict {
	return Verdict{Behavior: protocol.Deny, Message: "agentjq: " + fmt.Sprintf(format, a...) + ", so the call was denied.",
		Source: protocol.ByError, Rule: "approver"}
}

// CoProcess is a long-lived approver: one control_request line to its
// stdin per request, one line back (a control_response or a bare
// decision). Requests go one at a time. A crash, garbage or a timeout
// denies; a crashed process is restarted once.
type CoProcess struct {
	opts ApproverOptions
	sem  chan struct{}

	proc     *exec.Cmd
	cancel   context.CancelFunc
	stdin    io.WriteCloser
	lines    chan []byte
	crashes  int
	restarts int
	// stale counts answers still owed for requests given up on; they are
	// dropped when they come.
	stale    map[string]bool
	staleAny int
	closed   bool
}

// NewCoProcess prepares a co-process; it starts on the first request.
func NewCoProcess(opts ApproverOptions) *CoProcess {
	return &CoProcess{opts: opts, sem: make(chan struct{}, 1), stale: map[string]bool{}}
}

func (c *CoProcess) start() error {
	ctx, cancel := context.WithCancel(context.Background())
	cmd := c.opts.command(ctx)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		cancel()
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		return err
	}
	cmd.Stderr = c.opts.Stderr
	if err := cmd.Start(); err != nil {
		cancel()
		return err
	}
	lines := make(chan []byte, 4)
	go func() {
		defer close(lines)
		br := bufio.NewReaderSize(stdout, 64<<10)
		for {
			l, err := br.ReadBytes('\n')
			if len(bytes.TrimSpace(l)) > 0 {
				lines <- l
			}
			if err != nil {
				_ = cmd.Wait()
				return
			}
		}
	}()
	c.proc, c.cancel, c.stdin, c.lines = cmd, cancel, stdin, lines
	c.stale = map[string]bool{}
	c.staleAny = 0
	return nil
}

func (c *CoProcess) stop() {
	if c.proc == nil {
		return
	}
	_ = c.stdin.Close()
	c.cancel()
	for range c.lines { // the reader ends when the process is gone
	}
	c.proc = nil
}

// Close stops the co-process.
func (c *CoProcess) Close() error {
	c.sem <- struct{}{}
	defer func() { <-c.sem }()
	c.closed = true
	c.stop()
	return nil
}

// Decide asks the co-process.
func (c *CoProcess) Decide(ctx context.Context, req *Request) (Verdict, error) {
	select {
	case c.sem <- struct{}{}:
	case <-ctx.Done():
		return Verdict{}, ctx.Err()
	}
	defer func() { <-c.sem }()
	if c.closed {
		return approverDeny("the approver was stopped"), nil
	}
	if c.proc == nil {
		if c.crashes > 0 && c.restarts >= 1 {
			return approverDeny("the approver %q crashed again after a restart", c.opts.Command), nil
		}
		if c.crashes > 0 {
			c.restarts++
		}
		if err := c.start(); err != nil {
			c.crashes++
			return approverDeny("the approver %q did not start: %v", c.opts.Command, err), nil
		}
	}
	var limit <-chan time.Time
	if _, ok := ctx.Deadline(); !ok {
		t := time.NewTimer(c.opts.timeout())
		defer t.Stop()
		limit = t.C
	}
	line := append(protocol.ControlRequest(req.RequestID, &req.CanUseTool), '\n')
	wrote := make(chan error, 1)
	stdin := c.stdin
	go func() { _, err := stdin.Write(line); wrote <- err }()
	writing := true
	for {
		select {
		case err := <-wrote:
			writing = false
			if err != nil {
				c.crash()
				return approverDeny("the approver %q stopped reading its input (%v)", c.opts.Command, err), nil
			}
		case l, ok := <-c.lines:
			if !ok {
				c.crash()
				return approverDeny("the approver %q exited", c.opts.Command), nil
			}
			v, mine, err := c.parse(req, l)
			if !mine {
				continue
			}
			if err != nil {
				fmt.Fprintf(c.opts.Stderr, "agentjq: approver: %v\n", err)
				return approverDeny("the approver answered with something agentjq cannot read (%v)", err), nil
			}
			return v, nil
		case <-ctx.Done():
			if writing {
				c.stop() // wedged mid-line: start afresh next time
			} else {
				c.stale[req.RequestID] = true
				c.staleAny++
			}
			return Verdict{}, ctx.Err()
		case <-limit:
			c.stop()
			return Verdict{Behavior: protocol.Deny, Source: protocol.ByTimeout, Rule: "approver",
				Message: fmt.Sprintf("agentjq: the approver did not answer within %s, so the call was denied.", c.opts.timeout())}, nil
		}
	}
}

func (c *CoProcess) crash() {
	c.crashes++
	c.stop()
}

// approverLine is either a control_response or a bare decision.
type approverLine struct {
	Type     string `json:"type"`
	Response *struct {
		Subtype   string          `json:"subtype"`
		RequestID string          `json:"request_id"`
		Response  json.RawMessage `json:"response"`
		Error     string          `json:"error"`
	} `json:"response"`
	protocol.PermissionResult
}

// parse reads one line; mine is false for a late answer to a request given
// up on, which is dropped.
func (c *CoProcess) parse(req *Request, l []byte) (Verdict, bool, error) {
	var a approverLine
	if err := decodeStrict(l, &a); err != nil {
		return Verdict{}, c.dropStale(""), fmt.Errorf("not JSON: %s", clip(strings.TrimSpace(string(l)), 120))
	}
	var pr protocol.PermissionResult
	if a.Type == protocol.TypeControlResp {
		if a.Response == nil {
			return Verdict{}, true, errors.New("a control_response without response")
		}
		if id := a.Response.RequestID; id != "" && id != req.RequestID {
			if c.stale[id] {
				delete(c.stale, id)
				c.staleAny--
				return Verdict{}, false, nil
			}
			return Verdict{}, true, fmt.Errorf("answer for request %q, want %q", id, req.RequestID)
		}
		if a.Response.Subtype == "error" {
			return Verdict{Behavior: protocol.Deny, Source: protocol.ByApprover, Rule: "approver",
				Message: "agentjq: the approver refused: " + a.Response.Error}, true, nil
		}
		if err := decodeStrict(a.Response.Response, &pr); err != nil {
			return Verdict{}, true, fmt.Errorf("response: %v", err)
		}
	} else {
		if !c.dropStale("") {
			return Verdict{}, false, nil
		}
		pr = a.PermissionResult
	}
	v := Verdict{Behavior: pr.Behavior, Message: pr.Message, UpdatedInput: pr.UpdatedInput,
		UpdatedPermissions: pr.UpdatedPermissions, Interrupt: pr.Interrupt, Source: protocol.ByApprover, Rule: "approver"}
	switch pr.Behavior {
	case protocol.Allow, protocol.Ask:
	case protocol.Deny:
		if v.Message == "" {
			v.Message = "agentjq: denied by the approver."
		}
	default:
		return Verdict{}, true, fmt.Errorf("behavior %q is not allow, deny or ask", pr.Behavior)
	}
	return v, true, nil
}

// dropStale reports whether a line without a request id belongs to the
// current request (false: it answers one given up on).
func (c *CoProcess) dropStale(string) bool {
	if c.staleAny > 0 {
		c.staleAny--
		for id := range c.stale {
			delete(c.stale, id)
			break
		}
		return false
	}
	return true
}

// Hook runs a Claude Code PreToolUse hook command per request: hook input
// JSON on stdin; hookSpecificOutput.permissionDecision (allow, deny, ask),
// permissionDecisionReason and updatedInput on stdout; exit 2 denies with
// stderr as the message. Empty output is no opinion; anything else that
// is not a decision denies.
type Hook struct{ opts ApproverOptions }

// NewHook prepares a hook approver.
func NewHook(opts ApproverOptions) *Hook { return &Hook{opts: opts} }

// Decide runs the hook once.
func (h *Hook) Decide(ctx context.Context, req *Request) (Verdict, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, h.opts.timeout())
		defer cancel()
	}
	in, _ := json.Marshal(map[string]any{
		"session_id": req.SessionID, "transcript_path": "", "cwd": req.Cwd, "permission_mode": req.PermissionMode,
		"hook_event_name": "PreToolUse", "tool_name": req.ToolName, "tool_input": json.RawMessage(orEmpty(req.Input)),
		"tool_use_id": req.ToolUseID,
	})
	cmd := h.opts.command(ctx)
	cmd.Stdin = bytes.NewReader(in)
	var out, errb limitedBuffer
	out.max, errb.max = 16<<20, 64<<10
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return Verdict{Behavior: protocol.Deny, Source: protocol.ByTimeout, Rule: "hook",
				Message: "agentjq: the hook did not answer in time, so the call was denied."}, nil
		}
		return Verdict{}, ctx.Err()
	}
	stderr := strings.TrimSpace(errb.String())
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 2 {
		if stderr == "" {
			stderr = "agentjq: the hook blocked this call."
		}
		return Verdict{Behavior: protocol.Deny, Message: stderr, Source: protocol.ByApprover, Rule: "hook exit 2"}, nil
	}
	if stderr != "" && h.opts.Stderr != nil {
		fmt.Fprintf(h.opts.Stderr, "%s\n", stderr)
	}
	if err != nil {
		v := approverDeny("the hook %q failed (%v)", h.opts.Command, err)
		v.Rule = "hook"
		return v, nil
	}
	v, perr := parseHookOutput(req, out.Bytes())
	if perr != nil {
		fmt.Fprintf(h.opts.Stderr, "agentjq: hook: %v\n", perr)
		v := approverDeny("the hook answered with something agentjq cannot read (%v)", perr)
		v.Rule = "hook"
		return v, nil
	}
	return v, nil
}

func orEmpty(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage(`{}`)
	}
	return b
}

func parseHookOutput(req *Request, out []byte) (Verdict, error) {
	out = bytes.TrimSpace(out)
	if len(out) == 0 {
		return Verdict{}, nil
	}
	var h struct {
		Continue   *bool  `json:"continue"`
		StopReason string `json:"stopReason"`
		Decision   string `json:"decision"`
		Reason     string `json:"reason"`
		Specific   *struct {
			HookEventName string          `json:"hookEventName"`
			Decision      string          `json:"permissionDecision"`
			Reason        string          `json:"permissionDecisionReason"`
			UpdatedInput  json.RawMessage `json:"updatedInput"`
		} `json:"hookSpecificOutput"`
	}
	if err := decodeStrict(out, &h); err != nil {
		return Verdict{}, fmt.Errorf("output is not hook JSON: %s", clip(string(out), 120))
	}
	v := Verdict{Source: protocol.ByApprover, Rule: "hook"}
	if h.Continue != nil && !*h.Continue {
		msg := h.StopReason
		if msg == "" {
			msg = "agentjq: the hook stopped the session."
		}
		return Verdict{Behavior: protocol.Deny, Interrupt: true, Message: msg, Source: protocol.ByApprover, Rule: "hook continue:false"}, nil
	}
	if s := h.Specific; s != nil && (s.HookEventName == "" || s.HookEventName == "PreToolUse") && s.Decision != "" {
		switch s.Decision {
		case protocol.Allow:
			v.Behavior, v.UpdatedInput = protocol.Allow, s.UpdatedInput
			if len(v.UpdatedInput) == 0 || string(v.UpdatedInput) == "{}" {
				v.UpdatedInput = req.Input
			}
		case protocol.Deny:
			v.Behavior, v.Message = protocol.Deny, s.Reason
		case protocol.Ask:
			v.Behavior, v.Message = protocol.Ask, s.Reason
		case "defer":
			return Verdict{}, nil
		default:
			return Verdict{}, fmt.Errorf("permissionDecision %q is not allow, deny or ask", s.Decision)
		}
	} else {
		switch h.Decision {
		case "approve":
			v.Behavior, v.UpdatedInput = protocol.Allow, req.Input
		case "block":
			v.Behavior, v.Message = protocol.Deny, h.Reason
		case "":
			return Verdict{}, nil
		default:
			return Verdict{}, fmt.Errorf("decision %q is not approve or block", h.Decision)
		}
	}
	if v.Behavior == protocol.Deny && v.Message == "" {
		v.Message = "agentjq: denied by the hook."
	}
	return v, nil
}

// limitedBuffer keeps the first max bytes written to it.
type limitedBuffer struct {
	bytes.Buffer
	max int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.Len(); room > 0 {
		if len(p) > room {
			b.Buffer.Write(p[:room])
		} else {
			b.Buffer.Write(p)
		}
	}
	return len(p), nil
}
