package approve

import (
	"path"
	"strings"
)

// Some programs run code given on their own command line: an
// interpreter's -c or -e, a script read from stdin, git's -c (an alias or
// a pager is a shell command), make --eval, ssh's ProxyCommand, sqlite3's
// .shell. What that code runs cannot be read, so the part is opaque: deny
// and ask rules match it as they match an unknown part (Bash(rm:*) is not
// dodged with python3 -c 'os.system("rm ...")'), while an allow rule that
// matches its words (Bash(python3 -c:*)) still allows it, as its author
// wrote.

// inlineCode returns why a command runs code agentjq does not read, or "".
func inlineCode(words []shWord) string {
	name := cmdName(words[0])
	if name == "" {
		return ""
	}
	base := foldLower(path.Base(name))
	args := words[1:]
	// short reports an option cluster before the first operand holding
	// one of letters (-c, -Ic, -ne), or a long option among longs.
	short := func(letters string, longs ...string) bool {
		for _, a := range args {
			if a.uncertain() {
				return true
			}
			t := a.text
			if t == "--" || !strings.HasPrefix(t, "-") || t == "-" {
				return false
			}
			for _, l := range longs {
				if t == l || strings.HasPrefix(t, l+"=") {
					return true
				}
			}
			if !strings.HasPrefix(t, "--") && strings.ContainsAny(t[1:], letters) {
				return true
			}
		}
		return false
	}
	// fromStdin reports an interpreter with no script operand (or "-"):
	// it runs whatever its stdin holds.
	fromStdin := func(valued string) bool {
		for i := 0; i < len(args); i++ {
			t := args[i].text
			switch {
			case args[i].uncertain():
				return true
			case t == "-":
				return true
			case t == "-m" && strings.Contains(valued, "m"):
				return false // python -m module
			case t == "--version" || t == "--help" || t == "-V" || t == "-v" || t == "-h":
				return false
			case strings.HasPrefix(t, "-") && len(t) == 2 && strings.Contains(valued, t[1:]):
				i++
			case !strings.HasPrefix(t, "-"):
				return false
			}
		}
		return true
	}
	code := "it runs code given on its command line or stdin, which agentjq does not read"
	switch {
	case strings.HasPrefix(base, "python") || strings.HasPrefix(base, "pypy"):
		if short("c") || fromStdin("mWX") {
			return code
		}
	case base == "perl" || base == "ruby" || base == "lua" || base == "luajit" || base == "julia" || base == "Rscript" || base == "R":
		if short("eE", "--eval") || fromStdin("IrmM") && base != "R" {
			return code
		}
	case base == "node" || base == "nodejs" || base == "bun" || base == "deno":
		if short("ep", "--eval", "--print") || len(args) > 0 && (args[0].text == "eval" || args[0].text == "repl") {
			return code
		}
	case base == "php":
		if short("rRBE", "--run", "--process-code", "--process-begin", "--process-end") {
			return code
		}
	case base == "pwsh" || base == "powershell" || base == "osascript" || base == "tclsh" || base == "wish" || base == "dc":
		return code
	case base == "git":
		for i, a := range args {
			t := a.text
			if a.uncertain() {
				return code
			}
			if !strings.HasPrefix(t, "-") {
				break
			}
			if t == "-c" || strings.HasPrefix(t, "--config-env") || strings.HasPrefix(t, "--exec-path=") || strings.HasPrefix(t, "--git-dir") || t == "--bare" {
				return "git's -c, --config-env, --exec-path and --git-dir choose the configuration that names programs git runs"
			}
			_ = i
		}
	case base == "make" || base == "gmake":
		for _, a := range args {
			t := a.text
			if a.uncertain() || strings.HasPrefix(t, "--eval") || t == "-E" || t == "-f-" || t == "--file=-" || t == "--file=/dev/stdin" || strings.Contains(t, "=") && !strings.HasPrefix(t, "-") {
				return "make runs recipes given on its command line (--eval, a makefile from stdin, a variable such as SHELL=)"
			}
		}
		for i := 0; i+1 < len(args); i++ {
			if (args[i].text == "-f" || args[i].text == "--file" || args[i].text == "--makefile") && (args[i+1].text == "-" || strings.HasPrefix(args[i+1].text, "/dev/") || args[i+1].uncertain()) {
				return "make reads a makefile from stdin"
			}
		}
	case base == "ssh" || base == "scp" || base == "sftp" || base == "rsync" || base == "sshpass":
		for i, a := range args {
			t := strings.ToLower(a.text)
			if a.uncertain() || t == "-f" || t == "-s" && base == "scp" || strings.HasPrefix(t, "-f") && base == "ssh" && len(t) > 2 {
				return "ssh's options name programs it runs locally"
			}
			v := t
			if t == "-o" && i+1 < len(args) {
				v = strings.ToLower(args[i+1].text)
			} else if strings.HasPrefix(t, "-o") {
				v = t[2:]
			} else {
				continue
			}
			for _, k := range []string{"proxycommand", "localcommand", "permitlocalcommand", "knownhostscommand", "match", "include", "proxyjump"} {
				if strings.HasPrefix(strings.TrimLeft(v, " "), k) {
					return "ssh's " + k + " runs a command locally"
				}
			}
		}
	case base == "sqlite3" || base == "psql" || base == "mysql" || base == "mariadb" || base == "duckdb":
		for _, a := range args {
			t := a.text
			if a.uncertain() || strings.Contains(t, `\!`) || strings.Contains(t, ".shell") || strings.Contains(t, ".system") || strings.Contains(strings.ToLower(t), "system ") {
				return "its commands run shell commands (.shell, \\!, system)"
			}
		}
	}
	return ""
}
