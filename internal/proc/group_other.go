//go:build unix && !linux

package proc

import "syscall"

func setPdeathsig(*syscall.SysProcAttr) {}

func (c *Cmd) start() error { return c.startGroup(false) }

func (c *Cmd) kill() { c.killGroup() }
