package cmd

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/internal/testkit/fakeagent"
	"github.com/agentjq/agentjq/internal/testkit/livetest"
)

// TestRecordSecretCorpus: the fake agent writes every secret of the corpus
// everywhere a session carries text (before and in the initialize
// response, assistant text, a tool input, a can_use_tool request, tool
// results, escaped, non-JSON stdout, stderr, a PEM key over several
// lines, a 3 MiB line); the user turn and argv hold them too. Recorded
// with agentjq record, none is left in the file: not in its bytes, not in
// any string once JSON-unescaped (twice, for JSON inside strings), in any
// letter case. The ordinary values of the session's tool results stay,
// and agentjq's own stderr echo of the non-JSON lines holds no secret.
func TestRecordSecretCorpus(t *testing.T) {
	t.Parallel()
	livetest.SkipShort(t, "runs this test binary as the agent")
	ios, _, errb, _ := hostIO(t, "secret-corpus", "")
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, ".claude.json"), []byte(fakeagent.CorpusConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	ios.Environ = append(ios.Environ, "HOME="+home, "ANTHROPIC_API_KEY="+fakeagent.CorpusEnvKey)
	var prompt strings.Builder
	for _, s := range fakeagent.CorpusSecrets {
		prompt.WriteString(s.Text + "\n")
	}
	rec := filepath.Join(t.TempDir(), "corpus.rec")
	args := []string{"record", "-o", rec, "--init", "--redact", fakeagent.CorpusUserRegex, "--bin", os.Args[0], "-p", prompt.String()}
	// The can_use_tool request is denied (no policy): exit 3.
	if code := Main(args, ios); code != protocol.ExitDenied {
		var keep []string
		for _, l := range strings.Split(errb.String(), "\n") {
			if !strings.Contains(l, "not JSON") && !strings.HasPrefix(l, "warn: ") {
				keep = append(keep, l)
			}
		}
		t.Fatalf("exit %d\nstderr: %.3000s", code, strings.Join(keep, "\n"))
	}
	raw, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) < 3<<20 {
		t.Fatalf("the recording is %d bytes: the 3 MiB line is missing", len(raw))
	}
	texts := recordingTexts(t, raw)
	lower := make([]string, len(texts))
	for i, s := range texts {
		lower[i] = strings.ToLower(s)
	}
	must := map[string]string{"redact-expression": fakeagent.CorpusUserRegex, "account-org": fakeagent.CorpusOrg}
	for _, s := range fakeagent.CorpusSecrets {
		must[s.Kind] = s.Must()
	}
	for _, l := range fakeagent.CorpusPEMLines {
		must["pem-lines"] = l
	}
	kinds := map[string]bool{}
	for kind, secret := range must {
		kinds[kind] = true
		for i, s := range lower {
			if strings.Contains(s, strings.ToLower(secret)) {
				where := "the file's bytes"
				if i > 0 {
					where = "an unescaped string"
				}
				t.Errorf("%s survived in %s: %q", kind, where, secret)
				break
			}
		}
	}
	if len(kinds) < 40 {
		t.Errorf("the corpus has %d kinds, want 40 or more", len(kinds))
	}
	joined := strings.Join(texts[1:], "\n")
	for _, ord := range fakeagent.CorpusOrdinary {
		if !strings.Contains(joined, ord) {
			t.Errorf("an ordinary value was redacted: %q", ord)
		}
	}
	for _, want := range []string{"[REDACTED:aws-secret-key]", "[REDACTED:private-key]", "[REDACTED:url-password]", "[REDACTED:secret]", "[REDACTED:email]", "[REDACTED:regex-1]"} {
		if !strings.Contains(joined, want) {
			t.Errorf("no %s in the recording", want)
		}
	}
	// agentjq's echo of the non-JSON lines (the agent's own stderr is
	// passed through as it is, and is not agentjq's to change).
	echoes := 0
	for _, l := range strings.Split(errb.String(), "\n") {
		if !strings.Contains(l, "not JSON, not passed on") {
			continue
		}
		echoes++
		for kind, secret := range must {
			// The echo is cut at 200 bytes: a secret must not show, whole
			// or in part.
			if len(secret) > 12 && strings.Contains(strings.ToLower(l), strings.ToLower(secret[len(secret)-12:])) {
				t.Errorf("the stderr echo shows %s: %s", kind, l)
			}
		}
	}
	if echoes < len(fakeagent.CorpusSecrets) {
		t.Errorf("%d echoes of non-JSON lines on stderr", echoes)
	}
}

// recordingTexts returns raw itself, then every string of every line
// (keys included) JSON-unescaped, and, where a string is JSON text, its
// strings unescaped once more.
func recordingTexts(t *testing.T, raw []byte) []string {
	t.Helper()
	out := []string{string(raw)}
	var walk func(v any, depth int)
	walk = func(v any, depth int) {
		switch x := v.(type) {
		case string:
			out = append(out, x)
			if depth < 2 && strings.Contains(x, "{") {
				for _, l := range strings.Split(x, "\n") {
					var inner any
					if json.Unmarshal([]byte(l), &inner) == nil {
						walk(inner, depth+1)
					}
				}
			}
			if strings.Contains(x, `\`) {
				// Escapes inside text (JSON text in a string, not always
				// a whole document; a non-JSON line's \u escapes).
				out = append(out, unescapeText(x))
			}
		case map[string]any:
			for k, e := range x {
				out = append(out, k)
				walk(e, depth)
			}
		case []any:
			for _, e := range x {
				walk(e, depth)
			}
		}
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 64<<20)
	n := 0
	for sc.Scan() {
		n++
		var v any
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("line %d of the recording is not JSON: %v", n, err)
		}
		walk(v, 0)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

var textEscape = regexp.MustCompile(`\\(?:u[0-9a-fA-F]{4}|.)`)

// unescapeText decodes JSON string escapes found in text.
func unescapeText(s string) string {
	return textEscape.ReplaceAllStringFunc(s, func(e string) string {
		switch e[1] {
		case 'u':
			v, _ := strconv.ParseUint(e[2:], 16, 32)
			return string(rune(v))
		case 'n':
			return "\n"
		case 't':
			return "\t"
		}
		return e[1:]
	})
}
