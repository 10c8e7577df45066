//go:build unix && !linux

package shellcmd

import "syscall"

func setPdeathsig(*syscall.SysProcAttr) {}
