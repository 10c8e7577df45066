//go:build !amd64

package protocol

const haveStrBlocks = false

func strBlocks(b []byte, i int) (j int, escaped bool) { return i, false }
