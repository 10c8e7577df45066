//go:build !linux

package redact

import "time"

// threadCPU: only Linux says a thread's CPU time.
func threadCPU() (time.Duration, bool) { return 0, false }
