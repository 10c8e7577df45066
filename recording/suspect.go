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

// suspectWindow: a hint holding a filter's position p lies within
// b[p-suspectBefore : p+suspectAfter] (hints are at most 11 bytes).
const (
	suspectBefore = 12
	suspectAfter  = 14
)

// suspectAt reports whether a filter fires at b[p] (the reference for
// suspectBlocks; bytes past the end match nothing).
func suspectAt(b []byte, p int) bool {
	for _, f := range suspectFilters {
		ok := true
		for i, c := range f.c {
			if c == 0 {
				continue
			}
			if p+i >= len(b) {
				ok = false
				break
			}
			x := b[p+i]
			if f.fold {
				x |= 0x20
			}
			if x != c {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// suspect reports whether b may hold a hint of r's patterns or a hiding
// escape: false means the hint set would find none in b and b has no \u
// or \/ escape. Only with haveSuspectBlocks.
func (r *Redactor) suspect(b []byte) bool {
	for i := 0; i < len(b); {
		p, mask := suspectBlocks(b[i:])
		if mask == 0 {
			for q := i + p; q < len(b); q++ {
				if suspectAt(b, q) && r.confirm(b, q) {
					return true
				}
			}
			return false
		}
		for ; mask != 0; mask &= mask - 1 {
			if r.confirm(b, i+p+bits.TrailingZeros32(mask)) {
				return true
			}
		}
		i += p + 32
	}
	return false
}

// confirm: at q a filter fired; is there a backslash (an escape to look
// at closely) or a hint of r around it?
func (r *Redactor) confirm(b []byte, q int) bool {
	if b[q] == '\\' {
		return true
	}
	lo, hi := max(0, q-suspectBefore), min(len(b), q+suspectAfter)
	return r.hints.match(b[lo:hi]) != 0
}

// occurrences is hints.occurrences(b) found with suspectBlocks: the
// hints around each position where a filter fires. Only with
// haveSuspectBlocks.
func (r *Redactor) occurrences(b []byte) []hintOccurrence {
	var occ []hintOccurrence
	add := func(q int) {
		lo, hi := max(0, q-suspectBefore), min(len(b), q+suspectAfter)
		for _, o := range r.hints.occurrences(b[lo:hi]) {
			o.pos += lo
			o.end += lo
			occ = append(occ, o)
		}
	}
	for i := 0; i < len(b); {
		p, mask := suspectBlocks(b[i:])
		if mask == 0 {
			for q := i + p; q < len(b); q++ {
				if suspectAt(b, q) {
					add(q)
				}
			}
			break
		}
		for ; mask != 0; mask &= mask - 1 {
			add(i + p + bits.TrailingZeros32(mask))
		}
		i += p + 32
	}
	// Windows overlap: sort, and keep each occurrence once.
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
