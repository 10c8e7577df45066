package protocol

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/bits"
	"strconv"
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
	// Result holds the raw values of a result line's ResultKeys (nil for
	// a key that is absent, the last one for a key that repeats, as
	// Fields): what the bridge's turn bookkeeping reads, found in the
	// same pass.
	Result [len(ResultKeys)][]byte
	// Known is what the scan learnt of the whole line, for whoever the
	// line is passed on to (a recorder's redaction): zero unless Scan
	// accepted it.
	Known Known
}

// ResultKeys are the top-level keys of a result line that Scan keeps in
// Head.Result.
var ResultKeys = [...]string{"permission_denials", "queued_turn_count", "user_message_uuids", "user_message_uuid"}

// Known is what a reader learnt of a line it passes on, so that the next
// one need not find it out again. The zero value says nothing.
type Known uint8

const (
	// KnownObject: the line is exactly one JSON object (Scan accepted it).
	KnownObject Known = 1 << iota
	// KnownPlain: no escape in the line hides text from its raw bytes
	// (HidesText is false). Only with KnownObject.
	KnownPlain
)

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
	h, err := ScanLine(line)
	return h, err == nil
}

// ScanLine is Scan with the reason a line is refused: a *SyntaxError for a
// line that is not JSON, a *DepthError for valid JSON nested deeper than
// MaxDepth, ErrNotObject for any other JSON value. With a *DepthError the
// head is read all the same, and Fields reads the line: such a request
// can still be answered.
func ScanLine(line []byte) (Head, error) {
	var h Head
	s := scanner{b: line}
	s.ws()
	var err error
	if s.i < len(s.b) && s.b[s.i] == '{' {
		err = s.object(&h)
	} else if err = s.value(0); err == nil {
		err = ErrNotObject
	}
	if _, deep := err.(*DepthError); err != nil && !deep && err != ErrNotObject {
		return h, err
	}
	s.ws()
	if s.i < len(s.b) {
		return h, s.fail("unexpected %s after the value", s.describe())
	}
	if err == nil {
		h.Known = KnownObject
		if !s.hides {
			h.Known |= KnownPlain
		}
	}
	return h, err
}

// HidesText reports whether b holds a \u or \/ escape, or an escaped
// backslash before a u or a / (the decoded text holds an escape in
// turn): the escapes behind which text does not show in the raw bytes.
// It is KnownPlain's rule for any text (a JSON document echoed on
// stderr); Scan follows it for a line in its one pass. From backslash to
// backslash; an escaped backslash is skipped whole.
func HidesText(b []byte) bool {
	for i := 0; ; {
		j := bytes.IndexByte(b[i:], '\\')
		if j < 0 || i+j+1 >= len(b) {
			return false
		}
		switch b[i+j+1] {
		case 'u', '/':
			return true
		case '\\':
			if k := i + j + 2; k < len(b) && (b[k] == 'u' || b[k] == '/') {
				return true
			}
		}
		i += j + 2
	}
}

// MaxDepth is the deepest nesting of objects and arrays the scanner
// accepts, as encoding/json.
const MaxDepth = 10000

// A SyntaxError is where and why a text is not JSON.
type SyntaxError struct {
	Offset int // of the byte that does not fit
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at column %d: %s", e.Offset+1, e.Msg)
}

// A DepthError is valid JSON nested deeper than MaxDepth: agentjq does not
// build such values, but it is not "not JSON" either (a request nested
// that deep deserves an answer).
type DepthError struct {
	Offset int // of the container that goes one level too deep
}

func (e *DepthError) Error() string {
	return fmt.Sprintf("JSON nesting deeper than %d at column %d", MaxDepth, e.Offset+1)
}

// SkipValue validates the JSON value that starts at b[i] (no white space
// before it) and returns the offset just after it. depth is the number of
// containers the value sits in, counted against MaxDepth. spaced says the
// value holds white space outside its strings. A value nested too deep is
// still scanned to its end: end is then right and err a *DepthError.
// The scan uses no recursion, so no input can exhaust the stack.
func SkipValue(b []byte, i, depth int) (end int, spaced bool, err error) {
	s := scanner{b: b, i: i}
	err = s.value(depth)
	return s.i, s.spaced, err
}

// Validate checks that b holds exactly one JSON value, with white space
// around it allowed, and returns where the value starts and whether it
// holds white space outside its strings. Its errors are SkipValue's.
func Validate(b []byte) (start int, spaced bool, err error) {
	s := scanner{b: b}
	s.ws()
	start = s.i
	s.spaced = false
	err = s.value(0)
	if _, deep := err.(*DepthError); err != nil && !deep {
		return start, s.spaced, err
	}
	spaced = s.spaced
	s.ws()
	if s.i < len(s.b) {
		return start, spaced, s.fail("unexpected %s after the value", s.describe())
	}
	return start, spaced, err
}

// ScanString passes the JSON string whose opening quote is b[i] and
// returns the offset after its closing quote. escaped says the string
// holds a backslash escape; nonASCII that it holds bytes of 0x80 and up,
// which the scan does not check: encoding/json accepts invalid UTF-8 (and
// decodes it as U+FFFD), so a caller that uses the bytes as text checks
// them with utf8.Valid.
func ScanString(b []byte, i int) (end int, escaped, nonASCII bool, err error) {
	s := scanner{b: b, i: i}
	escaped, nonASCII, err = s.str()
	return s.i, escaped, nonASCII, err
}

// ScanNumber passes the JSON number that starts at b[i] and says whether
// it is an integer (no fraction, no exponent).
func ScanNumber(b []byte, i int) (end int, isInt bool, err error) {
	s := scanner{b: b, i: i}
	isInt, err = s.number()
	return s.i, isInt, err
}

type scanner struct {
	b []byte
	i int
	// spaced is set when ws passed anything.
	spaced bool
	// hides is set when a string held an escape that KnownPlain rules out.
	hides bool
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
			s.spaced = true
		default:
			return
		}
	}
}

func (s *scanner) fail(format string, a ...any) error {
	return &SyntaxError{Offset: s.i, Msg: fmt.Sprintf(format, a...)}
}

// describe names the byte at s.i for a message.
func (s *scanner) describe() string {
	if s.i >= len(s.b) {
		return "end of line"
	}
	c := s.b[s.i]
	if c < 0x20 || c >= 0x7f {
		return fmt.Sprintf("byte 0x%02x", c)
	}
	return strconv.QuoteRune(rune(c))
}

// object scans the top-level object at s.i, recording the head's fields.
func (s *scanner) object(h *Head) error {
	var tooDeep error
	s.i++ // '{'
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		return nil
	}
	for {
		if s.i >= len(s.b) || s.b[s.i] != '"' {
			return s.fail("unexpected %s, looking for an object key", s.describe())
		}
		kStart := s.i + 1
		kEsc, _, err := s.str()
		if err != nil {
			return err
		}
		key := s.b[kStart : s.i-1]
		if kEsc {
			key = unescape(key)
		}
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return s.fail("unexpected %s after an object key", s.describe())
		}
		s.i++
		s.ws()
		var dst, raw *[]byte // a string field of the head, a raw value of Result
		switch string(key) {
		case "type":
			dst = &h.Type
		case "subtype":
			dst = &h.Subtype
		case "request_id":
			dst = &h.RequestID
		case "session_id":
			dst = &h.SessionID
		// ResultKeys, in order (constant cases: one comparison tree).
		case "permission_denials":
			raw = &h.Result[0]
		case "queued_turn_count":
			raw = &h.Result[1]
		case "user_message_uuids":
			raw = &h.Result[2]
		case "user_message_uuid":
			raw = &h.Result[3]
		}
		if dst != nil {
			*dst = nil // a later duplicate key wins, whatever its type
		}
		vStart := s.i
		if dst != nil && s.i < len(s.b) && s.b[s.i] == '"' {
			vEsc, _, err := s.str()
			if err != nil {
				return err
			}
			*dst = s.b[vStart+1 : s.i-1] // without the quotes
			h.Escaped = h.Escaped || vEsc
		} else if err := s.value(1); err != nil {
			// Too deep is only known once the rest is known to be JSON.
			if _, deep := err.(*DepthError); !deep || tooDeep != nil {
				return err
			}
			tooDeep = err
		} else if raw != nil {
			*raw = s.b[vStart:s.i]
		}
		s.ws()
		if s.i >= len(s.b) {
			return s.fail("unexpected end of line in an object")
		}
		switch s.b[s.i] {
		case ',':
			s.i++
			s.ws()
		case '}':
			s.i++
			return tooDeep
		default:
			return s.fail("unexpected %s in an object", s.describe())
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

// value scans the value at s.i, nested in depth containers. It keeps the
// containers it is in on a stack of its own rather than recursing.
func (s *scanner) value(depth int) error {
	var inline [64]byte
	open := inline[:0] // '{' or '[' of each container entered, innermost last
	tooDeep := -1
	for {
		// A value starts at s.i.
		if s.i >= len(s.b) {
			return s.fail("unexpected end of line, looking for a value")
		}
		switch c := s.b[s.i]; {
		case c == '{' || c == '[':
			open = append(open, c)
			if depth+len(open) > MaxDepth && tooDeep < 0 {
				tooDeep = s.i
			}
			s.i++
			s.ws()
			if s.i < len(s.b) && s.b[s.i] == c+2 { // } is {+2, ] is [+2
				s.i++
				open = open[:len(open)-1]
				break
			}
			if c == '{' {
				if err := s.key(); err != nil {
					return err
				}
			}
			continue
		case c == '"':
			if _, _, err := s.str(); err != nil {
				return err
			}
		case c == '-' || c >= '0' && c <= '9':
			if _, err := s.number(); err != nil {
				return err
			}
		case c == 't':
			if err := s.lit("true"); err != nil {
				return err
			}
		case c == 'f':
			if err := s.lit("false"); err != nil {
				return err
			}
		case c == 'n':
			if err := s.lit("null"); err != nil {
				return err
			}
		default:
			return s.fail("unexpected %s, looking for a value", s.describe())
		}
		// A value ended: pass the closing brackets that follow it, up to
		// the next value or the end of the outermost one.
		for {
			if len(open) == 0 {
				if tooDeep >= 0 {
					return &DepthError{Offset: tooDeep}
				}
				return nil
			}
			s.ws()
			top := open[len(open)-1]
			in := "an array"
			if top == '{' {
				in = "an object"
			}
			if s.i >= len(s.b) {
				return s.fail("unexpected end of line in %s", in)
			}
			c := s.b[s.i]
			if c == ',' {
				s.i++
				s.ws()
				if top == '{' {
					if err := s.key(); err != nil {
						return err
					}
				}
				break
			}
			if c != top+2 {
				return s.fail("unexpected %s in %s", s.describe(), in)
			}
			s.i++
			open = open[:len(open)-1]
		}
	}
}

// key passes an object key, its colon and the space around them.
func (s *scanner) key() error {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return s.fail("unexpected %s, looking for an object key", s.describe())
	}
	if _, _, err := s.str(); err != nil {
		return err
	}
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != ':' {
		return s.fail("unexpected %s after an object key", s.describe())
	}
	s.i++
	s.ws()
	return nil
}

func (s *scanner) lit(w string) error {
	if len(s.b)-s.i >= len(w) && string(s.b[s.i:s.i+len(w)]) == w {
		s.i += len(w)
		return nil
	}
	for k := 0; k < len(w); k++ {
		if s.i >= len(s.b) || s.b[s.i] != w[k] {
			return s.fail("unexpected %s in literal %s", s.describe(), w)
		}
		s.i++
	}
	return nil
}

func (s *scanner) number() (isInt bool, err error) {
	b, i := s.b, s.i
	bad := func(what string) (bool, error) {
		s.i = i
		return false, s.fail("unexpected %s in a number, looking for %s", s.describe(), what)
	}
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return bad("a digit")
	}
	isInt = true
	if i < len(b) && b[i] == '.' {
		isInt = false
		i++
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return bad("a digit after the decimal point")
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		isInt = false
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return bad("a digit in the exponent")
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	s.i = i
	return isInt, nil
}

const (
	lsb     = 0x0101010101010101
	msb     = 0x8080808080808080
	quotes  = '"' * lsb
	slashes = '\\' * lsb
)

// str scans a string starting at its opening quote. Eight bytes at a
// time: a word without a quote, a backslash or a control character is
// passed whole (its high bits still say whether it held non-ASCII bytes).
func (s *scanner) str() (escaped, nonASCII bool, err error) {
	b, i := s.b, s.i+1
	var high uint64 // the bytes passed in words, or-ed together
	for {
		for i+8 <= len(b) {
			x := binary.LittleEndian.Uint64(b[i:])
			q := x ^ quotes
			e := x ^ slashes
			special := (((q - lsb) &^ q) | ((e - lsb) &^ e) | ((x - 0x20*lsb) &^ x)) & msb
			if special != 0 {
				// The lowest flagged byte is always a true match (borrows
				// only run upwards): jump straight to it.
				n := bits.TrailingZeros64(special) >> 3
				high |= x & (1<<(n*8) - 1)
				i += n
				break
			}
			high |= x
			i += 8
		}
		if i >= len(b) {
			s.i = i
			return escaped, nonASCII, s.fail("unexpected end of line in a string")
		}
		switch c := b[i]; {
		case c == '"':
			s.i = i + 1
			return escaped, nonASCII || high&msb != 0, nil
		case c == '\\':
			escaped = true
			i++
			if i >= len(b) {
				s.i = i
				return escaped, nonASCII, s.fail("unexpected end of line in a string escape")
			}
			switch b[i] {
			case '"', 'b', 'f', 'n', 'r', 't':
				i++
			case '/':
				s.hides = true
				i++
			case '\\':
				// An escaped backslash before u or /: the decoded text
				// holds an escape in turn.
				if i++; i < len(b) && (b[i] == 'u' || b[i] == '/') {
					s.hides = true
				}
			case 'u':
				s.hides = true
				for j := i + 1; j < i+5; j++ {
					if j >= len(b) {
						s.i = j
						return escaped, nonASCII, s.fail("unexpected end of line in a \\u escape")
					}
					if h := b[j]; !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						s.i = j
						return escaped, nonASCII, s.fail("invalid character %q in a \\u escape", h)
					}
				}
				i += 5
			default:
				s.i = i
				return escaped, nonASCII, s.fail("invalid escape %q", "\\"+string(rune(b[i])))
			}
		case c < 0x20:
			s.i = i
			return escaped, nonASCII, s.fail("control character 0x%02x in a string", c)
		default:
			nonASCII = nonASCII || c >= 0x80
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
		kEsc, _, err := s.str()
		if err != nil {
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
		if !passed(s.value(1)) {
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

// passed says a value was scanned to its end: it is JSON, maybe too deep.
func passed(err error) bool {
	_, deep := err.(*DepthError)
	return err == nil || deep
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
		if !passed(s.value(1)) {
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

// RequestKey reads a request_id: a string or a number, which the answer
// must echo as the same JSON value (id, a copy). key names it inside
// agentjq (a string's text, a number's digits).
func RequestKey(raw []byte) (key string, id json.RawMessage, ok bool) {
	if len(raw) == 0 {
		return "", nil, false
	}
	if raw[0] == '"' {
		str, ok := String(raw)
		return str, append(json.RawMessage(nil), raw...), ok
	}
	if raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9') {
		return string(raw), append(json.RawMessage(nil), raw...), json.Valid(raw)
	}
	return "", nil, false
}

// Request is what routing a control_request needs, read from its
// line in one call.
type Request struct {
	Key     string          // the request_id (RequestKey)
	ID      json.RawMessage // the request_id as the agent wrote it
	Request json.RawMessage // the request object, a copy
	Subtype string          // the request's subtype
}

// ReadControlRequest reads a control_request line that Scan accepted; ok
// is false when its request_id is neither a string nor a number, so that
// no answer could name it.
func ReadControlRequest(line []byte) (Request, bool) {
	f := Fields(line, "request_id", "request")
	key, id, ok := RequestKey(f[0])
	if !ok {
		return Request{}, false
	}
	req := append(json.RawMessage(nil), f[1]...)
	sub, _ := String(Fields(req, "subtype")[0])
	return Request{Key: key, ID: id, Request: req, Subtype: sub}, true
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
