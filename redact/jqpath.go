package redact

import (
	"errors"
	"strconv"
	"strings"

	"github.com/agentjq/agentjq/internal/protocol"
)

// jqPath is the small subset of jq paths that --redact-path takes:
// .a.b, .a[0], .a[], ."a b", .["a b"]. It is found in a line's raw bytes,
// so redacting by path keeps the rest of the line byte for byte.
type jqPath struct {
	src   string
	steps []pathStep
}

type pathStep struct {
	key   string
	index int  // when !isKey and !all
	isKey bool // an object key
	all   bool // []
}

func parseJQPath(s string) (jqPath, error) {
	p := jqPath{src: s}
	rest := strings.TrimSpace(s)
	if !strings.HasPrefix(rest, ".") {
		return p, errors.New("a path starts with '.'")
	}
	if rest == "." {
		return p, errors.New("the whole line cannot be a path")
	}
	for rest != "" {
		switch {
		case strings.HasPrefix(rest, "["):
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return p, errors.New("missing ]")
			}
			in := strings.TrimSpace(rest[1:end])
			switch {
			case in == "":
				p.steps = append(p.steps, pathStep{all: true})
			case strings.HasPrefix(in, `"`):
				k, err := strconv.Unquote(in)
				if err != nil {
					return p, err
				}
				p.steps = append(p.steps, pathStep{key: k, isKey: true})
			default:
				n, err := strconv.Atoi(in)
				if err != nil || n < 0 {
					return p, errors.New("an index must be a non-negative integer")
				}
				p.steps = append(p.steps, pathStep{index: n})
			}
			rest = rest[end+1:]
		case strings.HasPrefix(rest, `."`):
			end := strings.IndexByte(rest[2:], '"')
			if end < 0 {
				return p, errors.New("unterminated key")
			}
			p.steps = append(p.steps, pathStep{key: rest[2 : 2+end], isKey: true})
			rest = rest[2+end+1:]
		case strings.HasPrefix(rest, "."):
			rest = rest[1:]
			n := 0
			for n < len(rest) && (rest[n] == '_' || rest[n] >= 'a' && rest[n] <= 'z' || rest[n] >= 'A' && rest[n] <= 'Z' || rest[n] >= '0' && rest[n] <= '9') {
				n++
			}
			if n == 0 {
				if strings.HasPrefix(rest, "[") {
					continue
				}
				return p, errors.New("expected a key after '.'")
			}
			p.steps = append(p.steps, pathStep{key: rest[:n], isKey: true})
			rest = rest[n:]
		default:
			return p, errors.New("unexpected " + strconv.Quote(rest[:1]))
		}
	}
	return p, nil
}

// find returns the [start,end) byte spans of the values at p in the JSON
// value starting at b[off:].
func (p jqPath) find(b []byte, off int) [][2]int {
	var spans [][2]int
	var walk func(i int, steps []pathStep)
	walk = func(i int, steps []pathStep) {
		i = skipWS(b, i)
		if i >= len(b) {
			return
		}
		if len(steps) == 0 {
			if end, ok := skipValue(b, i); ok {
				spans = append(spans, [2]int{i, end})
			}
			return
		}
		st := steps[0]
		switch {
		case st.isKey && b[i] == '{':
			j := skipWS(b, i+1)
			for j < len(b) && b[j] != '}' {
				kend, ok := skipValue(b, j)
				if !ok || b[j] != '"' {
					return
				}
				key, ok := protocol.String(b[j:kend])
				if !ok {
					key = string(b[j+1 : kend-1])
				}
				j = skipWS(b, kend)
				if j >= len(b) || b[j] != ':' {
					return
				}
				j = skipWS(b, j+1)
				vend, ok := skipValue(b, j)
				if !ok {
					return
				}
				if key == st.key {
					walk(j, steps[1:])
				}
				j = skipWS(b, vend)
				if j < len(b) && b[j] == ',' {
					j = skipWS(b, j+1)
				}
			}
		case !st.isKey && b[i] == '[':
			j := skipWS(b, i+1)
			n := 0
			for j < len(b) && b[j] != ']' {
				vend, ok := skipValue(b, j)
				if !ok {
					return
				}
				if st.all || n == st.index {
					walk(j, steps[1:])
				}
				n++
				j = skipWS(b, vend)
				if j < len(b) && b[j] == ',' {
					j = skipWS(b, j+1)
				}
			}
		}
	}
	walk(off, p.steps)
	return spans
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the end of the JSON value starting at b[i]; the input
// is already known to be valid JSON. A value nested deeper than the
// scanner builds is still skipped whole, so a path past it is found.
func skipValue(b []byte, i int) (int, bool) {
	end, _, err := protocol.SkipValue(b, i, 0)
	var deep *protocol.DepthError
	return end, err == nil || errors.As(err, &deep)
}
