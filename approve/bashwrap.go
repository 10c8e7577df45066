package approve

import (
	"path"
	"strings"

	"github.com/agentjq/agentjq/protect"
)

// Wrappers are programs that run another command (timeout 5 make). Each is
// read with its real option grammar; an option the table does not know
// makes the command unknown, never "the next word is the command".

// Option kinds.
const (
	optFlag    = 'n' // no value
	optValue   = 'v' // takes a value
	optGuard   = 'g' // no value; changes what the inner command may do
	optGuardV  = 'G' // a value; changes what the inner command may do
	optChdir   = 'c' // a directory the inner command runs in
	optUnknown = 'u' // makes the command unreadable (a shell string, a pid)
	optLookup  = 'l' // runs nothing (command -v)
	// optPipe: a file, or, starting with | or !, a command that gets the
	// output (strace -o '|cmd').
	optPipe = 'p'
)

type wrapperSpec struct {
	opts map[string]byte // "-s", "--signal"
	// operands before the command: timeout's duration, taskset's mask.
	operands int
	// assigns: NAME=value words before the command (env, sudo).
	assigns bool
	guarded bool // sudo, doas: a form that needs its own allow
	// digitOpt: -N is an option (nice -10).
	digitOpt bool
	// fileOperand: the first operand is a file (logsave FILE cmd).
	fileOperand bool
	// optsAfter: options may also follow the operands (setarch ARCH -R).
	optsAfter bool
}

func opts(kinds ...string) map[string]byte {
	m := map[string]byte{}
	for _, k := range kinds {
		kind, names, _ := strings.Cut(k, ":")
		for _, n := range strings.Fields(names) {
			m[n] = kind[0]
		}
	}
	return m
}

var wrappers = map[string]wrapperSpec{
	"env": {assigns: true, opts: opts("g:-i --ignore-environment", "n:-0 --null -v --debug", "G:-u --unset",
		"c:-C --chdir", "u:-S --split-string --block-signal --default-signal --ignore-signal --list-signal-handling")},
	"exec":    {opts: opts("v:-a", "g:-c", "n:-l")},
	"command": {opts: opts("n:-p", "l:-v -V")},
	"builtin": {opts: opts()},
	"nice":    {digitOpt: true, opts: opts("v:-n --adjustment")},
	"ionice":  {opts: opts("v:-c -n --class --classdata", "n:-t --ignore", "u:-p -P -u --pid --pgid --uid")},
	"nohup":   {opts: opts()},
	"timeout": {operands: 1, opts: opts("v:-s -k --signal --kill-after", "n:--preserve-status --foreground -v --verbose")},
	"time":    {opts: opts("n:-p -v -q -a --verbose --quiet --portability --append", "v:-f --format -o --output")},
	"stdbuf":  {opts: opts("v:-i -o -e --input --output --error")},
	"sudo": {guarded: true, assigns: true, opts: opts(
		"v:-u -g -C -h -p -r -t -T -U --user --group --close-from --host --prompt --role --type --command-timeout --other-user",
		"n:-A -b -E -H -n -P -S -k -N --askpass --background --preserve-env --set-home --non-interactive --stdin --reset-timestamp --no-update --preserve-groups",
		"c:-D --chdir",
		"u:-s -i -e -l -v -V -K --shell --login --edit --list --validate --version --remove-timestamp")},
	"doas":    {guarded: true, opts: opts("v:-u", "n:-n", "u:-C -s -L")},
	"setsid":  {opts: opts("n:-c -f -w --ctty --fork --wait")},
	"taskset": {operands: 1, opts: opts("n:-a -c --all-tasks --cpu-list", "u:-p --pid")},
	"chrt": {operands: 1, opts: opts("n:-a -b -d -f -i -o -r -R -v --all-tasks --batch --deadline --fifo --idle --other --rr --reset-on-fork --verbose",
		"v:-T -P -D --sched-runtime --sched-period --sched-deadline", "u:-m -p --max --pid")},
	"strace": {opts: opts(
		"n:-f -ff -F -c -C -q -qq -qqq -t -tt -ttt -T -v -y -yy -k -r -x -xx -w -Z -z -i -n -d -D -DD -DDD --follow-forks --summary-only --summary",
		"v:-e -s -a -O -S -P -I -X -b --string-limit --columns --trace --signal --status --trace-path",
		"p:-o --output",
		"G:-E -u --env --user",
		"u:-p --attach")},
	"watch":       {}, // read by watchCommand
	"setarch":     {operands: 1, optsAfter: true, opts: opts("n:-v -R -F -Z -L -X -B -I -S -T -3 --verbose --addr-no-randomize --fdpic-funcptrs --mmap-page-zero --addr-compat-layout --read-implies-exec --32bit --short-inode --whole-seconds --sticky-timeouts --3gb --4gb --uname-2.6")},
	"linux32":     {opts: opts("n:-v -R -F -Z -L -X -B -I -S -T -3 --verbose --addr-no-randomize --3gb --4gb --uname-2.6")},
	"linux64":     {opts: opts("n:-v -R -F -Z -L -X -B -I -S -T -3 --verbose --addr-no-randomize --3gb --4gb --uname-2.6")},
	"chronic":     {opts: opts("n:-e -v")},
	"ifne":        {opts: opts("n:-n")},
	"logsave":     {fileOperand: true, opts: opts("n:-a -s -v")},
	"systemd-cat": {opts: opts("v:-t -p --identifier --priority --stderr-priority --level-prefix")},
	"caffeinate":  {opts: opts("n:-d -i -m -s -u", "v:-t", "u:-w")},
	"trickle":     {opts: opts("n:-s -v", "v:-d -u -w -t -l -n")},
}

// subRunners run the command after a subcommand (uv run pytest): the
// runner's own form is what an allow must match, and deny and ask rules
// see the command it runs too. An option before that command (or a
// command that runs others in turn) is read as any command at all for
// deny and ask rules.
var subRunners = map[string]string{
	"uv": "run", "poetry": "run", "pipenv": "run", "pdm": "run", "hatch": "run", "rye": "run",
	"bundle": "exec", "pnpm": "exec", "npm": "exec", "yarn": "exec", "conda": "run", "mamba": "run",
	"mise": "exec", "asdf": "exec", "rtx": "exec", "pixi": "run", "devbox": "run",
	"flatpak-spawn": "", "bunx": "", "npx": "", "pnpx": "",
}

// runsOthers reports whether a command seen through a runner runs other
// commands in turn (a shell, a wrapper), which only the walker follows.
func runsOthers(name string) bool {
	base := systemBin(name)
	if base == "" {
		return false
	}
	_, wrap := wrappers[base]
	_, sub := subRunners[base]
	return wrap || sub || shells[base] || opaqueRunners[base] || base == "eval" || base == "xargs" || base == "find" || base == "flock"
}

// runnerSeen returns what a subcommand runner runs, for deny and ask
// rules; nil when words is no such runner.
func runnerSeen(words []shWord) []shForm {
	anything := []shForm{{words: []shWord{{dyn: true}}}}
	if n := cmdName(words[0]); strings.Contains(n, "/") && systemBin(n) == "" && runsOthers(path.Base(n)) {
		// /opt/homebrew/bin/env rm: a wrapper or shell by another path is
		// not looked through for an allow, but may run anything.
		return anything
	}
	name := systemBin(cmdName(words[0]))
	sub, ok := subRunners[name]
	if !ok {
		return nil
	}
	i := 1
	if sub != "" {
		if len(words) < 2 || words[1].uncertain() || words[1].text != sub {
			return nil
		}
		i = 2
	}
	if i >= len(words) || words[i].uncertain() || strings.HasPrefix(words[i].text, "-") || runsOthers(words[i].text) {
		return anything
	}
	return []shForm{{words: words[i:]}}
}

// opaqueRunners run a command in a way agentjq does not read (another
// root, another user, through a shell string, later, in parallel).
var opaqueRunners = map[string]bool{
	"chroot": true, "su": true, "runuser": true, "pkexec": true, "script": true, "parallel": true,
	"unshare": true, "nsenter": true, "systemd-run": true, "firejail": true, "bwrap": true, "setpriv": true,
	"prlimit": true, "numactl": true, "ltrace": true, "valgrind": true, "gdb": true, "busybox": true,
	"toybox": true, "sg": true, "newgrp": true, "faketime": true, "fakeroot": true, "proot": true,
	"dbus-run-session": true, "xvfb-run": true, "unbuffer": true, "catchsegv": true, "ssh-agent": true,
	"torsocks": true, "proxychains": true, "proxychains4": true, "tsp": true, "at": true, "batch": true,
	"cpulimit": true, "cgexec": true, "daemonize": true, "start-stop-daemon": true, "run-parts": true,
	"sem": true, "entr": true, "rlwrap": true, "expect": true, "chpst": true, "nq": true, "sudoedit": true,
	"dtach": true, "screen": true, "tmux": true, "byobu": true, "nocache": true, "eatmydata": true,
	"perf": true, "direnv": true, "hyperfine": true, "pee": true, "nix-shell": true, "vim": true, "vi": true, "nvim": true,
	"ex": true, "view": true, "vimdiff": true, "emacs": true, "emacsclient": true, "i386": true, "x86_64": true,
	"uname26": true, "qemu-x86_64": true, "qemu-aarch64": true, "systemd-inhibit": true, "schroot": true,
	"lxc-attach": true, "machinectl": true, "capsh": true, "setcap": true, "chronyc": false,
}

// loaderName reports a dynamic loader run as a program (ld-linux.so.2
// PROG runs PROG), wherever it lives.
func loaderName(name string) bool {
	b := foldLower(path.Base(name))
	return strings.HasPrefix(b, "ld-") && strings.Contains(b, ".so") || b == "ld.so"
}

// unwrapped is a command read through its wrappers.
type unwrapped struct {
	forms  []shForm
	seen   []shForm // what a subcommand runner runs (runnerSeen)
	code   string   // why the command runs code agentjq does not read
	chdir  bool     // a wrapper moves the inner command elsewhere
	reason string   // unknown
}

// unwrap returns the forms of a command: itself, then each command found
// by looking through a wrapper.
func unwrap(words []shWord) unwrapped {
	u := unwrapped{forms: []shForm{{words: words}}}
	for range 16 {
		name := systemBin(cmdName(words[0]))
		if loaderName(cmdName(words[0])) {
			u.reason = "a dynamic loader runs a program agentjq does not follow"
			return u
		}
		if opaqueRunners[name] {
			u.reason = name + " runs a command agentjq does not follow"
			return u
		}
		spec, ok := wrappers[name]
		if !ok || name == "watch" {
			break
		}
		inner, step := spec.read(name, words)
		if step.reason != "" {
			u.reason = step.reason
			return u
		}
		u.chdir = u.chdir || step.chdir
		if step.lookup || len(inner) == 0 {
			if len(inner) == 0 && !step.lookup && name != "exec" {
				u.reason = name + " without a command is not modelled"
			}
			break
		}
		if step.guarded || spec.guarded {
			u.forms[len(u.forms)-1].guarded = true
		}
		u.forms = append(u.forms, shForm{words: inner})
		words = inner
	}
	u.seen = runnerSeen(words)
	u.code = inlineCode(words)
	return u
}

type wrapStep struct {
	name    string
	guarded bool
	chdir   bool
	lookup  bool
	reason  string
}

func (st *wrapStep) fail(why string) bool {
	st.reason = st.name + ": " + why
	return false
}

func (st *wrapStep) apply(kind byte, opt string) bool {
	switch kind {
	case optGuard, optGuardV:
		st.guarded = true
	case optChdir:
		st.chdir, st.guarded = true, true
	case optUnknown:
		return st.fail("option " + opt + " is not modelled")
	case optLookup:
		st.lookup = true
	}
	return true
}

func takesValue(kind byte) bool {
	return kind == optValue || kind == optGuardV || kind == optChdir || kind == optPipe
}

// value checks an option's value: one that may name a command to run
// (optPipe) must be a file known before run time.
func (st *wrapStep) value(kind byte, opt string, v shWord) bool {
	if kind != optPipe {
		return true
	}
	if v.uncertain() || strings.HasPrefix(v.text, "|") || strings.HasPrefix(v.text, "!") {
		return st.fail("option " + opt + " may pipe to a command")
	}
	return true
}

// read parses a wrapper's options and returns the command it runs.
func (spec wrapperSpec) read(name string, words []shWord) ([]shWord, wrapStep) {
	st := wrapStep{name: name}
	i, ok := spec.options(&st, words)
	if !ok {
		return nil, st
	}
	if st.lookup {
		return nil, st
	}
	for range spec.operands {
		if i >= len(words) || words[i].uncertain() {
			st.fail("an operand chosen at run time")
			return nil, st
		}
		i++
	}
	if spec.optsAfter && i < len(words) && (words[i].uncertain() || strings.HasPrefix(words[i].text, "-")) {
		// setarch ARCH -R cmd: options may follow the operand.
		rest := spec
		rest.operands, rest.optsAfter = 0, false
		inner, more := rest.read(name, append([]shWord{words[0]}, words[i:]...))
		more.guarded = more.guarded || st.guarded
		more.chdir = more.chdir || st.chdir
		return inner, more
	}
	if spec.fileOperand {
		if i >= len(words) {
			st.fail("no file operand")
			return nil, st
		}
		i++
	}
	if i >= len(words) {
		return nil, st
	}
	return words[i:], st
}

// options reads a wrapper's options; it returns where they end.
func (spec wrapperSpec) options(st *wrapStep, words []shWord) (int, bool) {
	i := 1
	for i < len(words) {
		if words[i].uncertain() {
			return 0, st.fail("an option chosen at run time")
		}
		t := words[i].text
		ok := true
		switch {
		case t == "--":
			return i + 1, true
		case spec.assigns && !strings.HasPrefix(t, "-") && strings.Contains(t, "="):
			if n := t[:strings.IndexByte(t, '=')]; !isSafeEnv(n) {
				st.guarded = true
			}
			i++
		case t == "-":
			if st.name != "env" {
				return 0, st.fail("a lone - is not modelled")
			}
			st.guarded = true // env - is env -i
			i++
		case !strings.HasPrefix(t, "-"):
			return i, true
		case spec.digitOpt && isDigits(t[1:]):
			i++
		case strings.HasPrefix(t, "--"):
			i, ok = spec.long(st, t, words, i+1)
		default:
			i, ok = spec.short(st, t, words, i+1)
		}
		if !ok {
			return 0, false
		}
	}
	return i, true
}

// long reads --opt or --opt=value; i is the word after it.
func (spec wrapperSpec) long(st *wrapStep, t string, words []shWord, i int) (int, bool) {
	opt, val, hasVal := strings.Cut(t, "=")
	kind, ok := spec.opts[opt]
	if !ok {
		return 0, st.fail("option " + opt + " is not modelled")
	}
	if takesValue(kind) && hasVal && !st.value(kind, opt, shWord{text: val}) {
		return 0, false
	}
	if takesValue(kind) && !hasVal {
		if i >= len(words) {
			return 0, st.fail("option " + opt + " without its value")
		}
		if !st.value(kind, opt, words[i]) {
			return 0, false
		}
		i++
	} else if hasVal && !takesValue(kind) && opt != "--preserve-env" {
		return 0, st.fail("option " + opt + " takes no value")
	}
	return i, st.apply(kind, opt)
}

// short reads short options, possibly bundled: -fq, -n5, -ofile.
func (spec wrapperSpec) short(st *wrapStep, t string, words []shWord, i int) (int, bool) {
	if kind, ok := spec.opts[t]; ok && len(t) > 2 && kind == optFlag {
		return i, true // a multi-letter flag such as strace -ff
	}
	for j := 1; j < len(t); j++ {
		opt := "-" + t[j:j+1]
		kind, ok := spec.opts[opt]
		if !ok {
			return 0, st.fail("option " + opt + " is not modelled")
		}
		if !st.apply(kind, opt) {
			return 0, false
		}
		if !takesValue(kind) {
			continue
		}
		if j+1 >= len(t) {
			if i >= len(words) {
				return 0, st.fail("option " + opt + " without its value")
			}
			if !st.value(kind, opt, words[i]) {
				return 0, false
			}
			i++
		} else if !st.value(kind, opt, shWord{text: t[j+1:]}) {
			return 0, false
		}
		break
	}
	return i, true
}

// watchCommand finds where watch's command starts; exec reports -x (the
// words run as they are; otherwise they are joined into a sh -c script).
func watchCommand(words []shWord) (start int, exec, ok bool) {
	spec := opts("n:-d -t -b -e -g -c -p -x -r -w --differences --no-title --beep --errexit --chgexit --color --precise --exec --no-rerun --no-wrap",
		"v:-n -q --interval --equexit")
	i := 1
	for i < len(words) {
		w := words[i]
		if w.uncertain() {
			return 0, false, false
		}
		t := w.text
		if t == "--" {
			i++
			break
		}
		if !strings.HasPrefix(t, "-") {
			break
		}
		opt, _, hasVal := strings.Cut(t, "=")
		kind, known := spec[opt]
		if !known {
			return 0, false, false
		}
		if opt == "-x" || opt == "--exec" {
			exec = true
		}
		i++
		if kind == optValue && !hasVal {
			i++
		}
	}
	return i, exec, i < len(words)
}

// flock FILE COMMAND..., flock FILE -c SCRIPT, flock FD.
func (w *walker) flock(words []shWord, src string, at dirSet, script func(shWord), unknown func(string)) {
	spec := opts("n:-s -x -e -u -n -o -F --shared --exclusive --unlock --nonblock --close --no-fork --verbose", "v:-w -E --timeout --conflict-exit-code")
	i := 1
	for i < len(words) && !words[i].uncertain() && strings.HasPrefix(words[i].text, "-") {
		opt, _, hasVal := strings.Cut(words[i].text, "=")
		kind, ok := spec[opt]
		if !ok {
			unknown("flock option " + opt + " is not modelled")
			return
		}
		i++
		if kind == optValue && !hasVal {
			i++
		}
	}
	if i >= len(words) || words[i].uncertain() {
		unknown("flock with a lock chosen at run time")
		return
	}
	if isDigits(words[i].text) && i+1 == len(words) {
		return // flock FD: locks an open descriptor
	}
	i++
	if i < len(words) && (words[i].text == "-c" || words[i].text == "--command") {
		if i+1 < len(words) {
			script(words[i+1])
		} else {
			unknown("flock -c without a script")
		}
		return
	}
	w.nested(words[i:], src, at)
}

// xargs runs its command with words read from stdin added: the inner
// command is read with a word that is unknown at the end, or with the
// replace string standing for unknown text.
func (w *walker) xargs(words []shWord, src string, at dirSet, unknown func(string)) {
	spec := opts("n:-0 -r -t -x -o --null --no-run-if-empty --verbose --exit --open-tty --show-limits",
		"v:-a -d -E -L -n -P -s -I --arg-file --delimiter --max-lines --max-args --max-procs --max-chars --eof",
		"u:-p --interactive --process-slot-var")
	replace := ""
	i := 1
	for i < len(words) {
		wd := words[i]
		if wd.uncertain() {
			unknown("xargs option chosen at run time")
			return
		}
		t := wd.text
		if t == "--" {
			i++
			break
		}
		if !strings.HasPrefix(t, "-") || t == "-" {
			break
		}
		i++
		// -i[R], -l[N], -e[E]: optional values attached, never separate.
		switch {
		case t == "-i" || t == "--replace":
			replace = "{}"
			continue
		case strings.HasPrefix(t, "-i"):
			replace = t[2:]
			continue
		case strings.HasPrefix(t, "--replace="):
			replace = t[len("--replace="):]
			continue
		case strings.HasPrefix(t, "-l") || strings.HasPrefix(t, "-e") || strings.HasPrefix(t, "--max-lines=") || strings.HasPrefix(t, "--eof="):
			continue
		}
		opt, val, hasVal := strings.Cut(t, "=")
		if !strings.HasPrefix(t, "--") {
			opt, val, hasVal = t[:2], t[2:], len(t) > 2
		}
		kind, ok := spec[opt]
		if !ok {
			unknown("xargs option " + opt + " is not modelled")
			return
		}
		if kind == optUnknown {
			unknown("xargs option " + opt + " is not modelled")
			return
		}
		if kind == optValue && !hasVal {
			if i >= len(words) {
				unknown("xargs option without its value")
				return
			}
			val = words[i].text
			i++
		}
		if opt == "-I" {
			replace = val
		}
	}
	inner := append([]shWord{}, words[i:]...)
	if len(inner) == 0 {
		inner = []shWord{{text: "echo"}}
	}
	if replace == "" {
		inner = append(inner, shWord{dyn: true})
	} else {
		for k := range inner {
			if strings.Contains(inner[k].text, replace) {
				inner[k] = shWord{dyn: true}
			}
		}
	}
	w.nested(inner, src, at)
}

// find: -exec/-execdir/-ok/-okdir run commands with the found name as an
// unknown word. A word whose value is not known may be any action, so the
// command is unknown.
func (w *walker) find(words []shWord, src string, at dirSet, unknown func(string)) {
	for i := 1; i < len(words); i++ {
		if words[i].uncertain() {
			unknown("find with a word chosen at run time (it may be an action)")
			return
		}
		if t := words[i].text; t == "-exec" || t == "-execdir" || t == "-ok" || t == "-okdir" {
			j := i + 1
			for j < len(words) && words[j].text != ";" && words[j].text != "+" {
				j++
			}
			inner := append([]shWord{}, words[i+1:j]...)
			for k := range inner {
				if strings.Contains(inner[k].text, "{}") {
					inner[k] = shWord{dyn: true}
				}
			}
			if len(inner) == 0 {
				unknown("find -exec without a command")
				return
			}
			if t == "-execdir" || t == "-okdir" {
				w.nested(inner, src, dirSet{unknown: true})
			} else {
				w.nested(inner, src, at)
			}
			i = j
		}
	}
}

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

func cmdName(w shWord) string {
	if w.uncertain() {
		return ""
	}
	return w.text
}

// systemBin reports whether a command given by path is a system program,
// so /usr/bin/env is looked through like env but ./timeout is not. The
// program is named in lower case (foldLower): a case-insensitive
// filesystem runs sh for SH and /bin/rm for /BIN/RM. Builtins are not
// found this way (the shell matches their names exactly, see builtin).
func systemBin(name string) string {
	name = foldLower(name)
	if !strings.Contains(name, "/") {
		return name
	}
	switch path.Dir(name) {
	case "/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin":
		return path.Base(name)
	}
	return ""
}

// foldLower is the name a case-insensitive filesystem takes s for
// (protect.Fold).
func foldLower(s string) string { return protect.Fold(s) }
