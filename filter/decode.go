package filter

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// The decoder turns one JSON text into the values gojq runs on: nil, bool,
// int, float64, json.Number (integers too big for int keep their spelling),
// string, []any and map[string]any. It accepts exactly what encoding/json
// accepts and builds what encoding/json with UseNumber followed by
// numberValue builds (FuzzDecode holds it to that), at a fraction of the
// cost: no reflection, keys interned, plain strings sliced without a
// second pass.

const maxDepth = 10000 // encoding/json's nesting limit

// SyntaxError is a JSON syntax error at a byte offset of a line.
type SyntaxError struct {
	Offset int
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at column %d: %s", e.Offset+1, e.Msg)
}

type decoder struct {
	data  []byte
	pos   int
	depth int
	keys  map[string]string
	buf   []byte
	// only, when set, limits the top-level object to these keys: the
	// others are validated and dropped (see projection in fastpath.go).
	only map[string]bool
	// spaced is set when ws skipped anything: the text is not compact.
	spaced bool
}

func newDecoder() *decoder { return &decoder{keys: make(map[string]string, 64)} }

// decodeAll decodes every JSON value in data (jq accepts several on a line).
func decodeAll(data []byte) ([]any, error) {
	d := newDecoder()
	var vs []any
	err := d.each(data, func(v any, _, _ int) error { vs = append(vs, v); return nil })
	return vs, err
}

// each calls f for each whitespace-separated value of data with its byte
// span. It stops at the first syntax error.
func (d *decoder) each(data []byte, f func(v any, start, end int) error) error {
	d.data, d.pos, d.depth = data, 0, 0
	for {
		d.ws()
		if d.pos >= len(d.data) {
			return nil
		}
		start := d.pos
		v, err := d.value()
		if err != nil {
			return err
		}
		if err := f(v, start, d.pos); err != nil {
			return err
		}
	}
}

// one decodes data holding exactly one value (surrounding space allowed).
func (d *decoder) one(data []byte) (any, error) {
	d.data, d.pos, d.depth = data, 0, 0
	d.ws()
	v, err := d.value()
	if err != nil {
		return nil, err
	}
	d.ws()
	if d.pos < len(d.data) {
		return nil, d.errorf("unexpected %s after the value", d.describe())
	}
	return v, nil
}

func (d *decoder) errorf(format string, a ...any) error {
	return &SyntaxError{Offset: d.pos, Msg: fmt.Sprintf(format, a...)}
}

func (d *decoder) describe() string {
	if d.pos >= len(d.data) {
		return "end of line"
	}
	c := d.data[d.pos]
	if c < 0x20 || c >= 0x7f {
		return fmt.Sprintf("byte 0x%02x", c)
	}
	return strconv.QuoteRune(rune(c))
}

func (d *decoder) ws() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
			d.spaced = true
		default:
			return
		}
	}
}

func (d *decoder) value() (any, error) {
	if d.pos >= len(d.data) {
		return nil, d.errorf("unexpected end of line, looking for a value")
	}
	switch c := d.data[d.pos]; c {
	case '{':
		return d.object()
	case '[':
		return d.array()
	case '"':
		return d.str()
	case 't':
		return true, d.literal("true")
	case 'f':
		return false, d.literal("false")
	case 'n':
		return nil, d.literal("null")
	default:
		if c == '-' || '0' <= c && c <= '9' {
			return d.number()
		}
		return nil, d.errorf("unexpected %s, looking for a value", d.describe())
	}
}

func (d *decoder) literal(word string) error {
	if len(d.data)-d.pos >= len(word) && string(d.data[d.pos:d.pos+len(word)]) == word {
		d.pos += len(word)
		return nil
	}
	for i := 0; i < len(word); i++ {
		if d.pos >= len(d.data) || d.data[d.pos] != word[i] {
			return d.errorf("unexpected %s in literal %s", d.describe(), word)
		}
		d.pos++
	}
	return nil
}

func (d *decoder) object() (any, error) {
	d.depth++
	if d.depth > maxDepth {
		return nil, d.errorf("nesting deeper than %d", maxDepth)
	}
	only := d.only
	d.only = nil // projection applies to the top level only
	d.pos++      // {
	m := make(map[string]any, 8)
	d.ws()
	if d.pos < len(d.data) && d.data[d.pos] == '}' {
		d.pos++
		d.depth--
		return m, nil
	}
	for {
		d.ws()
		if d.pos >= len(d.data) || d.data[d.pos] != '"' {
			return nil, d.errorf("unexpected %s, looking for an object key", d.describe())
		}
		k, err := d.key()
		if err != nil {
			return nil, err
		}
		d.ws()
		if d.pos >= len(d.data) || d.data[d.pos] != ':' {
			return nil, d.errorf("unexpected %s after an object key", d.describe())
		}
		d.pos++
		d.ws()
		if only != nil && !only[k] {
			if _, err := d.skip(); err != nil {
				return nil, err
			}
		} else {
			v, err := d.value()
			if err != nil {
				return nil, err
			}
			m[k] = v
		}
		d.ws()
		if d.pos >= len(d.data) {
			return nil, d.errorf("unexpected end of line in an object")
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
		case '}':
			d.pos++
			d.depth--
			return m, nil
		default:
			return nil, d.errorf("unexpected %s in an object", d.describe())
		}
	}
}

func (d *decoder) array() (any, error) {
	d.depth++
	if d.depth > maxDepth {
		return nil, d.errorf("nesting deeper than %d", maxDepth)
	}
	d.only = nil
	d.pos++ // [
	a := make([]any, 0, 4)
	d.ws()
	if d.pos < len(d.data) && d.data[d.pos] == ']' {
		d.pos++
		d.depth--
		return a, nil
	}
	for {
		d.ws()
		v, err := d.value()
		if err != nil {
			return nil, err
		}
		a = append(a, v)
		d.ws()
		if d.pos >= len(d.data) {
			return nil, d.errorf("unexpected end of line in an array")
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
		case ']':
			d.pos++
			d.depth--
			return a, nil
		default:
			return nil, d.errorf("unexpected %s in an array", d.describe())
		}
	}
}

// key decodes an object key, interning plain ones: event streams repeat
// the same few dozen keys millions of times.
func (d *decoder) key() (string, error) {
	start := d.pos + 1
	end, plain, err := scanString(d.data, d.pos)
	if err != nil {
		d.pos = end
		return "", err
	}
	d.pos = end
	if !plain {
		return d.unquote(start, end-1), nil
	}
	raw := d.data[start : end-1]
	if k, ok := d.keys[string(raw)]; ok {
		return k, nil
	}
	k := string(raw)
	if len(d.keys) < 4096 {
		d.keys[k] = k
	}
	return k, nil
}

func (d *decoder) str() (any, error) {
	start := d.pos + 1
	end, plain, err := scanString(d.data, d.pos)
	if err != nil {
		d.pos = end
		return nil, err
	}
	d.pos = end
	if plain {
		return string(d.data[start : end-1]), nil
	}
	return d.unquote(start, end-1), nil
}

// scanString finds the end of the string starting at data[pos] == '"'. It
// returns the offset after the closing quote and whether the contents are
// plain: printable ASCII or valid UTF-8 with no escapes, so the bytes are
// the string.
func scanString(data []byte, pos int) (end int, plain bool, err error) {
	i := pos + 1
	plain = true
	ascii := true
	for {
		// Most bytes need no look: skip them eight at a time when possible.
		for i+8 <= len(data) && !strSpecial[data[i]] && !strSpecial[data[i+1]] && !strSpecial[data[i+2]] &&
			!strSpecial[data[i+3]] && !strSpecial[data[i+4]] && !strSpecial[data[i+5]] &&
			!strSpecial[data[i+6]] && !strSpecial[data[i+7]] {
			i += 8
		}
		for i < len(data) && !strSpecial[data[i]] {
			i++
		}
		if i >= len(data) {
			return i, false, &SyntaxError{Offset: i, Msg: "unexpected end of line in a string"}
		}
		c := data[i]
		switch {
		case c == '"':
			if !ascii && plain && !utf8.Valid(data[pos+1:i]) {
				plain = false
			}
			return i + 1, plain, nil
		case c == '\\':
			plain = false
			if i+1 >= len(data) {
				return i + 1, false, &SyntaxError{Offset: i + 1, Msg: "unexpected end of line in a string escape"}
			}
			switch data[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				for j := i + 2; j < i+6; j++ {
					if j >= len(data) {
						return j, false, &SyntaxError{Offset: j, Msg: "unexpected end of line in a \\u escape"}
					}
					if !isHex(data[j]) {
						return j, false, &SyntaxError{Offset: j, Msg: fmt.Sprintf("invalid character %q in a \\u escape", data[j])}
					}
				}
				i += 6
			default:
				return i + 1, false, &SyntaxError{Offset: i + 1, Msg: fmt.Sprintf("invalid escape %q", "\\"+string(rune(data[i+1])))}
			}
		case c < 0x20:
			return i, false, &SyntaxError{Offset: i, Msg: fmt.Sprintf("control character 0x%02x in a string", c)}
		default: // non-ASCII
			ascii = false
			i++
		}
	}
}

// strSpecial marks the bytes scanString must look at.
var strSpecial = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c == '"' || c == '\\' || c < 0x20 || c >= 0x80
	}
	return t
}()

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func hexVal(b []byte) rune {
	var r rune
	for _, c := range b {
		r <<= 4
		switch {
		case '0' <= c && c <= '9':
			r |= rune(c - '0')
		case 'a' <= c && c <= 'f':
			r |= rune(c - 'a' + 10)
		default:
			r |= rune(c - 'A' + 10)
		}
	}
	return r
}

// unquote decodes a string body already checked by scanString, replacing
// invalid UTF-8 and lone surrogates with U+FFFD as encoding/json does.
func (d *decoder) unquote(start, end int) string {
	s := d.data[start:end]
	b := d.buf[:0]
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\':
			switch s[i+1] {
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				r := hexVal(s[i+2 : i+6])
				i += 6
				if utf16.IsSurrogate(r) {
					if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
						if r2 := utf16.DecodeRune(r, hexVal(s[i+2:i+6])); r2 != utf8.RuneError {
							b = utf8.AppendRune(b, r2)
							i += 6
							continue
						}
					}
					r = utf8.RuneError
				}
				b = utf8.AppendRune(b, r)
				continue
			default: // " \ /
				b = append(b, s[i+1])
			}
			i += 2
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			r, size := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && size == 1 {
				b = utf8.AppendRune(b, utf8.RuneError)
			} else {
				b = append(b, s[i:i+size]...)
			}
			i += size
		}
	}
	d.buf = b
	return string(b)
}

func (d *decoder) number() (any, error) {
	start := d.pos
	end, isInt, err := scanNumber(d.data, d.pos)
	d.pos = end
	if err != nil {
		return nil, err
	}
	span := d.data[start:end]
	if isInt && len(span) <= 18 {
		neg := span[0] == '-'
		digits := span
		if neg {
			digits = span[1:]
		}
		var n int64
		for _, c := range digits {
			n = n*10 + int64(c-'0')
		}
		if neg {
			n = -n
		}
		return int(n), nil
	}
	return numberValue(string(span), isInt), nil
}

// numberValue converts a JSON number's spelling to gojq's value: int when
// it fits, float64 with a fraction or exponent, otherwise json.Number so
// the digits of a big integer survive.
func numberValue(s string, isInt bool) any {
	if isInt {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil && n >= math.MinInt && n <= math.MaxInt {
			return int(n)
		}
		return json.Number(s)
	}
	f, _ := strconv.ParseFloat(s, 64) // out of range gives ±Inf or 0, like jq
	return f
}

// scanNumber checks the JSON number grammar from pos.
func scanNumber(data []byte, pos int) (end int, isInt bool, err error) {
	i := pos
	if data[i] == '-' {
		i++
	}
	bad := func(what string) (int, bool, error) {
		got := "end of line"
		if i < len(data) {
			got = strconv.QuoteRune(rune(data[i]))
		}
		return i, false, &SyntaxError{Offset: i, Msg: fmt.Sprintf("unexpected %s in a number, looking for %s", got, what)}
	}
	switch {
	case i < len(data) && data[i] == '0':
		i++
	case i < len(data) && '1' <= data[i] && data[i] <= '9':
		for i < len(data) && '0' <= data[i] && data[i] <= '9' {
			i++
		}
	default:
		return bad("a digit")
	}
	isInt = true
	if i < len(data) && data[i] == '.' {
		isInt = false
		i++
		if i >= len(data) || data[i] < '0' || data[i] > '9' {
			return bad("a digit after the decimal point")
		}
		for i < len(data) && '0' <= data[i] && data[i] <= '9' {
			i++
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		isInt = false
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if i >= len(data) || data[i] < '0' || data[i] > '9' {
			return bad("a digit in the exponent")
		}
		for i < len(data) && '0' <= data[i] && data[i] <= '9' {
			i++
		}
	}
	return i, isInt, nil
}

// Kinds of JSON values, as skip reports the top-level one.
const (
	kindNull byte = 'n'
	kindBool byte = 'b'
	kindNum  byte = '0'
	kindStr  byte = '"'
	kindArr  byte = '['
	kindObj  byte = '{'
)

// skip validates the value at d.pos without building it and returns its kind.
func (d *decoder) skip() (byte, error) {
	if d.pos >= len(d.data) {
		return 0, d.errorf("unexpected end of line, looking for a value")
	}
	switch c := d.data[d.pos]; c {
	case '{':
		return kindObj, d.skipObject()
	case '[':
		return kindArr, d.skipArray()
	case '"':
		end, _, err := scanString(d.data, d.pos)
		d.pos = end
		return kindStr, err
	case 't':
		return kindBool, d.literal("true")
	case 'f':
		return kindBool, d.literal("false")
	case 'n':
		return kindNull, d.literal("null")
	default:
		if c == '-' || '0' <= c && c <= '9' {
			end, _, err := scanNumber(d.data, d.pos)
			d.pos = end
			return kindNum, err
		}
		return 0, d.errorf("unexpected %s, looking for a value", d.describe())
	}
}

func (d *decoder) skipObject() error {
	d.depth++
	if d.depth > maxDepth {
		return d.errorf("nesting deeper than %d", maxDepth)
	}
	d.pos++
	d.ws()
	if d.pos < len(d.data) && d.data[d.pos] == '}' {
		d.pos++
		d.depth--
		return nil
	}
	for {
		d.ws()
		if d.pos >= len(d.data) || d.data[d.pos] != '"' {
			return d.errorf("unexpected %s, looking for an object key", d.describe())
		}
		end, _, err := scanString(d.data, d.pos)
		d.pos = end
		if err != nil {
			return err
		}
		d.ws()
		if d.pos >= len(d.data) || d.data[d.pos] != ':' {
			return d.errorf("unexpected %s after an object key", d.describe())
		}
		d.pos++
		d.ws()
		if _, err := d.skip(); err != nil {
			return err
		}
		d.ws()
		if d.pos >= len(d.data) {
			return d.errorf("unexpected end of line in an object")
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
		case '}':
			d.pos++
			d.depth--
			return nil
		default:
			return d.errorf("unexpected %s in an object", d.describe())
		}
	}
}

func (d *decoder) skipArray() error {
	d.depth++
	if d.depth > maxDepth {
		return d.errorf("nesting deeper than %d", maxDepth)
	}
	d.pos++
	d.ws()
	if d.pos < len(d.data) && d.data[d.pos] == ']' {
		d.pos++
		d.depth--
		return nil
	}
	for {
		d.ws()
		if _, err := d.skip(); err != nil {
			return err
		}
		d.ws()
		if d.pos >= len(d.data) {
			return d.errorf("unexpected end of line in an array")
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
		case ']':
			d.pos++
			d.depth--
			return nil
		default:
			return d.errorf("unexpected %s in an array", d.describe())
		}
	}
}

// validateOne checks that data holds exactly one JSON value and returns
// its kind, building nothing.
func (d *decoder) validateOne(data []byte) (byte, error) {
	d.data, d.pos, d.depth, d.spaced = data, 0, 0, false
	d.ws()
	k, err := d.skip()
	if err != nil {
		return 0, err
	}
	d.ws()
	if d.pos < len(d.data) {
		return 0, d.errorf("unexpected %s after the value", d.describe())
	}
	return k, nil
}
