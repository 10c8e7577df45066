package approve

import (
	"path"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// A Bash command is judged by its structure, never by its text: it is
// parsed with a real shell parser and split into every simple command it
// would run (across &&, ||, ;, |, newlines, $( ), backticks, subshells,
// functions and control structures), plus every file it redirects output to.
// Each part must be allowed for the whole to be allowed; a deny on any part
// denies the whole.

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
	// unknown: a part whose commands cannot be known (a dynamic `bash -c`
	// script, an eval of a variable, a nested parse error). No specific
	// rule can allow it; every deny rule might match it.
	unknown bool
	// write is set for an output redirection to a file.
	write     bool
	writePath shWord
	src       string // for messages
}

// String renders the part for messages and traces.
func (p shPart) String() string { return p.src }

var parserPool = sync.Pool{New: func() any {
	return syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(false))
}}

// maxNesting bounds recursion into `bash -c` and eval scripts.
const maxNesting = 8

// splitBash returns the parts of a Bash command. An error means the command
// does not parse: it cannot be allowed by any specific rule.
func splitBash(cmd string) ([]shPart, error) {
	return splitBashDepth(cmd, 0)
}

func splitBashDepth(cmd string, depth int) ([]shPart, error) {
	p := parserPool.Get().(*syntax.Parser)
	f, err := p.Parse(strings.NewReader(cmd), "")
	parserPool.Put(p)
	if err != nil {
		return nil, err
	}
	var parts []shPart
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CallExpr:
			parts = append(parts, callParts(cmd, n, depth)...)
		case *syntax.DeclClause:
			// declare/export/local/readonly: a command named after the
			// variant; its assignments' values are walked for substitutions.
			words := []shWord{{text: n.Variant.Value}}
			for _, a := range n.Args {
				words = append(words, assignWord(a))
			}
			parts = append(parts, shPart{forms: []shForm{{words: words}}, src: source(cmd, n)})
		case *syntax.Redirect:
			if w, ok := redirectWrite(n); ok {
				parts = append(parts, shPart{write: true, writePath: w, src: source(cmd, n)})
			}
		case *syntax.FuncDecl:
			// The body's commands are walked as parts; calling the function
			// is a command of its own name that a rule must allow.
		case *syntax.CoprocClause:
			// coproc NAME { ...; } runs its body, which Walk visits.
		}
		return true
	})
	return parts, nil
}

func source(cmd string, n syntax.Node) string {
	s, e := n.Pos().Offset(), n.End().Offset()
	if int(s) <= len(cmd) && int(e) <= len(cmd) && s <= e {
		return cmd[s:e]
	}
	return ""
}

// redirectWrite reports the target of a redirection that writes a file.
func redirectWrite(r *syntax.Redirect) (shWord, bool) {
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrInOut, syntax.RdrClob, syntax.AppClob,
		syntax.RdrAll, syntax.RdrAllClob, syntax.AppAll, syntax.AppAllClob:
	case syntax.DplOut:
		// >&2 and >&- duplicate descriptors; >&file writes the file.
		w := wordOf(r.Word)
		if !w.uncertain() && (w.text == "-" || isDigits(strings.TrimSuffix(w.text, "-"))) {
			return shWord{}, false
		}
	default:
		return shWord{}, false
	}
	if r.Word == nil {
		return shWord{}, false
	}
	w := wordOf(r.Word)
	if !w.uncertain() {
		switch w.text {
		case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty":
			return shWord{}, false
		}
		if strings.HasPrefix(w.text, "/dev/fd/") && isDigits(w.text[len("/dev/fd/"):]) {
			return shWord{}, false
		}
	}
	return w, true
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
			if strings.ContainsAny(p.Value, "*?[{") || (len(w.Parts) == 1 && strings.HasPrefix(p.Value, "~")) {
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

func assignWord(a *syntax.Assign) shWord {
	name := ""
	if a.Name != nil {
		name = a.Name.Value
	}
	if a.Naked {
		if a.Value != nil {
			return wordOf(a.Value)
		}
		return shWord{text: name}
	}
	if a.Array != nil || a.Index != nil {
		return shWord{text: name + "=", dyn: true}
	}
	v := wordOf(a.Value)
	v.text = name + "=" + v.text
	return v
}

// safeEnv are variables that cannot change which program runs or what it
// loads; a prefix assignment of one of these is looked through.
var safeEnv = map[string]bool{
	"LANG": true, "LANGUAGE": true, "TZ": true, "NO_COLOR": true, "FORCE_COLOR": true,
	"TERM": true, "CI": true, "DEBUG": true, "VERBOSE": true, "COLUMNS": true, "LINES": true,
	"RUST_BACKTRACE": true, "RUST_LOG": true, "NODE_ENV": true, "GOOS": true, "GOARCH": true,
	"CGO_ENABLED": true, "GOFLAGS": true, "GOMAXPROCS": true, "GOTOOLCHAIN": true, "PYTHONUNBUFFERED": true,
	"PYTHONDONTWRITEBYTECODE": true, "GIT_PAGER": false, "PAGER": false,
}

func isSafeEnv(name string) bool {
	return safeEnv[name] || strings.HasPrefix(name, "LC_")
}

// callParts reads one simple command: its forms (looking through wrappers)
// and any commands it makes another program run (bash -c, eval, xargs,
// find -exec), which become parts of their own.
func callParts(src string, c *syntax.CallExpr, depth int) []shPart {
	text := source(src, c)
	var pre []shWord
	guardedAssign := false
	for _, a := range c.Assigns {
		w := assignWord(a)
		pre = append(pre, w)
		if a.Name == nil || !isSafeEnv(a.Name.Value) || w.dyn {
			guardedAssign = true
		}
	}
	words := make([]shWord, 0, len(c.Args))
	for _, a := range c.Args {
		words = append(words, wordOf(a))
	}
	if len(words) == 0 {
		return nil // a bare assignment runs nothing (values were walked)
	}
	var forms []shForm
	if len(pre) > 0 {
		forms = append(forms, shForm{words: append(append([]shWord{}, pre...), words...), guarded: guardedAssign})
	}
	forms = append(forms, unwrap(words)...)
	part := shPart{forms: forms, src: text}
	parts := []shPart{part}
	inner := forms[len(forms)-1].words
	parts = append(parts, spawnedParts(inner, text, depth)...)
	return parts
}

// unwrap returns the forms of a command: itself, then each command found
// by looking through a wrapper.
func unwrap(words []shWord) []shForm {
	forms := []shForm{{words: words}}
	for range 16 {
		next, guarded, ok := unwrapOnce(words)
		if !ok || len(next) == 0 {
			break
		}
		if guarded {
			forms[len(forms)-1].guarded = true
		}
		forms = append(forms, shForm{words: next})
		words = next
	}
	return forms
}

// wrapperFlags lists, per wrapper, the options that take a separate value.
var wrapperFlags = map[string]string{
	"timeout": "sk",
	"nice":    "n",
	"ionice":  "cnpt",
	"stdbuf":  "ioe",
	"sudo":    "ugCDhpRrtTU",
	"doas":    "uC",
	"exec":    "a",
	"env":     "uCS",
	"nohup":   "",
	"command": "",
	"builtin": "",
	"time":    "fo",
	"chrt":    "",
	"taskset": "",
}

// guardedWrappers change the privileges or environment the inner command
// runs with.
var guardedWrappers = map[string]bool{"sudo": true, "doas": true}

func cmdName(w shWord) string {
	if w.uncertain() {
		return ""
	}
	return w.text
}

// systemBin reports whether a command given by path is a system program,
// so /usr/bin/env is looked through like env but ./timeout is not.
func systemBin(name string) string {
	if !strings.Contains(name, "/") {
		return name
	}
	switch path.Dir(name) {
	case "/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin":
		return path.Base(name)
	}
	return ""
}

func unwrapOnce(words []shWord) (inner []shWord, guarded, ok bool) {
	name := systemBin(cmdName(words[0]))
	valFlags, isWrapper := wrapperFlags[name]
	if !isWrapper {
		return nil, false, false
	}
	guarded = guardedWrappers[name]
	i := 1
	for i < len(words) {
		w := words[i]
		if w.uncertain() {
			// An option we cannot read: we cannot tell where the command starts.
			return nil, false, false
		}
		t := w.text
		if t == "--" {
			i++
			break
		}
		if name == "env" && strings.Contains(t, "=") && !strings.HasPrefix(t, "-") {
			if !isSafeEnv(t[:strings.IndexByte(t, '=')]) {
				guarded = true
			}
			i++
			continue
		}
		if !strings.HasPrefix(t, "-") || t == "-" {
			break
		}
		if name == "command" && (t == "-v" || t == "-V") {
			return nil, false, false // a lookup, runs nothing
		}
		if name == "env" && (t == "-S" || strings.HasPrefix(t, "--split-string")) {
			return nil, false, false
		}
		if name == "env" && (t == "-i" || t == "--ignore-environment") {
			guarded = true
		}
		if name == "nice" && len(t) > 1 && isDigits(t[1:]) {
			i++
			continue
		}
		i++
		if !strings.HasPrefix(t, "--") && len(t) == 2 && strings.IndexByte(valFlags, t[1]) >= 0 {
			i++ // the option's value
		} else if strings.HasPrefix(t, "--") && !strings.Contains(t, "=") && longTakesValue(name, t) {
			i++
		}
	}
	if name == "timeout" {
		i++ // the duration
	}
	if name == "chrt" || name == "taskset" {
		i++ // priority or mask
	}
	if i >= len(words) {
		return nil, false, false
	}
	return words[i:], guarded, true
}

func longTakesValue(name, flag string) bool {
	switch name + " " + flag {
	case "timeout --signal", "timeout --kill-after", "nice --adjustment", "sudo --user", "sudo --group",
		"sudo --chdir", "sudo --prompt", "sudo --host", "env --unset", "env --chdir":
		return true
	}
	return false
}

var shells = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "mksh": true, "ash": true}

// spawnedParts finds commands that a command makes another program run.
func spawnedParts(words []shWord, src string, depth int) []shPart {
	if len(words) == 0 {
		return nil
	}
	name := cmdName(words[0])
	if name == "" {
		return nil
	}
	base := path.Base(name)
	if strings.Contains(name, "/") && systemBin(name) == "" {
		base = "" // a local script: allowed only by a rule naming it
	}
	unknown := func() []shPart { return []shPart{{unknown: true, src: src}} }
	script := func(s shWord) []shPart {
		if s.uncertain() || depth >= maxNesting {
			return unknown()
		}
		parts, err := splitBashDepth(s.text, depth+1)
		if err != nil {
			return unknown()
		}
		return parts
	}
	switch {
	case shells[base]:
		for i := 1; i < len(words); i++ {
			t := words[i]
			if t.uncertain() {
				return unknown()
			}
			if strings.HasPrefix(t.text, "-") && !strings.HasPrefix(t.text, "--") && strings.Contains(t.text, "c") {
				if i+1 < len(words) {
					return script(words[i+1])
				}
				return unknown()
			}
		}
	case base == "eval":
		var b strings.Builder
		for i, w := range words[1:] {
			if w.uncertain() {
				return unknown()
			}
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(w.text)
		}
		return script(shWord{text: b.String()})
	case base == "xargs":
		i := 1
		for i < len(words) && !words[i].uncertain() && strings.HasPrefix(words[i].text, "-") {
			t := words[i].text
			i++
			if len(t) == 2 && strings.IndexByte("IiLlnPsdEa", t[1]) >= 0 {
				i++
			}
		}
		if i < len(words) {
			return []shPart{{forms: unwrap(words[i:]), src: src}}
		}
	case base == "find":
		var parts []shPart
		for i := 1; i < len(words); i++ {
			switch words[i].text {
			case "-exec", "-execdir", "-ok", "-okdir":
				j := i + 1
				for j < len(words) && words[j].text != ";" && words[j].text != "+" {
					j++
				}
				if j > i+1 {
					parts = append(parts, shPart{forms: unwrap(words[i+1 : j]), src: src})
				}
				i = j
			}
		}
		return parts
	}
	return nil
}
