//go:build unix && !linux

package bridge

import (
	"os"
	"syscall"
)

func setPdeathsig(*syscall.SysProcAttr) {}

func growPipe(*os.File) {}
