//go:build !amd64

package recording

const haveSuspectBlocks = false

func suspectBlocks(b []byte) (pos int, mask uint32) { return 0, 0 }

const haveSuspectBlocks64 = false

func suspectBlocks64(b []byte, t *[3][128]byte) (pos int, mask uint64) { return 0, 0 }

func setSuspectBlocks64(on bool) {}
