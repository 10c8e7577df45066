//go:build linux

package shellcmd

import "syscall"

// setPdeathsig makes the kernel kill the command if agentjq dies first.
func setPdeathsig(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
