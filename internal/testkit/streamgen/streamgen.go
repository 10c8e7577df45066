// Package streamgen generates large, realistic agent event streams for the
// benchmarks of spawn, filter and record: the sessions of the captures
// (fixtures), replayed in a random order with fresh ids and text, and tool
// results and messages of realistic, varied sizes. Key order and line
// shapes are the captures'.
package streamgen

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/agentjq/agentjq/fixtures"
)

// Generator replays capture sessions with fresh ids and text.
type Generator struct {
	rng      *rand.Rand
	sessions [][]*node // each capture's stdout lines, parsed in order
	// NoControl leaves out control requests and responses: a pass-through
	// benchmark of spawn must not wait on answers.
	NoControl bool
}

// New loads the captures (stdout side, without the huge big-line one,
// whose size would dominate).
func New(seed uint64) (*Generator, error) {
	g := &Generator{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	for _, name := range fixtures.Scenarios() {
		if name == "big-line" {
			continue
		}
		b, err := fixtures.Capture(name, "out")
		if err != nil {
			return nil, err
		}
		var lines []*node
		for _, l := range bytes.Split(b, []byte("\n")) {
			if len(bytes.TrimSpace(l)) == 0 {
				continue
			}
			n, err := parse(l)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			lines = append(lines, n)
		}
		g.sessions = append(g.sessions, lines)
	}
	if len(g.sessions) == 0 {
		return nil, errors.New("no captures found")
	}
	return g, nil
}

// WriteTo writes whole sessions until at least size bytes are written.
func (g *Generator) WriteTo(w io.Writer, size int64) (int64, error) {
	var n int64
	var buf []byte
	for n < size {
		s := g.sessions[g.rng.IntN(len(g.sessions))]
		ids := map[string]string{} // keep a session's ids consistent
		for _, l := range s {
			if g.NoControl && l.isControl() {
				continue
			}
			buf = g.mutate(l, "", ids).encode(buf[:0])
			buf = append(buf, '\n')
			m, err := w.Write(buf)
			n += int64(m)
			if err != nil {
				return n, err
			}
		}
	}
	return n, nil
}

// BenchLines is the stream the recording and redaction benchmarks read:
// at least size bytes of seed 1 without control requests (the stream
// scripts/bench-record.sh records), split into its lines without their
// newlines, and the bytes in all, newlines counted.
func BenchLines(size int64) ([][]byte, int64, error) {
	g, err := New(1)
	if err != nil {
		return nil, 0, err
	}
	g.NoControl = true
	var buf bytes.Buffer
	n, err := g.WriteTo(&buf, size)
	if err != nil {
		return nil, 0, err
	}
	return bytes.Split(bytes.TrimSuffix(buf.Bytes(), []byte("\n")), []byte("\n")), n, nil
}

// BigLine writes one assistant line whose text is size bytes, then a
// result: the shape of a huge tool input or image read.
func BigLine(w io.Writer, size int64) error {
	text := bytes.Repeat([]byte("abcdefghij"), int(size/10)+1)[:size]
	var b bytes.Buffer
	b.WriteString(`{"type":"assistant","message":{"id":"msg_big","type":"message","role":"assistant","content":[{"type":"text","text":"`)
	b.Write(text)
	b.WriteString(`"}]},"parent_tool_use_id":null,"session_id":"big"}` + "\n")
	b.WriteString(`{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"ok","session_id":"big"}` + "\n")
	_, err := w.Write(b.Bytes())
	return err
}

// isControl reports whether a line is a control message.
func (n *node) isControl() bool {
	for i, k := range n.keys {
		if k == "type" && n.vals[i].kind == '"' && strings.HasPrefix(n.vals[i].str, "control_") {
			return true
		}
	}
	return false
}

// node is an ordered JSON value: objects keep their key order.
type node struct {
	kind byte // '{', '[', '"', '0' (number), 'l' (literal)
	keys []string
	vals []*node
	str  string // string value, number or literal spelling
}

func parse(line []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	return parseValue(dec)
}

func parseValue(dec *json.Decoder) (*node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		n := &node{kind: byte(t)}
		for dec.More() {
			if t == '{' {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				n.keys = append(n.keys, k.(string))
			}
			v, err := parseValue(dec)
			if err != nil {
				return nil, err
			}
			n.vals = append(n.vals, v)
		}
		if _, err := dec.Token(); err != nil { // closing delimiter
			return nil, err
		}
		return n, nil
	case string:
		return &node{kind: '"', str: t}, nil
	case json.Number:
		return &node{kind: '0', str: string(t)}, nil
	case bool:
		return &node{kind: 'l', str: fmt.Sprint(t)}, nil
	default:
		return &node{kind: 'l', str: "null"}, nil
	}
}

func (n *node) encode(b []byte) []byte {
	switch n.kind {
	case '{', '[':
		b = append(b, n.kind)
		for i, v := range n.vals {
			if i > 0 {
				b = append(b, ',')
			}
			if n.kind == '{' {
				b = appendString(b, n.keys[i])
				b = append(b, ':')
			}
			b = v.encode(b)
		}
		if n.kind == '{' {
			return append(b, '}')
		}
		return append(b, ']')
	case '"':
		return appendString(b, n.str)
	default:
		return append(b, n.str...)
	}
}

// appendString quotes like JSON.stringify: non-ASCII as is.
func appendString(b []byte, s string) []byte {
	var sb bytes.Buffer
	enc := json.NewEncoder(&sb)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return append(b, bytes.TrimRight(sb.Bytes(), "\n")...)
}

// mutate copies n with fresh ids and text; key is the key n sits under.
func (g *Generator) mutate(n *node, key string, ids map[string]string) *node {
	switch n.kind {
	case '{', '[':
		c := &node{kind: n.kind, keys: n.keys, vals: make([]*node, len(n.vals))}
		for i, v := range n.vals {
			k := key
			if n.kind == '{' {
				k = n.keys[i]
			}
			c.vals[i] = g.mutate(v, k, ids)
		}
		return c
	case '"':
		switch key {
		case "uuid", "session_id", "id", "tool_use_id", "request_id", "parent_tool_use_id", "message_id":
			if n.str == "" {
				return n
			}
			if id, ok := ids[n.str]; ok {
				return &node{kind: '"', str: id}
			}
			id := g.freshID(n.str)
			ids[n.str] = id
			return &node{kind: '"', str: id}
		case "text", "thinking", "result":
			return &node{kind: '"', str: g.prose(g.textLen())}
		case "content":
			return &node{kind: '"', str: g.code(g.toolResultLen())}
		}
	case '0':
		if key == "total_cost_usd" || key == "costUSD" {
			// Spelt as JavaScript spells it: shortest digits.
			cost := math.Round(g.rng.Float64()/10*1e6) / 1e6
			return &node{kind: '0', str: strconv.FormatFloat(cost, 'f', -1, 64)}
		}
	}
	return n
}

// freshID keeps an id's prefix (msg_, toolu_, req_) and length.
func (g *Generator) freshID(old string) string {
	const alphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	i := strings.LastIndexAny(old, "_") + 1
	b := []byte(old)
	for j := i; j < len(b); j++ {
		if b[j] != '-' {
			b[j] = alphabet[g.rng.IntN(len(alphabet))]
		}
	}
	return string(b)
}

// textLen: assistant text is mostly a few sentences, sometimes long.
func (g *Generator) textLen() int {
	if g.rng.IntN(10) == 0 {
		return 1000 + g.rng.IntN(6000)
	}
	return 20 + g.rng.IntN(600)
}

// toolResultLen: file reads and command output, from a line to many KiB.
func (g *Generator) toolResultLen() int {
	switch g.rng.IntN(10) {
	case 0:
		return 20000 + g.rng.IntN(60000)
	case 1, 2, 3:
		return 2000 + g.rng.IntN(8000)
	default:
		return 50 + g.rng.IntN(1500)
	}
}

var words = strings.Fields(`the a test file function error returns value package import when we should
could run build go make fix update change line code stream event agent tool result read write
config parse decode é ünïcode naïve café “quotes” 😀 → ✓ note later nil err ok`)

func (g *Generator) prose(n int) string {
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(words[g.rng.IntN(len(words))])
		switch g.rng.IntN(12) {
		case 0:
			b.WriteString(".\n")
		case 1:
			b.WriteString(", ")
		case 2:
			b.WriteString(` "quoted" `)
		default:
			b.WriteByte(' ')
		}
	}
	return b.String()
}

func (g *Generator) code(n int) string {
	var b strings.Builder
	for b.Len() < n {
		switch g.rng.IntN(6) {
		case 0:
			b.WriteString("\tif err != nil {\n\t\treturn fmt.Errorf(\"read %s: %w\", path, err)\n\t}\n")
		case 1:
			b.WriteString("     12\tfunc (s *Server) Handle(w http.ResponseWriter, r *http.Request) {\n")
		case 2:
			b.WriteString("PASS\nok  \tgithub.com/example/pkg\t0.012s\n")
		case 3:
			b.WriteString("// a comment with a backslash \\ and a tab\there\n")
		default:
			b.WriteString(g.prose(40 + g.rng.IntN(80)))
			b.WriteByte('\n')
		}
	}
	return b.String()
}
