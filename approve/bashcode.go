package approve

import (
	"path"
	"strings"
)

// Some programs run code given on their own command line (an
// interpreter's -c or -e) or read from stdin, and git's -c names programs
// git runs. What that code runs is not read: deny and ask rules match the
// part as they match an unknown one (Bash(rm:*) is not dodged with
// python3 -c 'os.system("rm ...")'), while an allow rule that matches its
// words (Bash(python3:*)) still allows it, as its author wrote; the
// sandbox holds what the code does. Shells, eval, xargs, find -exec,
// watch and flock are read by the walker instead (spawned): the command
// they run is a part of its own.

// codeSpec is how one program takes code: an option cluster holding one
// of letters (-c, -Ic), one of longs, a first word among subs (node
// eval), or, with stdin, no script operand at all; valued are its
// one-letter options that take a value (python -W x script.py).
type codeSpec struct {
	letters string
	longs   []string
	subs    []string
	stdin   bool
	valued  string
	always  bool
}

var runsCode = map[string]codeSpec{
	"python":     {letters: "c", stdin: true, valued: "mWX"},
	"pypy":       {letters: "c", stdin: true, valued: "mWX"},
	"perl":       {letters: "eE", stdin: true, valued: "IrmM"},
	"ruby":       {letters: "eE", stdin: true, valued: "IrmM"},
	"lua":        {letters: "eE", stdin: true, valued: "IrmM"},
	"luajit":     {letters: "eE", stdin: true, valued: "IrmM"},
	"julia":      {letters: "eE", longs: []string{"--eval"}, stdin: true, valued: "IrmM"},
	"rscript":    {letters: "eE", longs: []string{"--eval"}, stdin: true, valued: "IrmM"},
	"r":          {letters: "eE", longs: []string{"--eval"}},
	"node":       {letters: "ep", longs: []string{"--eval", "--print"}, subs: []string{"eval", "repl"}},
	"nodejs":     {letters: "ep", longs: []string{"--eval", "--print"}, subs: []string{"eval", "repl"}},
	"bun":        {letters: "ep", longs: []string{"--eval", "--print"}, subs: []string{"eval", "repl"}},
	"deno":       {letters: "ep", longs: []string{"--eval", "--print"}, subs: []string{"eval", "repl"}},
	"php":        {letters: "rRBE", longs: []string{"--run", "--process-code", "--process-begin", "--process-end"}},
	"git":        {longs: []string{"-c", "--config-env", "--exec-path", "--git-dir", "--bare"}},
	"make":       {longs: []string{"--eval", "-E"}},
	"gmake":      {longs: []string{"--eval", "-E"}},
	"pwsh":       {always: true},
	"powershell": {always: true},
	"osascript":  {always: true},
	"tclsh":      {always: true},
	"wish":       {always: true},
	"dc":         {always: true},
}

// inlineCode returns why a command runs code agentjq does not read, or "".
func inlineCode(words []shWord) string {
	name := cmdName(words[0])
	if name == "" {
		return ""
	}
	base := foldLower(path.Base(name))
	if strings.HasPrefix(base, "python") {
		base = "python"
	} else if strings.HasPrefix(base, "pypy") {
		base = "pypy"
	}
	spec, ok := runsCode[base]
	if !ok {
		return ""
	}
	if spec.always || spec.takesCode(words[1:]) {
		return "it runs code given on its command line or stdin, which agentjq does not read"
	}
	return ""
}

// takesCode reads the options before the first operand.
func (spec codeSpec) takesCode(args []shWord) bool {
	if len(args) > 0 && !args[0].uncertain() {
		for _, s := range spec.subs {
			if args[0].text == s {
				return true
			}
		}
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a.uncertain() {
			return true
		}
		t := a.text
		switch {
		case t == "-":
			return spec.stdin
		case t == "--" || !strings.HasPrefix(t, "-"):
			return false // a script operand
		case t == "--version" || t == "--help" || t == "-V" || t == "-h" || t == "-m" && strings.Contains(spec.valued, "m"):
			return false
		}
		for _, l := range spec.longs {
			if t == l || strings.HasPrefix(t, l+"=") {
				return true
			}
		}
		if spec.letters != "" && !strings.HasPrefix(t, "--") && strings.ContainsAny(t[1:], spec.letters) {
			return true
		}
		if len(t) == 2 && strings.Contains(spec.valued, t[1:]) {
			i++
		}
	}
	return spec.stdin
}
