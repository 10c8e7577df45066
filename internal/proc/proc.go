// Package proc is agentjq's one way to run a process: the agent, hook and
// tool commands, hosted MCP servers and approvers all start here, so they
// share one guarantee: nothing agentjq starts outlives it.
//
// On Linux every command runs under a small reaper: agentjq re-executes
// itself (argv[0] "agentjq-reaper"), and that process becomes a child
// subreaper (PR_SET_CHILD_SUBREAPER), starts the command, and owns the
// whole tree below it, including grandchildren that call setsid or
// double-fork, which the kernel re-parents to the reaper when their
// parent dies. The reaper holds the read end of a pipe whose only write
// end is in agentjq: when the command exits, when agentjq asks (Kill), or
// when agentjq dies by any means (SIGKILL included, the kernel closes the
// pipe), the reaper kills every descendant, reaps them, and exits with the
// command's own status, so exec.Cmd.Wait in agentjq sees what the command
// did. agentjq itself reaps nothing it did not start, so no exit status is
// ever stolen from a Wait.
//
// On other Unix systems a command runs in a process group of its own and
// Kill ends that group: a process that leaves the group (setsid) or
// outlives a SIGKILL of agentjq is not caught. On Windows Kill ends the
// process alone.
package proc

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Cmd is one command. Set the exported fields before Start, as with
// exec.Cmd.
type Cmd struct {
	Path string
	Args []string // Args[0] is the command's argv[0]
	Dir  string
	Env  []string // nil: agentjq's own environment

	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// WaitDelay bounds how long Wait waits for the pipes exec.Cmd copies
	// once the process has exited (see exec.Cmd.WaitDelay).
	WaitDelay time.Duration

	// ProcessState is set by Wait: the command's status (relayed by the
	// reaper on Linux).
	ProcessState *os.ProcessState

	cmd     *exec.Cmd // what is started: the reaper or the command itself
	lookErr error
	pid     int      // the command's own pid
	group   int      // its process group
	ctl     *os.File // Linux with a reaper: closing it ends the tree
	killMu  sync.Mutex
	killed  bool
}

// Command is name with args, looked up on agentjq's PATH as exec.Command
// does.
func Command(name string, args ...string) *Cmd {
	c := &Cmd{Path: name, Args: append([]string{name}, args...)}
	if lp, err := exec.LookPath(name); err != nil {
		c.lookErr = err
	} else {
		c.Path = lp
	}
	c.cmd = exec.Command(c.Path)
	return c
}

// Shell is `sh -c line` (cmd /C on Windows).
func Shell(line string) *Cmd { return Command(shell, shellFlag, line) }

// StdinPipe is exec.Cmd.StdinPipe.
func (c *Cmd) StdinPipe() (io.WriteCloser, error) { return c.cmd.StdinPipe() }

// StdoutPipe is exec.Cmd.StdoutPipe: read it to the end before Wait.
func (c *Cmd) StdoutPipe() (io.ReadCloser, error) { return c.cmd.StdoutPipe() }

// StderrPipe is exec.Cmd.StderrPipe: read it to the end before Wait.
func (c *Cmd) StderrPipe() (io.ReadCloser, error) { return c.cmd.StderrPipe() }

// Start starts the command (under its reaper on Linux).
func (c *Cmd) Start() error {
	if c.lookErr != nil {
		return c.lookErr
	}
	e := c.cmd
	e.Dir, e.Env, e.WaitDelay = c.Dir, c.Env, c.WaitDelay
	if c.Stdin != nil {
		e.Stdin = c.Stdin
	}
	if c.Stdout != nil {
		e.Stdout = c.Stdout
	}
	if c.Stderr != nil {
		e.Stderr = c.Stderr
	}
	return c.start()
}

// Wait waits for the command (and, on Linux, for its whole tree to be
// gone) and sets ProcessState.
func (c *Cmd) Wait() error {
	err := c.cmd.Wait()
	c.ProcessState = c.cmd.ProcessState
	c.closeCtl()
	return err
}

// Run is Start then Wait.
func (c *Cmd) Run() error {
	if err := c.Start(); err != nil {
		return err
	}
	return c.Wait()
}

// Pid is the command's process id (0 before Start).
func (c *Cmd) Pid() int { return c.pid }

// Signal sends sig to the command's process group (Ctrl-C style: the
// command may handle it). It is not how a command is ended for good; that
// is Kill.
func (c *Cmd) Signal(sig syscall.Signal) error {
	if sig == syscall.SIGKILL {
		c.Kill() // a SIGKILL to the group would take the reaper first
		return nil
	}
	if c.group <= 0 {
		return nil
	}
	return signalGroup(c.group, sig)
}

// Kill ends the command and everything it started. It does not wait: Wait
// returns once they are gone.
func (c *Cmd) Kill() {
	c.killMu.Lock()
	defer c.killMu.Unlock()
	if c.group <= 0 || c.killed {
		return
	}
	c.killed = true
	c.kill()
}

func (c *Cmd) closeCtl() {
	c.killMu.Lock()
	defer c.killMu.Unlock()
	if c.ctl != nil {
		c.ctl.Close()
		c.ctl = nil
	}
}

var errNoReaper = errors.New("the reaper process did not report")
