package approve

import (
	"path"
	"strings"
)

// matchLoose is how a deny or ask rule matches a command besides word for
// word: as the program would take the words, so that respelling the same
// command does not dodge the rule. The rule's command name matches as in
// matchWord; then
//
//   - its options may stand anywhere among the command's options, before
//     or after the operands (getopt and git permute them), and as the
//     program would also accept them: -rf as -fr, -r -f or -vrf, --force
//     as --force=yes or an abbreviation (--forc), and a few long options
//     as the short letter they share everywhere (--force -f, --recursive
//     -r, --all -a, ...). Options are compared in their case: -D is not -d;
//   - its first operand (a subcommand such as push) is where the command's
//     first operand stands, past any word just after an option (which may
//     be that option's value: git -C . push, kubectl -n prod delete, rm -rf
//     dist build); its later operands anywhere after that;
//   - an operand matches in any case (as a case-insensitive filesystem
//     finds the file) and spelled otherwise as a path: build/, ./build,
//     ../build, /abs/path/build;
//   - words may follow what the rule names, also for a rule without :*
//     (npm publish denies npm publish --tag beta).
//
// Words known only at run time are left to the word-for-word matching,
// which lets them stand for any of the rule's words.
func (p *bashPattern) matchLoose(words []shWord) bool {
	if len(words) == 0 || len(p.toks) == 0 || p.toks[0].star || words[0].uncertain() ||
		!p.toks[0].matchWord(words[0].text, true) {
		return false
	}
	var opts []string
	var operands []operand
	afterOpt, ended := false, false
	for _, w := range words[1:] {
		if w.uncertain() {
			afterOpt = false
			continue
		}
		switch s := w.text; {
		case !ended && s == "--":
			ended, afterOpt = true, false
		case !ended && isOption(s):
			opts = append(opts, s)
			// A value glued to its option: --tag=beta, -nprod, -XDELETE.
			if _, v, ok := strings.Cut(s, "="); ok && v != "" {
				operands = append(operands, operand{v, true})
			} else if s[1] != '-' && len(s) > 2 {
				operands = append(operands, operand{s[2:], true})
			}
			afterOpt = true
		default:
			operands = append(operands, operand{s, afterOpt})
			afterOpt = false
		}
	}
	first := true
	at := 0
	for _, t := range p.toks[1:] {
		switch {
		case t.star || t.lit == "--" && t.glob == nil:
			continue
		case t.isOption():
			if !t.optionIn(opts) {
				return false
			}
		case first:
			first = false
			for ; at < len(operands) && !p.operandIs(t, operands[at].text); at++ {
				if !operands[at].afterOpt {
					return false
				}
			}
			if at == len(operands) {
				return false
			}
			at++
		default:
			for ; at < len(operands) && !p.operandIs(t, operands[at].text); at++ {
			}
			if at == len(operands) {
				return false
			}
			at++
		}
	}
	return true
}

// operand is a word of a command that is not an option, or the value
// glued to one; afterOpt: it stands just after an option, so it may be
// that option's value.
type operand struct {
	text     string
	afterOpt bool
}

// isOption reports a word that is an option: -x, --name (not - or --).
func isOption(s string) bool {
	return len(s) > 1 && s[0] == '-' && s != "--"
}

func (t ptok) isOption() bool {
	if t.glob != nil {
		return isOption(t.glob[0] + "x")
	}
	return isOption(t.lit)
}

// longSynonyms are long options spelled as one short letter by nearly
// every program that has both.
var longSynonyms = map[string]string{
	"force": "f", "recursive": "rR", "all": "a", "namespace": "n", "no-verify": "n",
	"request": "X", "interactive": "i", "delete": "d", "quiet": "q", "verbose": "v",
}

// optionIn reports whether the command's options hold the rule's option
// t, as the program would take them.
func (t ptok) optionIn(opts []string) bool {
	if t.glob != nil {
		for _, o := range opts {
			if matchPieces(t.glob, o) {
				return true
			}
		}
		return false
	}
	o := t.lit
	for _, w := range opts {
		if w == o {
			return true
		}
	}
	if name, ok := strings.CutPrefix(o, "--"); ok {
		name, _, _ = strings.Cut(name, "=")
		for _, w := range opts {
			if long, ok := strings.CutPrefix(w, "--"); ok {
				long, _, _ = strings.Cut(long, "=")
				if long == name || len(long) >= 2 && strings.HasPrefix(name, long) {
					return true
				}
			}
		}
		letters := longSynonyms[name]
		return letters != "" && anyLetter(opts, letters)
	}
	// A short option or a cluster of them (-f, -rf); longer words with
	// one dash are options of their own (find -exec, -delete).
	letters := o[1:]
	if len(letters) > 3 || !alnum(letters) {
		return false
	}
	for i := 0; i < len(letters); i++ {
		l := letters[i : i+1]
		if l == "r" || l == "R" {
			l = "rR" // recursive, to rm, cp, chmod, chown and grep alike
		}
		if !anyLetter(opts, l) && !longFor(opts, l) {
			return false
		}
	}
	return true
}

// anyLetter reports whether a cluster of short options holds one of
// letters.
func anyLetter(opts []string, letters string) bool {
	for _, w := range opts {
		if len(w) > 1 && w[0] == '-' && w[1] != '-' && strings.ContainsAny(w[1:], letters) {
			return true
		}
	}
	return false
}

// longFor reports whether a long option (or an abbreviation of one) that
// longSynonyms spells as the letter l is among opts.
func longFor(opts []string, l string) bool {
	for _, w := range opts {
		long, ok := strings.CutPrefix(w, "--")
		if !ok || len(long) < 2 {
			continue
		}
		long, _, _ = strings.Cut(long, "=")
		for name, letters := range longSynonyms {
			if strings.HasPrefix(name, long) && strings.Contains(letters, l) {
				return true
			}
		}
	}
	return false
}

func alnum(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return s != ""
}

// operandIs reports whether a command's operand s is the rule's word t:
// as written, in any case, or as the same path spelled otherwise (~/ in
// either is the home directory).
func (p *bashPattern) operandIs(t ptok, s string) bool {
	if t.sameOperand(s) {
		return true
	}
	if p.home == "" {
		return false
	}
	if rest, ok := strings.CutPrefix(s, "~/"); ok && t.sameOperand(path.Join(p.home, rest)) {
		return true
	}
	if rest, ok := strings.CutPrefix(t.lit, "~/"); ok && t.glob == nil {
		return ptok{lit: path.Join(p.home, rest)}.sameOperand(s)
	}
	return false
}

func (t ptok) sameOperand(s string) bool {
	if t.matchOne(s) {
		return true
	}
	f, fs := t.fold(), foldLower(s)
	if f.matchOne(fs) {
		return true
	}
	c := path.Clean(fs)
	if f.glob != nil {
		for i := -1; i < len(c); i++ {
			if (i < 0 || c[i] == '/') && matchPieces(f.glob, c[i+1:]) {
				return true
			}
		}
		return false
	}
	if f.lit == "" || c == "." || c == ".." || c == "/" {
		return false
	}
	l := path.Clean(f.lit)
	return c == l || strings.HasSuffix(c, "/"+l) || path.IsAbs(l) && strings.HasSuffix(l, "/"+strings.TrimLeft(c, "./"))
}
