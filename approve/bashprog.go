package approve

import (
	"strings"
)

// Tools that look read-only, and that allow rules such as Bash(awk:*),
// Bash(rg:*) or Bash(go test:*) are written for, have options and programs
// that run other programs or write files: awk's system() and print >, sed's
// e and w, go test -exec, rg --pre, fd -x, sort --compress-program, git grep
// -O, git ls-remote --upload-pack, man -P, less +!cmd, zip -TT, tar
// --to-command. Such a use is unknown: no rule but a bare Bash allows it,
// and every deny rule matches it. runsPrograms says why, or "".
func runsPrograms(words []shWord) string {
	name := systemBin(cmdName(words[0]))
	args := words[1:]
	has := func(opts ...string) bool {
		for _, a := range args {
			if a.uncertain() {
				continue
			}
			for _, o := range opts {
				if a.text == o || strings.HasPrefix(o, "--") && strings.HasPrefix(a.text, o+"=") ||
					!strings.HasPrefix(o, "--") && len(o) == 2 && strings.HasPrefix(a.text, o) && !strings.HasPrefix(a.text, "--") {
					return true
				}
			}
		}
		return false
	}
	dynamic := func() bool {
		for _, a := range args {
			if a.uncertain() {
				return true
			}
		}
		return false
	}
	switch name {
	case "go":
		for _, a := range args {
			if a.uncertain() {
				return "go with an option chosen at run time"
			}
			if !strings.HasPrefix(a.text, "-") {
				continue
			}
			t := strings.TrimPrefix(strings.TrimPrefix(a.text, "-"), "-")
			for _, o := range []string{"exec", "toolexec", "vettool", "debug-actiongraph", "debug-trace"} {
				if t == o || strings.HasPrefix(t, o+"=") {
					return "go " + o + " runs or writes what it names"
				}
			}
		}
		if len(args) > 1 && args[0].text == "env" && has("-w", "-u") {
			return "go env -w writes go's configuration (GOFLAGS may name programs)"
		}
	case "rg", "ripgrep":
		if has("--pre", "--pre-glob") || dynamic() {
			return "rg --pre runs a program on every file"
		}
	case "fd", "fdfind":
		if has("-x", "-X", "--exec", "--exec-batch") || dynamic() {
			return "fd -x runs a command on every file"
		}
	case "sort":
		if has("--compress-program") {
			return "sort --compress-program runs a program"
		}
	case "awk", "gawk", "mawk", "nawk", "busybox-awk":
		return awkRuns(args)
	case "sed", "gsed":
		return sedRuns(args)
	case "git":
		return gitRuns(args)
	case "man":
		if has("-P", "--pager", "-H", "--html", "-X", "--gxditview", "-p", "--preprocessor") || dynamic() {
			return "man's pager, browser and preprocessor options run programs"
		}
	case "less", "more", "most":
		for _, a := range args {
			if a.uncertain() || strings.HasPrefix(a.text, "+") || strings.HasPrefix(a.text, "-+") || a.text == "-k" || strings.HasPrefix(a.text, "--lesskey") || strings.HasPrefix(a.text, "-k") {
				return "less runs commands given with + or a key file (! runs a shell)"
			}
		}
	case "zip":
		if has("-TT", "--unzip-command", "-m", "--move") || dynamic() {
			return "zip -TT runs a command (-m deletes its inputs)"
		}
	case "split", "csplit":
		return name + " writes files it names by a prefix"
	case "ed", "red":
		return name + " reads commands (w, !cmd) from stdin"
	}
	return ""
}

// awkRuns reads an awk command line: a program from a file (-f) or
// extensions (-l, -i, -E) are unknown; so is a program that runs commands
// (system(), print | "cmd", "cmd" | getline, |&) or writes files (print >
// "file"), which is seen outside its strings and regular expressions.
func awkRuns(args []shWord) string {
	prog := ""
	found := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a.uncertain() {
			return "awk with a program or option chosen at run time"
		}
		t := a.text
		switch {
		case t == "--":
			if i+1 < len(args) {
				prog, found = args[i+1].text, !args[i+1].uncertain()
			}
			i = len(args)
		case t == "-f" || strings.HasPrefix(t, "-f") && !strings.HasPrefix(t, "--") || strings.HasPrefix(t, "--file") ||
			strings.HasPrefix(t, "-i") || strings.HasPrefix(t, "--include") || strings.HasPrefix(t, "-l") || strings.HasPrefix(t, "--load") ||
			strings.HasPrefix(t, "-E") || strings.HasPrefix(t, "--exec") || strings.HasPrefix(t, "--source") || t == "-e":
			return "awk reads its program from a file or loads an extension"
		case t == "-F" || t == "-v" || t == "--field-separator" || t == "--assign":
			i++
		case strings.HasPrefix(t, "-F") || strings.HasPrefix(t, "-v") || strings.HasPrefix(t, "--field-separator=") || strings.HasPrefix(t, "--assign="):
		case strings.HasPrefix(t, "-"):
			// Any other option may take the next word (mawk -W exec FILE
			// reads the program from FILE).
			return "awk option " + t + " is not modelled"
		default:
			prog, found = t, true
			i = len(args)
		}
	}
	if !found {
		return "awk without a program"
	}
	code := awkCode(prog)
	switch {
	case strings.Contains(code, "system"), strings.Contains(code, "getline") && strings.Contains(code, "|"),
		strings.Contains(strings.ReplaceAll(code, "||", ""), "|"), strings.Contains(code, "@"):
		return "the awk program runs commands (system(), pipes)"
	}
	if awkPrintRedirect(code) {
		return "the awk program writes files (print > file)"
	}
	return ""
}

// awkCode blanks awk's string literals and regular expressions, so that a
// | or > inside them is not taken for a pipe or a redirection.
func awkCode(p string) string {
	var b strings.Builder
	prev := byte('{') // the last significant character: a / after an operand divides
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '"':
			j := i + 1
			for j < len(p) && p[j] != '"' {
				if p[j] == '\\' {
					j++
				}
				j++
			}
			b.WriteString(`""`)
			i = j
			prev = '"'
			continue
		case c == '/' && strings.IndexByte("(,~!&|{};=\n", prev) >= 0:
			j := i + 1
			for j < len(p) && p[j] != '/' {
				if p[j] == '\\' {
					j++
				}
				j++
			}
			b.WriteString("//")
			i = j
			prev = '/'
			continue
		}
		b.WriteByte(c)
		if c != ' ' && c != '\t' {
			prev = c
		}
	}
	return b.String()
}

// awkPrintRedirect reports a > or >> in a print or printf statement, which
// awk reads as output to a file.
func awkPrintRedirect(code string) bool {
	for _, kw := range []string{"print"} {
		rest := code
		for {
			k := strings.Index(rest, kw)
			if k < 0 {
				break
			}
			rest = rest[k+len(kw):]
			end := strings.IndexAny(rest, ";}\n")
			stmt := rest
			if end >= 0 {
				stmt = rest[:end]
			}
			// A > inside parentheses is a comparison: print (a > b).
			depth := 0
			for i := 0; i < len(stmt); i++ {
				switch stmt[i] {
				case '(':
					depth++
				case ')':
					depth--
				case '>':
					if depth <= 0 {
						return true
					}
				}
			}
		}
	}
	return false
}

// sedRuns reads a sed command line: a script from a file (-f) is unknown,
// and so is a script with the e command or the e flag of s (they run
// commands), or w/W and the w flag (they write files).
func sedRuns(args []shWord) string {
	var scripts []string
	explicit := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a.uncertain() {
			return "sed with a script or option chosen at run time"
		}
		t := a.text
		switch {
		case t == "-f" || strings.HasPrefix(t, "--file") || strings.HasPrefix(t, "-") && !strings.HasPrefix(t, "--") && strings.Contains(t, "f"):
			return "sed reads its script from a file"
		case t == "-e" || t == "--expression":
			if i+1 < len(args) {
				scripts = append(scripts, args[i+1].text)
			}
			explicit = true
			i++
		case strings.HasPrefix(t, "--expression="):
			scripts, explicit = append(scripts, t[len("--expression="):]), true
		case strings.HasPrefix(t, "-e") && len(t) > 2:
			scripts, explicit = append(scripts, t[2:]), true
		case t == "-l" || t == "--line-length":
			i++
		case strings.HasPrefix(t, "-"):
		case !explicit:
			scripts, explicit = append(scripts, t), true
		}
	}
	for _, s := range scripts {
		if why := sedScriptRuns(s); why != "" {
			return why
		}
	}
	return ""
}

// sedScriptRuns parses a sed script far enough to find e, w and W commands
// and the e and w flags of s; anything it cannot read is unknown.
func sedScriptRuns(s string) string {
	i := 0
	skipSpace := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == ';' || s[i] == '\n') {
			i++
		}
	}
	// delimited reads text up to an unescaped delim.
	delimited := func(d byte) bool {
		for i < len(s) && s[i] != d {
			if s[i] == '\\' {
				i++
			}
			i++
		}
		if i >= len(s) {
			return false
		}
		i++
		return true
	}
	address := func() bool {
		for i < len(s) {
			c := s[i]
			switch {
			case c >= '0' && c <= '9' || c == '$' || c == ',' || c == '~' || c == '+' || c == '!' || c == ' ':
				i++
			case c == '/':
				i++
				if !delimited('/') {
					return false
				}
				for i < len(s) && (s[i] == 'I' || s[i] == 'M') {
					i++
				}
			case c == '\\' && i+1 < len(s):
				d := s[i+1]
				i += 2
				if !delimited(d) {
					return false
				}
			default:
				return true
			}
		}
		return true
	}
	toEOL := func() {
		for i < len(s) && s[i] != '\n' {
			i++
		}
	}
	for {
		skipSpace()
		if i >= len(s) {
			return ""
		}
		if !address() {
			return "a sed script agentjq cannot read"
		}
		skipSpace()
		if i >= len(s) {
			return ""
		}
		c := s[i]
		i++
		switch c {
		case '{', '}', '=', 'd', 'D', 'g', 'G', 'h', 'H', 'l', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
		case 'q', 'Q', 'L':
			for i < len(s) && s[i] >= '0' && s[i] <= '9' || i < len(s) && s[i] == ' ' {
				i++
			}
		case ':', 'b', 't', 'T', 'v':
			for i < len(s) && s[i] != ';' && s[i] != '\n' && s[i] != '}' {
				i++
			}
		case '#', 'a', 'i', 'c':
			toEOL()
		case 'r', 'R':
			toEOL() // reads a file: the command's own read
		case 'w', 'W':
			return "the sed script writes files (w)"
		case 'e':
			return "the sed script runs commands (e)"
		case 's', 'y':
			if i >= len(s) || s[i] == '\n' || s[i] == '\\' {
				return "a sed script agentjq cannot read"
			}
			d := s[i]
			i++
			for range 2 { // the pattern, then the replacement
				if !delimited(d) {
					return "a sed script agentjq cannot read"
				}
			}
			if c == 'y' {
				continue
			}
			for i < len(s) && s[i] != ';' && s[i] != '\n' && s[i] != '}' {
				switch f := s[i]; {
				case f == 'e':
					return "the sed script runs commands (s///e)"
				case f == 'w' || f == 'W':
					return "the sed script writes files (s///w)"
				case f == 'g' || f == 'p' || f == 'i' || f == 'I' || f == 'm' || f == 'M' || f >= '0' && f <= '9' || f == ' ':
				default:
					return "a sed script agentjq cannot read"
				}
				i++
			}
		default:
			return "a sed script agentjq cannot read"
		}
	}
}

// gitRuns finds git's subcommand past its global options and reports the
// options of it that run programs.
func gitRuns(args []shWord) string {
	i := 0
	for i < len(args) {
		t := args[i].text
		if args[i].uncertain() {
			return "git with an option chosen at run time"
		}
		if !strings.HasPrefix(t, "-") {
			break
		}
		switch t {
		case "-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env", "--exec-path", "--list-cmds", "--attr-source":
			i++
		}
		i++
	}
	if i >= len(args) {
		return ""
	}
	sub := args[i].text
	rest := args[i+1:]
	has := func(opts ...string) bool {
		for _, a := range rest {
			for _, o := range opts {
				if a.uncertain() || a.text == o || strings.HasPrefix(a.text, o+"=") || len(o) == 2 && o[1] != '-' && strings.HasPrefix(a.text, o) && !strings.HasPrefix(a.text, "--") {
					return true
				}
			}
		}
		return false
	}
	switch sub {
	case "grep":
		if has("-O", "--open-files-in-pager") {
			return "git grep -O runs a pager command"
		}
	case "ls-remote", "clone", "fetch", "pull", "archive", "push", "remote", "submodule":
		if has("--upload-pack", "--receive-pack", "--exec") || (sub == "clone" || sub == "ls-remote") && has("-u") {
			return "git's --upload-pack and --receive-pack run commands"
		}
		if sub == "submodule" && has("foreach") {
			return "git submodule foreach runs a shell command"
		}
	case "rebase":
		if has("-x", "--exec") {
			return "git rebase --exec runs a shell command"
		}
	case "bisect":
		if has("run") {
			return "git bisect run runs a command"
		}
	case "difftool", "mergetool":
		if has("-x", "--extcmd", "-t", "--tool", "--tool-path") {
			return "git " + sub + " runs the tool it names"
		}
	case "filter-branch", "filter-repo", "send-email", "instaweb", "daemon", "web--browse", "credential", "upload-pack", "receive-pack":
		return "git " + sub + " runs commands"
	}
	return ""
}
