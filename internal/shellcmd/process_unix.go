//go:build unix

package shellcmd

import (
	"os/exec"
	"syscall"
)

const shell, shellFlag = "/bin/sh", "-c"

func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setPdeathsig(cmd.SysProcAttr)
}

// KillGroup kills the process group led by pid.
func KillGroup(pid int) {
	if pid > 0 {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}
