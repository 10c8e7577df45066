//go:build unix

package bridge

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup puts the agent in a process group of its own, so a
// terminal's Ctrl-C reaches agentjq alone (the CLI would abort the turn
// without a result) and the whole tree can be signalled at once.
func ownProcessGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	setPdeathsig(cmd.SysProcAttr)
}

// signalGroup signals the agent's whole process group.
func signalGroup(pid int, sig syscall.Signal) error {
	if pid <= 0 {
		return nil
	}
	return syscall.Kill(-pid, sig)
}

const (
	sigTERM = syscall.SIGTERM
	sigKILL = syscall.SIGKILL
)
