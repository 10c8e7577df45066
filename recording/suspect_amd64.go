//go:build amd64

package recording

import "golang.org/x/sys/cpu"

// haveSuspectBlocks says suspectBlocks can run here.
var haveSuspectBlocks = cpu.X86.HasAVX2

// suspectBlocks looks at b 32 positions at a time, from the start, for the
// first block of positions where a filter of suspectFilters fires. It
// returns the block's offset and the positions in it that fired (bit i:
// pos+i). With mask 0, no block fired and pos is where it stopped: the
// positions from pos on (fewer than 34) are the caller's to check.
//
//go:noescape
func suspectBlocks(b []byte) (pos int, mask uint32)

// haveSuspectBlocks64 says suspectBlocks64 can run here.
var haveSuspectBlocks64 = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VBMI

// suspectBlocks64 is suspectBlocks with t's buckets (suspect64.go), 64
// positions a block, needing 66 bytes.
//
//go:noescape
func suspectBlocks64(b []byte, t *[3][128]byte) (pos int, mask uint64)

func setSuspectBlocks64(on bool) { haveSuspectBlocks64 = on } // benchmarks
