package redact

import (
	"bytes"
	"encoding/binary"
	"math"
	"regexp"
	"regexp/syntax"
	"sort"
	"strings"
	"sync"

	"github.com/coregx/ahocorasick"
)

// glEngine runs gitleaks' rules (gitleaks_rules.go) as gitleaks runs
// them, with what a stream allows: one Aho-Corasick automaton holds the
// keywords of every rule (lower case, matched in any case); a rule's
// regexp runs only where one of its keywords is, on a window around it;
// a finding counts when its secret's Shannon entropy is above the rule's
// threshold and no allowlist (the rule's, or the global ones) allows it.
type glEngine struct {
	rules []glCompiled
	ac    *ahocorasick.Automaton
	// byKeyword[k] are the rules (indices into rules) with keyword k.
	byKeyword [][]int
	// follow[k][n], when set, holds the bytes that can follow keyword k
	// in a match of rule byKeyword[k][n]: the rule's regexp starts with
	// the keyword (followSet).
	follow [][]*follow
	// hintsByKw[k] are the hints of builtinPatterns that are keyword k
	// (in lower case): the pattern bits are builtinPatterns' indices.
	hintsByKw [][]anchoredHint
	// keyName[k]: keyword k is one of keyNameKeywords.
	keyName []bool
	global  []glAllowCompiled
}

type glCompiled struct {
	id      string
	re      *regexp.Regexp
	group   int
	entropy float64
	allow   []glAllowCompiled
	// assign: the regexp is gitleaks' NAME = value template (its
	// semi-generic rules): a name, up to 20 bytes of [ \t\w.-], up to 3
	// of [\s'"], then an operator. A keyword with no operator after such
	// bytes is no match's name (operatorAfter).
	assign bool
	code   bool
}

// assignTemplate is the part of gitleaks' semi-generic regexps between
// the name and the value.
const assignTemplate = `(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)`

type glAllowCompiled struct {
	and bool
	// never: an AND allowlist that also needs a path or a commit, which a
	// recording has not: it allows nothing.
	never     bool
	target    string
	regexes   []*regexp.Regexp
	stopwords []string
}

// GitleaksSkipped are the rules of gitleaks' set that agentjq does not
// run, and why.
func GitleaksSkipped() map[string]string {
	out := map[string]string{}
	for _, r := range gitleaksRules {
		switch {
		case r.path != "":
			out[r.id] = "applies to files by path (" + r.path + "); a recording has no path"
		case r.regex == "":
			out[r.id] = "has no regexp"
		case len(r.required) > 0:
			out[r.id] = "a composite rule"
		}
	}
	return out
}

// GitleaksRuleIDs are the ids of the gitleaks rules agentjq runs.
func GitleaksRuleIDs() []string {
	skip := GitleaksSkipped()
	var ids []string
	for _, r := range gitleaksRules {
		if _, ok := skip[r.id]; !ok {
			ids = append(ids, r.id)
		}
	}
	return ids
}

var (
	glOnce   sync.Once
	glShared *glEngine
)

// gitleaks returns the engine, compiled on first use (some 200 regexps).
func gitleaks() *glEngine {
	glOnce.Do(func() { glShared = newGLEngine() })
	return glShared
}

func newGLEngine() *glEngine {
	e := &glEngine{}
	skip := GitleaksSkipped()
	kwIndex := map[string]int{}
	var keywords []string
	// index is a keyword's place in the automaton, every per-keyword
	// table grown with it.
	index := func(k string) int {
		n, ok := kwIndex[k]
		if !ok {
			n = len(keywords)
			kwIndex[k] = n
			keywords = append(keywords, k)
			e.byKeyword = append(e.byKeyword, nil)
			e.follow = append(e.follow, nil)
			e.hintsByKw = append(e.hintsByKw, nil)
			e.keyName = append(e.keyName, false)
		}
		return n
	}
	for _, r := range append(append([]glRule(nil), gitleaksRules...), agentjqRules...) {
		if _, ok := skip[r.id]; ok && r.path != "" || r.regex == "" {
			continue
		}
		c := glCompiled{id: r.id, re: regexp.MustCompile(r.regex), group: r.group, entropy: r.entropy,
			assign: r.assign || strings.Contains(r.regex, assignTemplate), code: r.code}
		for _, a := range r.allow {
			c.allow = append(c.allow, compileAllow(a))
		}
		i := len(e.rules)
		e.rules = append(e.rules, c)
		for _, k := range r.keywords {
			n := index(k)
			e.byKeyword[n] = append(e.byKeyword[n], i)
			e.follow[n] = append(e.follow[n], followSet(r.regex, k, r.keywords...))
		}
	}
	for _, a := range gitleaksGlobalAllow {
		e.global = append(e.global, compileAllow(a))
	}
	for i, p := range builtinPatterns {
		for _, x := range p.hints {
			k := strings.ToLower(x)
			n := index(k)
			// Only a case-insensitive pattern's lower-case hints match in
			// any case.
			fold := strings.HasPrefix(p.re.String(), "(?i)") && k == x
			e.hintsByKw[n] = append(e.hintsByKw[n], anchoredHint{hint: x, fold: fold, next: p.next, also: p.also, pattern: 1 << uint(i)})
		}
	}
	for _, k := range keyNameKeywords {
		e.keyName[index(k)] = true
	}
	ac, err := ahocorasick.NewBuilder().AddStrings(keywords).Build()
	if err != nil {
		panic("redact: gitleaks' keywords: " + err.Error())
	}
	e.ac = ac
	return e
}

func compileAllow(a glAllow) glAllowCompiled {
	c := glAllowCompiled{and: a.and, target: a.target, stopwords: a.stopwords}
	c.never = a.and && (a.paths > 0 || a.commits > 0)
	for _, s := range a.regexes {
		c.regexes = append(c.regexes, regexp.MustCompile(s))
	}
	return c
}

// glHit is an occurrence of a keyword: b[pos:end] is keyword kw.
type glHit struct {
	pos, end int
	kw       int
}

// hits lists every occurrence of every keyword in b, overlapping ones
// included, by position (of their start).
//
// The keywords are lower case and so is the text the automaton reads: b
// is lowered into a buffer first (ASCII letters only, as gitleaks
// lowers its fragments for its keyword pass; no keyword has another).
func (e *glEngine) hits(b []byte, into []glHit) []glHit {
	buf := lowerPool.Get().(*[]byte)
	low := lowerASCII((*buf)[:0], b)
	n := len(into)
	for _, m := range e.ac.FindAllOverlapping(low) {
		into = append(into, glHit{m.Start, m.End, m.PatternID})
	}
	// The automaton reports by end; callers walk by start. The hits are
	// nearly in order already (insertion sort).
	for i := n + 1; i < len(into); i++ {
		for j := i; j > n && into[j].pos < into[j-1].pos; j-- {
			into[j], into[j-1] = into[j-1], into[j]
		}
	}
	if cap(low) <= 1<<20 {
		*buf = low
		lowerPool.Put(buf)
	}
	return into
}

var lowerPool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// lowerASCII appends b with its ASCII letters in lower case to dst,
// eight bytes at a time: in each byte of a word, bit 7 of ge is set when
// the byte's low seven bits are 'A' or more, of gt when they are above
// 'Z'; a byte below 0x80 where ge and gt differ is an upper-case letter,
// and gets its 0x20 bit.
func lowerASCII(dst, b []byte) []byte {
	n := len(dst)
	dst = append(dst, b...)
	low := dst[n:]
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(low); i += 8 {
		w := binary.LittleEndian.Uint64(low[i:])
		seven := w &^ highs
		ge := seven + ones*(0x80-'A')
		gt := seven + ones*(0x7f-'Z')
		upper := (ge ^ gt) &^ w & highs
		binary.LittleEndian.PutUint64(low[i:], w|upper>>2)
	}
	for ; i < len(low); i++ {
		if c := low[i]; c-'A' < 26 {
			low[i] = c + ('a' - 'A')
		}
	}
	return dst
}

// The window a rule's regexp sees around a keyword: glBefore bytes
// before it (gitleaks' rules put at most 50 bytes of a name before their
// keyword), glAfter after it (a name's tail, an operator, quotes and a
// value), each widened to the end of the word or token it cuts, by up to
// glTokenSlack bytes more: a regexp then never sees a token cut short.
const (
	glBefore     = 64
	glAfter      = 320
	glTokenSlack = 4096
)

type glSpan struct {
	start, end int
	kind       string
}

// find returns the findings of the rules whose keywords are at hits in b
// (hits: positions in b).
func (e *glEngine) find(b []byte, hits []glHit) []glSpan {
	if len(hits) == 0 {
		return nil
	}
	type win struct{ rule, lo, hi int }
	var wins []win
	for _, h := range hits {
		lo, hi := windowAround(b, h.pos, h.end)
		op := -1 // operatorAfter, once asked
		for _, r := range e.byKeyword[h.kw] {
			if e.rules[r].assign {
				if op < 0 {
					op = 0
					if operatorAfter(b, h.end) {
						op = 1
					}
				}
				if op == 0 {
					continue
				}
			}
			wins = append(wins, win{r, lo, hi})
		}
	}
	sort.Slice(wins, func(i, j int) bool {
		if wins[i].rule != wins[j].rule {
			return wins[i].rule < wins[j].rule
		}
		return wins[i].lo < wins[j].lo
	})
	var spans []glSpan
	for i := 0; i < len(wins); {
		w := wins[i]
		j := i + 1
		for ; j < len(wins) && wins[j].rule == w.rule && wins[j].lo <= w.hi; j++ {
			w.hi = max(w.hi, wins[j].hi)
		}
		i = j
		spans = e.rules[w.rule].find(b, w.lo, w.hi, e.global, spans)
	}
	return spans
}

// windowAround is the window of text a rule's regexp sees around a
// keyword at b[pos:end].
func windowAround(b []byte, pos, end int) (lo, hi int) {
	lo, hi = max(0, pos-glBefore), min(len(b), end+glAfter)
	for n := 0; lo > 0 && n < glTokenSlack && tokenByte(b[lo-1]); n++ {
		lo--
	}
	for n := 0; hi < len(b) && n < glTokenSlack && tokenByte(b[hi]); n++ {
		hi++
	}
	return lo, hi
}

// tokenByte: a byte a token or a word is made of (base64 and URL-safe
// base64 included).
func tokenByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '_' || c == '-' || c == '+' || c == '/' || c == '=' || c == '.'
}

// operatorAfter reports whether an operator of gitleaks' NAME = value
// template (=, >, :, |, ?, ,) follows b[:end] past bytes that may stand
// between a name and it ([ \t\w.-] and [\s'"]), or a backslash: b may
// be a JSON string's raw content, where \" and \n stand for a quote
// and a new line.
func operatorAfter(b []byte, end int) bool {
	for i := end; i < len(b) && i < end+64; i++ {
		switch c := b[i]; {
		case c == '=' || c == '>' || c == ':' || c == '|' || c == '?' || c == ',':
			return true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' ||
			c == '\'' || c == '"' || c == '.' || c == '-' || c == '_' || c == '\\' ||
			c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9':
		default:
			return false
		}
	}
	return false
}

func (r *glCompiled) find(b []byte, lo, hi int, global []glAllowCompiled, spans []glSpan) []glSpan {
	text := b[lo:hi]
	for _, m := range r.re.FindAllSubmatchIndex(text, -1) {
		s, t := m[0], m[1]
		switch {
		case r.group > 0 && 2*r.group+1 < len(m):
			s, t = m[2*r.group], m[2*r.group+1]
		case r.group == 0:
			for g := 1; 2*g+1 < len(m); g++ {
				if m[2*g] >= 0 && m[2*g+1] > m[2*g] {
					s, t = m[2*g], m[2*g+1]
					break
				}
			}
		}
		if s < 0 || t <= s {
			continue
		}
		secret := text[s:t]
		if bytes.HasPrefix(secret, []byte(placeholderPrefix)) || bytes.Contains(secret, []byte(placeholderPrefix)) {
			continue
		}
		if r.entropy != 0 && shannon(secret) <= r.entropy || r.code && codeValue(text, s, t) {
			continue
		}
		match := bytes.Trim(text[m[0]:m[1]], "\n")
		line := lineAround(text, m[0], m[1])
		if allowed(global, secret, match, line) || allowed(r.allow, secret, match, line) {
			continue
		}
		spans = append(spans, glSpan{lo + s, lo + t, r.id})
	}
	return spans
}

// lineAround is the line of text that holds text[s:t] (and what it spans).
func lineAround(text []byte, s, t int) []byte {
	a := bytes.LastIndexByte(text[:s], '\n') + 1
	z := bytes.IndexByte(text[t:], '\n')
	if z < 0 {
		return text[a:]
	}
	return text[a : t+z]
}

// allowed reports whether one of the allowlists allows the finding, as
// gitleaks' checkFindingAllowed decides it without a path or a commit.
func allowed(lists []glAllowCompiled, secret, match, line []byte) bool {
	for i := range lists {
		a := &lists[i]
		if a.never {
			continue
		}
		target := secret
		switch a.target {
		case "match":
			target = match
		case "line":
			target = line
		}
		re := anyMatch(a.regexes, target)
		stop := a.stopwords != nil && hasStopword(a.stopwords, secret)
		if a.and {
			// Every criterion the list has must hold.
			if (len(a.regexes) == 0 || re) && (a.stopwords == nil || stop) && (len(a.regexes) > 0 || a.stopwords != nil) {
				return true
			}
			continue
		}
		if re || stop {
			return true
		}
	}
	return false
}

func anyMatch(res []*regexp.Regexp, b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, re := range res {
		if re.Match(b) {
			return true
		}
	}
	return false
}

// hasStopword reports whether the secret, in lower case, holds a stop
// word.
func hasStopword(words []string, secret []byte) bool {
	low := bytes.ToLower(secret)
	for _, w := range words {
		if bytes.Contains(low, []byte(w)) {
			return true
		}
	}
	return false
}

// shannon is the Shannon entropy of b's bytes, in bits, as gitleaks
// computes it.
func shannon(b []byte) float64 {
	if len(b) == 0 {
		return 0
	}
	var n [256]int
	for _, c := range b {
		n[c]++
	}
	e := 0.0
	l := float64(len(b))
	for _, k := range n {
		if k > 0 {
			p := float64(k) / l
			e -= p * math.Log2(p)
		}
	}
	return e
}

// replaceSpans replaces the spans of b (any order, overlaps resolved to
// the earliest, then longest) by their placeholders.
func replaceSpans(b []byte, spans []glSpan) ([]byte, bool) {
	if len(spans) == 0 {
		return b, false
	}
	sort.Slice(spans, func(i, j int) bool {
		if spans[i].start != spans[j].start {
			return spans[i].start < spans[j].start
		}
		return spans[i].end > spans[j].end
	})
	var out []byte
	last := 0
	for _, s := range spans {
		if s.start < last {
			if s.end > last {
				// Overlapping a removed one: remove the rest too.
				last = s.end
			}
			continue
		}
		out = append(out, b[last:s.start]...)
		out = append(out, Placeholder(s.kind)...)
		last = s.end
	}
	return append(out, b[last:]...), true
}

// viable keeps the hits in b that some rule may match at: a hint of a
// built-in pattern, or a keyword of a rule whose regexp may match there:
// an operator follows it when the rule is an assignment's, and a byte
// that may follow it when the regexp starts with it.
func (e *glEngine) viable(b []byte, hits []glHit) []glHit {
	keep := hits[:0]
	for _, h := range hits {
		if e.hintAt(b, h) {
			keep = append(keep, h)
			continue
		}
		for n, r := range e.byKeyword[h.kw] {
			if e.rules[r].assign && !operatorAfter(b, h.end) {
				continue
			}
			if f := e.follow[h.kw][n]; f != nil && !f.fits(b, h.pos, h.end) {
				continue
			}
			keep = append(keep, h)
			break
		}
	}
	return keep
}

// mayFind reports whether a rule may match at one of the hits in the
// JSON line b (hits: positions in b), or a key there may name a secret
// (secretKeyName): what viable keeps of a string's hits, with the bytes
// of the line for those of the string. It may say true where a look at
// the strings finds nothing, never false where it finds something: an
// operator or a byte that may follow a keyword is looked for as viable
// does, but a '"' that no backslash precedes ends the string, as the
// end of its content does; a hit outside any string counts too.
func (e *glEngine) mayFind(b []byte, hits []glHit) bool {
	for _, h := range hits {
		if e.keyName[h.kw] && keyMayNameSecret(b, h) {
			return true
		}
		for n, r := range e.byKeyword[h.kw] {
			if e.rules[r].assign && !operatorInString(b, h.end) {
				continue
			}
			if f := e.follow[h.kw][n]; f != nil && (h.end < len(b) && b[h.end] == '"' || !f.fits(b, h.pos, h.end)) {
				continue
			}
			return true
		}
	}
	return false
}

// operatorInString is operatorAfter within the JSON string that holds
// b[:end]: a '"' without a backslash before it ends the search.
func operatorInString(b []byte, end int) bool {
	for i := end; i < len(b) && i < end+64; i++ {
		if b[i] == '"' && b[i-1] != '\\' {
			return operatorAfter(b[:i], end)
		}
	}
	return operatorAfter(b, end)
}

// keyMayNameSecret reports whether keyword hit h in the JSON line b ends
// a key (past letters, digits, '_' and '-': "key_data", "credentials")
// that secretKeyName takes for a secret's; a key with a backslash may.
func keyMayNameSecret(b []byte, h glHit) bool {
	j := h.end
	for j < len(b) && (wordByte(b[j]) || b[j] == '-') {
		j++
	}
	if j >= len(b) || b[j] != '"' || !colonAfter(b, j+1) {
		return false
	}
	i := bytes.LastIndexByte(b[:h.pos], '"')
	if i <= 0 || b[i-1] == '\\' || bytes.IndexByte(b[i:j], '\\') >= 0 {
		return true
	}
	return secretKeyName(b[i+1 : j])
}

// unescapeSimple decodes a JSON string's content whose escapes are all
// one-byte ones (\n, \t, \", \\, \/, \b, \f, \r), appending it to
// dst[:0], and moves hits (positions in content, by position) to
// positions in what it returns (a keyword holds no backslash: its length
// stays). ok is false when content has a \u escape (or a bad one):
// decode it another way. The runs between escapes are copied whole.
func unescapeSimple(dst, content []byte, hits []glHit) (dec []byte, ok bool) {
	dec = dst[:0]
	k := 0 // hits[k:] are not moved yet
	for i := 0; ; {
		if i >= len(content) {
			return dec, k == len(hits)
		}
		// A hit at i or before it (on an escape's second byte) stands
		// where the decoded text is now.
		for k < len(hits) && hits[k].pos <= i {
			n := hits[k].end - hits[k].pos
			hits[k].pos, hits[k].end = len(dec), len(dec)+n
			k++
		}
		end := len(content)
		if j := bytes.IndexByte(content[i:], '\\'); j >= 0 {
			end = i + j
		}
		// Hits in the run (and on the backslash that ends it) move by as
		// much as the run does.
		shift := len(dec) - i
		for k < len(hits) && (hits[k].pos < end || hits[k].pos == end && end < len(content)) {
			hits[k].pos += shift
			hits[k].end += shift
			k++
		}
		dec = append(dec, content[i:end]...)
		if end == len(content) {
			return dec, k == len(hits)
		}
		if end+1 >= len(content) {
			return nil, false
		}
		switch c := content[end+1]; c {
		case 'n':
			dec = append(dec, '\n')
		case 't':
			dec = append(dec, '\t')
		case 'r':
			dec = append(dec, '\r')
		case 'b':
			dec = append(dec, '\b')
		case 'f':
			dec = append(dec, '\f')
		case '"', '\\', '/':
			dec = append(dec, c)
		default:
			return nil, false
		}
		i = end + 2
	}
}

// hintAt reports whether hit h is a built-in pattern's hint, with the
// bytes around it fitting the pattern (anchoredHint.at) and the
// pattern's also in b.
func (e *glEngine) hintAt(b []byte, h glHit) bool {
	for k := range e.hintsByKw[h.kw] {
		ah := &e.hintsByKw[h.kw][k]
		if ah.at(b, h.pos, false) && (ah.also == "" || bytes.Contains(b, []byte(ah.also))) {
			return true
		}
	}
	return false
}

// follow is what a regexp that starts with a keyword says of the bytes
// around it: next holds those that may follow it; wordStart, that a \b
// stands before it.
type follow struct {
	next      [256]bool
	wordStart bool
}

// fits reports whether the keyword at b[pos:end] may start a match. A
// backslash may follow it, and a letter after a backslash precede it: b
// may be a JSON string's raw content, whose escapes stand for other
// bytes.
func (f *follow) fits(b []byte, pos, end int) bool {
	if end >= len(b) || !f.next[b[end]] && b[end] != '\\' {
		return false
	}
	if f.wordStart && pos > 0 && wordByte(b[pos-1]) && (pos < 2 || b[pos-2] != '\\') {
		return false
	}
	return true
}

func wordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// followSet returns the bytes that can follow keyword kw where a match
// of the regexp expr starts with it: expr, past empty-width assertions
// (\b, ^) and capture groups, is a literal that starts with kw (in any
// case when kw is), followed by more of the literal or by a repeat, at
// least once, of a character class. nil when expr is not of that
// form (the keyword then says nothing of what follows it). Wherever a
// match starts, the keyword stands there, followed by one of these
// bytes: other occurrences of the keyword may be passed over.
//
// keywords are the rule's (kw among them): expr may also start with an
// alternation whose branches each start with a literal that starts with
// one of them (followAlternate).
func followSet(expr, kw string, keywords ...string) *follow {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil
	}
	return followSeq(frontSeq(re.Simplify()), kw, false, keywords)
}

// stripFront drops what a sequence starts with that matches no byte
// (empty-width assertions) and opens captures and concatenations;
// wordStart is set when a \b is dropped.
func stripFront(seq []*syntax.Regexp, wordStart bool) ([]*syntax.Regexp, bool) {
	for len(seq) > 0 {
		switch seq[0].Op {
		case syntax.OpWordBoundary:
			wordStart = true
			seq = seq[1:]
			continue
		case syntax.OpBeginText, syntax.OpBeginLine, syntax.OpEmptyMatch:
			seq = seq[1:]
			continue
		case syntax.OpCapture, syntax.OpConcat:
			seq = append(frontSeq(seq[0]), seq[1:]...)
			continue
		}
		break
	}
	return seq, wordStart
}

// followAlternate is followSet for a regexp that starts with the
// alternation alt, then rest: every match starts with one of its
// branches and what follows it (a keyword may run on past a branch:
// "ext_" of (?:sc|ext)_). A branch that starts with kw adds what may
// follow kw in it (it must say, by itself); one that starts with
// another of the rule's keywords adds nothing: where a match starts
// with it, that keyword stands, and its own hit has the rule look there.
// A branch that starts with no keyword makes it nil.
func followAlternate(alt *syntax.Regexp, rest []*syntax.Regexp, kw string, wordStart bool, keywords []string) *follow {
	var out *follow
	for _, sub := range alt.Sub {
		seq := append(frontSeq(sub), rest...)
		bseq, _ := stripFront(seq, false)
		bseq = joinLiterals(bseq)
		if len(bseq) == 0 || bseq[0].Op != syntax.OpLiteral {
			return nil
		}
		lit := string(bseq[0].Rune)
		if len(lit) >= len(kw) && strings.EqualFold(lit[:len(kw)], kw) {
			f := followSeq(seq, kw, wordStart, nil)
			if f == nil {
				return nil
			}
			if out == nil {
				out = &follow{wordStart: true}
			}
			out.wordStart = out.wordStart && f.wordStart
			for c, ok := range f.next {
				out.next[c] = out.next[c] || ok
			}
			continue
		}
		other := false
		for _, k := range keywords {
			other = other || len(lit) >= len(k) && k != "" && strings.EqualFold(lit[:len(k)], k)
		}
		if !other {
			return nil
		}
	}
	return out
}

func followSeq(seq []*syntax.Regexp, kw string, wordStart bool, keywords []string) *follow {
	seq, wordStart = stripFront(seq, wordStart)
	if len(seq) > 0 && seq[0].Op == syntax.OpAlternate && len(keywords) > 0 {
		return followAlternate(seq[0], seq[1:], kw, wordStart, keywords)
	}
	seq = joinLiterals(seq)
	if len(seq) == 0 || seq[0].Op != syntax.OpLiteral {
		return nil
	}
	lit, fold := string(seq[0].Rune), seq[0].Flags&syntax.FoldCase != 0
	if len(lit) < len(kw) || !strings.EqualFold(lit[:len(kw)], kw) || lit != strings.ToValidUTF8(lit, "") {
		return nil
	}
	fw := &follow{wordStart: wordStart && wordByte(lit[0])}
	f := &fw.next
	if len(lit) > len(kw) {
		c := lit[len(kw)]
		f[c] = true
		if fold {
			f[lower(c)], f[upper(c)] = true, true
		}
		return fw
	}
	if len(seq) < 2 {
		return nil
	}
	// Simplify writes x{n,} as n copies of x (and a star): open them.
	next := frontSeq(seq[1])[0]
	switch next.Op {
	case syntax.OpPlus:
		next = next.Sub[0]
	case syntax.OpRepeat:
		if next.Min < 1 {
			return nil
		}
		next = next.Sub[0]
	}
	switch next.Op {
	case syntax.OpCharClass:
		for i := 0; i+1 < len(next.Rune); i += 2 {
			lo, hi := next.Rune[i], next.Rune[i+1]
			if hi > 0x7f {
				// A rune past ASCII ((?i) adds ſ and the Kelvin sign to
				// s and k): any byte of its UTF-8 may follow.
				for c := 0x80; c < 0x100; c++ {
					f[c] = true
				}
				hi = 0x7f
			}
			for c := lo; c <= hi; c++ {
				f[c] = true
			}
		}
	case syntax.OpLiteral:
		c := next.Rune[0]
		if c > 0x7f {
			return nil
		}
		f[c] = true
		if next.Flags&syntax.FoldCase != 0 {
			f[lower(byte(c))], f[upper(byte(c))] = true, true
		}
	default:
		return nil
	}
	return fw
}

// joinLiterals makes one literal of the literals a sequence starts
// with, as long as they fold case alike (an alternation's branch and
// the literal after it), opening concatenations between them.
func joinLiterals(seq []*syntax.Regexp) []*syntax.Regexp {
	if len(seq) < 2 || seq[0].Op != syntax.OpLiteral {
		return seq
	}
	joined := *seq[0]
	joined.Rune = append([]rune(nil), seq[0].Rune...)
	seq = seq[1:]
	for len(seq) > 0 {
		if seq[0].Op == syntax.OpConcat {
			seq = append(frontSeq(seq[0]), seq[1:]...)
			continue
		}
		if seq[0].Op != syntax.OpLiteral || seq[0].Flags&syntax.FoldCase != joined.Flags&syntax.FoldCase {
			break
		}
		joined.Rune = append(joined.Rune, seq[0].Rune...)
		seq = seq[1:]
	}
	return append([]*syntax.Regexp{&joined}, seq...)
}

// frontSeq is the sequence a regexp starts with: a concatenation's
// parts, with a capture group or a concatenation first opened.
func frontSeq(re *syntax.Regexp) []*syntax.Regexp {
	switch re.Op {
	case syntax.OpCapture:
		return frontSeq(re.Sub[0])
	case syntax.OpConcat:
		if len(re.Sub) == 0 {
			return nil
		}
		return append(frontSeq(re.Sub[0]), re.Sub[1:]...)
	}
	return []*syntax.Regexp{re}
}
