package approve

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/agentjq/agentjq/internal/proc"
	"github.com/agentjq/agentjq/internal/protocol"
)

// MaxApproverLine caps one line a co-process approver writes. A longer
// line is dropped as soon as it passes the cap; the request being decided is denied with a
// clear error and the approver is stopped (it had lost the protocol).
const MaxApproverLine = 16 << 20

// CoProcess is a long-lived approver: one control_request line to its
// stdin per request, one line back naming the same request_id (a
// control_response, or a bare decision with a request_id member).
//
// Requests go one at a time, in the order Decide was called (the
// semaphore's waiters are served first come, first served), so at most
// one request waits for the approver's answer. An answer is matched to
// its request by request_id only: an answer for another request and a
// second answer are reported on stderr and ignored, so neither can ever
// answer a later request. A line that is not an answer (not JSON, JSON of
// another shape that names no request, or an answer without request_id)
// denies the request waiting at once, saying what was wrong with the line
// (the requests queued behind it are not sent yet and are not touched);
// the approver's later answer to that request is dropped. A crash, an
// answer that is not a decision, a line over MaxApproverLine or no answer
// within the timeout denies too; a crashed process is restarted once.
type CoProcess struct {
	opts ApproverOptions
	sem  chan struct{}

	cmd      *proc.Cmd
	stdin    io.WriteCloser
	stdout   io.Closer
	lines    chan approverOutput
	crashes  int
	restarts int
	// givenUp holds the requests answered without the approver (withdrawn
	// or timed out): their late answers are dropped quietly.
	givenUp map[string]bool
	closed  bool
}

// approverOutput is one line read from the approver, or why it could not
// be read.
type approverOutput struct {
	line []byte
	err  error
}

// NewCoProcess prepares a co-process; it starts on the first request.
func NewCoProcess(opts ApproverOptions) *CoProcess {
	return &CoProcess{opts: opts, sem: make(chan struct{}, 1), givenUp: map[string]bool{}}
}

func (c *CoProcess) start() error {
	cmd := proc.Shell(c.opts.Command)
	cmd.Dir, cmd.Env = c.opts.Dir, c.opts.Env
	cmd.Stderr = c.opts.Stderr
	cmd.WaitDelay = 2 * time.Second
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	lines := make(chan approverOutput, 4)
	go func() {
		defer close(lines)
		br := bufio.NewReaderSize(stdout, 64<<10)
		for {
			l, err := proc.ReadLine(br, MaxApproverLine)
			if errors.Is(err, proc.ErrLineTooLong) {
				// The approver has lost the protocol; Decide stops it.
				lines <- approverOutput{err: err}
				_ = proc.SkipLine(br)
				continue
			}
			if len(bytes.TrimSpace(l)) > 0 {
				lines <- approverOutput{line: l}
			}
			if err != nil {
				_ = cmd.Wait()
				return
			}
		}
	}()
	c.cmd, c.stdin, c.stdout, c.lines = cmd, stdin, stdout, lines
	clear(c.givenUp)
	return nil
}

// stopWait bounds how long stop waits for the approver's stdout to end
// once its tree is killed.
const stopWait = 2 * time.Second

// stop kills the approver's tree and reads its stdout to the end. A
// process outside the tree that holds the pipe open (one handed to
// another manager, or any process on a system without the reaper) would
// keep that end from coming: after stopWait agentjq stops reading.
func (c *CoProcess) stop() {
	if c.cmd == nil {
		return
	}
	_ = c.stdin.Close()
	c.cmd.Kill()
	drained := make(chan struct{})
	go func(lines <-chan approverOutput) {
		defer close(drained)
		for range lines {
		}
	}(c.lines)
	t := time.NewTimer(stopWait)
	defer t.Stop()
	select {
	case <-drained:
	case <-t.C:
		_ = c.stdout.Close()
		<-drained
	}
	c.cmd = nil
}

// Close stops the co-process.
func (c *CoProcess) Close() error {
	c.sem <- struct{}{}
	defer func() { <-c.sem }()
	c.closed = true
	c.stop()
	return nil
}

func (c *CoProcess) report(format string, a ...any) {
	if c.opts.Stderr != nil {
		fmt.Fprintf(c.opts.Stderr, "agentjq: approver: "+format+"\n", a...)
	}
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
	if err := ctx.Err(); err != nil {
		// Withdrawn (or out of time) while it waited its turn: the
		// approver never sees it.
		return Verdict{}, err
	}
	if c.cmd == nil {
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
		case out, ok := <-c.lines:
			if !ok {
				c.crash()
				return approverDeny("the approver %q exited", c.opts.Command), nil
			}
			if out.err != nil {
				c.report("%v; stopping it", out.err)
				c.crash()
				return approverDeny("the approver wrote a line over %d MiB", MaxApproverLine>>20), nil
			}
			if v, mine := c.match(req, out.line); mine {
				return v, nil
			}
		case <-ctx.Done():
			if writing {
				c.stop() // wedged mid-line: start afresh next time
			} else {
				c.givenUp[req.RequestID] = true
			}
			return Verdict{}, ctx.Err()
		case <-limit:
			c.stop()
			return Verdict{Behavior: protocol.Deny, Source: protocol.ByTimeout, Rule: "approver",
				Message: fmt.Sprintf("agentjq: the approver did not answer within %s, so the call was denied.", c.opts.timeout())}, nil
		}
	}
}

// match reads one line while req waits for its answer. mine is false for
// a line that answers another request: it is reported (unless it is the
// late answer to a request given up on) and ignored. A line that names no
// request is about req, the only request the approver has been sent and
// not answered: it denies req at once.
func (c *CoProcess) match(req *Request, l []byte) (Verdict, bool) {
	id, v, err := decodeAnswer(l)
	switch {
	case id == req.RequestID:
		if err != nil {
			c.report("%v", err)
			return approverDeny("the approver answered with something agentjq cannot read (%v)", err), true
		}
		return v, true
	case id == "":
		// Its real answer, should one follow, comes too late.
		c.givenUp[req.RequestID] = true
		if err != nil {
			c.report("request %s denied: the approver wrote a line that is not an answer (%v)", req.RequestID, err)
			return approverDeny("the approver wrote a line that is not an answer (%v)", err), true
		}
		shown := clip(string(bytes.TrimSpace(l)), 120)
		c.report("request %s denied: the approver answered without request_id (every answer must name the request it answers): %s", req.RequestID, shown)
		return approverDeny("the approver answered without request_id (every answer must name the request it answers: %s)", shown), true
	case c.givenUp[id]:
		delete(c.givenUp, id)
	default:
		c.report("ignored an answer for request %q, which is not waiting for one (a stray or second answer)", id)
	}
	return Verdict{}, false
}

func (c *CoProcess) crash() {
	c.crashes++
	c.stop()
}
