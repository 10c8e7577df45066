//go:build unix && !linux

package bridge

import "syscall"

func setPdeathsig(*syscall.SysProcAttr) {}
