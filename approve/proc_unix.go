//go:build unix

package approve

import (
	"os/exec"
	"syscall"
)

// setProcessGroup puts an approver in its own process group and kills the
// whole group on cancel, so its children go with it.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
