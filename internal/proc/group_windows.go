//go:build windows

package proc

import (
	"os"
	"syscall"
)

const shell, shellFlag = "cmd", "/C"

func (c *Cmd) start() error {
	c.cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
	c.cmd.Path, c.cmd.Args = c.Path, c.Args
	if err := c.cmd.Start(); err != nil {
		return err
	}
	c.pid, c.group = c.cmd.Process.Pid, c.cmd.Process.Pid
	return nil
}

// signalGroup on Windows can only end the process itself.
func (c *Cmd) kill() { _ = c.cmd.Process.Kill() }

func signalGroup(pid int, _ syscall.Signal) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}
