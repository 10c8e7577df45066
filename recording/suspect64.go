package recording

// With AVX-512 VBMI, one byte lookup per position stands for the pairs
// and triples of suspectFilters: the filters share eight buckets, and
// suspect64Tables[j][c&0x7f] holds the buckets whose filter takes byte c
// (in any case, for a folding filter) at its position j, or any byte
// there. A position is a candidate when a bucket is set at all three: a
// superset of where a filter fires (buckets merge filters, and a byte
// past 0x7f counts as its low 7 bits), so the callers, which ask the
// filters themselves about each candidate, find the same hints.

// suspectBucket is the bucket of each of suspectFilters, in order.
var suspectBucket = [...]uint8{0, 1, 1, 2, 3, 4, 5, 6, 5, 7, 7}

var suspect64Tables = func() *[3][128]byte {
	if len(suspectBucket) != len(suspectFilters) {
		panic("recording: suspectBucket does not match suspectFilters")
	}
	var t [3][128]byte
	for fi, f := range suspectFilters {
		bit := byte(1) << suspectBucket[fi]
		for j, c := range f.c {
			switch {
			case c == 0:
				for x := range t[j] {
					t[j][x] |= bit
				}
			case f.fold:
				t[j][c|0x20] |= bit
				t[j][c&^0x20] |= bit
			default:
				t[j][c] |= bit
			}
		}
	}
	return &t
}()

// suspect64At reports whether b is a candidate at p (bytes past the end
// count as 0): the reference for suspectBlocks64.
func suspect64At(b []byte, p int) bool {
	m := byte(0xff)
	for j := range 3 {
		var x byte
		if p+j < len(b) {
			x = b[p+j]
		}
		m &= suspect64Tables[j][x&0x7f]
	}
	return m != 0
}
