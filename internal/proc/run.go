package proc

import (
	"bytes"
	"context"
	"errors"
	"time"
)

// Spec is one short-lived shell command: a hook, a hosted tool, a
// hook-format approver.
type Spec struct {
	Command string // run with sh -c
	Dir     string
	Env     []string
	Stdin   []byte
	// Timeout, when positive, ends the command and its tree after this
	// long.
	Timeout time.Duration
	// MaxOutput caps what is kept of stdout and of stderr each (default
	// 8 MiB); the rest is read and dropped, so the command never blocks
	// on a pipe and never grows agentjq's memory.
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

// DefaultMaxOutput is Spec.MaxOutput's default.
const DefaultMaxOutput = 8 << 20

// Run runs spec to its end, or until the timeout or ctx ends it, and
// returns once the command and everything it started are gone (on
// Linux; elsewhere once its process group has been killed).
func Run(ctx context.Context, spec Spec) Result {
	if spec.MaxOutput <= 0 {
		spec.MaxOutput = DefaultMaxOutput
	}
	var rctx context.Context
	var cancel context.CancelFunc
	if spec.Timeout > 0 {
		rctx, cancel = context.WithTimeoutCause(ctx, spec.Timeout, errTimeout)
	} else {
		rctx, cancel = context.WithCancel(ctx)
	}
	defer cancel()

	cmd := Shell(spec.Command)
	cmd.Dir, cmd.Env = spec.Dir, spec.Env
	cmd.Stdin = bytes.NewReader(spec.Stdin)
	stdout, stderr := &Capped{Max: spec.MaxOutput}, &Capped{Max: spec.MaxOutput}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// Where there is no reaper, a grandchild that keeps the pipes open
	// must not hold Run for ever.
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		return Result{ExitCode: -1, Err: err}
	}
	stop := context.AfterFunc(rctx, cmd.Kill)
	err := cmd.Wait()
	stop()
	// Whatever the command left running goes with it.
	cmd.Kill()

	res := Result{
		Stdout: stdout.Bytes(), Stderr: stderr.Bytes(),
		Truncated: stdout.Dropped() || stderr.Dropped(),
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
