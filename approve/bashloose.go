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
//     as --force=yes or an abbreviation (--forc), and, for the programs in
//     shortFor, a long option as its one-letter form (--force -f to rm and
//     git push). Options are compared in their case: -D is not -d;
//   - a word right after one of its options (-X DELETE, -n prod,
//     --context prod) is that option's value: it may be anywhere among the
//     command's operands and option values (-XDELETE, --context=prod);
//   - its first other operand (a subcommand such as push) is where the
//     command's first operand stands, past any word just after an option,
//     which may be that option's value (git -C . push, kubectl -n prod
//     delete, rm -rf dist build); its later operands anywhere after that;
//   - an operand matches in any case (as a case-insensitive filesystem
//     finds the file) and spelled otherwise as a path: build/, ./build,
//     ../build, /abs/path/build, ~/ for the home directory;
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
	cmd := readLoose(words[1:])
	var toks []ptok
	for _, t := range p.toks[1:] {
		if !t.star && !(t.lit == "--" && t.glob == nil) {
			toks = append(toks, t)
		}
	}
	short := shortFor[foldLower(path.Base(p.toks[0].lit))]
	if sub, ok := shortFor[foldLower(path.Base(p.toks[0].lit))+" "+firstOperand(toks)]; ok {
		short = sub
	}
	first, at := true, 0
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if t.isOption() {
			if !t.optionIn(cmd, short) {
				return false
			}
			if i+1 < len(toks) && !toks[i+1].isOption() && t.takesValue() {
				// Its value: anywhere among the operands and values.
				i++
				if !p.anyOperand(toks[i], cmd.operands) {
					return false
				}
			}
			continue
		}
		if first {
			first = false
			for ; at < len(cmd.operands) && !p.operandIs(t, cmd.operands[at].text); at++ {
				if !cmd.operands[at].afterOpt {
					return false
				}
			}
		} else {
			for ; at < len(cmd.operands) && !p.operandIs(t, cmd.operands[at].text); at++ {
			}
		}
		if at == len(cmd.operands) {
			return false
		}
		at++
	}
	return true
}

// looseCommand is a command's words after its name, as matchLoose reads
// them.
type looseCommand struct {
	opts     []string
	next     []string // the word after each option ("" when none or not known)
	operands []operand
}

// operand is a word of a command that is not an option, or a value glued
// to one; afterOpt: it stands just after an option, so it may be that
// option's value.
type operand struct {
	text     string
	afterOpt bool
}

func readLoose(words []shWord) looseCommand {
	var c looseCommand
	afterOpt, ended := false, false
	for _, w := range words {
		if w.uncertain() {
			afterOpt = false
			continue
		}
		s := w.text
		switch {
		case !ended && s == "--" && !afterOpt:
			// The end of the options, unless it is an option's value
			// (git commit -m -- --no-verify).
			ended = true
		case !ended && isOption(s):
			c.opts = append(c.opts, s)
			c.next = append(c.next, "")
			// A value glued to its option: --tag=beta, -nprod, -sXDELETE.
			if _, v, ok := strings.Cut(s, "="); ok && v != "" {
				c.operands = append(c.operands, operand{v, true})
			}
			if s[1] != '-' {
				for k := 2; k < len(s); k++ {
					c.operands = append(c.operands, operand{strings.TrimPrefix(s[k:], "="), true})
				}
			}
			afterOpt = true
			continue
		default:
			if afterOpt {
				c.next[len(c.next)-1] = s
			}
			c.operands = append(c.operands, operand{s, afterOpt})
		}
		afterOpt = false
	}
	return c
}

// firstOperand is the rule's first word that is not an option (the
// subcommand of git push).
func firstOperand(toks []ptok) string {
	for i := 0; i < len(toks); i++ {
		if toks[i].isOption() {
			if i+1 < len(toks) && toks[i].takesValue() {
				i++
			}
			continue
		}
		return foldLower(toks[i].lit)
	}
	return ""
}

// isOption reports a word that is an option: -x, -rf, --name, --name=v;
// not -, --, or a word such as "- item" or "-n fix".
func isOption(s string) bool {
	if len(s) < 2 || s[0] != '-' || s == "--" {
		return false
	}
	name := strings.TrimPrefix(s[1:], "-")
	name, _, _ = strings.Cut(name, "=")
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

func (t ptok) isOption() bool {
	if t.glob != nil {
		return len(t.glob[0]) > 1 && t.glob[0][0] == '-'
	}
	return isOption(t.lit)
}

// takesValue: a rule word after this option is its value: a single short
// option (-X, -n) or a long one without =; not a cluster (rm -rf build).
func (t ptok) takesValue() bool {
	return t.glob == nil && !strings.Contains(t.lit, "=") && (strings.HasPrefix(t.lit, "--") || len(t.lit) == 2)
}

// shortFor holds, for a program (or a git subcommand), the one letter
// spelling each long option that has one there. Only where it is so: -f
// is --force to rm and git push, but --filename to kubectl.
var shortFor = map[string]map[string]string{
	"rm":           {"force": "f", "recursive": "rR", "interactive": "i", "verbose": "v", "dir": "d"},
	"cp":           {"force": "f", "recursive": "rR", "interactive": "i", "verbose": "v"},
	"mv":           {"force": "f", "interactive": "i", "verbose": "v"},
	"chmod":        {"recursive": "R"},
	"chown":        {"recursive": "R"},
	"chgrp":        {"recursive": "R"},
	"curl":         {"request": "X", "output": "o", "insecure": "k", "location": "L", "user": "u", "data": "d"},
	"docker":       {"force": "f", "all": "a", "volumes": "v"},
	"npm":          {"force": "f", "global": "g"},
	"kubectl":      {"namespace": "n", "all-namespaces": "A", "filename": "f"},
	"git push":     {"force": "f", "delete": "d"},
	"git commit":   {"no-verify": "n", "all": "a"},
	"git clean":    {"force": "f"},
	"git branch":   {"delete": "d", "force": "f"},
	"git checkout": {"force": "f"},
	"git switch":   {"force": "f"},
}

// optionIn reports whether the command's options hold the rule's option
// t, as the program would take them (short: its long options' letters).
func (t ptok) optionIn(cmd looseCommand, short map[string]string) bool {
	opts := cmd.opts
	o := t.lit
	if t.glob != nil {
		for _, w := range opts {
			if matchPieces(t.glob, w) {
				return true
			}
		}
		// --out=* is --out with any value; --force* begins with --force.
		o, _, _ = strings.Cut(t.glob[0], "=")
		if !strings.HasPrefix(o, "--") || len(o) < 3 {
			return false
		}
	}
	for _, w := range opts {
		if w == o {
			return true
		}
	}
	if name, ok := strings.CutPrefix(o, "--"); ok {
		name, val, hasVal := strings.Cut(name, "=")
		for k, w := range opts {
			long, ok := strings.CutPrefix(w, "--")
			if !ok {
				continue
			}
			long, v, withVal := strings.Cut(long, "=")
			if long == "" || !strings.HasPrefix(name, long) {
				continue // not --force nor an abbreviation of it (--forc)
			}
			switch {
			case hasVal && withVal:
				if v == val {
					return true
				}
			case hasVal:
				// --network=host holds for --network host, and for a
				// --network whose value is not known.
				if cmd.next[k] == "" || cmd.next[k] == val {
					return true
				}
			case !withVal || !negative(v):
				return true // --force, --force=true; not --force=false
			}
		}
		return !hasVal && short[name] != "" && anyLetter(opts, short[name])
	}
	// A short option or a cluster of them (-f, -rf); longer words with
	// one dash are options of their own (find -exec, -delete).
	letters := o[1:]
	if len(letters) > 3 || !alnum(letters) {
		return false
	}
	for i := 0; i < len(letters); i++ {
		l := letters[i : i+1]
		if (l == "r" || l == "R") && short["recursive"] == "rR" {
			l = "rR"
		}
		if !anyLetter(opts, l) && !longFor(opts, short, l) {
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
// short spells with one of letters l is among opts.
func longFor(opts []string, short map[string]string, l string) bool {
	for _, w := range opts {
		long, ok := strings.CutPrefix(w, "--")
		if !ok {
			continue
		}
		long, _, _ = strings.Cut(long, "=")
		if long == "" {
			continue
		}
		for name, letters := range short {
			if strings.HasPrefix(name, long) && strings.ContainsAny(letters, l) {
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

// anyOperand reports whether one of the command's operands (or option
// values) is t.
func (p *bashPattern) anyOperand(t ptok, ops []operand) bool {
	for _, o := range ops {
		if p.operandIs(t, o.text) {
			return true
		}
	}
	return false
}

// operandIs reports whether a command's operand s is the rule's word t:
// as written, in any case, or as the same path spelled otherwise (~ or ~/
// in either is the home directory).
func (p *bashPattern) operandIs(t ptok, s string) bool {
	if t.sameOperand(s) {
		return true
	}
	if p.home == "" {
		return false
	}
	home := func(x string) (string, bool) {
		if x == "~" {
			return p.home, true
		}
		if rest, ok := strings.CutPrefix(x, "~/"); ok {
			return path.Join(p.home, rest), true
		}
		return x, false
	}
	if h, ok := home(s); ok && t.sameOperand(h) {
		return true
	}
	if t.glob == nil {
		if h, ok := home(t.lit); ok {
			return ptok{lit: h}.sameOperand(s)
		}
		return false
	}
	if h, ok := home(strings.Join(t.glob, "*")); ok {
		return ptok{glob: strings.Split(h, "*")}.sameOperand(s)
	}
	return false
}

// sameOperand: s is t as written, in any case, or as a path: build/,
// ./build, ../build and /abs/build are build; build is /abs/build.
func (t ptok) sameOperand(s string) bool {
	if t.matchOne(s) {
		return true
	}
	f, fs := t.fold(), foldLower(s)
	if f.matchOne(fs) {
		return true
	}
	if strings.Contains(fs, "://") {
		return false // a URL: its path is the server's, not a file here
	}
	c := path.Clean(fs)
	if f.glob != nil {
		g := path.Clean(strings.Join(f.glob, "*"))
		pieces := strings.Split(g, "*")
		for i := -1; i < len(c); i++ {
			if (i < 0 || c[i] == '/') && matchPieces(pieces, c[i+1:]) {
				return true
			}
		}
		// An absolute rule and a relative word: the rule's tail.
		if path.IsAbs(g) && !path.IsAbs(c) {
			tail := strings.TrimLeft(c, "./")
			for i := 0; i < len(g) && tail != ""; i++ {
				if g[i] == '/' && matchPieces(strings.Split(g[i+1:], "*"), tail) {
					return true
				}
			}
		}
		return false
	}
	if f.lit == "" {
		return false
	}
	l := path.Clean(f.lit)
	if c == l {
		return true
	}
	if c == "." || c == ".." || c == "/" || l == "." || l == ".." || l == "/" {
		return false
	}
	return strings.HasSuffix(c, "/"+l) || path.IsAbs(l) && strings.HasSuffix(l, "/"+strings.TrimLeft(c, "./"))
}

// negative reports an option value that turns the option off.
func negative(v string) bool {
	switch strings.ToLower(v) {
	case "false", "0", "no", "off":
		return true
	}
	return false
}
