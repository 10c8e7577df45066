package redact

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentjq/agentjq/fixtures"
	"github.com/agentjq/agentjq/internal/protocol"
)

func TestRedactKeepsCleanLinesByteForByte(t *testing.T) {
	red, _ := NewRedactor(RedactSpec{Builtin: true}, nil)
	out, err := fixtures.Capture("write-allow", "out")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range splitLines(out) {
		if got := red.Line(protocol.DirOut, l); !bytes.Equal(got, l) {
			t.Errorf("a clean line changed:\n%s\n%s", l, got)
		}
	}
}

func TestMatchRedacted(t *testing.T) {
	cases := []struct {
		want, got string
		ok        bool
	}{
		{"plain", "plain", true},
		{"plain", "other", false},
		{"key [REDACTED:api-key] end", "key sk-123 end", true},
		{"key [REDACTED:api-key] end", "key sk-123 END", false},
		{"[REDACTED:email]", "a@b.c", true},
		{"a.b [REDACTED:x]", "axb y", false},
	}
	for _, c := range cases {
		if MatchRedacted(c.want, c.got) != c.ok {
			t.Errorf("MatchRedacted(%q, %q) != %v", c.want, c.got, c.ok)
		}
	}
}

func TestJQPath(t *testing.T) {
	line := []byte(`{"a":{"b":[{"c":1},{"c":"x","d":2}]},"e f":"g","c":3}`)
	cases := map[string][]string{
		".a.b[].c":  {`1`, `"x"`},
		".a.b[1].d": {`2`},
		`."e f"`:    {`"g"`},
		`.["e f"]`:  {`"g"`},
		".c":        {`3`},
		".zz":       nil,
	}
	for src, want := range cases {
		p, err := parseJQPath(src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		var got []string
		for _, s := range p.find(line, 0) {
			got = append(got, string(line[s[0]:s[1]]))
		}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%s: got %v want %v", src, got, want)
		}
	}
	for _, bad := range []string{"a", ".", ".a[", ".a[-1]", ".a b"} {
		if _, err := parseJQPath(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func FuzzRedactLine(f *testing.F) {
	f.Add([]byte(`{"a":"sk-ant-api03-abcdefghijkl","b":["Bearer abcdefghijk"],"c":{"token":"x"}}`))
	f.Add([]byte(`{"a":"\u0073k-ant-api03-abcdefghijkl\n"}`))
	red, _ := NewRedactor(RedactSpec{Builtin: true, Regex: []string{`[0-9]{3}`}, Paths: []string{".c.token", ".b[]"}}, nil)
	f.Fuzz(func(t *testing.T, line []byte) {
		out := red.Line(protocol.DirOut, line)
		if json.Valid(line) && bytes.HasPrefix(bytes.TrimSpace(line), []byte("{")) && !json.Valid(out) {
			t.Fatalf("valid JSON became invalid:\n%s\n%s", line, out)
		}
		if bytes.Contains(out, []byte("sk-ant-api03-abcdefghijkl")) {
			t.Fatalf("key survived: %s", out)
		}
	})
}

func splitLines(b []byte) [][]byte {
	var lines [][]byte
	for _, l := range bytes.Split(b, []byte("\n")) {
		if l = bytes.TrimRight(l, "\r"); len(bytes.TrimSpace(l)) > 0 {
			lines = append(lines, l)
		}
	}
	return lines
}

// TestSecretsBehindEscapedQuotes: a NAME=value whose quotes are escaped
// (JSON text inside a string, or echoed on stderr) and a secret's key name
// behind a \u escape are removed like their plain forms.
func TestSecretsBehindEscapedQuotes(t *testing.T) {
	r, err := NewRedactor(RedactSpec{Builtin: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		dir  protocol.Direction
		line string
	}{
		{protocol.DirErr, `{"type":"assistant","text":"export DB_PASSWORD=\"hunter2xyz\""`},
		{protocol.DirOut, `{"type":"user","content":"\"start\": \"DB_PASSWORD=\\\"hunter2xyz\\\" node app\""}`},
		{protocol.DirOut, `{"type":"user","pass\u0077ord":"hunter2xyz"}`},
		{protocol.DirOut, `{"type":"user","content":"{\"api_key\": \"hunter2xyz\"}"}`},
		{protocol.DirOut, `{"type":"user","content":"AWS_SECRET_ACCESS_KEY=\\\"Hk3/Lp9Qw2Er7Ty5Ui1Op4As8Df6Gh0Jk3Lz7Xc9V\\\""}`},
	} {
		got := string(r.Line(c.dir, []byte(c.line)))
		if strings.Contains(got, "hunter2xyz") || strings.Contains(got, "Hk3/Lp9") {
			t.Errorf("%s %s\n  recorded as %s", c.dir, c.line, got)
		}
	}
}

// TestInOrder: the lines whose redaction reads or changes what earlier
// lines taught are the ones a recorder must redact in order; a line not
// known to be JSON counts among them, whatever it holds.
func TestInOrder(t *testing.T) {
	r, err := NewRedactor(RedactSpec{Builtin: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	account := `{"type":"control_response","response":{"subtype":"success","response":{"account":{"email":"a.b@example.com"}}}}`
	for _, c := range []struct {
		dir   protocol.Direction
		line  string
		known protocol.Known
		want  bool
	}{
		{protocol.DirOut, account, protocol.KnownObject, true},
		{protocol.DirOut, `{"response":{"response":{"account": {"email":"a.b@example.com"}}},"type":"control_response"}`, protocol.KnownObject, true},
		{protocol.DirIn, account, protocol.KnownObject, false}, // only the agent's response teaches
		{protocol.DirOut, `{"type":"control_response","response":{"subtype":"success","response":{}}}`, protocol.KnownObject, false},
		{protocol.DirOut, `{"type":"assistant","message":{"account":{"email":"x"}}}`, protocol.KnownObject | protocol.KnownPlain, false},
		{protocol.DirOut, `{"type":"assistant","text":"sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"}`, protocol.KnownObject, false},
		{protocol.DirOut, `{"type":"assistant"}`, 0, true}, // not known to be JSON
		{protocol.DirErr, "-----BEGIN RSA PRIVATE KEY-----", 0, true},
		{protocol.DirErr, "plain text", 0, true},
	} {
		if got := r.InOrder(c.dir, []byte(c.line), c.known); got != c.want {
			t.Errorf("InOrder(%s, %s, %d) = %v, want %v", c.dir, c.line, c.known, got, c.want)
		}
	}
	var none *Redactor
	if none.InOrder(protocol.DirErr, []byte("x"), 0) {
		t.Error("a nil Redactor (no redaction) holds no lines back")
	}
	user, _ := NewRedactor(RedactSpec{Regex: []string{"x+"}}, nil)
	if user.InOrder(protocol.DirOut, []byte(account), protocol.KnownObject) {
		t.Error("without the built-in rules the account is not learnt from the line")
	}
}
