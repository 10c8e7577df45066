package filter

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/agentjq/agentjq/internal/protocol"
)

// The decoder turns one JSON text into the values gojq runs on: nil, bool,
// int, float64, json.Number (integers too big for int keep their spelling),
// string, []any and map[string]any. It builds what encoding/json with
// UseNumber followed by numberValue builds (FuzzDecode holds it to that),
// at a fraction of the cost: no reflection, keys interned, plain strings
// sliced without a second pass. What is and is not JSON is protocol's
// scanner's business: the decoder finds strings and numbers with it, skips
// with it, and when a text does not build it asks the scanner why.

// errInvalid says the builder met something that is not JSON (or nested
// too deep); explain turns it into the scanner's error.
var errInvalid = errors.New("invalid JSON")

type decoder struct {
	data  []byte
	pos   int
	depth int
	keys  map[string]string
	buf   []byte
	// only, when set, limits the top-level object to these keys: the
	// others are validated and dropped (see projection in fastpath.go).
	only map[string]bool
	// spaced is set by validateOne when the value holds white space
	// outside its strings: the text is not compact.
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
			return d.explain(start)
		}
		if err := f(v, start, d.pos); err != nil {
			return err
		}
	}
}

// explain returns the scanner's error for the value at start, which the
// builder could not build. A value that is only too deep is valid JSON:
// the error is then a *protocol.DepthError.
func (d *decoder) explain(start int) error {
	_, _, err := protocol.SkipValue(d.data, start, 0)
	return orInvalid(err, start)
}

// orInvalid is err, or an error for the builder's failure when the
// scanner found none (FuzzDecode holds the two to the same grammar).
func orInvalid(err error, at int) error {
	if err == nil {
		return &protocol.SyntaxError{Offset: at, Msg: "not decodable"}
	}
	return err
}

func (d *decoder) ws() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

func (d *decoder) value() (any, error) {
	if d.pos >= len(d.data) {
		return nil, errInvalid
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
		return nil, errInvalid
	}
}

func (d *decoder) literal(word string) error {
	if len(d.data)-d.pos >= len(word) && string(d.data[d.pos:d.pos+len(word)]) == word {
		d.pos += len(word)
		return nil
	}
	return errInvalid
}

// expect passes c, with the white space before it.
func (d *decoder) expect(c byte) bool {
	d.ws()
	if d.pos < len(d.data) && d.data[d.pos] == c {
		d.pos++
		return true
	}
	return false
}

func (d *decoder) object() (any, error) {
	d.depth++
	if d.depth > protocol.MaxDepth {
		return nil, errInvalid
	}
	only := d.only
	d.only = nil // projection applies to the top level only
	d.pos++      // {
	m := make(map[string]any, 8)
	if d.expect('}') {
		d.depth--
		return m, nil
	}
	for {
		d.ws()
		if d.pos >= len(d.data) || d.data[d.pos] != '"' {
			return nil, errInvalid
		}
		k, err := d.key()
		if err != nil {
			return nil, err
		}
		if !d.expect(':') {
			return nil, errInvalid
		}
		d.ws()
		if only != nil && !only[k] {
			end, _, err := protocol.SkipValue(d.data, d.pos, d.depth)
			if err != nil {
				return nil, errInvalid
			}
			d.pos = end
		} else {
			v, err := d.value()
			if err != nil {
				return nil, err
			}
			m[k] = v
		}
		d.ws()
		if d.pos >= len(d.data) {
			return nil, errInvalid
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
		case '}':
			d.pos++
			d.depth--
			return m, nil
		default:
			return nil, errInvalid
		}
	}
}

func (d *decoder) array() (any, error) {
	d.depth++
	if d.depth > protocol.MaxDepth {
		return nil, errInvalid
	}
	d.only = nil
	d.pos++ // [
	a := make([]any, 0, 4)
	if d.expect(']') {
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
			return nil, errInvalid
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
		case ']':
			d.pos++
			d.depth--
			return a, nil
		default:
			return nil, errInvalid
		}
	}
}

// key decodes an object key, interning plain ones: event streams repeat
// the same few dozen keys millions of times.
func (d *decoder) key() (string, error) {
	start := d.pos + 1
	end, plain, err := d.scanString()
	if err != nil {
		return "", err
	}
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
	end, plain, err := d.scanString()
	if err != nil {
		return nil, err
	}
	if plain {
		return string(d.data[start : end-1]), nil
	}
	return d.unquote(start, end-1), nil
}

// scanString passes the string at d.pos and says whether it is plain: no
// escapes and valid UTF-8, so its bytes are the string.
func (d *decoder) scanString() (end int, plain bool, err error) {
	end, escaped, nonASCII, err := protocol.ScanString(d.data, d.pos)
	if err != nil {
		return end, false, errInvalid
	}
	start := d.pos + 1
	d.pos = end
	return end, !escaped && (!nonASCII || utf8.Valid(d.data[start:end-1])), nil
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

// unquote decodes a string body already checked by the scanner, replacing
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
	end, isInt, err := protocol.ScanNumber(d.data, d.pos)
	d.pos = end
	if err != nil {
		return nil, errInvalid
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

// Kinds of JSON values, as validateOne reports the top-level one: the
// first byte of the value, except numbers and booleans.
const (
	kindNull byte = 'n'
	kindBool byte = 'b'
	kindNum  byte = '0'
	kindStr  byte = '"'
	kindArr  byte = '['
	kindObj  byte = '{'
)

// validateOne checks that data holds exactly one JSON value and returns
// its kind, building nothing.
func (d *decoder) validateOne(data []byte) (byte, error) {
	start, spaced, err := protocol.Validate(data)
	d.spaced = spaced
	if err != nil {
		return 0, err
	}
	switch c := data[start]; c {
	case 't', 'f':
		return kindBool, nil
	case '{', '[', '"', 'n':
		return c, nil
	}
	return kindNum, nil
}
