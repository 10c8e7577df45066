//go:build linux

package bridge

import (
	"os"
	"syscall"
)

// setPdeathsig makes the kernel kill the agent if agentjq dies without
// cleaning up (SIGKILL, a crash).
func setPdeathsig(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }

// growPipe asks for a 1 MiB pipe buffer (the default is 64 KiB): fewer,
// larger reads on the hot path. A refusal (pipe-max-size) changes nothing.
func growPipe(f *os.File) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Control(func(fd uintptr) {
		const fSetPipeSz = 1031 // F_SETPIPE_SZ
		syscall.Syscall(syscall.SYS_FCNTL, fd, fSetPipeSz, 1<<20)
	})
}
