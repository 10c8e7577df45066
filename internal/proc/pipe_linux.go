package proc

import (
	"os"
	"syscall"
)

// GrowPipe asks for a 1 MiB pipe buffer (the default is 64 KiB): fewer,
// larger reads on a hot path. A refusal (pipe-max-size) changes nothing.
func GrowPipe(f *os.File) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Control(func(fd uintptr) {
		const fSetPipeSz = 1031 // F_SETPIPE_SZ
		syscall.Syscall(syscall.SYS_FCNTL, fd, fSetPipeSz, 1<<20)
	})
}
