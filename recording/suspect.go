package recording

import (
	"bytes"
	"math/bits"
	"sort"
)

// The recorder's fast path for lines that hold no secret (nearly all of
// them). A handful of SIMD passes would still cost more than the bridge
// itself, so one AVX2 pass (suspectBlocks, suspect_amd64.s) looks at each
// position for short byte pairs and triples, at least one of which is in
// every hint of every built-in pattern (and in the \u and \/ escapes that
// can hide a secret's characters). The pairs are rare in agent output
// (about one in 10 KB of the benchmark stream), where the hints' single
// anchor bytes are not ('k', '_', 'b' and '\' each several times per KB).
// Only where a filter fires is the hint set asked about the few bytes
// around. Without AVX2 (or off amd64) the hint set searches the line as
// before.

// suspectFilter fires at position p when b[p+i] equals c[i] for each i
// with c[i] != 0; fold compares the byte with 0x20 set (ASCII letters in
// any case).
type suspectFilter struct {
	c    [3]byte
	fold bool
}

// suspectFilters: every hint of builtinPatterns holds one of them (the
// test TestSuspectFiltersCoverHints checks it), in any case where the
// pattern is case-insensitive. suspect_amd64.s is written from this table.
var suspectFilters = []suspectFilter{
	{c: [3]byte{'k', '-'}},                  // sk-ant-, sk-
	{c: [3]byte{'I', 'A'}},                  // AKIA, ASIA
	{c: [3]byte{'I', 'z'}},                  // AIza
	{c: [3]byte{'h', 0, '_'}},               // ghp_, gho_, ghu_, ghs_, ghr_
	{c: [3]byte{'b', '_'}},                  // github_pat_
	{c: [3]byte{'x', 'o'}},                  // xox
	{c: [3]byte{'r', 'e', 'r'}, fold: true}, // bearer
	{c: [3]byte{'k', 'e', 'y'}, fold: true}, // x-api-key, api_key, api-key, apikey
	{c: [3]byte{'u', 't', 'h'}, fold: true}, // auth_token, auth-token, authtoken
	{c: [3]byte{'\\', 'u'}},                 // \u escape
	{c: [3]byte{'\\', '/'}},                 // \/ escape
}

// firesInAnyCase reports whether f fires at hint[j] in every case the
// hint can take (fold: any case of its letters).
func firesInAnyCase(f suspectFilter, hint string, j int, fold bool) bool {
	for i, c := range f.c {
		if c == 0 {
			continue
		}
		if j+i >= len(hint) {
			return false
		}
		x := hint[j+i]
		letter := lower(x) != upper(x)
		switch {
		case f.fold:
			if x|0x20 != c {
				return false
			}
		case x != c || fold && letter:
			return false
		}
	}
	return true
}

// suspectAt reports whether a filter fires at b[p] (the reference for
// suspectBlocks; bytes past the end match nothing).
func suspectAt(b []byte, p int) bool {
	for _, f := range suspectFilters {
		if firesAt(f, b, p) {
			return true
		}
	}
	return false
}

func firesAt(f suspectFilter, b []byte, p int) bool {
	for i, c := range f.c {
		if c == 0 {
			continue
		}
		if p+i >= len(b) {
			return false
		}
		x := b[p+i]
		if f.fold {
			x |= 0x20
		}
		if x != c {
			return false
		}
	}
	return true
}

// suspectScan calls fn(q) for each position q of b where a filter fires,
// in order, until fn returns true; it reports whether one did. Only with
// haveSuspectBlocks. It may call fn at more positions (suspect64.go):
// fn asks the filters itself.
func suspectScan(b []byte, fn func(q int) bool) bool {
	width := 32
	if haveSuspectBlocks64 {
		width = 64
	}
	i := 0
	for i < len(b) {
		p, mask := blocks(b[i:], width)
		if mask == 0 {
			i += p
			break
		}
		for ; mask != 0; mask &= mask - 1 {
			if fn(i + p + bits.TrailingZeros64(mask)) {
				return true
			}
		}
		i += p + width
	}
	if i >= len(b) {
		return false
	}
	// Fewer than width+2 bytes are left: look at them in a zeroed copy, a
	// block at a time (a zero byte is as a byte past the end).
	var tail [130]byte
	copy(tail[:], b[i:])
	for off := 0; off < 2*width && i+off < len(b); off += width {
		_, mask := blocks(tail[off:off+width+2], width)
		for ; mask != 0; mask &= mask - 1 {
			q := i + off + bits.TrailingZeros64(mask)
			if q >= len(b) {
				return false
			}
			if fn(q) {
				return true
			}
		}
	}
	return false
}

// blocks is suspectBlocks64 (width 64) or suspectBlocks (32): the first
// block of b, width positions a block and width+2 bytes, with candidates.
// A direct call, not a function value, so that b does not escape.
func blocks(b []byte, width int) (int, uint64) {
	if width == 64 {
		return suspectBlocks64(b, suspect64Tables)
	}
	p, m := suspectBlocks(b)
	return p, uint64(m)
}

// suspect reports whether b may hold a hint of r's patterns or a hiding
// escape: false means the hint set would find none in b and b has no \u
// or \/ escape. Only with haveSuspectBlocks.
func (r *Redactor) suspect(b []byte) bool {
	if r.hints.byFilter == nil { // a hint set made by hand (tests)
		return r.hints.match(b) != 0 || hasHidingEscape(b)
	}
	return suspectScan(b, func(q int) bool {
		if b[q] == '\\' {
			return true // an escape to look at closely
		}
		for fi, f := range suspectFilters {
			if !firesAt(f, b, q) {
				continue
			}
			for _, fh := range r.hints.byFilter[fi] {
				if fh.ah.at(b, q-fh.j, true) {
					return true
				}
			}
		}
		return false
	})
}

// occurrences is hints.occurrences(b) found with suspectBlocks: the hints
// where a filter fires. Only with haveSuspectBlocks.
func (r *Redactor) occurrences(b []byte) []hintOccurrence {
	if r.hints.byFilter == nil {
		return r.hints.occurrences(b)
	}
	var occ []hintOccurrence
	suspectScan(b, func(q int) bool {
		for fi, f := range suspectFilters {
			if !firesAt(f, b, q) {
				continue
			}
			for _, fh := range r.hints.byFilter[fi] {
				if start := q - fh.j; fh.ah.at(b, start, true) {
					occ = append(occ, hintOccurrence{start, start + len(fh.ah.hint), fh.ah.pattern})
				}
			}
		}
		return false
	})
	// A hint holding two filters is found twice: sort, and keep each
	// occurrence once.
	sort.Slice(occ, func(i, j int) bool {
		if occ[i].pos != occ[j].pos {
			return occ[i].pos < occ[j].pos
		}
		if occ[i].end != occ[j].end {
			return occ[i].end < occ[j].end
		}
		return occ[i].pattern < occ[j].pattern
	})
	out := occ[:0]
	for i, o := range occ {
		if i == 0 || o != occ[i-1] {
			out = append(out, o)
		}
	}
	return out
}

// literalAnchor is the offset of the byte of v to search for: '@' when v
// has one (an email), else its rarest letter by anchorRank, else its
// first byte.
func literalAnchor(v []byte) int {
	if i := bytes.IndexByte(v, '@'); i >= 0 {
		return i
	}
	best, off := len(anchorRank), 0
	for i, c := range v {
		if r := bytes.IndexByte([]byte(anchorRank), c); r >= 0 && r < best {
			best, off = r, i
		}
	}
	return off
}
