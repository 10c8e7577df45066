package redact

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/internal/testkit/streamgen"
)

// slowRedactor is r with the hint pre-filters off: every pattern is tried
// on every string.
func slowRedactor(r *Redactor) *Redactor {
	s := &Redactor{spec: r.spec, patterns: r.patterns, paths: r.paths, literals: r.literals, gl: r.gl}
	s.hints = &hintSet{always: ^uint64(0)}
	return s
}

var hintSeeds = []string{
	`{"type":"assistant","message":{"content":[{"type":"text","text":"key sk-ant-api03-AAAAAAAAAAAAAAAAAAAA and more"}]}}`,
	`{"apiKeySource":"none","x":"Authorization: Bearer abcdefghijklmnop"}`,
	`{"a":"BEARER   zzzzzzzzzzzzzzzzzzzz","b":"API_KEY=abcdefghijklmnopq","c":"auth-Token: 'qqqqqqqqqqqqqqqqq'"}`,
	`{"t":"ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa and github_pat_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"}`,
	`{"t":"AKIAABCDEFGHIJKLMNOP ASIAABCDEFGHIJKLMNOP AIzaSyAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA xoxb-1234567890-abc"}`,
	`{"t":"line\nBearer\ntoken12345678 sk-0123456789abcdefXYZ","u":"\u0073k-ant-escapedkey123456"}`,
	`{"type":"result","usage":{"input_tokens":12,"output_tokens":5},"result":"think about the task"}`,
	`not json: sk-ant-api03-BBBBBBBBBBBBBBBBBB`,
	// a hint followed by what cannot follow it in a match, and by what can
	`{"apiKeySource":"none","a":"apikeys=abcdefghijklmnop","b":"API_KEY = 'abcdefghijklmnop'","c":"x-api-key\": \"abcdefghijklmnop\""}`,
	`{"a":"authtoken:abcdefghijklmnop","b":"Auth-Token\t=abcdefghijklmnop","c":"bearers abcdefghijkl","d":"Bearer\u0020abcdefghijkl"}`,
	`{"a":"apikey","b":"bearer","c":"x AUTH_TOKEN"}`,
}

// TestHintsAgreeWithPatterns: the pre-filtered redactor removes exactly
// what trying every pattern on every string removes.
func TestHintsAgreeWithPatterns(t *testing.T) {
	r, err := NewRedactor(RedactSpec{Builtin: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	slow := slowRedactor(r)
	for _, s := range hintSeeds {
		got, want := r.Line(protocol.DirOut, []byte(s)), slow.Line(protocol.DirOut, []byte(s))
		if !bytes.Equal(got, want) {
			t.Errorf("%s\n fast %s\n slow %s", s, got, want)
		}
		if strings.Contains(s, "sk-ant-api03") && bytes.Contains(got, []byte("sk-ant-api03")) {
			t.Errorf("a key survived: %s", got)
		}
	}
}

func FuzzHintsAgreeWithPatterns(f *testing.F) {
	for _, s := range hintSeeds {
		f.Add(s)
	}
	r, _ := NewRedactor(RedactSpec{Builtin: true}, nil)
	r.AddLiteral("someone@example.com", "email")
	slow := slowRedactor(r)
	f.Fuzz(func(t *testing.T, s string) {
		got, want := r.Line(protocol.DirOut, []byte(s)), slow.Line(protocol.DirOut, []byte(s))
		if !bytes.Equal(got, want) {
			t.Fatalf("%q\n fast %q\n slow %q", s, got, want)
		}
	})
}

// TestAccountLearntWhereverTheTypeIs: the cheap type gate skips only lines
// that plainly start with another type.
func TestAccountLearntWhereverTheTypeIs(t *testing.T) {
	for _, line := range []string{
		`{"type":"control_response","response":{"subtype":"success","request_id":"1","response":{"account":{"email":"ann@example.com"}}}}`,
		`{"response":{"subtype":"success","request_id":"1","response":{"account":{"email":"ann@example.com"}}},"type":"control_response"}`,
	} {
		r, _ := NewRedactor(RedactSpec{Builtin: true}, nil)
		r.Line(protocol.DirOut, []byte(line))
		if got := r.Line(protocol.DirOut, []byte(`{"type":"assistant","text":"mail ann@example.com"}`)); bytes.Contains(got, []byte("ann@")) {
			t.Errorf("after %s the email survived: %s", line, got)
		}
	}
	r, _ := NewRedactor(RedactSpec{Builtin: true}, nil)
	r.Line(protocol.DirOut, []byte(`{"type":"assistant","account":{"email":"bob@example.com"}}`))
	if got := r.Line(protocol.DirOut, []byte(`{"t":"bob@example.com"}`)); !bytes.Contains(got, []byte("bob@")) {
		t.Errorf("an assistant line taught an account: %s", got)
	}
}

func TestHasAccountObject(t *testing.T) {
	for s, want := range map[string]bool{
		`{"response":{"account":{"email":"a@b.c"}}}`:    true,
		`{"response":{"account" : 	{"email":"a@b.c"}}}`: true,
		`{"account":{}}`:              true,
		`{"account":null,"x":{}}`:     false,
		`{"text":"the account: {x}"}`: false,
		`{"myaccount":{}}`:            false,
		`{"a":"\"account\":{"}`:       false,
		`{`:                           false,
		`:{`:                          false,
	} {
		if got := hasAccountObject([]byte(s)); got != want {
			t.Errorf("hasAccountObject(%s) = %v", s, got)
		}
	}
}

// TestHintsAgreeOnWordSoup: on random text made of the hints, their
// pieces, escapes and filler, the pre-filtered redactor removes exactly
// what trying every pattern on every string removes.
func TestHintsAgreeOnWordSoup(t *testing.T) {
	r, _ := NewRedactor(RedactSpec{Builtin: true}, nil)
	slow := slowRedactor(r)
	rng := rand.New(rand.NewPCG(3, 4))
	words := []string{"sk-", "sk-ant-", "AKIA", "ASIA", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "xox", "AIza",
		"bearer", "BEARER", "Bearer", "api_key", "API-KEY", "ApiKey", "auth_token", "Auth-Token", "AUTHTOKEN", "x-api-key",
		"password", "PASSWD", "Secret", "TOKEN", "=", ": ", "://", "@", "user:pw@host", "PRIVATE KEY", "-----BEGIN ", "-----END ",
		"npm_", "sk_live_", "rk_test_", "xoxb-", "eyJ", ".eyJ", "Q~", "AccountKey=", "sig=", "Authorization: ", "Basic ", "SK", "glpat-",
		`\u0041`, `\/`, `\\u`, "lorem", "ipsum", " ", `\"`, "k", "e", "y", "_", "-", "=", ":", "0123456789", "ABCDEFGHIJKLMNOP"}
	for range 5000 {
		var sb strings.Builder
		sb.WriteString(`{"t":"`)
		for range rng.IntN(40) {
			sb.WriteString(words[rng.IntN(len(words))])
		}
		sb.WriteString(`"}`)
		b := []byte(sb.String())
		if got, want := r.Line(protocol.DirOut, b), slow.Line(protocol.DirOut, b); !bytes.Equal(got, want) {
			t.Fatalf("%s\n fast %s\n slow %s", b, got, want)
		}
	}
}

// Every key secretKeyName takes holds one of keyNameKeywords, in any
// letter case, so that glEngine.mayFind sees it.
func TestKeyNameKeywords(t *testing.T) {
	keys := append([]string(nil), secretKeyExact...)
	for _, w := range secretKeySuffixes {
		keys = append(keys, w, "db_"+w, "X-"+w, "client"+w)
	}
	for _, w := range secretKeyWords {
		for _, sep := range []string{"", "_", "-", "__", "-_"} {
			k := strings.ReplaceAll(w, " ", sep)
			keys = append(keys, k, "my_"+k, "X"+k)
		}
	}
	for _, k := range keys {
		for _, c := range []string{k, strings.ToUpper(k), strings.ToUpper(k[:1]) + k[1:]} {
			if !secretKeyName([]byte(c)) {
				t.Errorf("secretKeyName(%q) = false", c)
				continue
			}
			found := false
			for _, kw := range keyNameKeywords {
				found = found || strings.Contains(strings.ToLower(c), kw)
			}
			if !found {
				t.Errorf("%q holds none of keyNameKeywords", c)
			}
			line := []byte(`{"a":1,"` + c + `":"hunter22"}`)
			r, _ := NewRedactor(RedactSpec{Builtin: true}, nil)
			if out, _, _ := r.LineObject(protocol.DirOut, line, protocol.KnownObject|protocol.KnownPlain); bytes.Equal(out, line) {
				t.Errorf("%s: the value under a secret's name stays", line)
			}
		}
	}
	for _, k := range []string{"input_tokens", "session_id", "keys", "monkey", "api_key_id", "tokenizer", "pass_phrases"} {
		if secretKeyName([]byte(k)) {
			t.Errorf("secretKeyName(%q) = true", k)
		}
	}
}

// A line that clean clears from the automaton's hits (glEngine.mayFind)
// is one that a look at each of its strings leaves as it is: over the
// secret corpus in JSON strings, keys and objects, and over ordinary
// agent traffic (the benchmark stream).
func TestCleanClearsOnlyUnchangedLines(t *testing.T) {
	r, err := NewRedactor(RedactSpec{Builtin: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var lines [][]byte
	for _, c := range loadSecretCorpus(t) {
		text, _ := json.Marshal(c.Text)
		lines = append(lines, []byte(`{"type":"assistant","message":{"content":[{"type":"text","text":`+string(text)+`}]}}`),
			[]byte(`{"type":"user",`+string(text)+`:1}`))
		if len(c.JSON) > 0 {
			lines = append(lines, []byte(`{"type":"system","data":`+string(c.JSON)+`}`))
		}
	}
	bench, _, err := streamgen.BenchLines(2 << 20)
	if err != nil {
		t.Fatal(err)
	}
	lines = append(lines, bench...)
	cleared := 0
	for _, line := range lines {
		h, ok := protocol.Scan(line)
		if !ok || h.Known&protocol.KnownPlain == 0 {
			continue
		}
		if _, _, clean := r.clean(line, false, nil); !clean {
			continue
		}
		cleared++
		// hides: every string looked at, whole.
		if out := r.jsonStrings(line, true, ^uint64(0), nil); !bytes.Equal(out, line) {
			t.Errorf("cleared, but a look at its strings redacts it:\n%s\n%s", line, out)
		}
	}
	if cleared == 0 {
		t.Error("no line was cleared")
	}
	t.Logf("%d of %d lines cleared", cleared, len(lines))
}
