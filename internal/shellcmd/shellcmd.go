// Package shellcmd runs the short-lived shell commands agentjq hosts for
// the agent (hook commands, tool commands): `sh -c CMD` in a process group
// of its own, with input on stdin, a time limit and cancellation that kill
// the whole group, so that nothing a command started is left behind.
package shellcmd

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os/exec"
	"time"
)

// Spec is one command to run.
type Spec struct {
	Command string
	Dir     string
	Env     []string
	Stdin   []byte
	// Timeout, when positive, kills the command's process group after
	// this long.
	Timeout time.Duration
	// MaxOutput caps what is kept of stdout and of stderr (default 8 MiB);
	// the rest is read and dropped so the command never blocks on a pipe.
	MaxOutput int
}

// Result is what a command did.
type Result struct {
	Stdout, Stderr []byte
	// Truncated is set when stdout or stderr went over MaxOutput.
	Truncated bool
	// ExitCode is the command's status; -1 when it was killed or never ran.
	ExitCode int
	TimedOut bool
	// Cancelled: ctx ended before the command did.
	Cancelled bool
	// Err is set when the command could not be started at all.
	Err error
}

const defaultMaxOutput = 8 << 20

// Run runs spec to its end, or until the timeout or ctx ends it, and
// returns only when the command's process group has been signalled and its
// pipes closed (bounded: a grandchild holding them is cut off).
func Run(ctx context.Context, spec Spec) Result {
	if spec.MaxOutput <= 0 {
		spec.MaxOutput = defaultMaxOutput
	}
	rctx := ctx
	var cancel context.CancelFunc
	if spec.Timeout > 0 {
		rctx, cancel = context.WithTimeoutCause(ctx, spec.Timeout, errTimeout)
	} else {
		rctx, cancel = context.WithCancel(ctx)
	}
	defer cancel()

	cmd := Command(spec.Command)
	cmd.Dir = spec.Dir
	cmd.Env = spec.Env
	cmd.Stdin = bytes.NewReader(spec.Stdin)
	stdout := &capped{max: spec.MaxOutput}
	stderr := &capped{max: spec.MaxOutput}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// A grandchild that keeps the pipes open must not hold Run for ever.
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		return Result{ExitCode: -1, Err: err}
	}
	pid := cmd.Process.Pid
	done := make(chan struct{})
	stop := context.AfterFunc(rctx, func() {
		select {
		case <-done:
		default:
			KillGroup(pid)
		}
	})
	err := cmd.Wait()
	close(done)
	stop()
	// Whatever the command left running in its group goes with it.
	KillGroup(pid)

	res := Result{
		Stdout: stdout.buf.Bytes(), Stderr: stderr.buf.Bytes(),
		Truncated: stdout.dropped || stderr.dropped,
		ExitCode:  -1,
	}
	if cmd.ProcessState != nil {
		res.ExitCode = cmd.ProcessState.ExitCode()
	}
	if rctx.Err() != nil {
		if errors.Is(context.Cause(rctx), errTimeout) {
			res.TimedOut = true
		} else {
			res.Cancelled = true
		}
		res.ExitCode = -1
	} else if err != nil && cmd.ProcessState == nil {
		res.Err = err
	}
	return res
}

var errTimeout = errors.New("timed out")

// Command is `sh -c line` (cmd /C on Windows) set to start in a process
// group of its own, which KillGroup ends as a whole.
func Command(line string) *exec.Cmd {
	cmd := exec.Command(shell, shellFlag, line)
	ownGroup(cmd)
	return cmd
}

// capped keeps the first max bytes written and drops the rest.
type capped struct {
	buf     bytes.Buffer
	max     int
	dropped bool
}

func (c *capped) Write(p []byte) (int, error) {
	room := c.max - c.buf.Len()
	if room >= len(p) {
		return c.buf.Write(p)
	}
	if room > 0 {
		c.buf.Write(p[:room])
	}
	c.dropped = true
	return len(p), nil
}

var _ io.Writer = (*capped)(nil)
