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
	prefix bool   // legacy ":*": any words may follow
	home   string // what ~/ in an operand is, for deny and ask rules
}

type ptok struct {
	lit  string   // the word, for tokens without wildcards
	glob []string // the literal pieces between the stars of a word with stars inside
	star bool     // a lone unquoted *
}

func compileBashPattern(spec, home string) (*bashPattern, error) {
	p := &bashPattern{home: home}
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

// match matches the words of one command form. A deny or ask rule
// (conservative) matches as the words are written or as the system would
// take them (matchLoose).
func (p *bashPattern) match(words []shWord, mode matchMode) bool {
	return p.matchWritten(words, mode) || mode == conservative && p.matchLoose(words)
}

// matchWritten matches the words as written (a deny or ask rule's command
// name also by path and in any case).
func (p *bashPattern) matchWritten(words []shWord, mode matchMode) bool {
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
	if !t.matchWord(w.text, i == 0 && mode == conservative) {
		return false
	}
	return rec(i+1, j+1)
}

// matchWord compares one literal word. A deny or ask rule's command name
// (cmd) also matches when run by path (/bin/rm for rm) and in another case
// (RM runs rm from a case-insensitive filesystem, as macOS's is).
func (t ptok) matchWord(s string, cmd bool) bool {
	if t.matchOne(s) {
		return true
	}
	if !cmd {
		return false
	}
	if strings.Contains(s, "/") {
		s = path.Base(s)
		if t.matchOne(s) {
			return true
		}
	}
	if t.glob == nil && strings.Contains(t.lit, "/") {
		// A rule naming /bin/rm holds for rm and /usr/bin/rm too.
		t = ptok{lit: path.Base(t.lit)}
	}
	return t.fold().matchOne(foldLower(s))
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
