package filter

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/agentjq/agentjq/internal/protocol"
)

// style is how values are written: jq's -c/--indent/--tab, -a, -r, -j,
// --seq and colour. Both the value encoder and the original-bytes
// re-formatter follow it, so a value looks the same whichever path wrote it.
type style struct {
	indent int  // spaces per level; 0 is compact
	tab    bool // a tab per level
	ascii  bool
	raw    bool // top-level strings without quotes
	join   bool // no newline after each value
	seq    bool // RS before each value
	color  bool
}

// jq 1.6's default palette.
const (
	colorNull   = "\x1b[1;30m"
	colorFalse  = "\x1b[0;39m"
	colorTrue   = "\x1b[0;39m"
	colorNumber = "\x1b[0;39m"
	colorString = "\x1b[0;32m"
	colorArray  = "\x1b[1;39m"
	colorObject = "\x1b[1;39m"
	colorKey    = "\x1b[34;1m"
	colorReset  = "\x1b[0m"
)

func (s *style) pretty() bool { return s.indent > 0 || s.tab }

// begin and end frame one output value.
func (s *style) begin(b []byte) []byte {
	if s.seq {
		b = append(b, 0x1e)
	}
	return b
}

func (s *style) end(b []byte) []byte {
	if !s.join {
		b = append(b, '\n')
	}
	return b
}

// appendValue frames and writes one output value. spill, when not nil,
// is handed the bytes so far whenever they pass spillBytes, and returns
// the buffer to go on with and whether to go on: one huge value need not
// be held whole.
func (s *style) appendValue(b []byte, v any, spill func([]byte) ([]byte, bool)) []byte {
	b = s.begin(b)
	if str, ok := v.(string); ok && s.raw {
		b = append(b, str...)
	} else {
		b = s.encodeTo(b, v, 0, spill)
	}
	return s.end(b)
}

// spillBytes is how much output a worker holds before handing it on.
const spillBytes = 128 << 10

func (s *style) newline(b []byte, level int) []byte {
	b = append(b, '\n')
	if s.tab {
		for range level {
			b = append(b, '\t')
		}
		return b
	}
	for range level * s.indent {
		b = append(b, ' ')
	}
	return b
}

func (s *style) paint(b []byte, color string) []byte {
	if s.color {
		b = append(b, color...)
	}
	return b
}

// punct writes punctuation in a container's colour.
func (s *style) punct(b []byte, p string, color string) []byte {
	b = s.paint(b, color)
	b = append(b, p...)
	return s.reset(b)
}

func (s *style) reset(b []byte) []byte {
	if s.color {
		b = append(b, colorReset...)
	}
	return b
}

func (s *style) encode(b []byte, v any, level int) []byte { return s.encodeTo(b, v, level, nil) }

// encodeTo writes v at the given indentation level. It keeps the
// containers it is in on a stack of its own, not the goroutine's: gojq
// builds values of any depth (reduce range(1000000) as $i (0; [.])), and
// jq prints them.
func (s *style) encodeTo(b []byte, v any, level int, spill func([]byte) ([]byte, bool)) []byte {
	type frame struct {
		arr  []any
		obj  map[string]any
		keys []string // obj's, sorted
		next int
	}
	var stack []frame
	for {
		switch x := v.(type) {
		case []any:
			if len(x) == 0 {
				b = s.punct(b, "[]", colorArray)
				break
			}
			b = s.punct(b, "[", colorArray)
			stack = append(stack, frame{arr: x})
		case map[string]any:
			if len(x) == 0 {
				b = s.punct(b, "{}", colorObject)
				break
			}
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			b = s.punct(b, "{", colorObject)
			stack = append(stack, frame{obj: x, keys: keys})
		default:
			b = s.scalar(b, v)
		}
		// Find the next value to write, closing the containers that end.
		for {
			if spill != nil && len(b) >= spillBytes {
				var more bool
				if b, more = spill(b); !more {
					return b // the output has no reader any more
				}
			}
			if len(stack) == 0 {
				return b
			}
			f := &stack[len(stack)-1]
			depth := level + len(stack)
			color, n := colorArray, len(f.arr)
			if f.obj != nil {
				color, n = colorObject, len(f.keys)
			}
			if f.next == n {
				stack = stack[:len(stack)-1]
				if s.pretty() {
					b = s.newline(b, depth-1)
				}
				if f.obj != nil {
					b = s.punct(b, "}", color)
				} else {
					b = s.punct(b, "]", color)
				}
				continue
			}
			if f.next > 0 {
				b = s.punct(b, ",", color)
			}
			if s.pretty() {
				b = s.newline(b, depth)
			}
			if f.obj != nil {
				k := f.keys[f.next]
				b = s.paint(b, colorKey)
				b = appendString(b, k, s.ascii)
				b = s.reset(b)
				if s.pretty() {
					b = s.punct(b, ": ", colorObject)
				} else {
					b = s.punct(b, ":", colorObject)
				}
				v = f.obj[k]
			} else {
				v = f.arr[f.next]
			}
			f.next++
			break
		}
	}
}

// scalar writes a value that is not an array or object.
func (s *style) scalar(b []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		b = s.paint(b, colorNull)
		b = append(b, "null"...)
	case bool:
		if v {
			b = s.paint(b, colorTrue)
			b = append(b, "true"...)
		} else {
			b = s.paint(b, colorFalse)
			b = append(b, "false"...)
		}
	case int:
		b = s.paint(b, colorNumber)
		b = strconv.AppendInt(b, int64(v), 10)
	case float64:
		b = s.paint(b, colorNumber)
		b = appendFloat(b, v)
	case *big.Int:
		b = s.paint(b, colorNumber)
		b = v.Append(b, 10)
	case json.Number:
		b = s.paint(b, colorNumber)
		b = append(b, v...)
	case string:
		b = s.paint(b, colorString)
		b = appendString(b, v, s.ascii)
	default:
		panic(fmt.Sprintf("filter: cannot encode %T", v))
	}
	return s.reset(b)
}

// appendFloat writes a float as gojq does: NaN as null, infinities
// clamped, shortest round-trip digits, exponent past 1e21.
func appendFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) {
		return append(b, "null"...)
	}
	f = min(max(f, -math.MaxFloat64), math.MaxFloat64)
	if f == math.Trunc(f) && math.Abs(f) <= 1<<53 && !math.Signbit(f) {
		return strconv.AppendInt(b, int64(f), 10)
	}
	format := byte('f')
	if x := math.Abs(f); x != 0 && x < 1e-6 || x >= 1e21 {
		format = 'e'
	}
	n := len(b)
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 is spelt e-9
		if m := len(b); m-n >= 4 && b[m-4] == 'e' && b[m-3] == '-' && b[m-2] == '0' {
			b[m-2] = b[m-1]
			b = b[:m-1]
		}
	}
	return b
}

const hexDigits = "0123456789abcdef"

// appendString quotes s as jq does; with ascii, every non-ASCII rune is
// escaped (as a surrogate pair beyond the BMP).
func appendString(b []byte, s string, ascii bool) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if ' ' <= c && c <= '~' && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"':
				b = append(b, `\"`...)
			case '\\':
				b = append(b, `\\`...)
			case '\b':
				b = append(b, `\b`...)
			case '\f':
				b = append(b, `\f`...)
			case '\n':
				b = append(b, `\n`...)
			case '\r':
				b = append(b, `\r`...)
			case '\t':
				b = append(b, `\t`...)
			default:
				b = append(b, `\u00`...)
				b = append(b, hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		if ascii {
			b = append(b, s[start:i]...)
			b = appendRuneEscape(b, r)
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

func appendRuneEscape(b []byte, r rune) []byte {
	if r > 0xffff {
		r1, r2 := utf16.EncodeRune(r)
		b = appendU4(b, r1)
		return appendU4(b, r2)
	}
	return appendU4(b, r)
}

func appendU4(b []byte, r rune) []byte {
	return append(b, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
}

// appendRaw writes the original bytes of a valid JSON value in this style:
// key order, number spelling and escapes are kept; only the layout (and,
// with -a, non-ASCII characters) changes. Compact input in compact style
// is copied as is.
func (s *style) appendRaw(b []byte, raw []byte) []byte {
	return s.appendRawSpaced(b, raw, hasSpaceOutsideStrings(raw))
}

// appendRawSpaced is appendRaw when the caller knows whether raw has
// whitespace outside strings.
func (s *style) appendRawSpaced(b []byte, raw []byte, spaced bool) []byte {
	if !s.pretty() && !s.color && !s.ascii && !spaced {
		return append(b, raw...)
	}
	type frame struct {
		obj   bool
		empty bool
	}
	var stack []frame
	expectKey := false
	for i := 0; i < len(raw); {
		c := raw[i]
		switch c {
		case ' ', '\t', '\n', '\r':
			i++
		case '{', '[':
			color := colorArray
			if c == '{' {
				color = colorObject
			}
			// An empty container stays on one line.
			j := i + 1
			for j < len(raw) && isSpace(raw[j]) {
				j++
			}
			if j < len(raw) && (raw[j] == '}' || raw[j] == ']') {
				b = s.paint(b, color)
				b = append(b, c, raw[j])
				b = s.reset(b)
				i = j + 1
				expectKey = false
				continue
			}
			b = s.paint(b, color)
			b = append(b, c)
			b = s.reset(b)
			stack = append(stack, frame{obj: c == '{', empty: true})
			expectKey = c == '{'
			if s.pretty() {
				b = s.newline(b, len(stack))
			}
			i++
		case '}', ']':
			color := colorArray
			if c == '}' {
				color = colorObject
			}
			stack = stack[:len(stack)-1]
			if s.pretty() {
				b = s.newline(b, len(stack))
			}
			b = s.paint(b, color)
			b = append(b, c)
			b = s.reset(b)
			expectKey = false
			i++
		case ',':
			top := stack[len(stack)-1]
			color := colorArray
			if top.obj {
				color = colorObject
			}
			b = s.paint(b, color)
			b = append(b, ',')
			b = s.reset(b)
			if s.pretty() {
				b = s.newline(b, len(stack))
			}
			expectKey = top.obj
			i++
		case ':':
			b = s.paint(b, colorObject)
			b = append(b, ':')
			if s.pretty() {
				b = append(b, ' ')
			}
			b = s.reset(b)
			expectKey = false
			i++
		case '"':
			end, _, _, _ := protocol.ScanString(raw, i)
			if expectKey {
				b = s.paint(b, colorKey)
			} else {
				b = s.paint(b, colorString)
			}
			if s.ascii {
				b = appendASCIIString(b, raw[i:end])
			} else {
				b = append(b, raw[i:end]...)
			}
			b = s.reset(b)
			i = end
		default:
			j := i
			for j < len(raw) && !isDelim(raw[j]) {
				j++
			}
			switch c {
			case 'n':
				b = s.paint(b, colorNull)
			case 't':
				b = s.paint(b, colorTrue)
			case 'f':
				b = s.paint(b, colorFalse)
			default:
				b = s.paint(b, colorNumber)
			}
			b = append(b, raw[i:j]...)
			b = s.reset(b)
			i = j
		}
	}
	return b
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isDelim(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', ',', ':', '[', ']', '{', '}', '"':
		return true
	}
	return false
}

// hasSpaceOutsideStrings reports whether a valid JSON text has any
// insignificant whitespace.
func hasSpaceOutsideStrings(raw []byte) bool {
	in := false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if in {
			switch c {
			case '\\':
				i++
			case '"':
				in = false
			}
			continue
		}
		switch c {
		case '"':
			in = true
		case ' ', '\t', '\n', '\r':
			return true
		}
	}
	return false
}

// appendASCIIString copies a quoted JSON string, escaping its non-ASCII
// runes (invalid UTF-8 becomes \ufffd, as the decoder reads it).
func appendASCIIString(b []byte, q []byte) []byte {
	start := 0
	for i := 0; i < len(q); {
		if q[i] < utf8.RuneSelf {
			i++
			continue
		}
		b = append(b, q[start:i]...)
		r, size := utf8.DecodeRune(q[i:])
		b = appendRuneEscape(b, r)
		i += size
		start = i
	}
	return append(b, q[start:]...)
}
