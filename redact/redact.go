// Package redact removes secrets from a session's lines before they are
// recorded: built-in patterns (API keys, tokens), the values of secret
// environment variables, the account learnt from the initialize response,
// user regexes and jq-style paths. A JSON line stays valid JSON with every
// byte outside the redacted strings unchanged.
package redact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/agentjq/agentjq/protocol"
)

// RedactSpec says what a recording had removed. It is written in the
// header (without secret values) so that replay can apply the same
// redactions to what a client sends before matching it.
type RedactSpec struct {
	// Builtin enables the built-in patterns: API keys, bearer tokens, and
	// the account email and organization of an initialize response.
	Builtin bool `json:"builtin"`
	// Env names variables whose values are removed wherever they appear.
	Env []string `json:"env,omitempty"`
	// Regex are extra patterns (RE2 syntax); each match is removed.
	Regex []string `json:"regex,omitempty"`
	// Paths are jq-style paths (.a.b, .a[0], .a[]) into JSON lines whose
	// values are replaced whole.
	Paths []string `json:"paths,omitempty"`
}

// Placeholder returns the text that stands where a secret of kind was.
func Placeholder(kind string) string { return "[REDACTED:" + kind + "]" }

const placeholderPrefix = "[REDACTED:"

// builtinPatterns are secrets recognisable by their shape. Order matters:
// the specific Anthropic key before the generic sk- key.
var builtinPatterns = []struct {
	kind  string
	re    *regexp.Regexp
	hints []string // one of them is in every match; lower case means any case
	// next, when set, holds every byte that can follow a hint in a match,
	// and a backslash (an escape in raw JSON): a hint followed by anything
	// else, or by nothing, is no sign of a secret ("apiKeySource").
	next string
}{
	{"anthropic-api-key", regexp.MustCompile(`sk-ant-[A-Za-z0-9_\-]{8,}`), []string{"sk-ant-"}, ""},
	{"api-key", regexp.MustCompile(`\bsk-[A-Za-z0-9_\-]{16,}`), []string{"sk-"}, ""},
	{"aws-access-key", regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`), []string{"AKIA", "ASIA"}, ""},
	{"github-token", regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})`), []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"}, ""},
	{"slack-token", regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9\-]{10,}`), []string{"xox"}, ""},
	{"google-api-key", regexp.MustCompile(`\bAIza[0-9A-Za-z_\-]{35}`), []string{"AIza"}, ""},
	{"bearer-token", regexp.MustCompile(`(?i)\bbearer\s+[A-Za-z0-9._~+/=\-]{8,}`), []string{"bearer"}, " \t\n\f\r\\"},
	{"api-key", regexp.MustCompile(`(?i)\b(?:x-api-key|api[_-]?key|auth[_-]?token)(["']?\s*[:=]\s*["']?)[A-Za-z0-9._~+/=\-]{12,}`), []string{"api_key", "api-key", "apikey", "auth_token", "auth-token", "authtoken"}, "\"' \t\n\f\r:=\\"},
}

// DefaultSecretEnv are variables whose values are removed even without
// --redact-env: the credentials the agent CLI itself reads.
var DefaultSecretEnv = []string{
	"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN",
	"AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "OPENAI_API_KEY", "GITHUB_TOKEN", "GH_TOKEN",
}

type literal struct {
	value, kind string
	// enc is value as it stands inside a JSON string when that differs
	// (nil otherwise); anchor and encAnchor are the offsets of the bytes
	// searched for (literalAnchor).
	enc               []byte
	anchor, encAnchor int
}

func newLiteral(value, kind string) literal {
	l := literal{value: value, kind: kind, anchor: literalAnchor([]byte(value))}
	if enc := encodeJSONString(value); string(enc[1:len(enc)-1]) != value {
		l.enc = enc[1 : len(enc)-1]
		l.encAnchor = literalAnchor(l.enc)
	}
	return l
}

// in reports whether b holds l, as it is or JSON-encoded.
func (l *literal) in(b []byte) bool {
	return indexAnchored(b, []byte(l.value), l.anchor) >= 0 ||
		l.enc != nil && indexAnchored(b, l.enc, l.encAnchor) >= 0
}

type pattern struct {
	kind string
	re   *regexp.Regexp
	// hints: one of them is in every match (lower case: in any case); nil
	// for user patterns, which could match anything.
	hints []string
	next  string // see builtinPatterns
}

// Redactor removes secrets from lines before they reach the disk. It learns
// values as the session goes (the account email from the initialize
// response), so one Redactor belongs to one session. Safe for concurrent use.
type Redactor struct {
	spec     RedactSpec
	patterns []pattern
	hints    *hintSet
	paths    []jqPath

	mu       sync.RWMutex
	literals []literal // longest first
}

// NewRedactor compiles spec. lookupEnv resolves the values of spec.Env (and,
// with Builtin, of DefaultSecretEnv); it may be nil.
func NewRedactor(spec RedactSpec, lookupEnv func(string) (string, bool)) (*Redactor, error) {
	r := &Redactor{spec: spec}
	if spec.Builtin {
		for _, p := range builtinPatterns {
			r.patterns = append(r.patterns, pattern{p.kind, p.re, p.hints, p.next})
		}
	}
	for i, s := range spec.Regex {
		re, err := regexp.Compile(s)
		if err != nil {
			return nil, fmt.Errorf("--redact %q: %w", s, err)
		}
		r.patterns = append(r.patterns, pattern{fmt.Sprintf("regex-%d", i+1), re, nil, ""})
	}
	for _, s := range spec.Paths {
		p, err := parseJQPath(s)
		if err != nil {
			return nil, fmt.Errorf("--redact-path %q: %w", s, err)
		}
		r.paths = append(r.paths, p)
	}
	r.hints = newHintSet(r.patterns)
	if lookupEnv != nil {
		names := append([]string(nil), spec.Env...)
		if spec.Builtin {
			names = append(names, DefaultSecretEnv...)
		}
		for _, n := range names {
			if v, ok := lookupEnv(n); ok {
				r.AddLiteral(v, "env:"+n)
			}
		}
	}
	return r, nil
}

// Spec returns what r was built from.
func (r *Redactor) Spec() RedactSpec { return r.spec }

// AddLiteral removes every later occurrence of value. Values shorter than
// four bytes are ignored: removing them would shred the transcript.
func (r *Redactor) AddLiteral(value, kind string) {
	if len(value) < 4 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, l := range r.literals {
		if l.value == value {
			return
		}
	}
	r.literals = append(r.literals, newLiteral(value, kind))
	sort.SliceStable(r.literals, func(i, j int) bool { return len(r.literals[i].value) > len(r.literals[j].value) })
}

func (r *Redactor) empty() bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.patterns) == 0 && len(r.literals) == 0 && len(r.paths) == 0
}

// String redacts plain text (a stderr line, a header field).
func (r *Redactor) String(s string) string {
	if r == nil {
		return s
	}
	b := r.text([]byte(s))
	return string(b)
}

func (r *Redactor) text(b []byte) []byte {
	out, _ := r.textChanged(b, ^uint64(0))
	return out
}

// textChanged redacts literals then patterns; it returns b itself and
// false when nothing matched.
//
// only restricts the patterns tried to those whose bit is set (the ones a
// whole line may hold); ^0 tries all.
func (r *Redactor) textChanged(b []byte, only uint64) ([]byte, bool) {
	changed := false
	r.mu.RLock()
	lits := r.literals
	r.mu.RUnlock()
	for _, l := range lits {
		if bytes.Contains(b, []byte(l.value)) {
			b = bytes.ReplaceAll(b, []byte(l.value), []byte(Placeholder(l.kind)))
			changed = true
		}
	}
	may := r.hints.matchOnly(b, only)
	for i, p := range r.patterns {
		if i < 64 && may&(1<<uint(i)) == 0 {
			continue
		}
		if p.re.Match(b) {
			ph := []byte(Placeholder(p.kind))
			b = p.re.ReplaceAllFunc(b, func(m []byte) []byte {
				if bytes.HasPrefix(m, []byte(placeholderPrefix)) {
					return m
				}
				changed = true
				return ph
			})
		}
	}
	return b, changed
}

// Line redacts one line. A JSON line stays valid JSON with every byte
// outside the redacted strings unchanged; other lines are redacted as text.
// It returns line itself when nothing was removed.
func (r *Redactor) Line(dir protocol.Direction, line []byte) []byte {
	out, _, _ := r.LineObject(dir, line, false)
	return out
}

// LineObject is Line for a recorder, which must also know whether the line
// (without surrounding white space) is one JSON object; checked is false
// when it did not look (nothing to redact, and valid false).
//
// valid says the caller knows line is exactly one JSON object (the bridge
// validated it), which saves a pass over it.
func (r *Redactor) LineObject(dir protocol.Direction, line []byte, valid bool) (out []byte, obj, checked bool) {
	if r == nil || r.empty() {
		return line, valid, valid
	}
	trimmed := line
	if !valid {
		trimmed = bytes.TrimSpace(line)
	}
	if !valid && (len(trimmed) == 0 || trimmed[0] != '{' || !validObject(trimmed)) {
		return r.text(line), false, true
	}
	if r.spec.Builtin && dir == protocol.DirOut {
		r.learnAccount(line)
	}
	out = line
	if len(r.paths) > 0 {
		out = r.redactPaths(out)
	}
	if r.clean(out) {
		return out, true, true
	}
	return r.jsonStrings(out), true, true
}

// clean is the fast pre-filter of Line: true when no secret can be in the
// line. Without \u or \/ escapes, a secret inside a JSON string shows in
// the raw bytes as it is (the patterns' characters need no escaping), so
// a line holding none of the patterns' hints needs no closer look. User
// regexes could match anything: they always take the slow path.
func (r *Redactor) clean(line []byte) bool {
	if r.alwaysLooks() || r.literalIn(line) {
		return false
	}
	return !hasHidingEscape(line) && r.hints.match(line) == 0
}

// alwaysLooks: user regexes, or patterns without hints, must be tried on
// every line: the pre-filter can clear none.
func (r *Redactor) alwaysLooks() bool {
	return len(r.spec.Regex) > 0 || r.hints.always != 0
}

// literalIn reports whether line holds a literal, as it is or
// JSON-encoded.
func (r *Redactor) literalIn(line []byte) bool {
	r.mu.RLock()
	lits := r.literals
	r.mu.RUnlock()
	for i := range lits {
		if lits[i].in(line) {
			return true
		}
	}
	return false
}

// needsFullLook: user regexes, \u or \/ escapes, or a learnt literal in
// line: the hints alone cannot clear it.
func (r *Redactor) needsFullLook(line []byte) bool {
	if len(r.spec.Regex) > 0 {
		return true
	}
	return hasHidingEscape(line) || r.literalIn(line)
}

// learnAccount picks the email and organization out of an initialize
// response so that they are removed everywhere from now on.
func (r *Redactor) learnAccount(line []byte) {
	if !mayBeType(line, "control_response") || !hasAccountObject(line) {
		return
	}
	var v struct {
		Response struct {
			Response struct {
				Account map[string]any `json:"account"`
			} `json:"response"`
		} `json:"response"`
	}
	if json.Unmarshal(line, &v) != nil {
		return
	}
	for k, val := range v.Response.Response.Account {
		s, ok := val.(string)
		if !ok {
			continue
		}
		lk := strings.ToLower(k)
		switch {
		case strings.Contains(lk, "email"):
			r.AddLiteral(s, "email")
		case strings.Contains(lk, "organization") || strings.Contains(lk, "org"):
			r.AddLiteral(s, "organization")
		}
	}
}

// jsonStrings applies the text redactions inside every JSON string token
// (keys included) and splices changed strings back in.
//
// When the hints can decide (needsFullLook is false), only strings that
// hold a hint are looked at, with only the patterns of their hints.
func (r *Redactor) jsonStrings(line []byte) []byte {
	var occ []hintOccurrence
	fast := !r.needsFullLook(line)
	if fast {
		occ = r.hints.occurrences(line)
	}
	k := 0
	var out []byte // nil until something changes
	last := 0
	for i := 0; i < len(line); i++ {
		if line[i] != '"' {
			continue
		}
		start := i
		escaped := false
		j := i + 1
		for ; j < len(line); j++ {
			c := line[j]
			if c == '\\' {
				escaped = true
				j++
				continue
			}
			if c == '"' {
				break
			}
		}
		if j >= len(line) {
			break
		}
		tok := line[start : j+1]
		i = j
		only := ^uint64(0)
		if fast {
			for k < len(occ) && occ[k].pos <= start {
				k++
			}
			only = r.hints.always
			for m := k; m < len(occ) && occ[m].pos < j; m++ {
				if occ[m].end <= j {
					only |= occ[m].pattern
				}
			}
			if only == 0 {
				continue
			}
		}
		var repl []byte
		if !escaped {
			content := tok[1 : len(tok)-1]
			red, changed := r.textChanged(content, only)
			if !changed {
				continue
			}
			repl = encodeJSONString(string(red))
		} else {
			var s string
			if json.Unmarshal(tok, &s) != nil {
				continue
			}
			red := r.String(s)
			if red == s {
				continue
			}
			repl = encodeJSONString(red)
		}
		out = append(out, line[last:start]...)
		out = append(out, repl...)
		last = j + 1
	}
	if out == nil {
		return line
	}
	return append(out, line[last:]...)
}

func encodeJSONString(s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return bytes.TrimRight(buf.Bytes(), "\n")
}

// redactPaths replaces the values at the configured paths.
func (r *Redactor) redactPaths(line []byte) []byte {
	for _, p := range r.paths {
		spans := p.find(line, 0)
		if len(spans) == 0 {
			continue
		}
		// Replace from the end so earlier offsets stay right.
		sort.Slice(spans, func(i, j int) bool { return spans[i][0] > spans[j][0] })
		ph := encodeJSONString(Placeholder("path " + p.src))
		out := append([]byte(nil), line...)
		for _, s := range spans {
			if string(out[s[0]:s[1]]) == "null" {
				continue
			}
			out = append(out[:s[0]], append(append([]byte(nil), ph...), out[s[1]:]...)...)
		}
		line = out
	}
	return line
}

// MatchRedacted reports whether got equals want, where want may hold
// placeholders: each one matches any run of text. Replay uses it so that a
// redacted recording still matches what a client really sends.
func MatchRedacted(want, got string) bool {
	if !strings.Contains(want, placeholderPrefix) {
		return want == got
	}
	var re strings.Builder
	re.WriteString(`(?s)^`)
	rest := want
	for {
		i := strings.Index(rest, placeholderPrefix)
		if i < 0 {
			re.WriteString(regexp.QuoteMeta(rest))
			break
		}
		j := strings.IndexByte(rest[i:], ']')
		if j < 0 {
			re.WriteString(regexp.QuoteMeta(rest))
			break
		}
		re.WriteString(regexp.QuoteMeta(rest[:i]))
		re.WriteString(`.*?`)
		rest = rest[i+j+1:]
	}
	re.WriteString(`$`)
	m, err := regexp.MatchString(re.String(), got)
	return err == nil && m
}

// hasAccountObject reports whether line holds a key "account" whose value
// is an object: it looks back from each '{' (far rarer in agent output
// than any byte of the key) past white space for `"account":`.
func hasAccountObject(line []byte) bool {
	const key = `"account"`
	for i := 0; ; {
		j := bytes.IndexByte(line[i:], '{')
		if j < 0 {
			return false
		}
		p := i + j
		i = p + 1
		k := p - 1
		for k >= 0 && isJSONSpace(line[k]) {
			k--
		}
		if k < 0 || line[k] != ':' {
			continue
		}
		k--
		for k >= 0 && isJSONSpace(line[k]) {
			k--
		}
		if k+1 >= len(key) && string(line[k+1-len(key):k+1]) == key {
			return true
		}
	}
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// mayBeType is false only when line plainly starts with a "type" other
// than typ (the CLI writes the type first): a cheap gate before a search
// of the whole line for what only lines of type typ hold.
func mayBeType(line []byte, typ string) bool {
	const p = `{"type":"`
	if !bytes.HasPrefix(line, []byte(p)) {
		return true
	}
	rest := line[len(p):]
	return len(rest) > len(typ) && string(rest[:len(typ)]) == typ && rest[len(typ)] == '"'
}

// hasHidingEscape reports whether line holds a \u or \/ escape, the ones
// that can hide a secret's characters from the raw bytes. One pass from
// backslash to backslash; an escaped backslash is skipped whole.
func hasHidingEscape(line []byte) bool {
	for i := 0; ; {
		j := bytes.IndexByte(line[i:], '\\')
		if j < 0 || i+j+1 >= len(line) {
			return false
		}
		switch line[i+j+1] {
		case 'u', '/':
			return true
		}
		i += j + 2
	}
}

// validObject reports whether b is exactly one JSON object (protocol.Scan,
// the bridge's validator).
func validObject(b []byte) bool {
	_, ok := protocol.Scan(b)
	return ok
}
