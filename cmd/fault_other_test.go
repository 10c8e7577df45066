//go:build !amd64 && !arm64

package cmd

// readSyscall is unknown here: the cases that need it skip.
const readSyscall = ""
