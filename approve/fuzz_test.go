package approve

import (
	"encoding/json"
	"path"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentjq/agentjq/internal/protocol"
)

// FuzzSplitBash checks the splitter never panics and that whatever a
// command is, adding a denied command to it by any shell construct
// denies the whole.
func FuzzSplitBash(f *testing.F) {
	for _, c := range append(bypassCorpus, allowedCorpus...) {
		if c.tool == "Bash" {
			f.Add(c.input["command"].(string))
		}
	}
	rf, err := ParseRulesFile("f.json", []byte(`{"allow": ["Bash(echo:*)", "Bash(git status)", "Bash", "Edit"], "deny": ["Bash(rm:*)"]}`), "/home/u")
	if err != nil {
		f.Fatal(err)
	}
	rs := NewRuleSet([]*RulesFile{rf}, "/home/u")
	f.Fuzz(func(t *testing.T, cmd string) {
		if len(cmd) > 2000 {
			return
		}
		parts, err := splitBash(cmd)
		if err != nil {
			return
		}
		for _, p := range parts {
			for _, fm := range p.forms {
				if len(fm.words) == 0 {
					t.Fatalf("%q: empty form", cmd)
				}
			}
		}
		for _, wrapped := range []string{
			cmd + "\nrm -rf /",
			"rm -rf / ; " + cmd,
			"echo $(rm -rf /) " + cmd,
		} {
			if _, err := splitBash(wrapped); err != nil {
				continue // cmd left an open construct that swallowed the rest
			}
			req := &Request{CanUseTool: protocol.CanUseTool{ToolName: "Bash", Input: mustJSON(map[string]string{"command": wrapped})}, Cwd: "/p"}
			if v := rs.decide(req); v.Behavior != protocol.Deny && !swallowsRm(wrapped) {
				t.Fatalf("%q: %s (%s)", wrapped, v.Behavior, v.Rule)
			}
		}
	})
}

// swallowsRm reports whether the rm text ended up inside a quote, comment or
// heredoc of cmd, where it is data, not a command.
func swallowsRm(cmd string) bool {
	parts, err := splitBash(cmd)
	if err != nil {
		return true
	}
	for _, p := range parts {
		if p.unknown {
			return false
		}
		for _, f := range p.forms {
			if len(f.words) > 0 && (f.words[0].text == "rm" || f.words[0].uncertain()) {
				return false
			}
		}
	}
	return true
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// globRef is the reference matcher: the pattern as a regular expression
// over "/seg/seg", where ** is any number of whole segments.
func globRef(pat []string, segs []string) bool {
	var re strings.Builder
	re.WriteString("^")
	for _, s := range pat {
		if s == "**" {
			re.WriteString("(?:/[^/]+)*")
			continue
		}
		re.WriteString("/")
		for _, r := range s {
			switch r {
			case '*':
				re.WriteString("[^/]*")
			case '?':
				re.WriteString("[^/]")
			default:
				re.WriteString(regexp.QuoteMeta(string(r)))
			}
		}
	}
	re.WriteString("$")
	p := ""
	if len(segs) > 0 {
		p = "/" + strings.Join(segs, "/")
	}
	return regexp.MustCompile(re.String()).MatchString(p)
}

func FuzzGlobMatch(f *testing.F) {
	f.Add("src/**/*.go", "src/a/b/c.go")
	f.Add("**/.env", ".env")
	f.Add("a/**/b/**", "a/b")
	f.Add("*.md", "x.md")
	f.Add("a?c/**", "abc/d/e")
	f.Add("**", "")
	f.Fuzz(func(t *testing.T, pattern, p string) {
		if strings.ContainsAny(pattern, `[\`) || !utf8.ValidString(pattern) || !utf8.ValidString(p) || len(pattern) > 64 || len(p) > 128 {
			return
		}
		pat := splitPath(pattern)
		for _, s := range pat {
			if s == "." || s == ".." {
				return
			}
			if _, err := path.Match(s, ""); err != nil {
				return
			}
		}
		segs := splitPath(p)
		exact := (&pathPattern{}).matchSegs(pat, segs)
		if want := globRef(pat, segs); exact != want {
			t.Fatalf("matchSegs(%q, %q) = %v, reference %v", pat, segs, exact, want)
		}
		// A deny pattern (fold) matches whatever the exact one does, and
		// whatever it does once both are folded (foldLower).
		folded := (&pathPattern{fold: true}).matchSegs(pat, segs)
		lower := func(ss []string) []string {
			out := make([]string, len(ss))
			for i, s := range ss {
				out[i] = foldLower(s)
			}
			return out
		}
		if exact && !folded || globRef(lower(pat), lower(segs)) && !folded {
			t.Fatalf("folded matchSegs(%q, %q) = false, but exact %v", pat, segs, exact)
		}
	})
}

func FuzzRulesFile(f *testing.F) {
	f.Add([]byte(corpusPolicy))
	f.Add([]byte(`{"permissions": {"allow": ["Bash(x)"]}}`))
	f.Add([]byte(`{"answers": {"q": ["a"]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := ParseRulesFile("f.json", data, "/h")
		if err != nil {
			if _, ok := err.(*PolicyError); !ok {
				t.Fatalf("error %T %v, want a PolicyError", err, err)
			}
		}
	})
}
