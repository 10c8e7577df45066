// Package redact removes secrets from a session's lines before they are
// recorded: built-in rules (gitleaks' rule set, API keys, tokens,
// private keys, credential formats, passwords in URLs and assignments), the values of secret environment variables,
// the account (from the agent's configuration and the initialize
// response, in any letter case), user regexes and jq-style paths. A JSON
// line stays valid JSON with every byte outside the redacted strings
// unchanged. It imports nothing of the recording format: the bridge's
// stderr echo of non-JSON agent lines uses Redactor.Text through a
// func([]byte) []byte option that cmd wires in.
//
// # The rules
//
// Three sets run, in this order, on each JSON string (decoded from its
// escapes) and on each line that is not JSON:
//
//   - builtinPatterns (patterns.go): agentjq's own shapes where gitleaks
//     has no rule or a stricter one (PEM blocks cut short or written line
//     by line, passwords in URLs, Authorization headers, NAME=value
//     assignments), found through hints (hints.go), which are keywords
//     of the automaton below too;
//   - gitleaks' default rule set at the version go.mod pins
//     (github.com/zricethezav/gitleaks/v8), generated into
//     gitleaks_rules.go by internal/tools/gengitleaks (go generate; the
//     binary carries the table, not gitleaks), run as gitleaks runs it:
//     the keywords of every rule in one Aho-Corasick automaton
//     (github.com/coregx/ahocorasick), a rule's regexp only on a window
//     around its keyword, its entropy threshold and allowlists (gitleaks.go);
//   - agentjqRules (rules.go), in the same engine: credential formats
//     and encodings (.netrc, .pgpass, ODBC, base64 of a credential, key
//     bodies without armour, cookies) that no provider rule covers.
//
// On a line the bridge has scanned (protocol.Known), the automaton and
// the hints read the raw line once; a string is looked at only where a
// keyword or hint is, and a semi-generic rule (NAME = value) only where
// an operator follows its keyword. A line where no rule may match at any
// of the hits, and no key names a secret, is cleared from the hits
// alone, without a walk of its strings (glEngine.mayFind). Undetectable
// lists what cannot be told from ordinary text without context.
package redact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/agentjq/agentjq/internal/protocol"
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
	// Regex are extra patterns (RE2 syntax); each match is removed. Spec
	// (what a recording's header stores) leaves them out and keeps their
	// number: an expression may be the secret itself (--redact hunter2).
	Regex      []string `json:"regex,omitempty"`
	RegexCount int      `json:"regex_count,omitempty"`
	// Paths are jq-style paths (.a.b, .a[0], .a[]) into JSON lines whose
	// values are replaced whole.
	Paths []string `json:"paths,omitempty"`
}

// Placeholder returns the text that stands where a secret of kind was.
func Placeholder(kind string) string { return "[REDACTED:" + kind + "]" }

const placeholderPrefix = "[REDACTED:"

// DefaultSecretEnv are variables whose values are removed even without
// --redact-env: the credentials the agent CLI itself reads.
var DefaultSecretEnv = []string{
	"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN",
	"AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "OPENAI_API_KEY", "GITHUB_TOKEN", "GH_TOKEN",
}

type literal struct {
	value, kind string
	// fold: any ASCII letter case matches (an email address, a name).
	fold bool
	// enc is value as it stands inside a JSON string when that differs
	// (nil otherwise); anchor and encAnchor are the offsets of the bytes
	// searched for (literalAnchor).
	enc               []byte
	anchor, encAnchor int
}

func newLiteral(value, kind string, fold bool) literal {
	l := literal{value: value, kind: kind, fold: fold, anchor: literalAnchor([]byte(value))}
	if enc := encodeJSONString(value); string(enc[1:len(enc)-1]) != value {
		l.enc = enc[1 : len(enc)-1]
		l.encAnchor = literalAnchor(l.enc)
	}
	return l
}

// in reports whether b holds l, as it is or JSON-encoded.
func (l *literal) in(b []byte) bool {
	return l.index(b, []byte(l.value), l.anchor) >= 0 ||
		l.enc != nil && l.index(b, l.enc, l.encAnchor) >= 0
}

func (l *literal) index(b, needle []byte, k int) int {
	if l.fold {
		return indexFold(b, needle, k)
	}
	return indexAnchored(b, needle, k)
}

// replace replaces every occurrence of l in b by its placeholder; it
// returns b itself and false when there is none.
func (l *literal) replace(b []byte) ([]byte, bool) {
	v := []byte(l.value)
	if !l.fold {
		if !bytes.Contains(b, v) {
			return b, false
		}
		return bytes.ReplaceAll(b, v, []byte(Placeholder(l.kind))), true
	}
	var out []byte
	last := 0
	for {
		i := indexFold(b[last:], v, l.anchor)
		if i < 0 {
			break
		}
		out = append(out, b[last:last+i]...)
		out = append(out, Placeholder(l.kind)...)
		last += i + len(v)
	}
	if out == nil {
		return b, false
	}
	return append(out, b[last:]...), true
}

type pattern struct {
	kind string
	re   *regexp.Regexp
	// hints: one of them is in every match (lower case: in any case); nil
	// for user patterns, which could match anything.
	hints []string
	next  string // see builtinPatterns
	also  string // see builtinPatterns
}

// Redactor removes secrets from lines before they reach the disk. It learns
// values as the session goes (the account email from the initialize
// response), so one Redactor belongs to one session. Safe for concurrent use.
type Redactor struct {
	spec     RedactSpec
	patterns []pattern
	hints    *hintSet
	paths    []jqPath
	// gl runs gitleaks' rules (with Builtin; nil otherwise).
	gl *glEngine

	mu       sync.RWMutex
	literals []literal // longest first
	// pemOpen counts the lines since a BEGIN ... PRIVATE KEY line without
	// its END, per direction (textLine).
	pemOpen map[protocol.Direction]int
	// ppkLeft counts the private lines of a PuTTY key still to come
	// after its Private-Lines: N line, per direction (textLine).
	ppkLeft map[protocol.Direction]int
}

// NewRedactor compiles spec. lookupEnv resolves the values of spec.Env (and,
// with Builtin, of DefaultSecretEnv); it may be nil.
func NewRedactor(spec RedactSpec, lookupEnv func(string) (string, bool)) (*Redactor, error) {
	r := &Redactor{spec: spec}
	if spec.Builtin {
		r.gl = gitleaks()
		for _, p := range builtinPatterns {
			r.patterns = append(r.patterns, pattern{kind: p.kind, re: p.re, hints: p.hints, next: p.next, also: p.also})
		}
	}
	for i, s := range spec.Regex {
		re, err := regexp.Compile(s)
		if err != nil {
			return nil, fmt.Errorf("--redact %q: %w", s, err)
		}
		kind := fmt.Sprintf("regex-%d", i+1)
		r.patterns = append(r.patterns, pattern{kind: kind, re: re})
		// The expression's own text goes too, wherever it is (the
		// header's argv: --redact EXPR).
		r.addLiteral(s, kind, false)
	}
	for _, s := range spec.Paths {
		p, err := parseJQPath(s)
		if err != nil {
			return nil, fmt.Errorf("--redact-path %q: %w", s, err)
		}
		r.paths = append(r.paths, p)
	}
	nBuiltin := 0
	if spec.Builtin {
		nBuiltin = len(builtinPatterns)
	}
	r.hints = newHintSet(r.patterns, nBuiltin, r.gl != nil)
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

// Spec returns what r was built from, as a recording's header stores it:
// without the text of the user's expressions (RegexCount says how many).
func (r *Redactor) Spec() RedactSpec {
	spec := r.spec
	spec.RegexCount += len(spec.Regex)
	spec.Regex = nil
	return spec
}

// AddLiteral removes every later occurrence of value. Values shorter than
// four bytes are ignored: removing them would shred the transcript.
func (r *Redactor) AddLiteral(value, kind string) {
	if len(value) < 4 {
		return
	}
	r.addLiteral(value, kind, false)
}

// LearnAccount removes the account's email and organization from now on,
// in any letter case. cmd calls it with what the agent's own
// configuration names (AccountFromConfig) before anything is recorded:
// the initialize response, which also teaches it, may come after the
// header, the first turn and the agent's first stderr lines.
func (r *Redactor) LearnAccount(email, org string) {
	if r == nil {
		return
	}
	if len(email) >= 4 {
		r.addLiteral(email, "email", true)
	}
	if len(org) >= 4 {
		r.addLiteral(org, "organization", true)
	}
}

func (r *Redactor) addLiteral(value, kind string, fold bool) {
	if value == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, l := range r.literals {
		if l.value == value {
			return
		}
	}
	r.literals = append(r.literals, newLiteral(value, kind, fold))
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
	out, _ := r.textChanged(b, ^uint64(0), nil, true)
	if !protocol.HidesText(b) {
		return out
	}
	// A \u or \/ escape in text that is not JSON (a JSON document echoed
	// on stderr) can still split a secret: look at the text with them
	// decoded too, and keep that version when it hid something.
	if dec, ok := decodeHidingEscapes(out); ok {
		if red, changed := r.textChanged(dec, ^uint64(0), nil, true); changed {
			return red
		}
	}
	return out
}

// Text redacts b as text: what agentjq prints of an agent's non-JSON
// line (the bridge's stderr echo) goes through it. It returns b itself
// when nothing was removed.
func (r *Redactor) Text(b []byte) []byte {
	if r == nil {
		return b
	}
	return r.textLine(echoDirection, b)
}

// echoDirection keys Text's PEM state apart from the recorded
// directions'.
const echoDirection protocol.Direction = "echo"

// pemBlockLines bounds how many lines after a BEGIN line without its END
// are taken for a key's body.
const pemBlockLines = 200

// textLine redacts a line that is not JSON. A PEM private key written
// line by line (on stderr, in a non-JSON stdout) comes in several taps:
// after a BEGIN ... PRIVATE KEY line without its END, the lines up to END
// are removed whole.
func (r *Redactor) textLine(dir protocol.Direction, line []byte) []byte {
	if r.spec.Builtin && r.ppkLine(dir, line) {
		return []byte(Placeholder("private-key"))
	}
	r.mu.Lock()
	open := r.pemOpen[dir]
	if open > 0 {
		if bytes.Contains(line, []byte("-----END")) {
			delete(r.pemOpen, dir)
		} else if open++; open > pemBlockLines {
			delete(r.pemOpen, dir)
		} else {
			r.pemOpen[dir] = open
		}
	}
	r.mu.Unlock()
	if open > 0 {
		if i := bytes.Index(line, []byte("-----END")); i >= 0 {
			return append([]byte(Placeholder("private-key")), line[i:]...)
		}
		return []byte(Placeholder("private-key"))
	}
	if r.spec.Builtin && bytes.Contains(line, []byte("PRIVATE KEY")) && bytes.Contains(line, []byte("-----BEGIN")) &&
		!bytes.Contains(line, []byte("-----END")) {
		r.mu.Lock()
		if r.pemOpen == nil {
			r.pemOpen = map[protocol.Direction]int{}
		}
		r.pemOpen[dir] = 1
		r.mu.Unlock()
	}
	return r.text(line)
}

// ppkLine reports whether line is one of a PuTTY key's private lines
// written a line at a time: the N lines after a Private-Lines: N line
// that ends there.
func (r *Redactor) ppkLine(dir protocol.Direction, line []byte) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if left := r.ppkLeft[dir]; left > 0 {
		if left == 1 {
			delete(r.ppkLeft, dir)
		} else {
			r.ppkLeft[dir] = left - 1
		}
		return true
	}
	const mark = "Private-Lines:"
	i := bytes.Index(line, []byte(mark))
	if i < 0 {
		return false
	}
	n, err := strconv.Atoi(string(bytes.TrimSpace(line[i+len(mark):])))
	if err != nil || n <= 0 || n > pemBlockLines {
		return false
	}
	if r.ppkLeft == nil {
		r.ppkLeft = map[protocol.Direction]int{}
	}
	r.ppkLeft[dir] = n
	return false
}

// decodeHidingEscapes replaces the \uXXXX (surrogate pairs included),
// \/, \" and \\ escapes of b by what they stand for; \n and the others
// stay as they are. ok is false when there was none.
func decodeHidingEscapes(b []byte) ([]byte, bool) {
	var out []byte
	last := 0
	for i := 0; i+1 < len(b); i++ {
		if b[i] != '\\' {
			continue
		}
		switch b[i+1] {
		case '/':
			out = append(append(out, b[last:i]...), '/')
			i++
			last = i + 1
		case 'u':
			r, n := decodeU(b[i:])
			if n == 0 {
				i++
				continue
			}
			out = utf8.AppendRune(append(out, b[last:i]...), r)
			i += n - 1
			last = i + 1
		case '"', '\\':
			// Not hiding by themselves, but they stand between a name
			// and its value: NAME=\"value\".
			out = append(append(out, b[last:i]...), b[i+1])
			i++
			last = i + 1
		default:
			i++ // the next byte is not an escape's start
		}
	}
	if out == nil {
		return b, false
	}
	return append(out, b[last:]...), true
}

// decodeU decodes the \uXXXX escape (and a low surrogate's after a high
// one) at the start of b; n is 0 when it is not one.
func decodeU(b []byte) (rune, int) {
	hex4 := func(b []byte) (rune, bool) {
		if len(b) < 6 || b[0] != '\\' || b[1] != 'u' {
			return 0, false
		}
		v, err := strconv.ParseUint(string(b[2:6]), 16, 32)
		return rune(v), err == nil
	}
	r1, ok := hex4(b)
	if !ok {
		return 0, 0
	}
	if utf16.IsSurrogate(r1) {
		if r2, ok := hex4(b[6:]); ok {
			if r := utf16.DecodeRune(r1, r2); r != utf8.RuneError {
				return r, 12
			}
		}
		return utf8.RuneError, 6
	}
	return r1, 6
}

// textChanged redacts literals then patterns; it returns b itself and
// false when nothing matched.
//
// only restricts the patterns tried to those whose bit is set (the ones a
// whole line may hold); ^0 tries all. gitleaks' rules run where their
// keywords are: at hits (positions in b), or, with scan, wherever the
// automaton finds them in b.
func (r *Redactor) textChanged(b []byte, only uint64, hits []glHit, scan bool) ([]byte, bool) {
	changed := false
	r.mu.RLock()
	lits := r.literals
	r.mu.RUnlock()
	for i := range lits {
		if out, ok := lits[i].replace(b); ok {
			b, changed = out, true
		}
	}
	if r.gl != nil && scan {
		hits = r.gl.hits(b, nil)
	}
	may := r.hints.fromHits(r.gl, b, hits, only, false)
	for i, p := range r.patterns {
		if i < 64 && may&(1<<uint(i)) == 0 {
			continue
		}
		if out, ok := replaceMatches(p, b); ok {
			b, changed = out, true
		}
	}
	if r.gl != nil && len(hits) > 0 {
		if changed {
			// Positions moved: find them again.
			hits = r.gl.hits(b, nil)
		}
		if out, ok := replaceSpans(b, r.gl.find(b, hits)); ok {
			b, changed = out, true
		}
	}
	return b, changed
}

// Line redacts one line. A JSON line stays valid JSON with every byte
// outside the redacted strings unchanged; other lines are redacted as text.
// It returns line itself when nothing was removed.
func (r *Redactor) Line(dir protocol.Direction, line []byte) []byte {
	out, _, _ := r.LineObject(dir, line, 0)
	return out
}

// LineObject is Line for a recorder, which must also know whether the line
// (without surrounding white space) is one JSON object; checked is false
// when it did not look (nothing to redact, and known says nothing).
//
// known is what the caller learnt of line (the bridge scanned it): with
// protocol.KnownObject the line is not validated again, and with
// protocol.KnownPlain too it is not searched for escapes that hide text.
func (r *Redactor) LineObject(dir protocol.Direction, line []byte, known protocol.Known) (out []byte, obj, checked bool) {
	valid := known&protocol.KnownObject != 0
	if r == nil || r.empty() {
		return line, valid, valid
	}
	if !valid {
		trimmed := bytes.TrimSpace(line)
		var h protocol.Head
		if len(trimmed) > 0 && trimmed[0] == '{' {
			h, valid = protocol.Scan(trimmed)
		}
		if !valid {
			return r.textLine(dir, line), false, true
		}
		known = h.Known
	}
	// hides: a \u or \/ escape may hide text from the raw bytes.
	hides := known&protocol.KnownPlain == 0
	if r.spec.Builtin && dir == protocol.DirOut {
		r.learnAccount(line)
	}
	out = line
	if len(r.paths) > 0 {
		out = r.redactPaths(out)
	}
	hb := hitPool.Get().(*[]glHit)
	defer putHits(hb)
	found, glHits, clean := r.clean(out, hides, (*hb)[:0])
	if glHits != nil {
		*hb = glHits
	}
	if clean {
		return out, true, true
	}
	return r.jsonStrings(out, hides, found, glHits), true, true
}

// InOrder reports whether LineObject(dir, line, known) must run in the
// order of the session's lines, after the lines before it and before the
// ones after it. Such a line reads or changes what the Redactor learnt
// from earlier lines: a line not known to be one JSON object is redacted
// as text, which follows a private key's body from line to line, and an
// initialize response teaches the account, removed from then on. Any
// other line's redaction depends on nothing but the line, so a recorder
// may redact such lines concurrently (the Redactor is safe for it) and
// get what it would in order.
func (r *Redactor) InOrder(dir protocol.Direction, line []byte, known protocol.Known) bool {
	if r == nil {
		return false
	}
	if known&protocol.KnownObject == 0 {
		return true
	}
	return r.spec.Builtin && dir == protocol.DirOut && protocol.MayBeType(line, "control_response") && hasAccountObject(line)
}

// hitPool holds the lists of a line's hits (LineObject): nothing keeps
// one past the line.
var hitPool = sync.Pool{New: func() any { h := make([]glHit, 0, 64); return &h }}

func putHits(h *[]glHit) {
	if cap(*h) <= 1<<14 {
		*h = (*h)[:0]
		hitPool.Put(h)
	}
}

// clean is the fast pre-filter of Line: true when no secret can be in the
// line. Without \u or \/ escapes (hides), a secret inside a JSON string
// shows in the raw bytes as it is (the patterns' characters need no
// escaping), so a line holding none of the patterns' hints needs no
// closer look. User regexes could match anything: they always take the
// slow path. found has the patterns whose hints are in the line (all of
// them when the hints were not looked for); glHits the keywords of
// gitleaks' rules in the line, appended to into.
func (r *Redactor) clean(line []byte, hides bool, into []glHit) (found uint64, glHits []glHit, clean bool) {
	if hides || r.alwaysLooks() || r.literalIn(line) {
		return ^uint64(0), nil, false
	}
	if r.gl != nil {
		glHits = r.gl.hits(line, into)
	}
	found = r.hints.fromHits(r.gl, line, glHits, ^uint64(0), true)
	return found, glHits, found == 0 && (len(glHits) == 0 || !r.gl.mayFind(line, glHits))
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

// needsFullLook: user regexes, \u or \/ escapes (hides), or a learnt
// literal in line: the hints alone cannot clear it.
func (r *Redactor) needsFullLook(line []byte, hides bool) bool {
	return len(r.spec.Regex) > 0 || hides || r.literalIn(line)
}

// learnAccount picks the email and organization out of an initialize
// response so that they are removed everywhere from now on.
func (r *Redactor) learnAccount(line []byte) {
	if !protocol.MayBeType(line, "control_response") || !hasAccountObject(line) {
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
			r.LearnAccount(s, "")
		case strings.Contains(lk, "organization") || strings.Contains(lk, "org"):
			r.LearnAccount("", s)
		}
	}
}

// jsonStrings applies the text redactions inside every JSON string token
// (keys included) and splices changed strings back in.
//
// When the hints can decide (needsFullLook is false), only strings that
// hold a hint are looked at, with only the patterns of their hints (of
// those in found, the patterns the line holds hints of).
func (r *Redactor) jsonStrings(line []byte, hides bool, found uint64, glHits []glHit) []byte {
	var occ []hintOccurrence
	fast := !r.needsFullLook(line, hides)
	if fast && glHits == nil && r.gl != nil {
		glHits = r.gl.hits(line, nil)
	}
	if fast {
		occ = r.hints.occurrences(r.gl, line, glHits, found)
	}
	cur := stringCursor{occ: occ, hits: glHits}
	// decBuf holds the string decodeWithHits decoded last; what is made
	// of it is a copy (encodeJSONString).
	decBuf := decPool.Get().(*[]byte)
	defer putDecBuf(decBuf)
	var strHits []glHit
	var out []byte // nil until something changes
	last := 0
	secretNext := false // the last string was a key that names a secret
	kn := 0             // glHits[kn:] start after the last key's start
	for i := 0; i < len(line); i++ {
		if q := bytes.IndexByte(line[i:], '"'); q < 0 {
			break
		} else {
			i += q
		}
		start := i
		escaped := false
		j := stringEnd(line, i+1, &escaped)
		if j >= len(line) {
			break
		}
		tok := line[start : j+1]
		i = j
		isKey := r.spec.Builtin && colonAfter(line, j+1)
		valueOfSecret := secretNext && !isKey
		key := tok[1 : len(tok)-1]
		if isKey && escaped {
			key = protocol.Unescape(key) // "pass\u0077ord" names a secret too
		}
		// A key that names a secret holds one of keyNameKeywords: with
		// the line's hits (fast), a key without one is passed over.
		secretNext = isKey && (!fast || escaped || r.gl == nil || keyNameHitIn(r.gl, glHits, &kn, start, j)) &&
			secretKeyName(key)
		if valueOfSecret && secretValue(tok[1:len(tok)-1]) {
			// {"password": "..."}: the name is in the key, the secret in
			// the value, two strings no pattern sees together.
			out = append(out, line[last:start]...)
			out = append(out, encodeJSONString(Placeholder("secret"))...)
			last = j + 1
			continue
		}
		only := ^uint64(0)
		scan := true
		if fast {
			only, strHits = cur.in(r, tok, start, j)
			scan = false
			if only == 0 && len(strHits) == 0 {
				continue
			}
		}
		var repl []byte
		if !escaped {
			content := tok[1 : len(tok)-1]
			red, changed := r.textChanged(content, only, strHits, scan)
			if !changed {
				continue
			}
			repl = encodeJSONString(string(red))
		} else if dec, ok := r.decodeWithHits(*decBuf, tok[1:len(tok)-1], strHits, fast); ok {
			*decBuf = dec[:0]
			red, changed := r.textChanged(dec, only, strHits, false)
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

var decPool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

func putDecBuf(b *[]byte) {
	if cap(*b) <= 1<<20 {
		decPool.Put(b)
	}
}

// stringCursor walks a line's hint occurrences and keyword hits (both by
// position) string by string, for jsonStrings.
type stringCursor struct {
	occ  []hintOccurrence
	hits []glHit
	k, g int
	buf  []glHit
}

// in returns what is inside the string token tok = line[start:j+1]: the
// patterns whose hints are (with those without hints), and the keyword
// hits some rule may match at, at positions in the string's content.
func (c *stringCursor) in(r *Redactor, tok []byte, start, j int) (uint64, []glHit) {
	for c.k < len(c.occ) && c.occ[c.k].pos <= start {
		c.k++
	}
	only := r.hints.always
	for m := c.k; m < len(c.occ) && c.occ[m].pos < j; m++ {
		if c.occ[m].end <= j {
			only |= c.occ[m].pattern
		}
	}
	for c.g < len(c.hits) && c.hits[c.g].pos <= start {
		c.g++
	}
	c.buf = c.buf[:0]
	for m := c.g; m < len(c.hits) && c.hits[m].pos < j; m++ {
		if h := c.hits[m]; h.end <= j {
			c.buf = append(c.buf, glHit{h.pos - start - 1, h.end - start - 1, h.kw})
		}
	}
	if r.gl != nil {
		c.buf = r.gl.viable(tok[1:len(tok)-1], c.buf)
	}
	return only, c.buf
}

// keyNameHitIn reports whether one of keyNameKeywords is a hit inside
// the string token line[start:j+1]; hits are by position, and *k moves
// past those that start at start or before it.
func keyNameHitIn(e *glEngine, hits []glHit, k *int, start, j int) bool {
	for *k < len(hits) && hits[*k].pos <= start {
		*k++
	}
	for m := *k; m < len(hits) && hits[m].pos < j; m++ {
		if h := hits[m]; h.end <= j && e.keyName[h.kw] {
			return true
		}
	}
	return false
}

// stringEnd is the index of the '"' that ends the JSON string whose
// content starts at line[i] (len(line) when none does); escaped is set
// when the string holds a backslash.
func stringEnd(line []byte, i int, escaped *bool) int {
	for i < len(line) {
		q := bytes.IndexByte(line[i:], '"')
		if q < 0 {
			return len(line)
		}
		end := i + q
		if bytes.IndexByte(line[i:end], '\\') < 0 {
			return end
		}
		*escaped = true
		// Count the backslashes before the quote: an odd run escapes it.
		n := 0
		for k := end - 1; k >= i && line[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return end
		}
		i = end + 1
	}
	return len(line)
}

// decodeWithHits decodes a string's content when its escapes are simple
// ones and the hints decided which patterns to try (fast): the keywords
// found in the raw line then stand where they are in the decoded text,
// and the automaton need not read it again. ok is false otherwise.
//
// dec is decoded into buf (which the caller may reuse once it is done
// with dec).
func (r *Redactor) decodeWithHits(buf, content []byte, hits []glHit, fast bool) ([]byte, bool) {
	if !fast {
		return nil, false
	}
	dec, ok := unescapeSimple(buf, content, hits)
	if !ok || protocol.HidesText(dec) {
		// Escapes inside the text (JSON in a string): String looks at
		// it decoded once more.
		return nil, false
	}
	return dec, true
}

// secretKeyName reports whether a JSON key names a secret: it is or ends
// in password, passwd, secret, token, api key, access key, private key,
// auth key or credentials (db_password, clientSecret, AUTH_TOKEN); the
// value of such a key goes whole. Suffixes compared by hand: this runs on
// every key of a line that is looked at.
func secretKeyName(k []byte) bool {
	if len(k) < 3 {
		return false
	}
	if len(k) <= len("seed_phrase") { // the longest of secretKeyExact
		for _, w := range secretKeyExact {
			if len(k) == len(w) && asciiEqualFold(k, w) {
				return true
			}
		}
	}
	// Only the names that end in k's last letter (in lower case) are
	// compared.
	last := k[len(k)-1] | 0x20
	for _, suf := range secretKeySuffixes {
		if suf[len(suf)-1] == last && len(k) >= len(suf) && asciiEqualFold(k[len(k)-len(suf):], suf) {
			return true
		}
	}
	for _, words := range secretKeyWords {
		if words[len(words)-1] == last && endsInWords(k, words) {
			return true
		}
	}
	return false
}

// secretKeyWords are names of two words, which a key may join with '_'
// or '-' (api_key, API-KEY, apiKey, pass_phrase).
var secretKeyWords = []string{"api key", "access key", "private key", "auth key", "secret key", "client key", "key data", "pass phrase"}

// secretKeyExact are keys whose value goes whole, named so exactly: a
// docker config.json or .npmrc auth (base64 of user:password), a pwd, a
// passphrase, a wallet's mnemonic, a cookie, a session.
var secretKeyExact = []string{"auth", "_auth", "pwd", "passphrase", "mnemonic", "cookie", "session", "seed_phrase"}

// endsInWords reports whether k ends in the lower-case words (separated
// by a space), in any letter case, with any run of '_' and '-' (or
// nothing) between them.
func endsInWords(k []byte, words string) bool {
	i := len(k) - 1
	for j := len(words) - 1; j >= 0; j-- {
		if words[j] == ' ' {
			for i >= 0 && (k[i] == '_' || k[i] == '-') {
				i--
			}
			continue
		}
		if i < 0 || lower(k[i]) != words[j] {
			return false
		}
		i--
	}
	return true
}

var secretKeySuffixes = []string{"password", "passwd", "secret", "token", "credential", "credentials"}

// keyNameKeywords: every key secretKeyName takes holds one of them
// (TestKeyNameKeywords): they are keywords of the automaton too, so
// that a line none of whose keys names a secret can be cleared from the
// automaton's hits (glEngine.mayFind).
var keyNameKeywords = []string{"auth", "pwd", "passphrase", "mnemonic", "cookie", "session", "seed_phrase",
	"password", "passwd", "secret", "token", "credential", "key", "phrase"}

// secretValue: a value worth removing under a secret's name: not a
// reference ($VAR, {{...}}), not already redacted, not a word too short
// to be a secret.
func secretValue(v []byte) bool {
	if len(v) < 4 || v[0] == '$' || v[0] == '{' || bytes.HasPrefix(v, []byte(placeholderPrefix)) {
		return false
	}
	return true
}

// colonAfter reports whether the next byte after i that is not JSON white
// space is ':' (the string before i was a key).
func colonAfter(line []byte, i int) bool {
	for ; i < len(line); i++ {
		if !isJSONSpace(line[i]) {
			return line[i] == ':'
		}
	}
	return false
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

// replaceMatches replaces every match of p in b by p's placeholder (only
// the first capture group's text when the pattern has one, so that the
// name in NAME=secret stays). A match that is a placeholder already is
// left alone. It returns b itself and false when nothing was replaced.
func replaceMatches(p pattern, b []byte) ([]byte, bool) {
	ms := p.re.FindAllSubmatchIndex(b, -1)
	if ms == nil {
		return b, false
	}
	ph := []byte(Placeholder(p.kind))
	var out []byte
	last := 0
	for _, m := range ms {
		start, end := m[0], m[1]
		if len(m) >= 4 && m[2] >= 0 {
			start, end = m[2], m[3]
		}
		if bytes.HasPrefix(b[start:], []byte(placeholderPrefix)) || start < last {
			continue
		}
		if p.kind == "secret" && codeValue(b, start, end) {
			continue
		}
		out = append(out, b[last:start]...)
		out = append(out, ph...)
		last = end
	}
	if out == nil {
		return b, false
	}
	return append(out, b[last:]...), true
}

// codeValue reports whether the value b[start:end] of an assignment
// (NAME = value, "name": value) is code or configuration rather than a
// secret: an unquoted identifier or member access (password: string,
// "password": password, "X-Api-Key": API_KEY, key := deriveKey), or a
// short number (TOKEN_TTL: 3600). A quoted value of letters is taken
// for a secret.
func codeValue(b []byte, start, end int) bool {
	v := b[start:end]
	digits := true
	for _, c := range v {
		if c < '0' || c > '9' {
			digits = false
			break
		}
	}
	if digits {
		return len(v) <= 8
	}
	if start > 0 && (b[start-1] == '"' || b[start-1] == '\'' || b[start-1] == '`') {
		return false
	}
	if len(v) == 0 || !(v[0] == '_' || v[0]|0x20 >= 'a' && v[0]|0x20 <= 'z') {
		return false
	}
	for _, c := range v {
		if !(c == '_' || c == '.' || c|0x20 >= 'a' && c|0x20 <= 'z') {
			return false
		}
	}
	return true
}

// indexFold is indexAnchored ignoring the case of ASCII letters.
func indexFold(b, needle []byte, k int) int {
	lo, up := lower(needle[k]), upper(needle[k])
	best := -1
	for n, c := range [2]byte{lo, up} {
		if n == 1 && up == lo {
			break
		}
		for i := k; i < len(b); {
			j := bytes.IndexByte(b[i:], c)
			if j < 0 {
				break
			}
			start := i + j - k
			if best >= 0 && start >= best || start+len(needle) > len(b) {
				break
			}
			if start >= 0 && bytes.EqualFold(b[start:start+len(needle)], needle) {
				best = start
				break
			}
			i += j + 1
		}
	}
	return best
}

// AccountFromConfig returns the account email and organization named by
// claude's configuration file (~/.claude.json, or .claude.json in
// $CLAUDE_CONFIG_DIR: its "oauthAccount"), "" for what it does not name.
func AccountFromConfig(data []byte) (email, org string) {
	var v struct {
		OAuthAccount struct {
			Email string `json:"emailAddress"`
			Org   string `json:"organizationName"`
		} `json:"oauthAccount"`
	}
	if json.Unmarshal(data, &v) != nil {
		return "", ""
	}
	return v.OAuthAccount.Email, v.OAuthAccount.Org
}
