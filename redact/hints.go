package redact

import (
	"bytes"
	"sort"
	"strings"
)

// hintSet finds which patterns' hints occur in a text in a few fast
// passes: every hint is anchored on its rarest byte, each distinct anchor
// byte is searched with bytes.IndexByte (vectorised), and only where an
// anchor occurs is the hint compared around it. A lower-case hint of a
// case-insensitive ((?i)) pattern matches in any case (its anchor is
// searched in both cases). It replaces one
// bytes.Contains per hint over a lowered copy of the line, which was the
// recorder's main cost.
type hintSet struct {
	anchors []byte
	at      [256][]anchoredHint
	// byNext[c][x] are the hints anchored on c whose next byte is x;
	// byNext[c][256] those that end with c. A common anchor byte has many
	// hints: only those that fit the byte after an occurrence are tried.
	byNext [256]*[257][]anchoredHint
	// always has the patterns without hints: they must always be tried.
	always uint64
	// near[c] holds the bytes that may stand just before and just after
	// the anchor c in a hint anchored on it: most occurrences of a common
	// anchor byte fail one of these two lookups, before any hint is
	// compared.
	near [256]*neighbours
	// want[c] has the patterns of the hints anchored on c.
	want [256]uint64
	// alsoMask has the patterns with an also.
	alsoMask uint64
	// also[i] must be in the text too for pattern i to be a candidate.
	also [64]string
}

// neighbours: prev[x] (next[x]) says byte x may stand before (after) an
// anchor.
type neighbours struct{ prev, next [256]bool }

// around reports whether the bytes around b[pos] may be those of a hint
// anchored there. Past either end of b anything goes (the hint's own
// comparison judges).
func (n *neighbours) around(b []byte, pos int) bool {
	return (pos == 0 || n.prev[b[pos-1]]) && (pos+1 == len(b) || n.next[b[pos+1]])
}

type anchoredHint struct {
	hint    string
	off     int  // the anchor's position in hint
	fold    bool // match in any case
	next    string
	pattern uint64
}

// at reports whether ah occurs in b at start (followed by a byte of next,
// when it is set). raw says b is a whole JSON line, not a string's
// content: there a '"' ends the string, so it cannot be the next byte of
// a match (a quote inside a string is escaped, and next allows '\\').
func (ah *anchoredHint) at(b []byte, start int, raw bool) bool {
	end := start + len(ah.hint)
	if start < 0 || end > len(b) {
		return false
	}
	s := b[start:end]
	if ah.fold && !asciiEqualFold(s, ah.hint) || !ah.fold && string(s) != ah.hint {
		return false
	}
	if ah.next == "" {
		return true
	}
	if end >= len(b) || strings.IndexByte(ah.next, b[end]) < 0 {
		return false
	}
	// In raw JSON a hint that ends a string is no sign of a secret, unless
	// the string is a key whose value is a string: {"password": "..."}.
	return !(raw && b[end] == '"') || keyOfString(b, end+1)
}

// keyOfString reports whether b[i:] is white space, ':', white space and
// a '"': what follows a JSON key whose value is a string.
func keyOfString(b []byte, i int) bool {
	colon := false
	for ; i < len(b); i++ {
		switch c := b[i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		case c == ':' && !colon:
			colon = true
		default:
			return colon && c == '"'
		}
	}
	return false
}

// anchorRank lists the bytes a hint may be anchored on, rarest first in
// the real CLI's output and the benchmark stream. A folded hint is ranked
// by its lower-case letter, the commoner case. The lower-case letters are
// few and ordered so that many hints share one (a pass over the line per
// distinct anchor byte, a stop at each of its occurrences): every
// built-in hint holds one of these bytes (TestHintAnchors).
const anchorRank = "@GJQKzZB9=WAxbwkg"

func newHintSet(patterns []pattern) *hintSet {
	h := &hintSet{}
	var pending []anchoredHint
	for i, p := range patterns {
		bit := uint64(1) << uint(i%64)
		if p.hints == nil || i >= 64 {
			h.always |= bit
			if i >= 64 {
				h.always = ^uint64(0)
			}
			continue
		}
		h.also[i] = p.also
		if p.also != "" {
			h.alsoMask |= bit
		}
		for _, x := range p.hints {
			// Only a case-insensitive pattern's hints match in any case.
			fold := strings.HasPrefix(p.re.String(), "(?i)") && strings.ToLower(x) == x
			pending = append(pending, anchoredHint{hint: x, fold: fold, next: p.next, pattern: bit})
		}
	}
	// Every distinct anchor byte costs a pass over each line, and a common
	// one a stop at each of its occurrences: hints are anchored rarest
	// first, each on a byte already searched for when it has one.
	sort.SliceStable(pending, func(i, j int) bool { return rarest(pending[i]) < rarest(pending[j]) })
	for _, ah := range pending {
		x := ah.hint
		off, best, shared := 0, len(anchorRank)+1, false
		for j := 0; j < len(x); j++ {
			c := x[j]
			if ah.fold {
				c = lower(c)
			}
			r := strings.IndexByte(anchorRank, c)
			if r < 0 {
				continue
			}
			known := len(h.at[c]) > 0 && (!ah.fold || len(h.at[upper(c)]) > 0)
			if known && !shared || known == shared && r < best {
				best, off, shared = r, j, known
			}
		}
		ah.off = off
		c := x[off]
		if ah.fold {
			c = lower(c)
		}
		h.add(c, ah)
		if ah.fold {
			if u := upper(c); u != c {
				h.add(u, ah)
			}
		}
	}
	return h
}

func (h *hintSet) add(c byte, ah anchoredHint) {
	if len(h.at[c]) == 0 {
		h.anchors = append(h.anchors, c)
		h.near[c] = &neighbours{}
	}
	h.at[c] = append(h.at[c], ah)
	h.want[c] |= ah.pattern
	if h.byNext[c] == nil {
		h.byNext[c] = &[257][]anchoredHint{}
	}
	bn := h.byNext[c]
	if ah.off+1 == len(ah.hint) {
		bn[256] = append(bn[256], ah)
	} else {
		x := ah.hint[ah.off+1]
		bn[x] = append(bn[x], ah)
		if ah.fold {
			if u := upper(x); u != x {
				bn[u] = append(bn[u], ah)
			}
		}
	}
	n := h.near[c]
	allow := func(set *[256]bool, x byte) {
		set[x] = true
		if ah.fold {
			set[lower(x)], set[upper(x)] = true, true
		}
	}
	if ah.off == 0 {
		n.prev = allBytes
	} else {
		allow(&n.prev, ah.hint[ah.off-1])
	}
	if ah.off+1 == len(ah.hint) {
		if ah.next == "" {
			n.next = allBytes
		}
		for i := 0; i < len(ah.next); i++ {
			n.next[ah.next[i]] = true
		}
	} else {
		allow(&n.next, ah.hint[ah.off+1])
	}
}

// rarest is the rank of the rarest byte of ah's hint (anchorRank).
func rarest(ah anchoredHint) int {
	best := len(anchorRank) + 1
	for j := 0; j < len(ah.hint); j++ {
		c := ah.hint[j]
		if ah.fold {
			c = lower(c)
		}
		if r := strings.IndexByte(anchorRank, c); r >= 0 && r < best {
			best = r
		}
	}
	return best
}

var allBytes = func() (all [256]bool) {
	for i := range all {
		all[i] = true
	}
	return all
}()

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c - 'A' + 'a'
	}
	return c
}

func upper(c byte) byte {
	if c >= 'a' && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}

// match returns the set of patterns (bit i: patterns[i]) that may match
// a string in the JSON line b: those with a hint in b, and those without
// hints.
func (h *hintSet) match(b []byte) uint64 { return h.matchIn(b, ^uint64(0), true) }

// matchOnly returns the set of patterns in only that may match the text
// b, and those without hints.
func (h *hintSet) matchOnly(b []byte, only uint64) uint64 { return h.matchIn(b, only, false) }

// matchIn is match (raw) or matchOnly.
func (h *hintSet) matchIn(b []byte, only uint64, raw bool) uint64 {
	found := h.always
	for _, c := range h.anchors {
		near := h.near[c]
		want := h.want[c] & only
		if found&want == want {
			continue // every pattern anchored here is already in
		}
		for i := 0; ; {
			j := bytes.IndexByte(b[i:], c)
			if j < 0 {
				break
			}
			pos := i + j
			i = pos + 1
			if !near.around(b, pos) {
				continue
			}
			bn := h.byNext[c]
			last := bn[256]
			var mid []anchoredHint
			if pos+1 < len(b) {
				mid = bn[b[pos+1]]
			}
			for _, list := range [2][]anchoredHint{mid, last} {
				for k := range list {
					ah := &list[k]
					if found&ah.pattern != 0 || only&ah.pattern == 0 {
						continue
					}
					if ah.at(b, pos-ah.off, raw) {
						found |= ah.pattern
					}
				}
			}
			if found&want == want {
				break
			}
		}
	}
	return h.withAlso(b, found)
}

// withAlso clears the patterns of found whose also is not in b.
func (h *hintSet) withAlso(b []byte, found uint64) uint64 {
	if found&h.alsoMask == 0 {
		return found
	}
	for i := range h.also {
		if h.also[i] != "" && found&(1<<uint(i)) != 0 && h.always&(1<<uint(i)) == 0 && !bytes.Contains(b, []byte(h.also[i])) {
			found &^= 1 << uint(i)
		}
	}
	return found
}

// asciiEqualFold compares s with the lower-case hint, ignoring the case
// of ASCII letters in s (the case-insensitive patterns are ASCII).
func asciiEqualFold(s []byte, lower string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// hintOccurrence is where a hint of a pattern occurs: b[pos:end].
type hintOccurrence struct {
	pos, end int
	pattern  uint64
}

// occurrences lists every occurrence in the JSON line b of every hint of
// the patterns in only, by position.
func (h *hintSet) occurrences(b []byte, only uint64) []hintOccurrence {
	var occ []hintOccurrence
	for _, c := range h.anchors {
		if h.want[c]&only == 0 {
			continue
		}
		for i := 0; ; {
			j := bytes.IndexByte(b[i:], c)
			if j < 0 {
				break
			}
			pos := i + j
			i = pos + 1
			if !h.near[c].around(b, pos) {
				continue
			}
			for _, ah := range h.at[c] {
				if ah.pattern&only == 0 {
					continue
				}
				if start := pos - ah.off; ah.at(b, start, true) {
					occ = append(occ, hintOccurrence{start, start + len(ah.hint), ah.pattern})
				}
			}
		}
	}
	sort.Slice(occ, func(i, j int) bool { return occ[i].pos < occ[j].pos })
	return occ
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
		if r := strings.IndexByte(anchorRank, c); r >= 0 && r < best {
			best, off = r, i
		}
	}
	return off
}

// indexAnchored is bytes.Index(b, needle), searching with IndexByte for
// needle[k] (choose a byte rare in b) and comparing around each hit: a
// common first byte such as '"' makes bytes.Index stop everywhere.
func indexAnchored(b, needle []byte, k int) int {
	c := needle[k]
	for i := k; i < len(b); {
		j := bytes.IndexByte(b[i:], c)
		if j < 0 {
			return -1
		}
		start := i + j - k
		if start+len(needle) > len(b) {
			return -1
		}
		if bytes.Equal(b[start:start+len(needle)], needle) {
			return start
		}
		i += j + 1
	}
	return -1
}
