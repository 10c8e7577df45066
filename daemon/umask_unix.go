//go:build unix

package daemon

import "syscall"

func umask(m int) int { return syscall.Umask(m) }

func pidAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}
