package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentjq/agentjq/internal/testkit/fakeagent"
	"github.com/agentjq/agentjq/internal/testkit/livetest"
	"github.com/agentjq/agentjq/redact"
)

// TestRecordHeldOutSecretCorpus: the fake agent writes every secret of
// redact/testdata/secrets.json (88 kinds in five classes: token
// prefixes, credential formats, encoded credentials, values with no
// keyword, JSON keys not named like secrets) everywhere a session
// carries text (stderr, the initialize response, assistant text, a tool
// input, a can_use_tool request, tool results, \u-escaped text, non-JSON
// stdout plain and escaped, a JSON object's value, a 5 MiB line).
// Recorded with agentjq record -o and with spawn --record, only the
// kinds agentjq-record(1) names as undetectable without context
// (redact.Undetectable) may survive, at most 3: in the file's bytes or
// in any string once unescaped, in any letter case.
func TestRecordHeldOutSecretCorpus(t *testing.T) {
	t.Parallel()
	livetest.SkipShort(t, "runs this test binary as the agent")
	corpusPath, err := filepath.Abs(filepath.Join("..", "redact", "testdata", "secrets.json"))
	if err != nil {
		t.Fatal(err)
	}
	secrets, err := fakeagent.LoadCorpus(corpusPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(secrets) < 80 {
		t.Fatalf("the corpus has %d kinds, want 80 or more", len(secrets))
	}
	undetectable := map[string]bool{}
	for _, u := range redact.Undetectable {
		undetectable[u.Kind] = true
	}
	if len(undetectable) > 3 {
		t.Errorf("%d kinds are named undetectable, want at most 3", len(undetectable))
	}
	for _, how := range []string{"record", "spawn"} {
		t.Run(how, func(t *testing.T) {
			rec := filepath.Join(t.TempDir(), "corpus.rec")
			var code int
			if how == "record" {
				ios, _, _, _ := hostIO(t, "secret-file:"+corpusPath, "")
				code = Main([]string{"record", "-o", rec, "--bin", os.Args[0], "-p", "go"}, ios)
			} else {
				ios, _, _ := fakeIO(t, "secret-file:"+corpusPath, "go\n")
				code = Main([]string{"spawn", "--bin", os.Args[0], "--record", rec}, ios)
			}
			raw, err := os.ReadFile(rec)
			if err != nil {
				t.Fatalf("exit %d: %v", code, err)
			}
			if len(raw) < 5<<20 {
				t.Fatalf("exit %d: the recording is %d bytes: the 5 MiB line is missing", code, len(raw))
			}
			texts := recordingTexts(t, raw)
			for i := range texts {
				texts[i] = strings.ToLower(texts[i])
			}
			survived := 0
			for _, s := range secrets {
				secret := strings.ToLower(s.Must())
				for i, text := range texts {
					if !strings.Contains(text, secret) {
						continue
					}
					survived++
					if !undetectable[s.Kind] {
						where := "the file's bytes"
						if i > 0 {
							where = "an unescaped string"
						}
						t.Errorf("%s (%s) survived in %s: %q", s.Kind, s.Class, where, s.Must())
					}
					break
				}
			}
			if survived > 3 {
				t.Errorf("%d of %d kinds survived, want at most 3", survived, len(secrets))
			}
			t.Logf("%s: %d of %d kinds survived", how, survived, len(secrets))
		})
	}
}
