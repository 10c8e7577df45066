//go:build !linux

package proc

import "os"

// GrowPipe does nothing here: only Linux sizes pipes.
func GrowPipe(*os.File) {}
