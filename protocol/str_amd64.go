//go:build amd64

package protocol

import "golang.org/x/sys/cpu"

// haveStrBlocks says strBlocks can run here.
var haveStrBlocks = cpu.X86.HasAVX2

// strBlocks passes the body of a JSON string from b[i] 32 bytes at a time:
// plain bytes and two-byte escapes. It returns j, the first position it
// leaves to the caller (a quote, a control character, a \u or bad escape,
// or a position fewer than 33 bytes from the end), and whether it passed
// an escape.
//
//go:noescape
func strBlocks(b []byte, i int) (j int, escaped bool)
