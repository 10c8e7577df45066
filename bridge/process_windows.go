//go:build windows

package bridge

import (
	"os"
	"os/exec"
	"syscall"
)

func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

// signalGroup on Windows can only end the process itself.
func signalGroup(pid int, _ syscall.Signal) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}

const (
	sigTERM = syscall.SIGTERM
	sigKILL = syscall.SIGKILL
)

func growPipe(*os.File) {}
