package recording

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// The secrets of the corpus; none may survive a recording.
var corpusSecrets = map[string]string{
	"anthropic":  "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_-abcdEFGH",
	"openai":     "sk-proj-ZYXWVUTSRQPONMLKJIHG0123456789",
	"aws":        "AKIAIOSFODNN7EXAMPLE",
	"github":     "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
	"bearer":     "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl",
	"envtoken":   "tok-from-the-environment-42",
	"defaultenv": "plain-value-of-anthropic-auth-token",
	"regex":      "CORP-123456-SECRET",
	"pathval":    "hunter2-at-a-path",
	"email":      "alice@example.com",
	"org":        "Acme Secret Org",
}

func corpusSession() [][2]string {
	s := corpusSecrets
	return [][2]string{
		// the initialize response with the account
		{"out", `{"type":"control_response","response":{"subtype":"success","request_id":"init-1","response":{"account":{"email":"` + s["email"] + `","organization":"` + s["org"] + `","tokenSource":"none"},"claude_code_version":"2.1.328"}}}`},
		// prompts
		{"in", `{"type":"user","message":{"role":"user","content":"use key ` + s["anthropic"] + ` and mail ` + s["email"] + ` for ` + s["org"] + `"},"parent_tool_use_id":null,"session_id":""}`},
		{"in", `{"type":"user","message":{"role":"user","content":[{"type":"text","text":"Authorization: Bearer ` + s["bearer"] + `\nline two \"quoted\" ` + s["openai"] + `"}]}}`},
		// tool inputs
		{"out", `{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"curl -H 'x-api-key: ` + s["anthropic"] + `' https://api && export AWS=` + s["aws"] + `"}}]}}`},
		{"out", `{"type":"control_request","request_id":"r1","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"echo ` + s["envtoken"] + ` ` + s["regex"] + `","token":"` + s["pathval"] + `"}}}`},
		{"in", `{"type":"control_response","response":{"subtype":"success","request_id":"r1","response":{"behavior":"allow","updatedInput":{"command":"echo ` + s["envtoken"] + ` ` + s["regex"] + `","token":"` + s["pathval"] + `"}}}}`},
		// tool results, with an escaped secret
		{"out", `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"GITHUB=` + s["github"] + `\nAUTH=` + s["defaultenv"] + `\n\u0041KIAIOSFODNN7EXAMPLE"}]}}`},
		// stderr
		{"err", `error: 401 for key ` + s["anthropic"] + ` (` + s["email"] + `) token ` + s["envtoken"]},
		// agentjq's events
		{"event", `{"type":"agentjq","subtype":"warning","message":"stderr said ` + s["openai"] + `"}`},
	}
}

func TestRedactionCorpus(t *testing.T) {
	env := map[string]string{"MY_TOKEN": corpusSecrets["envtoken"], "ANTHROPIC_AUTH_TOKEN": corpusSecrets["defaultenv"]}
	red, err := NewRedactor(RedactSpec{Builtin: true, Env: []string{"MY_TOKEN"}, Regex: []string{`CORP-\d+-SECRET`}, Paths: []string{".request.input.token", ".response.response.updatedInput.token"}},
		func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	h := Header{Agent: "claude", Argv: []string{"agentjq", "record", "--", "--api-key", corpusSecrets["anthropic"], "--token=" + corpusSecrets["envtoken"]}, Cwd: "/home/" + corpusSecrets["envtoken"]}
	w, err := NewWriter(&buf, h, WriterOptions{Redactor: red, Now: func() time.Time { return time.Unix(0, 0) }})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range corpusSession() {
		w.Tap(Direction(l[0]), []byte(l[1]))
	}
	rec := buf.String()
	for name, secret := range corpusSecrets {
		if strings.Contains(rec, secret) {
			t.Errorf("secret %s survived:\n%s", name, rec)
		}
	}
	if strings.Contains(rec, "AKIAIOSFODNN7EXAMPLE") || strings.Contains(rec, `\u0041KIAIOSFODNN7`) {
		t.Errorf("the escaped AWS key survived")
	}
	for _, kind := range []string{"anthropic-api-key", "api-key", "aws-access-key", "github-token", "bearer-token", "env:MY_TOKEN", "env:ANTHROPIC_AUTH_TOKEN", "regex-1", "path .request.input.token", "email", "organization"} {
		if !strings.Contains(rec, Placeholder(kind)) {
			t.Errorf("no %s placeholder in\n%s", Placeholder(kind), rec)
		}
	}
	hdr, entries, err := ReadAll(strings.NewReader(rec), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !hdr.Redacted || hdr.Redact == nil || hdr.Redact.Env[0] != "MY_TOKEN" {
		t.Errorf("header does not say what was redacted: %+v", hdr)
	}
	for _, e := range entries {
		if e.Msg != nil && !json.Valid(e.Msg) {
			t.Errorf("seq %d is no longer valid JSON: %s", e.Seq, e.Msg)
		}
	}
	// Untouched lines stay byte for byte.
	first := corpusSession()[0][1]
	if strings.Contains(rec, first) {
		t.Errorf("the account line was not redacted")
	}
	if !strings.Contains(rec, `"tokenSource":"none"`) {
		t.Errorf("redaction damaged the rest of the line")
	}
}

func TestRedactKeepsCleanLinesByteForByte(t *testing.T) {
	red, _ := NewRedactor(RedactSpec{Builtin: true}, nil)
	c, _ := captureBytes(t, "write-allow")
	for _, l := range splitLines(c.out) {
		if got := red.Line(Out, l); !bytes.Equal(got, l) {
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
		out := red.Line(Out, line)
		if json.Valid(line) && bytes.HasPrefix(bytes.TrimSpace(line), []byte("{")) && !json.Valid(out) {
			t.Fatalf("valid JSON became invalid:\n%s\n%s", line, out)
		}
		if bytes.Contains(out, []byte("sk-ant-api03-abcdefghijkl")) {
			t.Fatalf("key survived: %s", out)
		}
	})
}

func FuzzEntryRoundTrip(f *testing.F) {
	f.Add(int64(1), 1.5, "out", []byte(`{"a":1}`), "")
	f.Add(int64(9), 0.0, "err", []byte(nil), "text \"q\"")
	f.Fuzz(func(t *testing.T, seq int64, ms float64, dir string, msg []byte, text string) {
		if seq < 0 || ms < 0 || ms > 1e12 || ms != ms || strings.ContainsAny(dir, `"\`) || len(dir) > 10 {
			return
		}
		e := Entry{Seq: seq, MS: float64(int64(ms*1000)) / 1000, Dir: Direction(dir)}
		if json.Valid(msg) && bytes.HasPrefix(msg, []byte("{")) {
			e.Msg = msg
		} else {
			e.Text = strings.ToValidUTF8(text, "?")
		}
		line := AppendEntry(nil, e)
		got, err := ParseEntry(line)
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		if got.Seq != e.Seq || got.Dir != e.Dir || !bytes.Equal(got.Msg, e.Msg) || got.Text != e.Text {
			t.Fatalf("%s: got %+v", line, got)
		}
	})
}
