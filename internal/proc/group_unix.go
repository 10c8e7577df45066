//go:build unix

package proc

import "syscall"

const shell, shellFlag = "/bin/sh", "-c"

func signalGroup(pgid int, sig syscall.Signal) error { return syscall.Kill(-pgid, sig) }

// startGroup starts the command itself in a process group of its own, so
// a terminal's Ctrl-C reaches agentjq alone and Kill reaches the group.
func (c *Cmd) startGroup(pdeathsig bool) error {
	attr := &syscall.SysProcAttr{Setpgid: true}
	if pdeathsig {
		setPdeathsig(attr)
	}
	c.cmd.SysProcAttr = attr
	c.cmd.Path, c.cmd.Args = c.Path, c.Args
	if err := c.cmd.Start(); err != nil {
		return err
	}
	c.pid, c.group = c.cmd.Process.Pid, c.cmd.Process.Pid
	return nil
}

func (c *Cmd) killGroup() { _ = syscall.Kill(-c.group, syscall.SIGKILL) }
