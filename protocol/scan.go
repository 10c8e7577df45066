package protocol

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"unicode/utf8"
)

// Head is what Scan reads from a line in one pass: the top-level type,
// subtype and request_id, raw (still JSON-escaped, without quotes). Most
// lines need nothing more; the rare ones agentjq acts on are then decoded
// in full.
type Head struct {
	Type, Subtype, RequestID, SessionID []byte
	// Escaped is set when one of the fields above holds a backslash
	// escape: compare through Strings, not the raw bytes.
	Escaped bool
}

// Strings returns the head's fields as Go strings, unescaped.
// Invalid UTF-8 becomes U+FFFD, as encoding/json decodes it.
func (h Head) Strings() (typ, subtype, requestID string) {
	str := func(b []byte) string {
		if h.Escaped || !utf8.Valid(b) {
			return string(unescape(b))
		}
		return string(b)
	}
	return str(h.Type), str(h.Subtype), str(h.RequestID)
}

// Scan validates that line is exactly one JSON object (surrounding white
// space allowed) and reads its head. It is the hot path of spawn: one
// pass, no allocation. It accepts what encoding/json's Valid accepts.
func Scan(line []byte) (Head, bool) {
	var h Head
	s := scanner{b: line}
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '{' {
		return h, false
	}
	if !s.object(&h) {
		return h, false
	}
	s.ws()
	return h, s.i == len(s.b)
}

type scanner struct {
	b     []byte
	i     int
	depth int
}

const maxDepth = 10000 // as encoding/json

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// object scans {...} starting at '{'. With h non-nil it is the top level
// and records the head's fields.
func (s *scanner) object(h *Head) bool {
	s.depth++
	if s.depth > maxDepth {
		return false
	}
	s.i++ // '{'
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		s.depth--
		return true
	}
	for {
		if s.i >= len(s.b) || s.b[s.i] != '"' {
			return false
		}
		kStart := s.i + 1
		kEsc, ok := s.str()
		if !ok {
			return false
		}
		key := s.b[kStart : s.i-1]
		if kEsc && h != nil {
			key = unescape(key)
		}
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return false
		}
		s.i++
		s.ws()
		if h != nil {
			var dst *[]byte
			switch string(key) {
			case "type":
				dst = &h.Type
			case "subtype":
				dst = &h.Subtype
			case "request_id":
				dst = &h.RequestID
			case "session_id":
				dst = &h.SessionID
			}
			if dst != nil {
				*dst = nil // a later duplicate key wins, whatever its type
				if s.i < len(s.b) && s.b[s.i] == '"' {
					vStart := s.i + 1
					vEsc, ok := s.str()
					if !ok {
						return false
					}
					*dst = s.b[vStart : s.i-1]
					h.Escaped = h.Escaped || vEsc
					goto next
				}
			}
		}
		if !s.value() {
			return false
		}
	next:
		s.ws()
		if s.i >= len(s.b) {
			return false
		}
		switch s.b[s.i] {
		case ',':
			s.i++
			s.ws()
		case '}':
			s.i++
			s.depth--
			return true
		default:
			return false
		}
	}
}

// Unescape decodes the raw body of a JSON string (as Head holds it).
func Unescape(b []byte) []byte { return unescape(b) }

// unescape decodes a JSON-escaped string body (rare: keys are plain).
func unescape(b []byte) []byte {
	var str string
	if json.Unmarshal(append(append([]byte{'"'}, b...), '"'), &str) != nil {
		return b
	}
	return []byte(str)
}

func (s *scanner) array() bool {
	s.depth++
	if s.depth > maxDepth {
		return false
	}
	s.i++ // '['
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == ']' {
		s.i++
		s.depth--
		return true
	}
	for {
		if !s.value() {
			return false
		}
		s.ws()
		if s.i >= len(s.b) {
			return false
		}
		switch s.b[s.i] {
		case ',':
			s.i++
			s.ws()
		case ']':
			s.i++
			s.depth--
			return true
		default:
			return false
		}
	}
}

func (s *scanner) value() bool {
	if s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		_, ok := s.str()
		return ok
	case c == '{':
		return s.object(nil)
	case c == '[':
		return s.array()
	case c == '-' || c >= '0' && c <= '9':
		return s.number()
	case c == 't':
		return s.lit("true")
	case c == 'f':
		return s.lit("false")
	case c == 'n':
		return s.lit("null")
	}
	return false
}

func (s *scanner) lit(w string) bool {
	if len(s.b)-s.i < len(w) || string(s.b[s.i:s.i+len(w)]) != w {
		return false
	}
	s.i += len(w)
	return true
}

func (s *scanner) number() bool {
	b, i := s.b, s.i
	if b[i] == '-' {
		i++
	}
	if i >= len(b) {
		return false
	}
	switch {
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return false
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return false
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	s.i = i
	return true
}

const (
	lsb     = 0x0101010101010101
	msb     = 0x8080808080808080
	quotes  = '"' * lsb
	slashes = '\\' * lsb
)

// str scans a string starting at its opening quote and reports whether it
// held an escape. Eight bytes at a time: a word without a quote, a
// backslash or a control character is skipped whole.
func (s *scanner) str() (escaped, ok bool) {
	b, i := s.b, s.i+1
	for {
		for i+8 <= len(b) {
			x := binary.LittleEndian.Uint64(b[i:])
			q := x ^ quotes
			e := x ^ slashes
			special := (((q - lsb) &^ q) | ((e - lsb) &^ e) | ((x - 0x20*lsb) &^ x)) & msb
			if special != 0 {
				// The lowest flagged byte is always a true match (borrows
				// only run upwards): jump straight to it.
				i += bits.TrailingZeros64(special) >> 3
				break
			}
			i += 8
		}
		if i >= len(b) {
			return escaped, false
		}
		switch c := b[i]; {
		case c == '"':
			s.i = i + 1
			return escaped, true
		case c == '\\':
			escaped = true
			i++
			if i >= len(b) {
				return escaped, false
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
			case 'u':
				if len(b)-i < 5 {
					return escaped, false
				}
				for _, h := range b[i+1 : i+5] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return escaped, false
					}
				}
				i += 5
			default:
				return escaped, false
			}
		case c < 0x20:
			return escaped, false
		default:
			i++
		}
	}
}

// Fields returns the raw values of the given top-level keys of a line that
// Scan accepted (nil for a key that is absent; the last one for a key that
// repeats). It lets the few lines agentjq acts on be read without decoding
// the rest of them.
func Fields(line []byte, keys ...string) [][]byte {
	out := make([][]byte, len(keys))
	s := scanner{b: line}
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '{' {
		return out
	}
	s.i++
	for {
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != '"' {
			return out
		}
		kStart := s.i + 1
		kEsc, ok := s.str()
		if !ok {
			return out
		}
		key := s.b[kStart : s.i-1]
		if kEsc {
			key = unescape(key)
		}
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return out
		}
		s.i++
		s.ws()
		vStart := s.i
		if !s.value() {
			return out
		}
		for k, want := range keys {
			if string(key) == want {
				out[k] = s.b[vStart:s.i]
			}
		}
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != ',' {
			return out
		}
		s.i++
	}
}

// Elements returns the raw values of a JSON array that Scan accepted as
// part of a line (nil when arr is not an array).
func Elements(arr []byte) [][]byte {
	s := scanner{b: arr}
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '[' {
		return nil
	}
	s.i++
	var out [][]byte
	for {
		s.ws()
		if s.i < len(s.b) && s.b[s.i] == ']' {
			return out
		}
		start := s.i
		if !s.value() {
			return out
		}
		out = append(out, s.b[start:s.i])
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != ',' {
			return out
		}
		s.i++
	}
}

// String decodes a raw JSON string value (quotes included); ok is false
// when v is not a string.
func String(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return "", false
	}
	body := v[1 : len(v)-1]
	if bytes.IndexByte(body, '\\') < 0 {
		return string(body), true
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return "", false
	}
	return s, true
}
