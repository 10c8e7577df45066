//go:build !amd64

package recording

const haveSuspectBlocks = false

func suspectBlocks(b []byte) (pos int, mask uint32) { return 0, 0 }
