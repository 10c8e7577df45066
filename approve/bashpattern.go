package approve

import (
	"errors"
	"path"
	"strings"
)

// bashPattern is a Bash rule's specifier, read as words:
//
//	npm run build      exactly these words
//	git:*              these words, then anything (the legacy prefix form)
//	git *              a lone * is any words: at the end zero or more
//	                   (so "git" alone matches), elsewhere one or more
//	*.sh, --out=*      a * inside a word matches within that word
//	\*  '*'            a literal star
//
// Words are compared after quote removal, so quoting cannot smuggle a
// different command past a rule.
type bashPattern struct {
	toks   []ptok
	prefix bool // legacy ":*": any words may follow
}

type ptok struct {
	lit  string   // the word, for tokens without wildcards
	glob []string // the literal pieces between the stars of a word with stars inside
	star bool     // a lone unquoted *
}

func compileBashPattern(spec string) (*bashPattern, error) {
	p := &bashPattern{}
	s := spec
	if strings.HasSuffix(s, ":*") {
		p.prefix = true
		s = strings.TrimSuffix(s, ":*")
	}
	words, err := tokenizeRule(s)
	if err != nil {
		return nil, err
	}
	if len(words) == 0 {
		return nil, errors.New("no command before \":*\"")
	}
	p.toks = words
	return p, nil
}

// tokenizeRule splits a specifier into words with shell-like quoting.
func tokenizeRule(s string) ([]ptok, error) {
	var toks []ptok
	var lit, piece strings.Builder
	var pieces []string
	inWord, hasStar, anyQuoted := false, false, false
	flush := func() {
		if !inWord {
			return
		}
		switch {
		case hasStar && !anyQuoted && lit.String() == "*":
			toks = append(toks, ptok{star: true})
		case hasStar:
			toks = append(toks, ptok{glob: append(pieces, piece.String())})
		default:
			toks = append(toks, ptok{lit: lit.String()})
		}
		lit.Reset()
		piece.Reset()
		pieces = nil
		inWord, hasStar, anyQuoted = false, false, false
	}
	addLit := func(c byte) {
		lit.WriteByte(c)
		piece.WriteByte(c)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			flush()
		case c == '\\':
			inWord = true
			if i+1 < len(s) {
				i++
				addLit(s[i])
			}
		case c == '\'' || c == '"':
			inWord, anyQuoted = true, true
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 {
				return nil, errors.New("unterminated quote")
			}
			for k := i + 1; k < i+1+j; k++ {
				addLit(s[k])
			}
			i += j + 1
		case c == '*':
			inWord, hasStar = true, true
			lit.WriteByte('*')
			pieces = append(pieces, piece.String())
			piece.Reset()
		default:
			inWord = true
			addLit(c)
		}
	}
	flush()
	return toks, nil
}

// matchMode says how to treat words whose value is unknown. For an allow
// they match only wildcards; for a deny or ask they match anything, so
// that a rule is never dodged by hiding a word in a variable.
type matchMode int

const (
	strict       matchMode = iota // allow
	conservative                  // deny, ask
)

// match matches the words of one command form.
func (p *bashPattern) match(words []shWord, mode matchMode) bool {
	// Long commands are matched like short ones: the memo is sized to
	// them (0 unknown, 1 true, 2 false).
	cols := len(p.toks) + 1
	var small [65 * 65]int8
	memo := small[:]
	if n := (len(words) + 1) * cols; n > len(small) {
		memo = make([]int8, n)
	}
	var rec func(i, j int) bool
	rec = func(i, j int) bool {
		k := i*cols + j
		if memo[k] != 0 {
			return memo[k] == 1
		}
		r := p.step(words, i, j, mode, rec)
		memo[k] = 2
		if r {
			memo[k] = 1
		}
		return r
	}
	return rec(0, 0)
}

func (p *bashPattern) step(words []shWord, i, j int, mode matchMode, rec func(i, j int) bool) bool {
	if j == len(p.toks) {
		if p.prefix || i == len(words) {
			return true
		}
		// An unknown word may expand to nothing.
		if mode == conservative {
			for k := i; k < len(words); k++ {
				if !words[k].uncertain() {
					return false
				}
			}
			return true
		}
		return false
	}
	t := p.toks[j]
	if t.star {
		if j == len(p.toks)-1 {
			return true
		}
		for k := i + 1; k <= len(words); k++ {
			if rec(k, j+1) {
				return true
			}
		}
		return false
	}
	if i == len(words) {
		return false
	}
	w := words[i]
	if w.uncertain() {
		if mode == strict {
			return w.glob && !w.dyn && t.lit == w.text && rec(i+1, j+1)
		}
		// It may stand for any number of words, these tokens included.
		for k := j; k <= len(p.toks); k++ {
			if rec(i+1, k) {
				return true
			}
		}
		return false
	}
	if t.matchWord(w.text, i == 0, mode == conservative) && rec(i+1, j+1) {
		return true
	}
	if mode != conservative || i == 0 {
		return false
	}
	// A deny or ask rule holds with options in between that it does not
	// name (git -C . push for git push, rm -rf build for rm build): an
	// option is passed over, and the word after it, which may be its
	// value. Its short-option cluster holds with the letters in any
	// order or spread over several options (-rf: -fr, -r -f).
	if isOption(w.text) && (rec(i+1, j) || i+1 < len(words) && rec(i+2, j)) {
		return true
	}
	if letters, ok := shortCluster(foldLower(t.lit)); ok && t.glob == nil {
		var have []bool
		for k := i; k < len(words) && k < i+maxCluster && !words[k].uncertain() && isShortOptions(words[k].text); k++ {
			have = optionLetters(have, foldLower(words[k].text))
			if coversLetters(have, letters) && rec(k+1, j+1) {
				return true
			}
		}
	}
	return false
}

// maxCluster bounds how many option words one cluster of a rule is
// looked for in (a long command is matched promptly).
const maxCluster = 64

// isOption reports a word that is an option ("-x", "--name") or "--",
// the end of the options; not "-", which names stdin.
func isOption(s string) bool {
	return len(s) > 1 && s[0] == '-'
}

// isShortOptions reports a cluster of short options: -rf.
func isShortOptions(s string) bool {
	if len(s) < 2 || s[0] != '-' || s[1] == '-' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// shortCluster returns the letters of a rule word that is a cluster of
// two or more short options.
func shortCluster(s string) (string, bool) {
	if len(s) < 3 || !isShortOptions(s) {
		return "", false
	}
	return s[1:], true
}

func optionLetters(have []bool, s string) []bool {
	if have == nil {
		have = make([]bool, 128)
	}
	for i := 1; i < len(s); i++ {
		have[s[i]] = true
	}
	return have
}

func coversLetters(have []bool, letters string) bool {
	for i := 0; i < len(letters); i++ {
		if !have[letters[i]] {
			return false
		}
	}
	return true
}

// matchWord compares one literal word. For a deny or ask rule (loose) it
// also matches the word as the system would take it: a command name run by
// path (/bin/rm for rm), and any word in another case, as a
// case-insensitive filesystem (macOS's) finds the program or the file
// (RM, rm -rf BUILD, cat .ENV), and a path spelled otherwise (build/,
// ./build).
func (t ptok) matchWord(s string, first, loose bool) bool {
	if t.matchOne(s) {
		return true
	}
	if !loose {
		return false
	}
	if first && strings.Contains(s, "/") {
		s = path.Base(s)
		if t.matchOne(s) {
			return true
		}
	}
	f, fs := t.fold(), foldLower(s)
	if f.matchOne(fs) {
		return true
	}
	return t.glob == nil && !first && fs != "" && f.lit != "" && path.Clean(fs) == path.Clean(f.lit)
}

// fold is t with its literal text in foldLower.
func (t ptok) fold() ptok {
	f := ptok{lit: foldLower(t.lit)}
	for _, p := range t.glob {
		f.glob = append(f.glob, foldLower(p))
	}
	return f
}

func (t ptok) matchOne(s string) bool {
	if t.glob != nil {
		return matchPieces(t.glob, s)
	}
	return t.lit == s
}

// matchPieces matches s against literal pieces separated by stars; a star
// matches any characters, slashes and spaces included.
func matchPieces(pieces []string, s string) bool {
	first, last := pieces[0], pieces[len(pieces)-1]
	if !strings.HasPrefix(s, first) {
		return false
	}
	s = s[len(first):]
	for _, p := range pieces[1 : len(pieces)-1] {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return len(s) >= len(last) && strings.HasSuffix(s, last)
}
