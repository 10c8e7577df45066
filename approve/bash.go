package approve

import (
	"path"
	"slices"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// A Bash command is judged by its structure, never by its text: it is
// parsed with a real shell parser and walked node by node. The walker knows
// a fixed set of constructs; every one it does not fully understand (an
// arithmetic context holding a variable, an indirection, an assignment that
// changes what later commands do, a wrapper option it cannot read...)
// becomes an unknown part, which no allow rule can allow and every deny
// rule matches. What it does understand becomes the simple commands the
// command would run (across &&, ||, ;, |, $( ), subshells, functions and
// control structures), each judged by the Bash rules alone: what a command
// writes, reads or reaches on the network is held by the sandbox every
// Bash command runs in, not found here. Where the shell ends up (cd) is
// followed for the file tools' relative paths (shellCwd).

// shWord is one word of a simple command after quote removal.
type shWord struct {
	text string // the value after quote removal; the raw source when glob
	// dyn: the value is unknown before run time ($VAR, $(cmd), $'..').
	dyn bool
	// glob: unquoted *, ?, [ or { that the shell may expand to other words.
	glob bool
}

func (w shWord) uncertain() bool { return w.dyn || w.glob }

// shForm is one way of reading a simple command: the whole of it, or what is
// left after looking through a wrapper (timeout, nice, env, sudo...).
type shForm struct {
	words []shWord
	// guarded: the form starts with a wrapper that changes what the inner
	// command may do (sudo, doas, an unsafe variable such as LD_PRELOAD), so
	// an allow needs this form allowed too, not only the command inside.
	guarded bool
}

// shPart is one thing a Bash command does that needs permission.
type shPart struct {
	// forms[0] is the full command; the last is the innermost command.
	forms []shForm
	// seen are the commands a runner such as `uv run` runs: deny and ask
	// rules see them, but an allow of the runner's own form is enough
	// (Bash(uv run pytest:*) allows uv run pytest).
	seen []shForm
	// code: the command runs code agentjq does not read (inlineCode):
	// deny and ask rules match it, an allow of its words still allows.
	code string
	// unknown: a part whose effect cannot be known. No specific rule can
	// allow it; every deny rule might match it. reason says why.
	unknown bool
	reason  string
	// inert: a command that runs nothing (cd, set -e, read into a plain
	// variable): deny and ask rules still see it, but it needs no allow.
	inert bool
	src   string // for messages
}

// dirSet is where the shell may be when a part runs, relative to the
// directory the command starts in: "" is that directory, other entries are
// relative or absolute paths or ~-paths. unknown: it cannot be known (cd
// $X, popd, cd inside a loop).
type dirSet struct {
	dirs    []string
	unknown bool
}

// maxDirs bounds how many possible directories are followed.
const maxDirs = 16

var startDir = dirSet{dirs: []string{""}}

func (d dirSet) union(o dirSet) dirSet {
	if d.unknown || o.unknown {
		return dirSet{unknown: true}
	}
	out := dirSet{dirs: append([]string(nil), d.dirs...)}
	for _, x := range o.dirs {
		if !slices.Contains(out.dirs, x) {
			out.dirs = append(out.dirs, x)
		}
	}
	if len(out.dirs) > maxDirs {
		return dirSet{unknown: true}
	}
	return out
}

func (d dirSet) equal(o dirSet) bool {
	if d.unknown != o.unknown || len(d.dirs) != len(o.dirs) {
		return false
	}
	return d.union(o).unknown == d.unknown && len(d.union(o).dirs) == len(d.dirs)
}

// cd returns where `cd arg` leads from each directory of d.
func (d dirSet) cd(arg string) dirSet {
	if d.unknown {
		return d
	}
	out := dirSet{}
	for _, x := range d.dirs {
		out.dirs = append(out.dirs, joinDir(x, arg))
	}
	return dirSet{}.union(out)
}

// joinDir is where cd arg leads: cd without -P cleans .. lexically, as
// bash's logical cd does.
func joinDir(base, arg string) string {
	switch {
	case strings.HasPrefix(arg, "/"), arg == "~", strings.HasPrefix(arg, "~/"):
		return path.Clean(arg)
	case base == "":
		return path.Clean(arg)
	}
	return path.Join(base, arg)
}

// bashAnalysis is what a Bash command does.
type bashAnalysis struct {
	parts []shPart
	// end is where the shell may be when the command ends.
	end dirSet
}

var parserPool = sync.Pool{New: func() any {
	return syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(false))
}}

// maxNesting bounds recursion into `bash -c` and eval scripts.
const maxNesting = 8

func analyzeBash(cmd string) (*bashAnalysis, error) {
	w := &walker{src: cmd}
	end, err := w.script(cmd, startDir)
	if err != nil {
		return nil, err
	}
	return &bashAnalysis{parts: w.parts, end: end}, nil
}

// walker collects the parts of one command.
type walker struct {
	src   string // the source the current nodes' positions refer to
	depth int
	parts []shPart
	// stdin is the script a shell run by the current simple command reads
	// from its standard input, when that is a literal here-document or
	// here-string; nil when it is anything else (a pipe, a file, the
	// agent's stdin), which makes such a shell's script unknown.
	stdin *shWord
}

func (w *walker) unknown(n syntax.Node, reason string) {
	src := w.src
	if n != nil {
		src = source(w.src, n)
	}
	w.parts = append(w.parts, shPart{unknown: true, reason: reason, src: src})
}

// script parses and walks a nested script (bash -c, eval) or the command.
func (w *walker) script(text string, at dirSet) (dirSet, error) {
	if strings.ContainsAny(text, "\r\x00") {
		// The parser reads a carriage return as a blank and drops NUL
		// bytes; bash and zsh keep both inside a word, so `ls\r#$(cmd)`
		// is one word to them, holding a command substitution, and a
		// comment to the parser.
		w.parts = append(w.parts, shPart{unknown: true, reason: "a carriage return or NUL byte, which the shell reads otherwise than the parser", src: text})
		return dirSet{unknown: true}, nil
	}
	p := parserPool.Get().(*syntax.Parser)
	f, err := p.Parse(strings.NewReader(text), "")
	parserPool.Put(p)
	if err != nil {
		return dirSet{unknown: true}, err
	}
	saved := w.src
	w.src = text
	end := w.stmts(f.Stmts, at)
	w.src = saved
	return end, nil
}

// flow is where the shell may be after a statement: when it succeeded, and
// whatever happened.
type flow struct{ ok, any dirSet }

func same(d dirSet) flow { return flow{d, d} }

func (w *walker) stmts(list []*syntax.Stmt, at dirSet) dirSet {
	for _, s := range list {
		at = w.stmt(s, at).any
	}
	return at
}

func (w *walker) stmtsFlow(list []*syntax.Stmt, at dirSet) flow {
	f := same(at)
	for _, s := range list {
		f = w.stmt(s, f.any)
	}
	return f
}

func (w *walker) stmt(s *syntax.Stmt, at dirSet) flow {
	if s.Coprocess || s.Disown {
		w.unknown(s, "a construct agentjq does not model")
		return same(at)
	}
	for _, r := range s.Redirs {
		w.redirect(r, at)
	}
	if s.Cmd == nil {
		return same(at)
	}
	saved := w.stdin
	w.stdin = nil
	if _, ok := s.Cmd.(*syntax.CallExpr); ok {
		w.stdin = literalStdin(s.Redirs)
	}
	f := w.command(s.Cmd, at)
	w.stdin = saved
	if s.Background {
		return same(at) // a background job runs in a subshell
	}
	if s.Negated {
		u := f.ok.union(f.any)
		return flow{u, u}
	}
	return f
}

func (w *walker) command(c syntax.Command, at dirSet) flow {
	switch c := c.(type) {
	case *syntax.CallExpr:
		return w.call(c, at)
	case *syntax.BinaryCmd:
		switch c.Op {
		case syntax.AndStmt:
			l := w.stmt(c.X, at)
			r := w.stmt(c.Y, l.ok)
			return flow{r.ok, l.any.union(r.any)}
		case syntax.OrStmt:
			l := w.stmt(c.X, at)
			r := w.stmt(c.Y, l.any)
			return flow{l.ok.union(r.ok), l.any.union(r.any)}
		default: // pipes: each side runs in a subshell
			w.stmt(c.X, at)
			w.stmt(c.Y, at)
			return same(at)
		}
	case *syntax.Block:
		return w.stmtsFlow(c.Stmts, at)
	case *syntax.Subshell:
		w.stmts(c.Stmts, at)
		return same(at)
	case *syntax.IfClause:
		end := at
		for clause := c; clause != nil; clause = clause.Else {
			cond := w.stmtsFlow(clause.Cond, end)
			then := w.stmts(clause.Then, cond.ok)
			end = end.union(cond.any).union(then)
		}
		return same(end)
	case *syntax.WhileClause:
		return same(w.loop(at, func(at dirSet) dirSet {
			cond := w.stmtsFlow(c.Cond, at)
			return cond.any.union(w.stmts(c.Do, cond.any))
		}))
	case *syntax.ForClause:
		if c.Select {
			w.unknown(c, "select reads the terminal")
			return same(at)
		}
		switch l := c.Loop.(type) {
		case *syntax.WordIter:
			for _, it := range l.Items {
				w.word(it, at)
			}
			if !w.inertName(l.Name.Value, false) {
				w.unknown(c, "the loop assigns "+l.Name.Value)
			}
		case *syntax.CStyleLoop:
			for _, x := range []syntax.ArithmExpr{l.Init, l.Cond, l.Post} {
				if x != nil && !literalArith(x) {
					w.unknown(c, "a C-style for loop evaluates variables as code")
					return same(at)
				}
			}
		default:
			w.unknown(c, "a loop agentjq does not model")
			return same(at)
		}
		return same(w.loop(at, func(at dirSet) dirSet { return at.union(w.stmts(c.Do, at)) }))
	case *syntax.CaseClause:
		w.word(c.Word, at)
		end := at
		for _, it := range c.Items {
			for _, p := range it.Patterns {
				w.word(p, at)
			}
			end = end.union(w.stmts(it.Stmts, at))
		}
		return same(end)
	case *syntax.FuncDecl:
		// Calling the function is a command of its own name that a rule
		// must allow; its body's parts are judged here. Where the shell
		// is after a call of a body that moves it cannot be followed.
		if c.Body != nil && !w.stmt(c.Body, at).any.equal(at) {
			return same(dirSet{unknown: true})
		}
		return same(at)
	case *syntax.ArithmCmd:
		if !literalArith(c.X) {
			w.unknown(c, "(( )) evaluates variables as code")
		}
		return same(at)
	case *syntax.TestClause:
		w.test(c.X, at)
		return same(at)
	case *syntax.DeclClause:
		w.decl(c, at)
		return same(at)
	case *syntax.TimeClause:
		if c.Stmt != nil {
			return w.stmt(c.Stmt, at)
		}
		return same(at)
	}
	w.unknown(c, "a construct agentjq does not model")
	return same(at)
}

// loop walks a loop body; if it moves the shell, each pass may start
// elsewhere, so where the shell ends is unknown.
func (w *walker) loop(at dirSet, body func(dirSet) dirSet) dirSet {
	if body(at).equal(at) {
		return at
	}
	return dirSet{unknown: true}
}

// word walks the substitutions inside a word and checks every expansion.
func (w *walker) word(word *syntax.Word, at dirSet) {
	if word == nil {
		return
	}
	if zshExpands(word.Parts) {
		w.unknown(word, "an expansion zsh reads as code (a subscript, $~x, $=x)")
		return
	}
	for _, part := range word.Parts {
		w.wordPart(part, at)
	}
}

// zshExpands reports text that zsh, claude's shell when it is the user's,
// expands where bash does not, in ways that may run code: $x[i] and
// $#x[i] (a subscript, evaluated as arithmetic: a name in it is read as
// an expression, so i='a[$(cmd)]' runs cmd), and $~x, $=x, $^x, $+x
// (globbing the value, where a qualifier *(e:cmd:) runs cmd; splitting
// it; a subscript again). A subscript of literal numbers is only a number.
func zshExpands(parts []syntax.WordPart) bool {
	// The parser splits "$~x" into the literals "$" and "~x": read the
	// word's literal text joined, with \x01 where a short $x ends and
	// \x02 for any other expansion.
	var b strings.Builder
	for _, part := range parts {
		switch p := part.(type) {
		case *syntax.Lit:
			b.WriteString(p.Value)
		case *syntax.ParamExp:
			if p.Short {
				b.WriteByte(1)
				continue
			}
			b.WriteByte(2)
		default:
			b.WriteByte(2)
		}
	}
	s := b.String()
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\':
			i++
		case s[i] == '$' && i+1 < len(s) && strings.IndexByte("~=^+", s[i+1]) >= 0:
			return true
		case s[i] == 1 && zshSubscript(s[i+1:]):
			return true
		}
	}
	return false
}

// zshSubscript reports text right after $x (or $#, whose name follows in
// the text) that opens a subscript holding more than numbers.
func zshSubscript(s string) bool {
	s = strings.TrimLeft(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
	if !strings.HasPrefix(s, "[") {
		return false
	}
	end := strings.IndexByte(s, ']')
	return end < 0 || strings.Trim(s[1:end], "0123456789,-+ ") != ""
}

func (w *walker) wordPart(part syntax.WordPart, at dirSet) {
	switch p := part.(type) {
	case *syntax.Lit, *syntax.SglQuoted:
	case *syntax.DblQuoted:
		if zshExpands(p.Parts) {
			w.unknown(p, "an expansion zsh reads as code (a subscript, $~x, $=x)")
			return
		}
		for _, q := range p.Parts {
			w.wordPart(q, at)
		}
	case *syntax.ParamExp:
		w.param(p, at)
	case *syntax.CmdSubst:
		w.stmts(p.Stmts, at)
	case *syntax.ProcSubst:
		w.stmts(p.Stmts, at)
	case *syntax.ArithmExp:
		if !literalArith(p.X) {
			w.unknown(p, "arithmetic evaluates variables as code")
		}
	case *syntax.ExtGlob:
		// zsh, which claude runs when it is the user's shell, reads
		// *(e:'cmd':) as a glob qualifier that runs cmd.
		w.unknown(part, "an extended glob (in zsh a glob qualifier, which may run code)")
	default:
		w.unknown(part, "an expansion agentjq does not model")
	}
}

// param accepts $x, ${x}, ${#x} and the operators that only transform a
// value; indirection, subscripts, slices (arithmetic), ${x@P} and the
// assigning operators may run code or change variables.
func (w *walker) param(p *syntax.ParamExp, at dirSet) {
	bad := ""
	switch {
	case p.Excl || p.Names != 0:
		bad = "${!x} expands a name chosen at run time"
	case p.Index != nil && !literalIndex(p.Index):
		bad = "a subscript is evaluated as arithmetic"
	case p.Slice != nil:
		bad = "a slice's offsets are evaluated as arithmetic"
	case p.Width || p.IsSet || p.Flags != nil || p.NestedParam != nil || len(p.Modifiers) > 0:
		bad = "an expansion agentjq does not model"
	case p.Exp != nil:
		switch p.Exp.Op {
		case syntax.AlternateUnset, syntax.AlternateUnsetOrNull, syntax.DefaultUnset, syntax.DefaultUnsetOrNull,
			syntax.ErrorUnset, syntax.ErrorUnsetOrNull, syntax.RemSmallSuffix, syntax.RemLargeSuffix,
			syntax.RemSmallPrefix, syntax.RemLargePrefix, syntax.UpperFirst, syntax.UpperAll,
			syntax.LowerFirst, syntax.LowerAll:
			w.word(p.Exp.Word, at)
		default: // := assigns, @P/@E/@A... re-read the value
			bad = "this expansion assigns or re-reads a value"
		}
	case p.Repl != nil:
		w.word(p.Repl.Orig, at)
		w.word(p.Repl.With, at)
	}
	if bad != "" {
		w.unknown(p, bad)
	}
}

// literalIndex accepts ${a[@]}, ${a[*]} and ${a[0]}.
func literalIndex(x syntax.ArithmExpr) bool {
	wd, ok := x.(*syntax.Word)
	if !ok {
		return false
	}
	l, ok := wd.Lit(), len(wd.Parts) == 1
	return ok && (l == "@" || l == "*" || isDigits(l))
}

// literalArith reports whether an arithmetic expression holds only
// numbers: a name or expansion in arithmetic is evaluated as code
// (x='a[$(cmd)]'; $((x)) runs cmd).
func literalArith(x syntax.ArithmExpr) bool {
	switch x := x.(type) {
	case *syntax.Word:
		return len(x.Parts) == 1 && isDigits(x.Lit())
	case *syntax.BinaryArithm:
		switch x.Op {
		case syntax.Assgn, syntax.AddAssgn, syntax.SubAssgn, syntax.MulAssgn, syntax.QuoAssgn, syntax.RemAssgn,
			syntax.AndAssgn, syntax.OrAssgn, syntax.XorAssgn, syntax.ShlAssgn, syntax.ShrAssgn:
			return false
		}
		return literalArith(x.X) && literalArith(x.Y)
	case *syntax.UnaryArithm:
		if x.Op == syntax.Inc || x.Op == syntax.Dec {
			return false
		}
		return literalArith(x.X)
	case *syntax.ParenArithm:
		return literalArith(x.X)
	}
	return false
}

// test walks [[ ]]: -v and -R name variables (a subscript is evaluated),
// and the numeric comparisons evaluate both sides as arithmetic.
func (w *walker) test(x syntax.TestExpr, at dirSet) {
	switch x := x.(type) {
	case *syntax.Word:
		w.word(x, at)
	case *syntax.ParenTest:
		w.test(x.X, at)
	case *syntax.UnaryTest:
		if x.Op == syntax.TsVarSet || x.Op == syntax.TsRefVar {
			w.unknown(x, "[[ -v ]] evaluates a subscript as code")
			return
		}
		w.test(x.X, at)
	case *syntax.BinaryTest:
		switch x.Op {
		case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
			if !numericTestWord(x.X) || !numericTestWord(x.Y) {
				w.unknown(x, "[[ -eq ]] evaluates its operands as arithmetic")
				return
			}
		}
		w.test(x.X, at)
		w.test(x.Y, at)
	default:
		w.unknown(x, "a test agentjq does not model")
	}
}

func numericTestWord(x syntax.TestExpr) bool {
	wd, ok := x.(*syntax.Word)
	if !ok {
		return false
	}
	s := wordOf(wd)
	return !s.uncertain() && isDigits(strings.TrimPrefix(s.text, "-"))
}

func (w *walker) redirect(r *syntax.Redirect, at dirSet) {
	if r.N != nil && strings.HasPrefix(r.N.Value, "{") {
		w.unknown(r, "{var}> assigns a variable")
		return
	}
	w.word(r.Word, at)
	if r.Op != syntax.Hdoc && r.Op != syntax.DashHdoc {
		w.word(r.Hdoc, at)
		return
	}
	quoted := hdocQuoted(r)
	if hdocMayEndEarly(r, source(w.src, r.Hdoc), quoted) {
		w.unknown(r, "a here-document the shell may end before the parser does")
		return
	}
	if !quoted { // a quoted one's text is only text
		w.word(r.Hdoc, at)
	}
}

// hdocMayEndEarly reports a here-document whose text holds a line the
// shell may take for its end sooner than the parser did: a line starting
// with the delimiter (bash ends one at "EOF)" inside $( )), or, when the
// delimiter is unquoted, a line ending in a backslash (the shell joins it
// to the next one before comparing: "E\" then "OF" is "EOF").
func hdocMayEndEarly(r *syntax.Redirect, body string, quoted bool) bool {
	if r.Hdoc == nil {
		return false
	}
	delim := wordOf(r.Word)
	if delim.uncertain() {
		return true
	}
	lines := strings.Split(strings.TrimSuffix(body, "\n"), "\n")
	if last := lines[len(lines)-1]; last == delim.text || r.Op == syntax.DashHdoc && strings.TrimLeft(last, "\t") == delim.text {
		lines = lines[:len(lines)-1] // the line that ends it
	}
	for _, line := range lines {
		if !quoted && strings.HasSuffix(line, `\`) {
			return true
		}
		if r.Op == syntax.DashHdoc {
			line = strings.TrimLeft(line, "\t")
		}
		if strings.HasPrefix(line, delim.text) {
			return true
		}
	}
	return false
}

func source(cmd string, n syntax.Node) string {
	s, e := n.Pos().Offset(), n.End().Offset()
	if int(s) <= len(cmd) && int(e) <= len(cmd) && s <= e {
		return cmd[s:e]
	}
	return ""
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// wordOf performs quote removal on a word whose value is static, and marks
// the rest dynamic or glob.
func wordOf(w *syntax.Word) shWord {
	if w == nil {
		return shWord{dyn: true}
	}
	var b strings.Builder
	out := shWord{}
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			if mayExpand(p.Value) || (len(w.Parts) == 1 && strings.HasPrefix(p.Value, "~")) || zshEquals(w, p) {
				out.glob = true
			}
			b.WriteString(unescapeLit(p.Value))
		case *syntax.SglQuoted:
			if p.Dollar {
				out.dyn = true
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				out.dyn = true
			}
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok {
					out.dyn = true
					continue
				}
				b.WriteString(unescapeDbl(l.Value))
			}
		default: // parameter, command, arithmetic, process substitution, extglob
			out.dyn = true
		}
	}
	out.text = b.String()
	if out.glob && !out.dyn {
		// Compare globs by their source text: a rule allows `rm *.o` only
		// when it says so.
		out.text = rawWord(w)
	}
	return out
}

// mayExpand reports whether unquoted text may expand to other words: a
// glob (*, ?, [..]) or a brace expansion ({a,b}, {1..3}). A lone [ or ]
// (the test command) stays itself.
func mayExpand(s string) bool {
	if strings.ContainsAny(s, "*?") {
		return true
	}
	if i := strings.IndexByte(s, '['); i >= 0 && strings.IndexByte(s[i+1:], ']') >= 0 {
		return true
	}
	if i := strings.IndexByte(s, '{'); i >= 0 {
		rest := s[i+1:]
		if j := strings.IndexByte(rest, '}'); j >= 0 && (strings.Contains(rest[:j], ",") || strings.Contains(rest[:j], "..")) {
			return true
		}
	}
	return false
}

func rawWord(w *syntax.Word) string {
	var b strings.Builder
	syntax.NewPrinter().Print(&b, w)
	return b.String()
}

func unescapeLit(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func unescapeDbl(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// assign walks an assignment's value and reports it as a word for the
// command's full form; ok is false when it is unknown (a subscript, an
// array with subscripts).
func (w *walker) assign(a *syntax.Assign, at dirSet) (shWord, bool) {
	name := ""
	if a.Name != nil {
		name = a.Name.Value
	}
	if a.Index != nil {
		w.unknown(a, "a subscript is evaluated as arithmetic")
		return shWord{}, false
	}
	if a.Array != nil {
		for _, e := range a.Array.Elems {
			if e.Index != nil {
				w.unknown(a, "a subscript is evaluated as arithmetic")
				return shWord{}, false
			}
			w.word(e.Value, at)
		}
		return shWord{text: name + "=(...)", dyn: true}, true
	}
	w.word(a.Value, at)
	if a.Naked {
		if a.Value != nil {
			return wordOf(a.Value), true
		}
		return shWord{text: name}, true
	}
	v := wordOf(a.Value)
	v.text = name + "=" + v.text
	return v, true
}

// safeEnv are variables that cannot change which program runs, what it
// loads or where it writes; assigning one is no effect on later commands.
var safeEnv = map[string]bool{
	"LANG": true, "LANGUAGE": true, "TZ": true, "NO_COLOR": true, "FORCE_COLOR": true,
	"TERM": true, "CI": true, "DEBUG": true, "VERBOSE": true,
	"RUST_BACKTRACE": true, "RUST_LOG": true, "NODE_ENV": true, "GOOS": true, "GOARCH": true,
	"CGO_ENABLED": true, "GOMAXPROCS": true, "PYTHONUNBUFFERED": true, "PYTHONDONTWRITEBYTECODE": true,
}

// COLUMNS and LINES are not among them: zsh evaluates an assignment to
// them, its integer parameters, as arithmetic (COLUMNS='path[$(cmd)]').

// zshSpecial are lower-case names zsh gives a meaning: PATH and the other
// search paths tied to arrays (path=(./src $path) runs ./src/ls for ls),
// and zsh/parameter's tables, whose assignment defines functions, aliases,
// commands' paths or options (functions=(ls 'cmd')). Hook arrays
// (chpwd_functions, zshexit_functions...) end in _functions.
var zshSpecial = map[string]bool{
	"path": true, "fpath": true, "cdpath": true, "manpath": true, "module_path": true, "mailpath": true,
	"fignore": true, "psvar": true, "watch": true, "prompt": true, "zle_highlight": true, "argv": true,
	"aliases": true, "galiases": true, "saliases": true, "dis_aliases": true, "dis_galiases": true, "dis_saliases": true,
	"functions": true, "functions_source": true, "dis_functions": true, "dis_functions_source": true,
	"builtins": true, "dis_builtins": true, "commands": true, "options": true, "parameters": true,
	"reswords": true, "dis_reswords": true, "patchars": true, "dis_patchars": true, "modules": true,
	"nameddirs": true, "userdirs": true, "dirstack": true, "history": true, "historywords": true,
	"jobdirs": true, "jobstates": true, "jobtexts": true, "mapfile": true, "sysparams": true,
	"termcap": true, "terminfo": true, "keymaps": true, "widgets": true, "status": true, "pipestatus": true,
}

func isZshSpecial(name string) bool {
	return zshSpecial[name] || strings.HasSuffix(name, "_functions")
}

func isSafeEnv(name string) bool {
	return safeEnv[name] || strings.HasPrefix(name, "LC_")
}

// lowerEnv are lower-case variables that programs read from the
// environment.
var lowerEnvPrefixes = []string{"http_proxy", "https_proxy", "ftp_proxy", "all_proxy", "no_proxy", "npm_config_", "yarn_", "pnpm_", "histchars"}

// inertName reports whether assigning name changes nothing but the shell's
// own variable. Upper-case names are the environment's namespace (HOME,
// PATH, IFS, BASH_ENV, PS4, LD_*, GIT_*...): a bare assignment of one may
// update an exported variable, so only the known-safe ones are inert.
// exported is true for export and prefix assignments, which reach the
// programs run: only the known-safe names are inert then.
func (w *walker) inertName(name string, exported bool) bool {
	if isSafeEnv(name) {
		return true
	}
	if exported || name == "" {
		return false
	}
	lower := false
	for _, c := range name {
		switch {
		case c >= 'a' && c <= 'z':
			lower = true
		case c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_':
		default:
			return false
		}
	}
	if !lower || isZshSpecial(name) {
		return false
	}
	l := strings.ToLower(name)
	for _, p := range lowerEnvPrefixes {
		if strings.HasPrefix(l, p) {
			return false
		}
	}
	return true
}

// decl reads declare/local/typeset/export/readonly: plain names and
// values are assignments like any other; an option (-n nameref, -i
// integer, -x export, -a...) or a name chosen at run time is unknown.
func (w *walker) decl(d *syntax.DeclClause, at dirSet) {
	exported := d.Variant.Value == "export" || d.Variant.Value == "readonly"
	switch d.Variant.Value {
	case "declare", "local", "typeset", "export", "readonly":
	default:
		w.unknown(d, d.Variant.Value+" is not modelled")
		return
	}
	for _, a := range d.Args {
		if _, ok := w.assign(a, at); !ok {
			return
		}
		if a.Name == nil {
			w.unknown(d, d.Variant.Value+" with an option or a name chosen at run time")
			return
		}
		if !w.inertName(a.Name.Value, exported) {
			w.unknown(d, "assigning "+a.Name.Value+" changes what later commands do")
			return
		}
	}
	w.parts = append(w.parts, shPart{inert: true, forms: []shForm{{words: []shWord{{text: d.Variant.Value}}}}, src: source(w.src, d)})
}

// call reads one simple command.
func (w *walker) call(c *syntax.CallExpr, at dirSet) flow {
	text := source(w.src, c)
	var pre []shWord
	guardedAssign := false
	for _, a := range c.Assigns {
		v, ok := w.assign(a, at)
		if !ok {
			return same(at)
		}
		pre = append(pre, v)
		if a.Name == nil || !isSafeEnv(a.Name.Value) || v.dyn {
			guardedAssign = true
		}
	}
	for _, a := range c.Args {
		w.word(a, at)
	}
	if len(c.Args) == 0 {
		// A bare assignment runs nothing, but it changes what later
		// commands do unless the variable is the shell's own.
		for _, a := range c.Assigns {
			if a.Name == nil || !w.inertName(a.Name.Value, false) {
				w.unknown(c, "assigning "+a.Name.Value+" changes what later commands do")
				break
			}
		}
		return same(at)
	}
	words := make([]shWord, 0, len(c.Args))
	for _, a := range c.Args {
		words = append(words, wordOf(a))
	}
	var forms []shForm
	if len(pre) > 0 {
		forms = append(forms, shForm{words: append(append([]shWord{}, pre...), words...), guarded: guardedAssign})
	}
	u := unwrap(words)
	if u.reason != "" {
		w.unknown(c, u.reason)
		return same(at)
	}
	forms = append(forms, u.forms...)
	inner := forms[len(forms)-1].words
	part := shPart{forms: forms, seen: u.seen, code: u.code, src: text}
	innerAt := at
	if u.chdir {
		innerAt = dirSet{unknown: true}
	}
	next := same(at)
	switch b := w.builtin(inner, at, len(pre) > 0 || len(u.forms) > 1); {
	case b.reason != "":
		w.unknown(c, b.reason)
		return same(at)
	case b.inert:
		part.inert = true
		next = b.next
	}
	w.parts = append(w.parts, part)
	if w.spawned(inner, text, innerAt) {
		return same(dirSet{unknown: true})
	}
	return next
}

// builtinResult is what a shell builtin does to the shell.
type builtinResult struct {
	inert  bool
	reason string // unknown
	next   flow
}

// stateBuiltins change the shell for later commands or run text as code;
// none is modelled beyond what builtin() reads.
var stateBuiltins = map[string]string{
	"alias": "", "unalias": "", "enable": "", "hash": "", "trap": "", "source": "", ".": "", "shopt": "",
	"bind": "", "complete": "", "compgen": "", "compopt": "", "fc": "", "history": "", "let": "",
	"getopts": "", "mapfile": "", "readarray": "", "export": "", "readonly": "", "declare": "", "local": "",
	"typeset": "", "ulimit": "", "umask": "", "popd": "", "dirs": "", "disown": "", "suspend": "", "logout": "",
	"coproc": "", "select": "", "caller": "",
}

// builtin reads the builtins that change the shell itself. wrapped is true
// when assignments or wrappers surround the command, which makes cd's
// effect unknown.
func (w *walker) builtin(words []shWord, at dirSet, wrapped bool) builtinResult {
	name := cmdName(words[0])
	args := words[1:]
	static := true
	for _, a := range args {
		if a.uncertain() {
			static = false
		}
	}
	switch name {
	case "cd", "pushd":
		return cdBuiltin(name, args, at, wrapped)
	case "set":
		if !static || !safeSet(args) {
			return builtinResult{reason: "set with these options changes how later commands run"}
		}
		return builtinResult{inert: true, next: same(at)}
	case "true", "false", ":":
		return builtinResult{inert: true, next: same(at)}
	case "wait":
		for _, a := range args {
			if a.uncertain() || !(isDigits(a.text) || a.text == "-n" || a.text == "-f") {
				return builtinResult{reason: "wait with these arguments is not modelled (-p assigns)"}
			}
		}
		return builtinResult{inert: true, next: same(at)}
	case "read":
		return w.readBuiltin(args, at)
	case "unset":
		return w.unsetBuiltin(args, at)
	case "printf":
		if why := printfAssigns(args); why != "" {
			return builtinResult{reason: why}
		}
		if printfMath(args) {
			return builtinResult{reason: "zsh's printf evaluates a numeric argument as arithmetic, which may run code"}
		}
	case "test", "[":
		for _, a := range args {
			if a.uncertain() || a.text == "-v" || a.text == "-R" {
				return builtinResult{reason: "test -v evaluates a subscript as code; test's operators here are chosen at run time"}
			}
		}
	}
	if _, ok := stateBuiltins[name]; ok {
		return builtinResult{reason: name + " changes the shell or runs text as code"}
	}
	return builtinResult{next: same(at)}
}

// cdBuiltin follows cd and pushd: where they lead, or unknown.
func cdBuiltin(name string, args []shWord, at dirSet, wrapped bool) builtinResult {
	var dir []shWord
	for _, a := range args {
		if a.uncertain() || !strings.HasPrefix(a.text, "-") || a.text == "-" {
			dir = append(dir, a)
			continue
		}
		if a.text == "--" || a.text == "-L" {
			continue
		}
		if a.text == "-P" {
			// A physical cd resolves links first: its .. is not the
			// lexical one followed here.
			return builtinResult{inert: true, next: same(dirSet{unknown: true})}
		}
		return builtinResult{reason: name + " " + a.text + " is not modelled"}
	}
	switch {
	case wrapped || len(dir) > 1 || (len(dir) == 1 && (dir[0].uncertain() || dir[0].text == "-" || strings.HasPrefix(dir[0].text, "~") && !strings.HasPrefix(dir[0].text, "~/") && dir[0].text != "~")):
		return builtinResult{inert: true, next: same(dirSet{unknown: true})}
	case len(dir) == 0:
		if name == "pushd" {
			return builtinResult{inert: true, next: same(dirSet{unknown: true})}
		}
		return builtinResult{inert: true, next: flow{at.cd("~"), at.union(at.cd("~"))}}
	}
	to := at.cd(dir[0].text)
	return builtinResult{inert: true, next: flow{to, at.union(to)}}
}

// unsetBuiltin accepts unset of the shell's own plain variables.
func (w *walker) unsetBuiltin(args []shWord, at dirSet) builtinResult {
	for _, a := range args {
		if a.uncertain() || a.text == "-n" {
			return builtinResult{reason: "unset of a name chosen at run time"}
		}
		if a.text == "-v" || a.text == "-f" {
			continue
		}
		if !w.inertName(a.text, false) {
			return builtinResult{reason: "unsetting " + a.text + " changes what later commands do"}
		}
	}
	return builtinResult{inert: true, next: same(at)}
}

// printfAssigns reports why printf's options may assign a variable, or "".
func printfAssigns(args []shWord) string {
	for _, a := range args {
		if a.uncertain() {
			return "printf's options are chosen at run time (-v assigns, evaluating a subscript)"
		}
		if a.text == "--" || !strings.HasPrefix(a.text, "-") {
			return ""
		}
		if strings.Contains(a.text, "v") {
			return "printf -v assigns a variable, evaluating its subscript"
		}
	}
	return ""
}

// printfMath reports a printf whose numeric conversions (%d, %x, %f, a *
// width...) take an argument that is not a number: zsh's printf evaluates
// it as arithmetic, where path[$(cmd)] runs cmd and a name is read as an
// expression. An unknown format puts every argument there.
func printfMath(args []shWord) bool {
	i := 0
	for i < len(args) && args[i].text != "--" && strings.HasPrefix(args[i].text, "-") && !args[i].uncertain() {
		i++
	}
	if i < len(args) && args[i].text == "--" {
		i++
	}
	if i+1 >= len(args) {
		return false
	}
	numeric, ok := printfSlots(args[i])
	for k, a := range args[i+1:] {
		if (!ok || len(numeric) > 0 && numeric[k%len(numeric)]) && !numberLit(a) {
			return true
		}
	}
	return false
}

// printfSlots lists a format's conversions in order, true where one takes
// a number; ok is false when the format cannot be read.
func printfSlots(f shWord) (numeric []bool, ok bool) {
	if f.uncertain() {
		return nil, false
	}
	s := f.text
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			continue
		}
		i++
		for i < len(s) && strings.IndexByte("-+ #0'123456789.*$", s[i]) >= 0 {
			switch s[i] {
			case '*':
				numeric = append(numeric, true)
			case '$':
				return nil, false // %1$d: arguments by position
			}
			i++
		}
		if i >= len(s) {
			return nil, false
		}
		switch s[i] {
		case '%':
		case 's', 'b', 'q', 'c':
			numeric = append(numeric, false)
		default:
			numeric = append(numeric, true)
		}
	}
	return numeric, true
}

// numberLit reports a word that is a plain decimal, hex or floating number.
func numberLit(w shWord) bool {
	if w.uncertain() {
		return false
	}
	t := strings.TrimLeft(w.text, "+-")
	if h, ok := strings.CutPrefix(strings.ToLower(t), "0x"); ok {
		return h != "" && strings.Trim(h, "0123456789abcdef") == ""
	}
	mant, exp, hasExp := strings.Cut(strings.ToLower(t), "e")
	if hasExp && !isDigits(strings.TrimLeft(exp, "+-")) {
		return false
	}
	ip, fp, _ := strings.Cut(mant, ".")
	return ip+fp != "" && (ip == "" || isDigits(ip)) && (fp == "" || isDigits(fp))
}

// safeSet accepts set -e/-u/-x/-o pipefail and set -- (positional
// parameters).
func safeSet(args []shWord) bool {
	for i := 0; i < len(args); i++ {
		t := args[i].text
		if t == "--" {
			return true
		}
		if len(t) < 2 || (t[0] != '-' && t[0] != '+') {
			return false
		}
		for _, c := range t[1:] {
			switch c {
			case 'e', 'u', 'x':
			case 'o':
				i++
				if i >= len(args) {
					return false
				}
				switch args[i].text {
				case "pipefail", "errexit", "nounset", "xtrace":
				default:
					return false
				}
			default:
				return false
			}
		}
	}
	return true
}

// readBuiltin accepts read into plain shell variables.
func (w *walker) readBuiltin(args []shWord, at dirSet) builtinResult {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a.uncertain() {
			return builtinResult{reason: "read into a name chosen at run time"}
		}
		t := a.text
		if strings.HasPrefix(t, "-") && len(t) > 1 {
			switch t {
			case "-r", "-s", "-e", "-rs", "-sr", "-er", "-re":
			case "-d", "-p":
				i++
			case "-n", "-N", "-t", "-u":
				// zsh evaluates read -t's timeout (and may the
				// others) as arithmetic: only a number is inert.
				i++
				if i >= len(args) || !numberLit(args[i]) {
					return builtinResult{reason: "read " + t + " with a value that is not a number (zsh evaluates it as arithmetic)"}
				}
			case "-a":
				i++
				if i >= len(args) || args[i].uncertain() || !w.inertName(args[i].text, false) {
					return builtinResult{reason: "read -a into this name is not modelled"}
				}
			default:
				return builtinResult{reason: "read " + t + " is not modelled"}
			}
			continue
		}
		if !w.inertName(t, false) {
			return builtinResult{reason: "read assigns " + t}
		}
	}
	return builtinResult{inert: true, next: same(at)}
}

var shells = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "mksh": true, "ash": true}

// spawned adds the commands a command makes another program run: shell
// scripts (sh -c, eval, watch, flock -c), xargs and find -exec. moved is
// true when an eval'd script may move the shell itself.
func (w *walker) spawned(words []shWord, src string, at dirSet) (moved bool) {
	name := cmdName(words[0])
	if name == "" {
		return false
	}
	base := systemBin(name)
	unknown := func(reason string) { w.parts = append(w.parts, shPart{unknown: true, reason: reason, src: src}) }
	script := func(s shWord) {
		if s.uncertain() || w.depth >= maxNesting {
			unknown("a script chosen at run time")
			return
		}
		w.depth++
		end, err := w.script(s.text, at)
		if err != nil {
			unknown("a nested script that does not parse")
		}
		moved = !end.equal(at)
		w.depth--
	}
	switch {
	case shells[base]:
		// A shell with no script operand and no -c (or with "-") reads
		// its script from stdin: judged as a script when that is a
		// literal here-document or here-string, unknown otherwise.
		fromStdin := func() {
			if w.stdin == nil {
				unknown("a shell reading its script from stdin")
				return
			}
			script(*w.stdin)
		}
		for i := 1; i < len(words); i++ {
			t := words[i]
			if t.uncertain() {
				unknown("shell options chosen at run time")
				return false
			}
			if t.text == "-" {
				fromStdin()
				return false
			}
			if !strings.HasPrefix(t.text, "-") {
				return false // a script file: the rule must name it
			}
			if strings.HasPrefix(t.text, "--") {
				unknown("shell option " + t.text + " is not modelled")
				return false
			}
			for _, c := range t.text[1:] {
				if !strings.ContainsRune("celuxv", c) {
					unknown("shell option " + t.text + " is not modelled")
					return false
				}
			}
			if strings.Contains(t.text, "c") {
				if i+1 < len(words) {
					script(words[i+1])
					return false // a child shell: its cd stays there
				}
				unknown("sh -c without a script")
				return false
			}
		}
		fromStdin()
	case base == "eval":
		script(joinWords(words[1:]))
		return moved
	case base == "watch":
		if i, exec, ok := watchCommand(words); !ok {
			unknown("watch option not modelled")
		} else if exec {
			w.nested(words[i:], src, at)
		} else {
			script(joinWords(words[i:]))
		}
	case base == "flock":
		w.flock(words, src, at, script, unknown)
	case base == "xargs":
		w.xargs(words, src, at, unknown)
	case base == "find":
		w.find(words, src, at, unknown)
	}
	return false
}

// nested adds a command run by another program as a part of its own.
func (w *walker) nested(words []shWord, src string, at dirSet) {
	if len(words) == 0 {
		return
	}
	saved := w.stdin
	w.stdin = nil // the program's stdin, not the command line's
	defer func() { w.stdin = saved }()
	u := unwrap(words)
	if u.reason != "" {
		w.parts = append(w.parts, shPart{unknown: true, reason: u.reason, src: src})
		return
	}
	w.parts = append(w.parts, shPart{forms: u.forms, seen: u.seen, code: u.code, src: src})
	inner := u.forms[len(u.forms)-1].words
	if u.chdir {
		at = dirSet{unknown: true}
	}
	if b := w.builtin(inner, at, true); b.reason != "" {
		w.parts = append(w.parts, shPart{unknown: true, reason: b.reason, src: src})
	}
	w.spawned(inner, src, at)
}

func joinWords(ws []shWord) shWord {
	var b strings.Builder
	for i, w := range ws {
		if w.uncertain() {
			return shWord{dyn: true}
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w.text)
	}
	return shWord{text: b.String()}
}

// literalStdin returns the text a command reads on its standard input when
// the last redirection of it is a here-document or here-string whose text
// is known; nil otherwise.
func literalStdin(redirs []*syntax.Redirect) *shWord {
	var in *shWord
	for _, r := range redirs {
		if r.N != nil && r.N.Value != "0" {
			continue
		}
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			t, ok := hdocText(r)
			if !ok {
				return nil
			}
			in = &shWord{text: t}
		case syntax.WordHdoc:
			v := wordOf(r.Word)
			if v.uncertain() {
				return nil
			}
			in = &shWord{text: v.text + "\n"}
		case syntax.RdrIn, syntax.RdrInOut, syntax.DplIn:
			in = nil
		}
	}
	return in
}

// hdocText is a here-document's text as the shell reading it gets it: a
// quoted delimiter keeps it as written; otherwise only \$, \`, \\ and
// \newline are escapes (a \" stays two characters), and any expansion
// makes the text unknown.
func hdocText(r *syntax.Redirect) (string, bool) {
	if r.Hdoc == nil {
		return "", true
	}
	quoted := hdocQuoted(r)
	var b strings.Builder
	for _, p := range r.Hdoc.Parts {
		l, ok := p.(*syntax.Lit)
		if !ok {
			return "", false
		}
		if quoted {
			b.WriteString(l.Value)
			continue
		}
		s := l.Value
		for i := 0; i < len(s); i++ {
			if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\\\n", s[i+1]) >= 0 {
				i++
				if s[i] == '\n' {
					continue
				}
			}
			b.WriteByte(s[i])
		}
	}
	return b.String(), true
}

// hdocQuoted reports a here-document whose delimiter is quoted: its text
// is taken as written, with no expansion.
func hdocQuoted(r *syntax.Redirect) bool {
	if r.Word == nil {
		return false
	}
	for _, p := range r.Word.Parts {
		switch p := p.(type) {
		case *syntax.SglQuoted, *syntax.DblQuoted:
			return true
		case *syntax.Lit:
			if strings.Contains(p.Value, `\`) {
				return true
			}
		}
	}
	return false
}

// zshEquals reports a word that zsh expands as =cmd (the path of cmd):
// an unquoted = at its start followed by a name.
func zshEquals(w *syntax.Word, p *syntax.Lit) bool {
	return len(w.Parts) > 0 && w.Parts[0] == syntax.WordPart(p) && len(p.Value) > 1 && p.Value[0] == '=' &&
		(p.Value[1] >= 'a' && p.Value[1] <= 'z' || p.Value[1] >= 'A' && p.Value[1] <= 'Z' || p.Value[1] == '_' || p.Value[1] == '/' || p.Value[1] == '.')
}
