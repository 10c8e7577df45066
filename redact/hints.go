package redact

import (
	"bytes"
	"strings"
)

// hintSet says which built-in patterns may match a text, from their
// hints: a pattern's hints are strings one of which is in every match
// (lower case in a (?i) pattern: in any case). The hints are keywords of
// the gitleaks engine's automaton too (glEngine.hintsByKw), so one pass
// of it over a line finds both the keywords of gitleaks' rules and the
// hints of the built-in patterns; an occurrence of a hint then counts
// when the bytes around it fit (anchoredHint.at).
type hintSet struct {
	// always has the patterns without hints (user patterns, and every
	// pattern when there is no automaton): they must always be tried.
	always uint64
	// alsoMask has the patterns with an also.
	alsoMask uint64
	// also[i] must be in the text too for pattern i to be a candidate.
	also [64]string
}

// newHintSet: the first nBuiltin patterns are builtinPatterns, whose
// hints are in the automaton when there is one (withAutomaton).
func newHintSet(patterns []pattern, nBuiltin int, withAutomaton bool) *hintSet {
	h := &hintSet{}
	for i, p := range patterns {
		bit := uint64(1) << uint(i%64)
		if i >= 64 {
			h.always = ^uint64(0)
			continue
		}
		if p.hints == nil || i >= nBuiltin || !withAutomaton {
			h.always |= bit
			continue
		}
		h.also[i] = p.also
		if p.also != "" {
			h.alsoMask |= bit
		}
	}
	return h
}

type anchoredHint struct {
	hint    string
	fold    bool // match in any case
	next    string
	also    string // must be in the text too (a string's content, for viable)
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

// anchorRank lists bytes rarest first in the real CLI's output and the
// benchmark stream: a learnt literal (an email, an environment value) is
// searched for by its rarest byte (literalAnchor).
const anchorRank = "@GJQKzZB9=WAxbwkg"

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

// fromHits returns the patterns of only that may match b: those without
// hints, and those with a hint at one of the automaton's hits in b (raw:
// b is a whole JSON line).
func (h *hintSet) fromHits(e *glEngine, b []byte, hits []glHit, only uint64, raw bool) uint64 {
	found := h.always
	if e == nil {
		return found
	}
	for _, hit := range hits {
		for k := range e.hintsByKw[hit.kw] {
			ah := &e.hintsByKw[hit.kw][k]
			if found&ah.pattern != 0 || only&ah.pattern == 0 {
				continue
			}
			if ah.at(b, hit.pos, raw) {
				found |= ah.pattern
			}
		}
	}
	return h.withAlso(b, found)
}

// occurrences lists where in the JSON line b a hint of a pattern in only
// is, by position, from the automaton's hits.
func (h *hintSet) occurrences(e *glEngine, b []byte, hits []glHit, only uint64) []hintOccurrence {
	if e == nil {
		return nil
	}
	var occ []hintOccurrence
	for _, hit := range hits {
		for k := range e.hintsByKw[hit.kw] {
			ah := &e.hintsByKw[hit.kw][k]
			if only&ah.pattern != 0 && ah.at(b, hit.pos, true) {
				occ = append(occ, hintOccurrence{hit.pos, hit.pos + len(ah.hint), ah.pattern})
			}
		}
	}
	return occ
}
