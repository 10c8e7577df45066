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
