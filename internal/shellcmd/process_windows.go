//go:build windows

package shellcmd

import (
	"os"
	"os/exec"
	"syscall"
)

const shell, shellFlag = "cmd", "/C"

func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

// KillGroup can only end the process itself on Windows.
func KillGroup(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}
