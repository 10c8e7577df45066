package recording

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/redact"
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
	red, err := redact.NewRedactor(redact.RedactSpec{Builtin: true, Env: []string{"MY_TOKEN"}, Regex: []string{`CORP-\d+-SECRET`}, Paths: []string{".request.input.token", ".response.response.updatedInput.token"}},
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
		w.Tap(protocol.Direction(l[0]), []byte(l[1]), 0)
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
		if !strings.Contains(rec, redact.Placeholder(kind)) {
			t.Errorf("no %s placeholder in\n%s", redact.Placeholder(kind), rec)
		}
	}
	hdr, entries, err := ReadAll(strings.NewReader(rec), "test.rec", nil)
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

// TestAsyncWriterMatchesSync: the same taps give the same file, whole
// lines only, once Close returns; a small limit makes Tap wait.
func TestAsyncWriterMatchesSync(t *testing.T) {
	c, _ := captureBytes(t, "chain")
	lines := splitLines(c.out)
	lines = append(lines, bytes.Repeat([]byte("x"), 3<<10)) // longer than the limit
	// A secret behind escapes: what the bridge knows must not let it by.
	lines = append(lines, []byte(`{"type":"user","text":"\u0073k-ant-api03-abcdefghijklmnop and https:\/\/u:hunter2@example.com"}`))
	// A fixed clock: the async writer stamps a meta entry with its line's
	// time, the sync one reads the clock again.
	clock := func() func() time.Time { return func() time.Time { return time.Unix(100, 0) } }
	// known: each line comes with what the bridge's scan knows of it.
	run := func(async, known bool) []byte {
		var buf lockedBuffer
		red, _ := redact.NewRedactor(redact.RedactSpec{Builtin: true}, nil)
		w, err := NewWriter(&buf, Header{Agent: "claude"}, WriterOptions{Now: clock(), Redactor: red, Async: async, AsyncLimit: 1 << 10})
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range lines {
			dir := protocol.DirOut
			if i%5 == 4 || l[0] != '{' {
				dir = protocol.DirErr
			}
			var k protocol.Known
			if known && dir == protocol.DirOut {
				h, _ := protocol.Scan(l)
				k = h.Known
			}
			w.Tap(dir, l, k)
		}
		w.SetAgentVersion("7.7.7")
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		w.Tap(protocol.DirOut, []byte(`{"after":"close"}`), 0) // dropped, not a panic
		return buf.Bytes()
	}
	sync, async := run(false, false), run(true, false)
	if !bytes.Equal(sync, async) {
		t.Fatalf("async recording differs from sync:\n%s\n---\n%s", sync, async)
	}
	if trusted := run(true, true); !bytes.Equal(trusted, sync) {
		t.Fatalf("what the bridge knew changed the recording:\n%s\n---\n%s", sync, trusted)
	}
	if bytes.Contains(sync, []byte("hunter2")) || bytes.Contains(sync, []byte("abcdefghijklmnop")) {
		t.Fatalf("a secret behind escapes was recorded:\n%s", sync)
	}
	if n := bytes.Count(async, []byte("\n")); n != len(lines)+3 { // header, meta from init, SetAgentVersion
		t.Errorf("%d lines", n)
	}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(p) == 0 || p[len(p)-1] != '\n' {
		panic("a write that does not end a line")
	}
	return l.b.Write(p)
}

func (l *lockedBuffer) Bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]byte(nil), l.b.Bytes()...)
}

// TestSessionSettingsRedacted: the header's session settings are redacted
// like argv (a hook command or agent argument may carry a key).
func TestSessionSettingsRedacted(t *testing.T) {
	key := corpusSecrets["anthropic"]
	red, err := redact.NewRedactor(redact.RedactSpec{Builtin: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	s := Session{Agent: "claude", Hook: []string{"PreToolUse=curl -H 'x-api-key: " + key + "'"}, AgentArgs: []string{"--key", key}, Partial: true}
	w, err := NewWriter(&buf, Header{Agent: "claude", Session: &s}, WriterOptions{Redactor: red})
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	if strings.Contains(buf.String(), key) {
		t.Fatalf("the key survived in the header: %s", buf.String())
	}
	h, _, err := ReadAll(&buf, "test.rec", nil)
	if err != nil {
		t.Fatal(err)
	}
	if h.Session == nil || !h.Session.Partial || len(h.Session.Hook) != 1 || s.AgentArgs[1] != key {
		t.Errorf("session %+v (and the caller's copy must stay as it was: %q)", h.Session, s.AgentArgs)
	}
}
