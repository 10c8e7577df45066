package redact

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentjq/agentjq/internal/protocol"
)

// corpusEntry is one secret of testdata/secrets.json (the corpus the
// end-to-end test in cmd records too): Text as it stands in a session,
// Secret the part that must go (Text itself when empty), JSON an object
// that holds it under a key.
type corpusEntry struct {
	Kind, Class, Text, Secret string
	JSON                      json.RawMessage
}

func loadSecretCorpus(t *testing.T) []corpusEntry {
	t.Helper()
	b, err := os.ReadFile("testdata/secrets.json")
	if err != nil {
		t.Fatal(err)
	}
	var c []corpusEntry
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

func (c corpusEntry) must() string {
	if c.Secret != "" {
		return c.Secret
	}
	return c.Text
}

// undetectable are the kinds of the corpus that agentjq-record(1) names
// as undetectable without context (redact.Undetectable): they are
// expected to survive, and nothing else is.
func TestSecretCorpusRedacted(t *testing.T) {
	corpus := loadSecretCorpus(t)
	r, err := NewRedactor(RedactSpec{Builtin: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	undetectable := map[string]bool{}
	for _, u := range Undetectable {
		undetectable[u.Kind] = true
	}
	classes := map[string]int{}
	survived := 0
	for _, c := range corpus {
		classes[c.Class]++
		secret := strings.ToLower(c.must())
		var where []string
		check := func(pos string, out []byte) {
			if strings.Contains(strings.ToLower(string(out)), secret) {
				where = append(where, pos)
			}
		}
		text, _ := json.Marshal(c.Text)
		check("text", r.Line(protocol.DirErr, []byte(c.Text)))
		check("json string", r.Line(protocol.DirOut, []byte(`{"type":"assistant","message":{"content":[{"type":"text","text":`+string(text)+`}]}}`)))
		check("escaped", r.Line(protocol.DirOut, []byte(`{"type":"user","x":"`+escapeSecondForTest(c.Text)+`"}`)))
		if len(c.JSON) > 0 {
			check("json object", r.Line(protocol.DirOut, []byte(`{"type":"system","data":`+string(c.JSON)+`}`)))
		}
		switch {
		case len(where) > 0 && !undetectable[c.Kind]:
			t.Errorf("%s (%s) survived in %v", c.Kind, c.Class, where)
			survived++
		case len(where) > 0:
			survived++
		case undetectable[c.Kind]:
			t.Errorf("%s is named undetectable, but it was redacted", c.Kind)
		}
	}
	if len(corpus) < 80 {
		t.Errorf("the corpus has %d kinds, want 80 or more", len(corpus))
	}
	for _, cl := range []string{"prefix", "format", "encoded", "nokeyword", "jsonkey"} {
		if classes[cl] < 3 {
			t.Errorf("class %s has %d kinds, want 3 or more", cl, classes[cl])
		}
	}
	t.Logf("%d of %d kinds survive", survived, len(corpus))
}

// escapeSecondForTest JSON-encodes s with the second byte of every line
// as a \u escape and every / as \/.
func escapeSecondForTest(s string) string {
	var b strings.Builder
	for _, line := range strings.Split(s, "\n") {
		for i := 0; i < len(line); i++ {
			c := line[i]
			switch {
			case i == 1 && c < 0x80:
				b.WriteString(`\u00` + "0123456789abcdef"[c>>4:c>>4+1] + "0123456789abcdef"[c&15:c&15+1])
			case c == '/':
				b.WriteString(`\/`)
			case c == '"' || c == '\\':
				b.WriteByte('\\')
				b.WriteByte(c)
			default:
				b.WriteByte(c)
			}
		}
		b.WriteString(`\n`)
	}
	return b.String()
}

// TestOrdinaryTrafficUnchanged: ordinary agent traffic comes through
// byte for byte: testdata/ordinary.ndjson (lockfiles with sha512-
// integrity strings, go.sum, git SHAs, UUIDs and request ids, base64
// images, docker inspect and kubectl get -o json output without secrets,
// source code that names tokens and passwords), the project's fixtures
// (real sessions, recorded and captured) and the README's text, each
// line as it is and as a tool result's text. The bytes changed are
// counted, and the count is zero.
func TestOrdinaryTrafficUnchanged(t *testing.T) {
	r, err := NewRedactor(RedactSpec{Builtin: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, glob := range []string{"testdata/ordinary.ndjson", "../fixtures/recordings/*/*", "../fixtures/captures/*/*", "../README.md", "../examples/*"} {
		m, _ := filepath.Glob(glob)
		files = append(files, m...)
	}
	if len(files) < 20 {
		t.Fatalf("only %d files of ordinary traffic", len(files))
	}
	changed, total := 0, 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // a directory
		}
		for n, line := range bytes.Split(b, []byte("\n")) {
			if len(line) == 0 {
				continue
			}
			as := []struct {
				dir  protocol.Direction
				line []byte
			}{{protocol.DirOut, line}, {protocol.DirErr, line}}
			text, _ := json.Marshal(string(line))
			as = append(as, struct {
				dir  protocol.Direction
				line []byte
			}{protocol.DirOut, []byte(`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":` + string(text) + `}]}}`)})
			for _, a := range as {
				total += len(a.line)
				out := r.Line(a.dir, a.line)
				if d := bytesChanged(a.line, out); d > 0 {
					changed += d
					if changed < 4000 {
						t.Errorf("%s:%d: %d bytes changed:\n%s", f, n+1, d, diffContext(a.line, out))
					}
				}
			}
		}
	}
	if changed != 0 {
		t.Errorf("%d of %d bytes of ordinary traffic changed", changed, total)
	}
	t.Logf("%d files, %d bytes, %d changed", len(files), total, changed)
}

// bytesChanged is how many bytes of in are not kept in out: what lies
// between their common prefix and common suffix.
func bytesChanged(in, out []byte) int {
	if bytes.Equal(in, out) {
		return 0
	}
	p := 0
	for p < len(in) && p < len(out) && in[p] == out[p] {
		p++
	}
	s := 0
	for s < len(in)-p && s < len(out)-p && in[len(in)-1-s] == out[len(out)-1-s] {
		s++
	}
	return max(len(in)-p-s, 1)
}

func diffContext(in, out []byte) string {
	p := 0
	for p < len(in) && p < len(out) && in[p] == out[p] {
		p++
	}
	lo := max(0, p-80)
	return "  in:  " + string(in[lo:min(len(in), p+120)]) + "\n  out: " + string(out[lo:min(len(out), p+120)])
}

// TestLowerASCII: every byte value, at every offset of a word, is
// lowered as bytes.ToLower lowers ASCII, and bytes above 0x7f stay.
func TestLowerASCII(t *testing.T) {
	var b []byte
	for n := 0; n < 3; n++ {
		for c := 0; c < 256; c++ {
			b = append(b, byte(c))
		}
		b = append(b, 'Q')
	}
	for off := 0; off < 9; off++ {
		in := b[off:]
		got := lowerASCII(nil, in)
		for i, c := range in {
			want := c
			if c >= 'A' && c <= 'Z' {
				want = c + 32
			}
			if got[i] != want {
				t.Fatalf("offset %d: byte %#x lowered to %#x", off, c, got[i])
			}
		}
	}
}

// TestFollowSet: a rule whose regexp starts with its keyword says which
// bytes may follow the keyword; one that does not, nothing.
func TestFollowSet(t *testing.T) {
	for _, c := range []struct {
		expr, kw, may, mayNot string
		none                  bool
		keywords              []string
	}{
		{expr: `SK[0-9a-fA-F]{32}`, kw: "sk", may: "0aF", mayNot: " g\"."},
		{expr: `\b(ey[a-zA-Z0-9]{17,}\.ey)`, kw: "ey", may: "aZ9", mayNot: " .-"},
		{expr: `(?i)\b(npm_[a-z0-9]{36})`, kw: "npm_", may: "aA0", mayNot: "_ "},
		{expr: `\bdop_v1_[a-f0-9]{64}`, kw: "dop_", may: "v", mayNot: "V0"},
		{expr: `(?i)[\w.-]{0,50}?(?:adafruit)`, kw: "adafruit", none: true},
		{expr: `\b(?:hvs\.[\w-]{90}|s\.[a-z0-9]{24})`, kw: "s.", none: true},
		// Each branch starts with a keyword of the rule: "s." is followed
		// by what its branch says; "hvs." by its own.
		{expr: `\b((?:hvs\.[\w-]{90}|s\.(?i:[a-z0-9]{24})))(?:['"\s;]|$)`, kw: "s.", may: "aZ9", mayNot: " .-_", keywords: []string{"hvs.", "s."}},
		{expr: `\b((?:hvs\.[\w-]{90}|s\.(?i:[a-z0-9]{24})))(?:['"\s;]|$)`, kw: "hvs.", may: "aZ9-_", mayNot: " .", keywords: []string{"hvs.", "s."}},
		// A keyword that runs on past its branch ("ext" then "_").
		{expr: `\b((?:sc|ext|scauth|authress)_(?i)[a-z0-9]{5,30}\.)`, kw: "ext_", may: "aZ9", mayNot: " ._-", keywords: []string{"sc_", "ext_", "scauth_", "authress_"}},
		{expr: `\b((?:sc|ext|scauth|authress)_(?i)[a-z0-9]{5,30}\.)`, kw: "sc_", may: "aZ9", mayNot: " ._-", keywords: []string{"sc_", "ext_", "scauth_", "authress_"}},
		{expr: `\b((?:sc|ext|scauth|authress)_(?i)[a-z0-9]{5,30}\.)`, kw: "ext_", none: true, keywords: []string{"ext_"}},
		// A branch that starts with no keyword: nothing.
		{expr: `\b(?:hvs\.[\w-]{90}|x\.[a-z0-9]{24}s\.)`, kw: "s.", none: true, keywords: []string{"hvs.", "s."}},
		{expr: `SK[0-9a-f]{0,32}`, kw: "sk", none: true},
	} {
		if f := followSet(`\b(ey[a-zA-Z0-9]{17,})`, "ey"); f == nil || !f.wordStart || !f.fits([]byte("x eyJhb"), 2, 4) || f.fits([]byte("they"), 2, 4) || !f.fits([]byte(`\neyJ`), 2, 4) {
			t.Errorf("ey after a word byte: %+v", f)
		}
		f := followSet(c.expr, c.kw, c.keywords...)
		if c.none {
			if f != nil {
				t.Errorf("%s: a follow set for %q", c.expr, c.kw)
			}
			continue
		}
		if f == nil {
			t.Errorf("%s: no follow set for %q", c.expr, c.kw)
			continue
		}
		for i := 0; i < len(c.may); i++ {
			if !f.next[c.may[i]] {
				t.Errorf("%s: %q may follow %q", c.expr, c.may[i], c.kw)
			}
		}
		for i := 0; i < len(c.mayNot); i++ {
			if f.next[c.mayNot[i]] {
				t.Errorf("%s: %q may not follow %q", c.expr, c.mayNot[i], c.kw)
			}
		}
	}
}
