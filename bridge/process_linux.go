//go:build linux

package bridge

import "syscall"

// setPdeathsig makes the kernel kill the agent if agentjq dies without
// cleaning up (SIGKILL, a crash).
func setPdeathsig(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
